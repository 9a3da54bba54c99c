//! `tracectl dump` against `trace-cmd dump`: byte for byte, option by option, on the
//! committed recordings (goldens under `tests/data/tracecmd/results/STEM/dump/`, made by
//! `make-dump-results.sh`), and live against the installed trace-cmd (with --kallsyms).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::pins;
use crate::support::skips::skip;

/// The options with committed goldens (all but --kallsyms, megabytes per file).
const OPTIONS: &[&str] = &[
    "head-page",
    "head-event",
    "ftrace-events",
    "systems",
    "events",
    "printk",
    "cmd-lines",
];

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd")
}

/// `(stem, path)` of each recording: the v7 files as committed, the v6 ones unpacked.
fn inputs(tmp: &Path) -> Vec<(String, PathBuf)> {
    let mut names: Vec<String> = std::fs::read_dir(data())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    let mut v = Vec::new();
    for n in names {
        if let Some(stem) = n.strip_suffix(".dat") {
            v.push((stem.to_string(), data().join(&n)));
        } else if let Some(stem) = n.strip_suffix(".dat.zst") {
            let packed = std::fs::read(data().join(&n)).unwrap();
            let to = tmp.join(format!("{stem}.dat"));
            std::fs::write(&to, zstd::decode_all(&packed[..]).unwrap()).unwrap();
            v.push((stem.to_string(), to));
        }
    }
    assert!(
        v.len() >= 6,
        "recordings missing under {}",
        data().display()
    );
    v
}

fn tracectl_dump(args: &[&str], file: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .arg("dump")
        .args(args)
        .arg(file)
        .output()
        .unwrap()
}

fn first_difference(want: &[u8], got: &[u8]) -> String {
    let (w, g) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    let i = w
        .lines()
        .zip(g.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| w.lines().count().min(g.lines().count()));
    format!(
        "line {}: want {:?}, got {:?}",
        i + 1,
        w.lines().nth(i),
        g.lines().nth(i)
    )
}

#[test]
fn dump_matches_tracecmd_goldens() {
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let mut compared = 0;
    for (stem, path) in inputs(tmp.path()) {
        for opt in OPTIONS {
            let golden = pins::results(&stem).join("dump").join(format!("{opt}.txt"));
            let want =
                std::fs::read(&golden).unwrap_or_else(|e| panic!("{}: {e}", golden.display()));
            let out = tracectl_dump(&[&format!("--{opt}")], &path);
            assert!(
                out.status.success(),
                "tracectl dump --{opt} {stem}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            compared += 1;
            if out.stdout != want {
                failures.push(format!(
                    "{stem} --{opt}: {}",
                    first_difference(&want, &out.stdout)
                ));
            }
        }
    }
    assert!(compared >= 42, "only {compared} comparisons");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn dump_live_tracecmd_oracle() {
    if !pins::trace_cmd_installed() {
        skip("trace-cmd is not installed: nothing to compare tracectl dump with");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (stem, path) in inputs(tmp.path()) {
        for opt in OPTIONS.iter().chain(&["kallsyms"]) {
            let arg = format!("--{opt}");
            let want = Command::new("trace-cmd")
                .args(["dump", &arg])
                .arg(&path)
                .output()
                .unwrap();
            assert!(want.status.success(), "trace-cmd dump {arg} {stem} failed");
            let got = tracectl_dump(&[&arg], &path);
            if got.stdout != want.stdout {
                failures.push(format!(
                    "{stem} {arg}: {}",
                    first_difference(&want.stdout, &got.stdout)
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn dump_bad_input_names_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("not-a-trace.dat");
    std::fs::write(&bad, b"hello, not a trace file").unwrap();
    let out = tracectl_dump(&["--head-page"], &bad);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not-a-trace.dat"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let none = tracectl_dump(&[], &bad);
    assert!(!none.status.success());
    assert!(String::from_utf8_lossy(&none.stderr).contains("--head-page"));
}
