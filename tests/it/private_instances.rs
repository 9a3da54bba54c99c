//! Private instances: created as `tracectl-<what>-<pid>`, removed at the end, and a
//! stale one (its pid gone) removed by the next run, with nothing else touched.

use std::fs;
use std::path::{Path, PathBuf};

use tracectl::tracefs::{PrivateInstance, Tracefs};

/// A pid that no process has: a child that has already been reaped.
fn dead_pid() -> u32 {
    let mut c = std::process::Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

fn names(t: &Tracefs) -> Vec<String> {
    t.instances().unwrap()
}

/// A copy of a tree's top-level files with an empty `instances/`.
fn tree() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("tracing");
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tracefs-fixtures/linux-6.18-sched-irq");
    fs::create_dir_all(root.join("instances")).unwrap();
    for e in fs::read_dir(&from).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            fs::copy(e.path(), root.join(e.file_name())).unwrap();
        }
    }
    (dir, root)
}

/// A recorded instance directory with a file in it, as a capture would copy one.
fn make_instance(root: &Path, name: &str) {
    let d = root.join("instances").join(name);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("tracing_on"), "1\n").unwrap();
}

#[test]
fn a_stale_private_instance_is_removed_and_nothing_else() {
    let (_dir, root) = tree();
    let dead = dead_pid();
    let stale = format!("tracectl-record-{dead}");
    // Our own pid is alive, and so is pid 1 (another user's tracectl run).
    let alive = format!("tracectl-stream-{}", std::process::id());
    let other_alive = "tracectl-capture-1";
    let foreign = format!("perf-record-{dead}");
    let near_miss = format!("tracectl-{dead}");
    for n in [&stale, &alive, other_alive, &foreign, &near_miss] {
        make_instance(&root, n);
    }
    let t = Tracefs::at(&root);
    let p = PrivateInstance::create(&t, "graph").unwrap();
    let mine = format!("tracectl-graph-{}", std::process::id());
    assert_eq!(p.instance().name(), Some(mine.as_str()));
    assert_eq!(p.notes().len(), 1, "{:?}", p.notes());
    assert_eq!(
        p.notes()[0],
        format!(
            "removed instances/{stale}, left behind by a tracectl run (pid {dead}) that is gone"
        )
    );
    let mut want = vec![
        alive.clone(),
        other_alive.to_string(),
        foreign.clone(),
        near_miss.clone(),
        mine.clone(),
    ];
    want.sort();
    assert_eq!(names(&t), want);
    drop(p);
    want.retain(|n| *n != mine);
    assert_eq!(names(&t), want, "the private instance outlived its owner");
}

#[test]
fn a_private_instance_is_removed_on_error_and_panic_paths() {
    let (_dir, root) = tree();
    let t = Tracefs::at(&root);
    let fails = || -> Result<(), tracectl::tracefs::TracefsError> {
        let p = PrivateInstance::create(&t, "record")?;
        p.instance().read("no_such_file")?;
        Ok(())
    };
    assert!(fails().is_err());
    assert!(names(&t).is_empty(), "{:?}", names(&t));
    let r = std::panic::catch_unwind(|| {
        let _p = PrivateInstance::create(&t, "record").unwrap();
        panic!("in the middle of a recording");
    });
    assert!(r.is_err());
    assert!(names(&t).is_empty(), "{:?}", names(&t));
    // Kept (record -k): it stays.
    let kept = PrivateInstance::create(&t, "record").unwrap().keep();
    assert_eq!(names(&t), vec![kept.name().unwrap().to_string()]);
}

#[test]
fn an_existing_instance_is_not_taken_over() {
    let (_dir, root) = tree();
    make_instance(&root, "mine");
    let t = Tracefs::at(&root);
    let err = PrivateInstance::create_named(&t, "mine").unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
    assert_eq!(names(&t), vec!["mine".to_string()]);
    assert_eq!(
        fs::read_to_string(root.join("instances/mine/tracing_on")).unwrap(),
        "1\n"
    );
}

#[test]
fn stale_private_instances_are_removed_from_the_live_tracefs_live() {
    let t = Tracefs::at("/sys/kernel/tracing");
    if !nix::unistd::geteuid().is_root() || !t.exists("instances") {
        crate::support::skips::skip("needs root and a live tracefs at /sys/kernel/tracing");
        return;
    }
    let dead = dead_pid();
    // Names unique to this test run, so that other users of the machine are not touched.
    let what = format!("ledgertest{}", std::process::id() % 100_000)
        .chars()
        .map(|c| {
            if c.is_ascii_digit() {
                (b'a' + (c as u8 - b'0')) as char
            } else {
                c
            }
        })
        .collect::<String>();
    let stale = format!("tracectl-{what}-{dead}");
    // pid 1 always runs.
    let alive = format!("tracectl-{what}-1");
    let mine = format!("tracectl-{what}-{}", std::process::id());
    let foreign = format!("{what}-foreign-{dead}");
    for n in [&stale, &alive, &foreign] {
        fs::create_dir(t.path(format!("instances/{n}"))).unwrap();
    }
    let cleanup = |names: &[&String]| {
        for n in names {
            let _ = fs::remove_dir(t.path(format!("instances/{n}")));
        }
    };
    let p = match PrivateInstance::create(&t, &what) {
        Ok(p) => p,
        Err(e) => {
            cleanup(&[&stale, &alive, &foreign]);
            panic!("{e}");
        }
    };
    let now = names(&t);
    let notes = p.notes().to_vec();
    drop(p);
    let after = names(&t);
    cleanup(&[&stale, &alive, &foreign]);
    assert!(!now.contains(&stale), "{now:?}");
    assert!(now.contains(&alive) && now.contains(&foreign), "{now:?}");
    assert!(notes.iter().any(|n| n.contains(&stale)), "{notes:?}");
    // Its own instance is gone again, the others are still there.
    assert!(now.contains(&mine), "{now:?}");
    assert!(!after.contains(&mine), "{after:?}");
    assert!(
        after.contains(&alive) && after.contains(&foreign),
        "{after:?}"
    );
    stream_prints_a_note_for_the_stale_instance_it_removes(&t);
}

/// Run by the live test after the library's case: two tests removing stale instances
/// at the same time would remove each other's.
fn stream_prints_a_note_for_the_stale_instance_it_removes(t: &Tracefs) {
    let dead = dead_pid();
    let stale = format!("tracectl-stream-{dead}");
    fs::create_dir(t.path(format!("instances/{stale}"))).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args([
            "--tracefs",
            "/sys/kernel/tracing",
            "stream",
            "-e",
            "sched:sched_switch",
            "--duration-ms",
            "50",
        ])
        .output()
        .unwrap();
    let left = t.exists(format!("instances/{stale}"));
    if left {
        let _ = fs::remove_dir(t.path(format!("instances/{stale}")));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(!left, "the stale instance is still there");
    assert!(
        err.lines().any(|l| l
            == format!(
                "tracectl: removed instances/{stale}, left behind by a tracectl run (pid {dead}) that is gone"
            )),
        "{err}"
    );
}
