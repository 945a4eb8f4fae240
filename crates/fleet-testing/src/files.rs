//! Files for tests: a directory tree (a fixture under `testdata/`, a chart) copied where a test or bench
//! changes or multiplies it.

use std::path::Path;

/// Copies the directory tree `from` to `to` (created with its parents), files and subdirectories alike.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read dir") {
        let entry = entry.expect("dir entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy file");
        }
    }
}
