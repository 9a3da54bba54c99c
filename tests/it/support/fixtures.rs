//! The recorded tracefs trees under `tracefs-fixtures/`.

use std::path::{Path, PathBuf};

/// `tracefs-fixtures/NAME`.
pub fn tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tracefs-fixtures")
        .join(name)
}

/// Copy the tree at `from` into `to` (created), for tests that write to it.
pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}
