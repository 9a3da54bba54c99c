//! Which reports read a trace.dat's kallsyms section: those with a record whose event
//! may print a kernel symbol. The section is most of a small file (4-5 MB before
//! compression), so a report of sched events never decompresses it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use tracectl::dat::DatFile;
use tracectl::render::tracecmd::{DatCatalog, DatSource, RecordSource};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd")
}

/// The names of the events met in every buffer of `dat`, and whether the catalog says
/// their records may print a kernel symbol.
fn events_met(dat: &DatFile) -> BTreeSet<(String, bool)> {
    let catalog = DatCatalog::from_dat(dat);
    let mut met = BTreeSet::new();
    for b in 0..dat.buffers().len() {
        let mut s = DatSource::open(dat, b).unwrap();
        while s.peek_ts().unwrap().is_some() {
            let Some(t) = s.take() else { break };
            let id = t.rec.event_id(dat.endian()).unwrap();
            let name = tracectl::render::tracecmd::Catalog::event(&catalog, id)
                .map_or("?", |(_, n)| n)
                .to_string();
            met.insert((name, catalog.may_print_functions(id)));
        }
    }
    met
}

/// A copy of `file` in `dir` whose kallsyms section cannot be read (its first length
/// field is past the end of the section), and that section's offset.
fn with_unreadable_kallsyms(file: &Path, dir: &Path) -> (PathBuf, u64) {
    let copy = dir.join(file.file_name().unwrap());
    let mut bytes = std::fs::read(file).unwrap();
    std::fs::write(&copy, &bytes).unwrap();
    let at = DatFile::open(&copy).unwrap().kallsyms_offset();
    assert!(at > 0, "{} has a kallsyms section", file.display());
    // After the 16-byte section header: the compressed size (or, stored as it is, the
    // text's length).
    let body = at as usize + 16;
    bytes[body..body + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    std::fs::write(&copy, &bytes).unwrap();
    (copy, at)
}

/// sched_switch and sched_waking print no symbol: their report is trace-cmd's text to
/// the byte with a kallsyms section that cannot be read, and no warning, since nothing
/// needed it. A file with kmalloc (`call_site` as `%pS`) and hrtimer records needs it:
/// the same damage leaves bare addresses and a warning naming the section.
#[test]
fn kallsyms_is_read_only_for_records_that_print_symbols() {
    let tmp = tempfile::tempdir().unwrap();
    let sched = tmp.path().join("instance-comm.dat");
    let packed = std::fs::read(data().join("comm-shared/instance-comm.dat.zst")).unwrap();
    std::fs::write(&sched, zstd::decode_all(&packed[..]).unwrap()).unwrap();

    let met = events_met(&DatFile::open(&sched).unwrap());
    let names: Vec<&str> = met.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["sched_switch", "sched_waking"]);
    assert!(met.iter().all(|(_, symbols)| !symbols), "{met:?}");

    let mixed = data().join("2cpu-noinstance-v7.dat");
    let met = events_met(&DatFile::open(&mixed).unwrap());
    for name in ["kmalloc", "hrtimer_start", "hrtimer_expire_entry"] {
        assert!(met.contains(&(name.to_string(), true)), "{name}: {met:?}");
    }
    for name in ["sched_switch", "sched_waking", "softirq_entry"] {
        assert!(met.contains(&(name.to_string(), false)), "{name}: {met:?}");
    }

    let damaged = tmp.path().join("damaged");
    std::fs::create_dir(&damaged).unwrap();
    let (sched_copy, _) = with_unreadable_kallsyms(&sched, &damaged);
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["report", "-i"])
        .arg(&sched_copy)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    let want = std::fs::read(data().join("comm-shared/report.txt")).unwrap();
    assert!(out.stdout == want, "differs from trace-cmd's report.txt");

    let (mixed_copy, at) = with_unreadable_kallsyms(&mixed, &damaged);
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["report", "-i"])
        .arg(&mixed_copy)
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("kallsyms at offset {}", at + 16))
            && err.contains("addresses were printed without symbol names"),
        "{err}"
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let kmalloc = text.lines().find(|l| l.contains(" kmalloc: ")).unwrap();
    assert!(kmalloc.contains("call_site=0x"), "{kmalloc}");
    // Undamaged, the same line names the function (trace-cmd's golden).
    let golden = std::fs::read_to_string(data().join("results/2cpu-noinstance-v7/plain.txt"));
    let golden = golden.unwrap();
    let named = golden.lines().find(|l| l.contains(" kmalloc: ")).unwrap();
    assert!(!named.contains("call_site=0x"), "{named}");
}
