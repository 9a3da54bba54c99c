//! The clocks a recording can stamp its samples with (`perf record -k`), by the names
//! perf takes and prints (tools/perf/util/clockid.c), and a reading of one against the
//! time of day (the CLOCK_DATA feature).

/// `clockid_t` names as perf takes them; the first name of a clock is the one printed.
pub const CLOCKIDS: [(&str, i32); 9] = [
    ("monotonic", libc::CLOCK_MONOTONIC),
    ("monotonic_raw", libc::CLOCK_MONOTONIC_RAW),
    ("realtime", libc::CLOCK_REALTIME),
    ("boottime", libc::CLOCK_BOOTTIME),
    ("tai", libc::CLOCK_TAI),
    ("mono", libc::CLOCK_MONOTONIC),
    ("raw", libc::CLOCK_MONOTONIC_RAW),
    ("real", libc::CLOCK_REALTIME),
    ("boot", libc::CLOCK_BOOTTIME),
];

/// perf's name of a clock id (`(not found)` for one it has no name for).
pub fn clockid_name(id: i32) -> &'static str {
    CLOCKIDS
        .iter()
        .find(|(_, c)| *c == id)
        .map_or("(not found)", |(n, _)| n)
}

/// A clock as perf's `-k` takes it: a number (its leading digits, as `sscanf("%d")`),
/// or a name of [`CLOCKIDS`] in any case, with or without a `CLOCK_` prefix.
pub fn parse_clockid(s: &str) -> Option<i32> {
    let t = s.trim_start();
    let sign_len = usize::from(t.starts_with(['-', '+']));
    let digits = t[sign_len..].bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        return t[..sign_len + digits].parse().ok();
    }
    let name = match s.get(..6) {
        Some(p) if p.eq_ignore_ascii_case("CLOCK_") => &s[6..],
        _ => s,
    };
    CLOCKIDS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, c)| *c)
}

/// One reading of a clock next to the time of day, and the clock's resolution: what the
/// CLOCKID and CLOCK_DATA features store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockReference {
    /// The clock.
    pub clockid: i32,
    /// Its resolution in ns (0 when the kernel does not say).
    pub res_ns: u64,
    /// Time of day, ns since the epoch.
    pub tod_ns: u64,
    /// The clock at the same moment, ns.
    pub clockid_ns: u64,
}

impl ClockReference {
    /// Read `clockid` and the time of day now; None when the kernel has no such clock.
    pub fn now(clockid: i32) -> Option<ClockReference> {
        use nix::time::{clock_getres, clock_gettime, ClockId};
        let id = ClockId::from_raw(clockid);
        let ns = |t: nix::sys::time::TimeSpec| {
            (t.tv_sec() as u64)
                .wrapping_mul(1_000_000_000)
                .wrapping_add(t.tv_nsec() as u64)
        };
        let res_ns = clock_getres(id).map(ns).unwrap_or(0);
        let tod = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()?;
        // perf takes the time of day in microseconds.
        let tod_ns = tod.as_micros() as u64 * 1000;
        let clockid_ns = ns(clock_gettime(id).ok()?);
        Some(ClockReference {
            clockid,
            res_ns,
            tod_ns,
            clockid_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_are_named_as_perf_names_them() {
        assert_eq!(parse_clockid("mono"), Some(1));
        assert_eq!(parse_clockid("CLOCK_BOOTTIME"), Some(7));
        assert_eq!(parse_clockid("clock_tai"), Some(11));
        assert_eq!(parse_clockid("Monotonic_Raw"), Some(4));
        assert_eq!(parse_clockid("5"), Some(5));
        assert_eq!(parse_clockid("foo"), None);
        assert_eq!(clockid_name(1), "monotonic");
        assert_eq!(clockid_name(99), "(not found)");
    }
}
