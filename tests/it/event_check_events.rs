//! `tracectl check-events` on the live tracefs and on a tree with a broken format.

use crate::support::skips;

use std::path::Path;
use std::process::Command;

use crate::support::live::TRACEFS as LIVE;

fn live_root() -> Option<&'static str> {
    if !nix::unistd::geteuid().is_root() {
        skips::skip(format!("needs root to read every format under {LIVE}"));
        return None;
    }
    if !Path::new(LIVE).join("events/header_page").exists() {
        skips::skip(format!("tracefs is not mounted at {LIVE}"));
        return None;
    }
    Some(LIVE)
}

fn check_events(root: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", root.to_str().unwrap(), "check-events"])
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn every_live_format_parses() {
    let Some(root) = live_root() else { return };
    let (code, out) = check_events(Path::new(root));
    let n = std::fs::read_dir(Path::new(root).join("events"))
        .unwrap()
        .flatten()
        .filter(|s| s.path().is_dir())
        .map(|s| {
            std::fs::read_dir(s.path())
                .unwrap()
                .flatten()
                .filter(|e| e.path().is_dir())
                .count()
        })
        .sum::<usize>();
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("{n} of {n} event formats parsed; 0 failed")),
        "{out}"
    );
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn a_broken_format_is_named_and_fails_the_command() {
    let dir = tempfile::tempdir().unwrap();
    let r = dir.path();
    write(
        &r.join("events/header_page"),
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
         \tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n",
    );
    write(&r.join("events/demo/good/id"), "700\n");
    write(
        &r.join("events/demo/good/format"),
        "name: good\nID: 700\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
         \tfield:int v;\toffset:4;\tsize:4;\tsigned:1;\n\nprint fmt: \"v=%d\", REC->v\n",
    );
    write(&r.join("events/demo/broken/id"), "701\n");
    write(
        &r.join("events/demo/broken/format"),
        "name: broken\nID: 701\nformat:\n\tfield:int v;\toffset:four;\tsize:4;\tsigned:1;\n\nprint fmt: \"v=%d\", REC->v\n",
    );
    let (code, out) = check_events(r);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("FAIL demo:broken: line 4: `offset:four` is not a number"),
        "{out}"
    );
    assert!(
        out.contains("1 of 2 event formats parsed; 1 failed"),
        "{out}"
    );
    // Without the broken one it passes.
    std::fs::remove_dir_all(r.join("events/demo/broken")).unwrap();
    let (code, out) = check_events(r);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn every_format_of_the_all_events_tree_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures/linux-6.18-all");
    if !root.join("events").is_dir() {
        skips::skip("tracefs-fixtures/linux-6.18-all is not in this checkout");
        return;
    }
    let (code, out) = check_events(&root);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("2323 of 2323 event formats parsed; 0 failed"),
        "{out}"
    );
}

/// Enum constants the kernel left as names are filled in from the tree's `host/enums`
/// before the fallbacks are counted: only print fmts the engine truly cannot evaluate
/// (current `jiffies`, kvm's statement blocks, unknown helper functions) are listed.
#[test]
fn enum_constants_from_host_enums_are_not_fallbacks() {
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures/linux-6.18-all");
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["--tracefs", tree.to_str().unwrap(), "check-events", "-v"])
        .env_remove("TRACECTL_TRACEFS")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let enums = std::fs::read_to_string(tree.join("host/enums")).unwrap();
    let known: std::collections::HashSet<&str> =
        enums.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(known.contains("BTRFS_ORDERED_REGULAR"), "{enums}");
    let fallbacks: Vec<&str> = text.lines().filter(|l| l.starts_with("FIELDS ")).collect();
    assert!(!fallbacks.is_empty(), "jiffies-based formats stay: {text}");
    for l in &fallbacks {
        let unresolved = l
            .split("unknown identifier `")
            .nth(1)
            .and_then(|r| r.split('`').next());
        assert!(
            unresolved.map_or(true, |id| !known.contains(id)),
            "{l}: host/enums has a value for it"
        );
    }
}
