//! A private copy of a recorded tracefs tree, the real binary run against it, and the
//! whole tree's bytes for before/after comparisons.
#![allow(dead_code)]

use super::fixtures::copy_tree;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tracectl")
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A temporary copy of `tracefs-fixtures/<name>`.
pub struct Tree {
    pub dir: tempfile::TempDir,
    pub root: PathBuf,
}

impl Tree {
    pub fn new(fixture: &str) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("tracing");
        copy_tree(&repo().join("tracefs-fixtures").join(fixture), &root);
        Tree { dir, root }
    }

    pub fn run(&self, args: &[&str]) -> Output {
        Command::new(bin())
            .arg("--tracefs")
            .arg(&self.root)
            .args(args)
            .current_dir(self.dir.path())
            .env_remove("TRACECTL_TRACEFS")
            .output()
            .unwrap()
    }

    /// Run, expect success, return stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            o.status.success(),
            "tracectl {args:?} failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// Run, expect failure, return stderr.
    pub fn fails(&self, args: &[&str]) -> String {
        let o = self.run(args);
        assert!(
            !o.status.success(),
            "tracectl {args:?} succeeded: {}",
            String::from_utf8_lossy(&o.stdout)
        );
        String::from_utf8_lossy(&o.stderr).into_owned()
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
    }

    pub fn write(&self, rel: &str, text: &str) {
        let p = self.root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    }

    /// Every file of the tree (path relative to the root -> bytes) and every directory.
    pub fn bytes(&self) -> BTreeMap<PathBuf, Vec<u8>> {
        let mut m = BTreeMap::new();
        walk(&self.root, &self.root, &mut m);
        m
    }

    /// Assert the tree holds exactly `before`, naming the first file that differs.
    pub fn assert_unchanged(&self, before: &BTreeMap<PathBuf, Vec<u8>>, what: &str) {
        let after = self.bytes();
        for (p, b) in before {
            match after.get(p) {
                None => panic!("{what}: {} was removed", p.display()),
                Some(a) if a != b => panic!(
                    "{what}: {} changed from {:?} to {:?}",
                    p.display(),
                    String::from_utf8_lossy(&b[..b.len().min(200)]),
                    String::from_utf8_lossy(&a[..a.len().min(200)])
                ),
                _ => {}
            }
        }
        if let Some(p) = after.keys().find(|p| !before.contains_key(*p)) {
            panic!("{what}: {} was created", p.display());
        }
    }
}

fn walk(root: &Path, d: &Path, m: &mut BTreeMap<PathBuf, Vec<u8>>) {
    for e in fs::read_dir(d).unwrap() {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(root).unwrap().to_path_buf();
        if e.file_type().unwrap().is_dir() {
            // A directory is recorded too, so a created or removed empty one is seen.
            m.insert(rel.join(""), b"<dir>".to_vec());
            walk(root, &e.path(), m);
        } else {
            m.insert(rel, fs::read(e.path()).unwrap());
        }
    }
}
