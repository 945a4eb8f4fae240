//! Bad input never panics and always names the file: malformed YAML, unknown keys, non-UTF-8 files, unreadable
//! files, symlinks escaping the bundle root, YAML alias bombs and oversized files.

use fleet_bundle::tree::{LocalTree, MemoryTree};
use fleet_bundle::{ReadOptions, read_bundles};

fn read(tree: &dyn fleet_bundle::tree::FileTree) -> Result<Vec<fleet_api::Bundle>, String> {
    let options = ReadOptions {
        repo_name: "repo".to_string(),
        ..ReadOptions::default()
    };
    read_bundles(tree, &[], &options).map_err(|err| err.to_string())
}

fn with_fleet_yaml(text: impl Into<Vec<u8>>) -> MemoryTree {
    let mut tree = MemoryTree::new();
    tree.add_file("app/cm.yaml", "kind: ConfigMap\n")
        .add_file("app/fleet.yaml", text);
    tree
}

#[test]
fn malformed_yaml() {
    let err = read(&with_fleet_yaml("helm:\n  chart: [a\n")).unwrap_err();
    assert!(err.starts_with("app/fleet.yaml:"), "{err}");
    assert!(err.contains('['), "{err}");
}

#[test]
fn unknown_key() {
    assert_eq!(
        read(&with_fleet_yaml("defaultNamspace: x\n")).unwrap_err(),
        "app/fleet.yaml:1:1: unknown key `defaultNamspace`: did you mean `defaultNamespace`?"
    );
}

#[test]
fn non_utf8_fleet_yaml_is_an_error_and_non_utf8_resource_is_compressed() {
    assert_eq!(
        read(&with_fleet_yaml(vec![b'a', b':', b' ', 0xff, b'\n'])).unwrap_err(),
        "app/fleet.yaml: not valid UTF-8 (invalid byte at offset 3)"
    );
    let mut tree = MemoryTree::new();
    tree.add_file("bin.dat", vec![0xff, 0x00, 0xfe])
        .add_file("cm.yaml", "kind: ConfigMap\n");
    let bundles = read(&tree).unwrap();
    assert_eq!(bundles[0].spec.resources[0].name, "bin.dat");
    assert_eq!(bundles[0].spec.resources[0].encoding, "base64+gz");
}

#[test]
fn unreadable_file() {
    // Tests may run as root, where chmod 000 does not block reads; the in-memory tree models the I/O error.
    let mut tree = MemoryTree::new();
    tree.add_file("cm.yaml", "kind: ConfigMap\n")
        .add_unreadable("secret.yaml", "permission denied");
    assert_eq!(read(&tree).unwrap_err(), "secret.yaml: permission denied");
}

#[cfg(unix)]
#[test]
fn unreadable_file_on_disk_when_permissions_apply() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("cm.yaml"), "kind: ConfigMap\n").unwrap();
    let locked = dir.path().join("locked.yaml");
    std::fs::write(&locked, "kind: Secret\n").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let result = read(&LocalTree::new(dir.path()));
    if std::fs::read(&locked).is_ok() {
        // Running as root: permissions do not apply, so the file is read like any other.
        assert_eq!(result.unwrap()[0].spec.resources.len(), 2);
    } else {
        assert_eq!(result.unwrap_err(), "locked.yaml: permission denied");
    }
}

#[cfg(unix)]
#[test]
fn symlink_escaping_the_root() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("app")).unwrap();
    std::fs::write(dir.path().join("app/fleet.yaml"), "{}\n").unwrap();
    std::fs::write(dir.path().join("outside.yaml"), "kind: Secret\n").unwrap();
    std::os::unix::fs::symlink("../outside.yaml", dir.path().join("app/link.yaml")).unwrap();
    assert_eq!(
        read(&LocalTree::new(dir.path())).unwrap_err(),
        "app/link.yaml: symlink to \"../outside.yaml\" points outside the bundle root \"app\""
    );
}

#[test]
fn yaml_alias_bomb() {
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for (name, prev) in [
        ("b", "a"),
        ("c", "b"),
        ("d", "c"),
        ("e", "d"),
        ("f", "e"),
        ("g", "f"),
        ("h", "g"),
        ("i", "h"),
    ] {
        bomb.push_str(&format!("{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]\n"));
    }
    let text = format!(
        "helm:\n  chart: ./c\n  values:\n{}",
        bomb.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    let err = read(&with_fleet_yaml(text)).unwrap_err();
    assert!(err.starts_with("app/fleet.yaml"), "{err}");
    assert!(
        err.to_lowercase().contains("alias") || err.contains("limit") || err.contains("budget"),
        "{err}"
    );
}

#[test]
fn ten_megabyte_files() {
    // A 10 MB options file exceeds the YAML size limit; a 10 MB manifest is read and stored compressed.
    let big_yaml = format!("labels:\n  a: \"{}\"\n", "x".repeat(10 * 1024 * 1024));
    let err = read(&with_fleet_yaml(big_yaml.clone())).unwrap_err();
    assert_eq!(
        err,
        format!(
            "app/fleet.yaml: document is {} bytes, larger than the limit of 10485760 bytes",
            big_yaml.len()
        )
    );
    let mut tree = MemoryTree::new();
    tree.add_file("big.yaml", big_yaml);
    let bundles = read(&tree).unwrap();
    assert_eq!(bundles[0].spec.resources[0].encoding, "base64+gz");
}
