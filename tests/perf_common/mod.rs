//! What the perf test programs (`harness = false`, so that they can double as workloads)
//! share: running the named checks, and skipping with a printed reason.

/// A check: `Err` with what went wrong.
pub type Check = fn() -> Result<(), String>;

/// Run the checks whose names contain one of the command-line filters (all without a
/// filter), as libtest prints them; exit 101 when one failed.
pub fn run_checks(tests: &[(&str, Check)]) {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let mut failed = 0;
    for (name, f) in tests {
        if !filter.is_empty() && !filter.iter().any(|p| name.contains(p.as_str())) {
            continue;
        }
        match f() {
            Ok(()) => println!("test {name} ... ok"),
            Err(e) => {
                println!("test {name} ... FAILED\n{e}");
                failed += 1;
            }
        }
    }
    if failed > 0 {
        std::process::exit(101);
    }
}

/// `Ok(true)` to run `test`, `Ok(false)` (with the reason printed) to skip it, or an
/// error when skips are not allowed (TRACECTL_REQUIRE_ALL=1).
pub fn run_or_skip(test: &str, reason: Option<String>) -> Result<bool, String> {
    match reason {
        None => Ok(true),
        Some(r) if std::env::var_os("TRACECTL_REQUIRE_ALL").is_some_and(|v| v == "1") => Err(
            format!("{test}: cannot run ({r}) and TRACECTL_REQUIRE_ALL=1"),
        ),
        Some(r) => {
            eprintln!("skipped {test}: {r}");
            Ok(false)
        }
    }
}

/// The workload mode of a perf stat test program: started with
/// `TRACECTL_GETPID_LOOP=N`, it calls getpid(2) exactly N times (after
/// `TRACECTL_GETPID_BEFORE_MS`, before `TRACECTL_GETPID_AFTER_MS`, pauses for counting a
/// running process) and exits; otherwise it returns. (perf_record_live needs no workload.)
#[allow(dead_code)]
pub fn getpid_loop_if_asked() {
    let Ok(n) = std::env::var("TRACECTL_GETPID_LOOP") else {
        return;
    };
    let n: u64 = n.parse().expect("TRACECTL_GETPID_LOOP is a number");
    let pause = |var: &str| {
        if let Some(ms) = std::env::var(var).ok().and_then(|v| v.parse().ok()) {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
    };
    pause("TRACECTL_GETPID_BEFORE_MS");
    for _ in 0..n {
        // SAFETY: getpid has no preconditions; the raw syscall avoids any caching.
        unsafe { libc::syscall(libc::SYS_getpid) };
    }
    pause("TRACECTL_GETPID_AFTER_MS");
    std::process::exit(0);
}
