//! `tracectl report` against `trace-cmd report` on trace.dat files trace-cmd recorded
//! (2 and 4 CPUs, v6 and v7, with an instance buffer), byte for byte, for every mode in
//! `tests/data/tracecmd/modes.tsv`; and files our writer makes from them, as trace-cmd
//! reads them. The expected texts are trace-cmd's, committed under
//! `tests/data/tracecmd/results/` (see the README there): neither root, tracefs nor
//! trace-cmd is needed.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::dat::rewrite;
use crate::support::pins;

use tracectl::dat::Compression;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd")
}

/// The recordings: each NAME-v7.dat as committed, and NAME-v6.dat unpacked from its
/// `.zst` into `tmp`. `(stem, directory holding STEM.dat)`.
fn inputs(tmp: &Path) -> Vec<(String, PathBuf)> {
    let mut v = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(data())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    for n in names {
        if let Some(stem) = n.strip_suffix(".dat") {
            v.push((stem.to_string(), data()));
        } else if let Some(stem) = n.strip_suffix(".dat.zst") {
            let packed = std::fs::read(data().join(&n)).unwrap();
            let bytes = zstd::decode_all(&packed[..]).unwrap();
            std::fs::write(tmp.join(format!("{stem}.dat")), bytes).unwrap();
            v.push((stem.to_string(), tmp.to_path_buf()));
        }
    }
    v
}

/// `(mode name, report arguments)` from modes.tsv.
fn modes() -> Vec<(String, Vec<String>)> {
    std::fs::read_to_string(data().join("modes.tsv"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let mut f = l.split('\t').map(str::to_string);
            (f.next().unwrap(), f.collect())
        })
        .collect()
}

/// `tracectl report ARGS -i FILE` run in FILE's directory (trace-cmd prints the name as
/// given): stdout, or the failure.
fn tracectl_report(dir: &Path, file: &str, args: &[String]) -> Result<Vec<u8>, String> {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir)
        .arg("report")
        .args(args)
        .args(["-i", file])
        .output()
        .unwrap();
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(out.stdout)
}

/// None when equal, else where the texts part and how many lines differ.
fn difference(want: &[u8], got: &[u8]) -> Option<String> {
    if want == got {
        return None;
    }
    let (w, g) = (String::from_utf8_lossy(want), String::from_utf8_lossy(got));
    let (w, g): (Vec<&str>, Vec<&str>) = (w.lines().collect(), g.lines().collect());
    let n = w.len().max(g.len());
    let differing: Vec<usize> = (0..n).filter(|&i| w.get(i) != g.get(i)).collect();
    let first = differing.first().copied().unwrap_or(n);
    Some(format!(
        "{} of {} lines differ ({} vs {} lines); first at line {}:\n  trace-cmd: {}\n  tracectl:  {}",
        differing.len(),
        n,
        w.len(),
        g.len(),
        first + 1,
        w.get(first).unwrap_or(&"<none>"),
        g.get(first).unwrap_or(&"<none>"),
    ))
}

#[test]
fn report_matches_trace_cmd_goldens_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let inputs = inputs(tmp.path());
    let stems: Vec<&str> = inputs.iter().map(|(s, _)| s.as_str()).collect();
    for want in ["2cpu-v6", "2cpu-v7", "4cpu-v6", "4cpu-v7"] {
        assert!(stems.contains(&want), "missing input {want}: {stems:?}");
    }
    let modes = modes();
    let mut failures = Vec::new();
    let mut compared = 0;
    for (stem, dir) in &inputs {
        let results = data().join("results").join(stem);
        for (mode, args) in &modes {
            let golden = results.join(format!("{mode}.txt"));
            if !golden.exists() {
                // trace-cmd itself failed on this mode (make-results.sh left a marker).
                assert!(
                    results.join(format!("{mode}.failed")).exists(),
                    "no golden {} and no .failed marker: run make-results.sh",
                    golden.display()
                );
                continue;
            }
            let want = std::fs::read(&golden).unwrap();
            match tracectl_report(dir, &format!("{stem}.dat"), args) {
                Ok(got) => {
                    if let Some(d) = difference(&want, &got) {
                        failures.push(format!("{stem} `report {}`: {d}", args.join(" ")));
                    }
                }
                Err(e) => failures.push(format!("{stem} `report {}` failed: {e}", args.join(" "))),
            }
            compared += 1;
        }
    }
    assert!(compared >= 50, "only {compared} comparisons");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every recording holds what the goldens are meant to cover: the instance buffer, the
/// CPU count its name says, and records of several event systems.
#[test]
fn goldens_cover_instances_cpus_and_event_systems() {
    for (stem, cpus, instance) in [
        ("2cpu-v7", 2, true),
        ("4cpu-v7", 4, true),
        ("2cpu-noinstance-v7", 2, false),
    ] {
        let plain =
            std::fs::read_to_string(data().join("results").join(stem).join("plain.txt")).unwrap();
        assert!(plain.starts_with(&format!("cpus={cpus}\n")), "{stem}");
        assert_eq!(
            plain.lines().any(|l| l.starts_with("golden: ")),
            instance,
            "{stem}: instance lines"
        );
        for cpu in 0..cpus {
            assert!(
                plain.contains(&format!("[{cpu:03}]")),
                "{stem}: no record on CPU {cpu}"
            );
        }
        for event in [
            "sched_switch:",
            "kmalloc:",
            "sys_enter_openat:",
            "hrtimer_start:",
        ] {
            assert!(plain.contains(event), "{stem}: no {event}");
        }
        let lines = plain.lines().count();
        assert!((300..6000).contains(&lines), "{stem}: {lines} lines");
    }
}

/// Our writer's files, as trace-cmd reads them: the committed recordings rewritten as v6
/// and as uncompressed v7 must report exactly what trace-cmd reported for the original
/// (same records, instance and events).
///
/// `results/written.txt` pins each written file (see `pins`): those exact bytes were
/// read by `trace-cmd report` and matched the golden. So a writer change that trace-cmd
/// would read differently (a moved option pointer, a wrong section size) fails here
/// without trace-cmd; with trace-cmd installed its report is compared as well.
#[test]
fn writer_output_reads_in_trace_cmd() {
    let tmp = tempfile::tempdir().unwrap();
    let have_trace_cmd = pins::trace_cmd_installed();
    let mut pins = pins::Pins::open("written.txt");
    let mut failures = Vec::new();
    for (src, version, compression) in [
        ("4cpu-v7", 6, Compression::None),
        ("2cpu-v7", 6, Compression::None),
        ("2cpu-v7", 7, Compression::None),
    ] {
        let name = format!("{src}-as-v{version}-{}.dat", compression.name());
        let out = tmp.path().join(&name);
        rewrite(
            &data().join(format!("{src}.dat")),
            &out,
            version,
            compression,
        );
        // (--stat prints where the data lies in the file, which differs.)
        for mode in ["plain", "R", "events"] {
            let golden =
                std::fs::read(data().join("results").join(src).join(format!("{mode}.txt")))
                    .unwrap();
            let args: Vec<String> = match mode {
                "R" => vec!["-R".into()],
                "events" => vec!["-E".into()],
                _ => vec![],
            };
            if have_trace_cmd {
                let o = Command::new("trace-cmd")
                    .current_dir(tmp.path())
                    .arg("report")
                    .args(&args)
                    .args(["-i", &name])
                    .output()
                    .unwrap();
                // trace-cmd names the file in no line of these modes.
                if let Some(d) = difference(&golden, &o.stdout) {
                    failures.push(format!("trace-cmd report {args:?} of {name}: {d}"));
                }
            }
            match tracectl_report(tmp.path(), &name, &args) {
                Ok(got) => {
                    if let Some(d) = difference(&golden, &got) {
                        failures.push(format!("tracectl report {args:?} of {name}: {d}"));
                    }
                }
                Err(e) => failures.push(format!("tracectl report of {name}: {e}")),
            }
        }
        failures.extend(pins.check(&name, &std::fs::read(&out).unwrap()));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    pins.finish(
        "Files tests/it/tracecmd_goldens.rs writes with tracectl's writer from the recordings \
         here;\n# trace-cmd report printed each recording's golden plain, -R and -E text for them.",
    );
}
