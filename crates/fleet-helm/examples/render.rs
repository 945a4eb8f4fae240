//! Renders a chart directory like `helm template rel CHART -n default --kube-version v1.33.0 [-f VALUES…]`:
//! `cargo run -p fleet-helm --example render -- CHART [VALUES…]`.

use std::path::Path;

use fleet_helm::chart::{FileMap, RenderOptions, merge_maps, render_chart};

fn read_tree(root: &Path, dir: &Path, out: &mut FileMap) -> std::io::Result<()> {
    for e in std::fs::read_dir(dir)? {
        let p = e?.path();
        if p.is_dir() {
            read_tree(root, &p, out)?;
        } else {
            let rel = p
                .strip_prefix(root)
                .unwrap_or(&p)
                .to_string_lossy()
                .replace('\\', "/");
            out.insert(rel, std::fs::read(&p)?.into());
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(chart) = args.first() else {
        return Err("usage: render CHART [VALUES…]".into());
    };
    let mut files = FileMap::new();
    read_tree(Path::new(chart), Path::new(chart), &mut files)?;
    let mut user = fleet_helm::value::map_value(Default::default());
    for f in &args[1..] {
        user = merge_maps(
            &user,
            &fleet_helm::yaml::parse_value(&std::fs::read_to_string(f)?)?,
        );
    }
    let opts = RenderOptions {
        release_name: "rel".into(),
        seed: Some(1),
        ..Default::default()
    };
    let out = render_chart(files, &user, &opts)?;
    print!("{}", out.to_helm_output());
    Ok(())
}
