//! The one way a test skips: it says why, and under `TRACECTL_REQUIRE_ALL=1` (set by
//! `scripts/test.sh`, which CI runs) a skip is a failure, so a suite that could not run
//! its live, oracle, VM or trace-cmd tests does not pass.
#![allow(dead_code)]

/// Whether skips are failures (`TRACECTL_REQUIRE_ALL=1`).
pub fn required() -> bool {
    std::env::var("TRACECTL_REQUIRE_ALL").as_deref() == Ok("1")
}

/// Skip the calling test for `reason` (the caller returns right after): printed, or a
/// panic when every test is required to run.
#[track_caller]
pub fn skip(reason: impl std::fmt::Display) {
    if required() {
        panic!("cannot run under TRACECTL_REQUIRE_ALL=1: {reason}");
    }
    eprintln!("skipped: {reason}");
}
