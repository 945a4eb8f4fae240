//! What `fleet apply`, `fleet test` and `fleet target` share: command-line label parsing, mapping PATH arguments
//! onto file trees, reading the bundles under PATH arguments, and progress on stderr (only when stderr is a
//! terminal).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use fleet_api::{Bundle, ImageScan};
use fleet_bundle::tree::{LocalTree, TreePath};
use fleet_bundle::{ReadError, ReadOptions};

use super::chart_source::ChartArgs;

/// Parses `key=value` pairs (repeatable `-l` flags).
pub fn parse_labels(pairs: &[String]) -> anyhow::Result<BTreeMap<String, String>> {
    let mut labels = BTreeMap::new();
    for pair in pairs {
        let Some((key, value)) = pair.split_once('=') else {
            bail!("invalid label {pair:?}: expected key=value");
        };
        if key.is_empty() {
            bail!("invalid label {pair:?}: the key is empty");
        }
        labels.insert(key.to_string(), value.to_string());
    }
    Ok(labels)
}

/// A PATH argument as a tree and a path inside it. Relative paths that stay under the working directory are
/// read from a tree rooted there (so bundle names include the path, as Fleet run in a checkout names them);
/// other paths become the root of their own tree.
pub fn locate(path: &str) -> anyhow::Result<(LocalTree, String)> {
    let cwd = std::env::current_dir().context("reading the working directory")?;
    if !Path::new(path).is_absolute()
        && let Some(inside) = TreePath::new(path)
    {
        return Ok((LocalTree::new(cwd), inside.display_root()));
    }
    let root: PathBuf = if Path::new(path).is_absolute() {
        PathBuf::from(path)
    } else {
        cwd.join(path)
    };
    Ok((LocalTree::new(root), ".".to_string()))
}

/// The bundles under every PATH argument (`.` when there is none), with progress on a terminal. A path without
/// bundles is skipped; an error only when no path holds any.
///
/// Charts that are not in a bundle are downloaded as `charts` says (with the credentials of each bundle's path).
pub fn read_paths(
    paths: &[String],
    options: &ReadOptions,
    charts: &ChartArgs,
) -> anyhow::Result<Vec<Bundle>> {
    let source = charts.source();
    let session = source
        .as_ref()
        .map(|source| charts.credentials().map(|creds| source.session(creds)))
        .transpose()?;
    let paths = if paths.is_empty() {
        vec![".".to_string()]
    } else {
        paths.to_vec()
    };
    let mut progress = progress_reporter();
    let mut bundles = Vec::new();
    for path in &paths {
        let (tree, inside) = locate(path)?;
        let read = match &session {
            Some(session) => read_with_charts(&tree, &inside, options, session, &mut progress),
            None => fleet_bundle::read::read_bundles_with_progress(
                &tree,
                &[inside],
                options,
                &mut progress,
            ),
        };
        match read {
            Ok(found) => bundles.extend(found),
            Err(ReadError::NothingFound { .. }) => {}
            Err(err) => return Err(err.into()),
        }
    }
    if bundles.is_empty() {
        return Err(ReadError::NothingFound { paths }.into());
    }
    Ok(bundles)
}

/// [`fleet_bundle::read::read_bundles_with_progress`] with each bundle's own chart fetcher.
fn read_with_charts(
    tree: &LocalTree,
    inside: &str,
    options: &ReadOptions,
    session: &fleet_chart_source::ReadSession<'_>,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Bundle>, ReadError> {
    let paths = [inside.to_string()];
    let locations = match &options.driven_scan_separator {
        Some(separator) => fleet_bundle::discover::driven(&paths, separator)?,
        None => fleet_bundle::discover::discover(tree, &paths)?,
    };
    let mut bundles = Vec::new();
    for (index, location) in locations.iter().enumerate() {
        let fetcher = session.for_path(location.dir.as_str());
        if let Some(bundle) =
            fleet_bundle::read::read_bundle_with_charts(tree, location, options, &fetcher)?
        {
            bundles.push(bundle);
        }
        progress(index + 1, locations.len());
    }
    if bundles.is_empty() {
        return Err(ReadError::NothingFound {
            paths: paths.to_vec(),
        });
    }
    Ok(bundles)
}

/// The ImageScans of the bundles under every PATH argument (`.` when there is none), as Fleet's reader makes them
/// from each fleet.yaml's `imageScans`.
pub fn read_image_scans(paths: &[String], options: &ReadOptions) -> anyhow::Result<Vec<ImageScan>> {
    let paths = if paths.is_empty() {
        vec![".".to_string()]
    } else {
        paths.to_vec()
    };
    let mut scans = Vec::new();
    for path in &paths {
        let (tree, inside) = locate(path)?;
        let inside = [inside];
        let locations = match &options.driven_scan_separator {
            Some(separator) => fleet_bundle::discover::driven(&inside, separator),
            None => fleet_bundle::discover::discover(&tree, &inside),
        };
        let locations = match locations {
            Ok(locations) => locations,
            Err(ReadError::NothingFound { .. }) => continue,
            Err(err) => return Err(err.into()),
        };
        for location in &locations {
            scans.extend(fleet_bundle::read::read_image_scans(
                &tree, location, options,
            )?);
        }
    }
    Ok(scans)
}

/// A progress callback that redraws one stderr line when stderr is a terminal, and does nothing otherwise.
pub fn progress_reporter() -> impl FnMut(usize, usize) {
    let enabled = std::io::stderr().is_terminal();
    move |done, total| {
        if !enabled || total < 2 {
            return;
        }
        let mut stderr = std::io::stderr();
        let _ = write!(stderr, "\rreading bundles: {done}/{total}");
        if done == total {
            let _ = writeln!(stderr);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        let parsed = parse_labels(&["a=1".into(), "b=x=y".into(), "c=".into()]).unwrap();
        assert_eq!(parsed["b"], "x=y");
        assert_eq!(parsed["c"], "");
        assert!(parse_labels(&["nope".into()]).is_err());
        assert!(parse_labels(&["=v".into()]).is_err());
    }
}
