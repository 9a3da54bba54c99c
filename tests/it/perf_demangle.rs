//! C++ names as perf 6.1 shows them, checked against GNU's demangler on this machine:
//! binutils' `c++filt -p -i` (libiberty without parameters or verbose spellings, the
//! demangling Debian's perf 6.1 asks bfd for) on the `_Z` symbols of real libraries.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use tracectl::perf::symbols::demangle;

use crate::support::skips;

/// Where Debian and others keep the GNU C++ library.
const LIBSTDCXX: [&str; 3] = [
    "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
    "/usr/lib64/libstdc++.so.6",
    "/usr/lib/libstdc++.so.6",
];

/// The `_Z` symbol names of the ELF file at `path` as `readelf -Ws --wide` lists them,
/// without their `@VERSION`, sorted, each once; None when readelf cannot run.
fn mangled_names(path: &Path) -> Option<Vec<String>> {
    let out = Command::new("readelf")
        .args(["-Ws", "--wide"])
        .arg(path)
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().nth(7))
        .filter(|name| name.starts_with("_Z"))
        .map(|name| name.split('@').next().unwrap_or(name).to_string())
        .collect();
    names.sort();
    names.dedup();
    Some(names)
}

/// `c++filt -p -i`'s name for each of `names`, in order; None when c++filt cannot run.
fn gnu_names(names: &[String]) -> Option<Vec<String>> {
    let mut child = Command::new("c++filt")
        .args(["-p", "-i"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .ok()?;
    let mut stdin = child.stdin.take()?;
    let text: String = names.iter().map(|n| format!("{n}\n")).collect();
    // Written from a thread: c++filt answers while it reads, and both pipes fill.
    let writer = std::thread::spawn(move || stdin.write_all(text.as_bytes()));
    let out = child.wait_with_output().ok()?;
    writer.join().ok()?.ok()?;
    if !out.status.success() {
        return None;
    }
    let gnu: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    (gnu.len() == names.len()).then_some(gnu)
}

/// The names whose demangling differs from GNU's, as (mangled, GNU's, ours).
fn differences(names: &[String], gnu: &[String]) -> Vec<(String, String, String)> {
    names
        .iter()
        .zip(gnu)
        .filter_map(|(name, gnu)| {
            let ours = demangle(name);
            (ours != *gnu).then(|| (name.clone(), gnu.clone(), ours))
        })
        .collect()
}

/// Every C++ name of the GNU C++ library demangles as perf 6.1 (GNU's demangler) shows it.
#[test]
fn perf_demangle_libstdcxx_names_as_cxxfilt_prints_them() {
    let Some(lib) = LIBSTDCXX.iter().map(Path::new).find(|p| p.exists()) else {
        skips::skip(format!("no libstdc++.so.6 in {LIBSTDCXX:?}"));
        return;
    };
    let Some(names) = mangled_names(lib) else {
        skips::skip("readelf (binutils) cannot run");
        return;
    };
    let Some(gnu) = gnu_names(&names) else {
        skips::skip("c++filt (binutils) cannot run");
        return;
    };
    assert!(
        names.len() > 1000,
        "{}: only {} C++ symbols",
        lib.display(),
        names.len()
    );
    let diffs = differences(&names, &gnu);
    let shown: Vec<String> = diffs
        .iter()
        .take(10)
        .map(|(name, gnu, ours)| format!("{name}\n  c++filt: {gnu}\n  ours:    {ours}"))
        .collect();
    assert!(
        diffs.is_empty(),
        "{} of {} names of {} differ from c++filt -p -i:\n{}",
        diffs.len(),
        names.len(),
        lib.display(),
        shown.join("\n")
    );
}

/// A survey over any list of mangled names (one a line, in the file named by
/// `TRACECTL_DEMANGLE_NAMES`): how many demangle differently from `c++filt -p -i`, each
/// difference written as `mangled<TAB>c++filt<TAB>ours` to the file named by
/// `TRACECTL_DEMANGLE_DIFFS` if set. `scripts/demangle-survey` collects the names of a
/// machine's libraries and runs it.
#[test]
#[ignore = "a survey over a list of names: see scripts/demangle-survey"]
fn perf_demangle_survey() {
    let Ok(list) = std::env::var("TRACECTL_DEMANGLE_NAMES") else {
        panic!("set TRACECTL_DEMANGLE_NAMES to a file of mangled names, one a line");
    };
    let text = std::fs::read_to_string(&list).unwrap_or_else(|e| panic!("{list}: {e}"));
    let names: Vec<String> = text.lines().map(str::to_string).collect();
    let gnu = gnu_names(&names).expect("c++filt (binutils) cannot run");
    let diffs = differences(&names, &gnu);
    if let Ok(path) = std::env::var("TRACECTL_DEMANGLE_DIFFS") {
        let rows: String = diffs
            .iter()
            .map(|(name, gnu, ours)| format!("{name}\t{gnu}\t{ours}\n"))
            .collect();
        std::fs::write(&path, rows).unwrap_or_else(|e| panic!("{path}: {e}"));
    }
    println!(
        "{} of {} names differ from c++filt -p -i",
        diffs.len(),
        names.len()
    );
}
