//! `perf record --switch-output`: the recording goes on in a new file when SIGUSR2 comes,
//! when the file reaches a size, or every so many seconds, each finished file renamed
//! `<output>.<timestamp>` as perf names it (`--timestamp-filename` renames only the last
//! one), and the oldest ones removed beyond `--switch-max-files`.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// When the output switches to a new file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwitchTrigger {
    /// At each SIGUSR2 (`signal`, and the option without a value).
    Signal,
    /// Once the file's records reach this many bytes (`SIZE` with B, K, M or G); 0 never.
    Size(u64),
    /// Every this many seconds (`TIME` with s, m, h or d); 0 never.
    Time(u64),
}

/// perf's size units: B, K, M and G.
pub const SIZE_TAGS: [(char, u64); 4] = [('B', 1), ('K', 1 << 10), ('M', 1 << 20), ('G', 1 << 30)];

/// perf's time units: s, m, h and d.
pub const TIME_TAGS: [(char, u64); 4] = [('s', 1), ('m', 60), ('h', 3600), ('d', 86400)];

/// perf's reading of a number with a unit letter (`parse_tag_value`): the first of the
/// letters found in the text must come right after the number (as C's `strtoul` reads it,
/// a minus sign negating in unsigned arithmetic), which is multiplied by the letter's
/// factor; None otherwise, on overflow, or for all ones (perf's refusal).
pub fn tagged_value(s: &str, tags: &[(char, u64)]) -> Option<u64> {
    let (tag, mult) = tags.iter().find(|(t, _)| s.contains(*t))?;
    let at = s.find(*tag)?;
    // strtoul: leading white space, a sign, decimal digits; no digits reads nothing.
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let (negative, body) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    let end = if digits == 0 {
        0
    } else {
        s.len() - body.len() + digits
    };
    if end != at {
        return None;
    }
    let value = match digits {
        0 => 0,
        _ => {
            let v = body[..digits].parse::<u64>().unwrap_or(u64::MAX);
            if negative {
                v.wrapping_neg()
            } else {
                v
            }
        }
    };
    if value > u64::MAX / mult {
        return None;
    }
    // perf takes an all-ones result for a refusal.
    Some(value * mult).filter(|&v| v != u64::MAX)
}

impl SwitchTrigger {
    /// Read `--switch-output`'s value as perf does: `signal`, a size with B, K, M or G,
    /// else a time with s, m, h or d (`1m` is a minute, `1M` a MiB). None for what perf
    /// refuses.
    pub fn parse(value: &str) -> Option<SwitchTrigger> {
        if value == "signal" {
            return Some(SwitchTrigger::Signal);
        }
        if let Some(n) = tagged_value(value, &SIZE_TAGS) {
            return Some(SwitchTrigger::Size(n));
        }
        tagged_value(value, &TIME_TAGS).map(SwitchTrigger::Time)
    }
}

/// How a recording names and keeps its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchOutput {
    /// When to switch to a new file; None renames the last file only
    /// (`--timestamp-filename`).
    pub trigger: Option<SwitchTrigger>,
    /// `--switch-max-files`: the most files kept, the oldest removed; 0 keeps them all.
    pub max_files: usize,
}

/// The time as perf stamps a file name: the local date and time to the hundredth of a
/// second, `YYYYmmddHHMMSScc`.
pub fn timestamp_now() -> String {
    let now = chrono::Local::now();
    format!(
        "{}{:02}",
        now.format("%Y%m%d%H%M%S"),
        now.timestamp_subsec_micros() / 10_000
    )
}

/// `path` with `.stamp` after its name.
pub fn stamped(path: &Path, stamp: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".");
    p.push(stamp);
    PathBuf::from(p)
}

/// The files written so far, the oldest removed once there are more than the most kept
/// (perf removes them as it writes the next).
#[derive(Debug, Default)]
pub struct Rotation {
    max: usize,
    kept: VecDeque<PathBuf>,
}

impl Rotation {
    /// Keep at most `max` files (0: all).
    pub fn new(max: usize) -> Rotation {
        Rotation {
            max,
            kept: VecDeque::new(),
        }
    }

    /// A file was written: remove the oldest beyond the limit, returning those that could
    /// not be removed, with why.
    pub fn add(&mut self, path: PathBuf) -> Vec<(PathBuf, std::io::Error)> {
        let mut failed = Vec::new();
        if self.max == 0 {
            return failed;
        }
        self.kept.push_back(path);
        while self.kept.len() > self.max {
            if let Some(old) = self.kept.pop_front() {
                if let Err(e) = std::fs::remove_file(&old) {
                    failed.push((old, e));
                }
            }
        }
        failed
    }
}

static SWITCH: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigusr2(_: libc::c_int) {
    SWITCH.store(true, Ordering::SeqCst);
}

/// As perf record: SIGUSR2 asks for a switch while `switching`, and is ignored otherwise.
pub fn catch_sigusr2(switching: bool) {
    use nix::sys::signal::{sigaction, SaFlags, SigAction, SigHandler, SigSet, Signal};
    let handler = if switching {
        SigHandler::Handler(on_sigusr2)
    } else {
        SigHandler::SigIgn
    };
    let action = SigAction::new(handler, SaFlags::empty(), SigSet::empty());
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    let _ = unsafe { sigaction(Signal::SIGUSR2, &action) };
}

/// Whether a SIGUSR2 came since the last call.
pub fn take_signal() -> bool {
    SWITCH.swap(false, Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// perf 6.1's `switch_output_setup`: sizes first, then times, the unit right after
    /// the number; `perf record --switch-output=100` and `=1x` are refused there.
    #[test]
    fn values_read_as_perf_reads_them() {
        use SwitchTrigger::*;
        assert_eq!(SwitchTrigger::parse("signal"), Some(Signal));
        assert_eq!(SwitchTrigger::parse("10K"), Some(Size(10 << 10)));
        assert_eq!(SwitchTrigger::parse("3B"), Some(Size(3)));
        assert_eq!(SwitchTrigger::parse("2M"), Some(Size(2 << 20)));
        assert_eq!(SwitchTrigger::parse("1m"), Some(Time(60)));
        assert_eq!(SwitchTrigger::parse("30s"), Some(Time(30)));
        assert_eq!(SwitchTrigger::parse("2h"), Some(Time(7200)));
        assert_eq!(SwitchTrigger::parse("1d"), Some(Time(86400)));
        // No digits before the unit: strtoul reads 0 there.
        assert_eq!(SwitchTrigger::parse("K"), Some(Size(0)));
        for bad in ["100", "1x", "", "Signal", "1 K", "10KB"] {
            assert_eq!(SwitchTrigger::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn stamps_have_perfs_length() {
        let t = timestamp_now();
        assert_eq!(t.len(), "2015122520103046".len(), "{t}");
        assert!(t.bytes().all(|b| b.is_ascii_digit()), "{t}");
        assert_eq!(
            stamped(Path::new("dir/x.data"), "2015122520103046"),
            PathBuf::from("dir/x.data.2015122520103046")
        );
    }

    #[test]
    fn rotation_removes_the_oldest() {
        let d = tempfile::tempdir().unwrap();
        let mut r = Rotation::new(2);
        let files: Vec<PathBuf> = (0..4).map(|i| d.path().join(format!("f{i}"))).collect();
        for f in &files {
            std::fs::write(f, b"x").unwrap();
            assert!(r.add(f.clone()).is_empty());
        }
        let left: Vec<bool> = files.iter().map(|f| f.exists()).collect();
        assert_eq!(left, [false, false, true, true]);
    }
}
