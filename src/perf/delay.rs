//! perf's `-D/--delay MS` of `perf stat` and `perf record`: the events are opened
//! disabled and enabled MS milliseconds after the command starts, or never with -1.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// When the events start, relative to the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum InitialDelay {
    /// With the command (`-D 0`, or no `-D`).
    #[default]
    Now,
    /// This long after the command starts.
    After(Duration),
    /// Never (`-D -1`): the events stay disabled.
    Never,
}

impl InitialDelay {
    /// `-D MS` as perf takes it: 0 for none, -1 for never; None below -1.
    pub fn from_ms(ms: i64) -> Option<InitialDelay> {
        match ms {
            0 => Some(InitialDelay::Now),
            -1 => Some(InitialDelay::Never),
            ms if ms > 0 => Some(InitialDelay::After(Duration::from_millis(ms as u64))),
            _ => None,
        }
    }

    /// Whether the events are opened disabled and started later (or never).
    pub fn is_delayed(self) -> bool {
        self != InitialDelay::Now
    }

    /// Sleep until the delay counted from `start` is over, or until `stop` is set; true
    /// when the events are then to be enabled (not for [`InitialDelay::Never`] or
    /// [`InitialDelay::Now`], whose events start otherwise).
    pub fn wait_from(self, start: Instant, stop: &AtomicBool) -> bool {
        let InitialDelay::After(d) = self else {
            return false;
        };
        let until = start + d;
        while Instant::now() < until && !stop.load(Ordering::SeqCst) {
            std::thread::sleep(
                until
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(10)),
            );
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_read_as_perf_takes_them() {
        assert_eq!(InitialDelay::from_ms(0), Some(InitialDelay::Now));
        assert_eq!(InitialDelay::from_ms(-1), Some(InitialDelay::Never));
        assert_eq!(
            InitialDelay::from_ms(50),
            Some(InitialDelay::After(Duration::from_millis(50)))
        );
        assert_eq!(InitialDelay::from_ms(-2), None);
        let stop = AtomicBool::new(false);
        let t = Instant::now();
        assert!(InitialDelay::from_ms(30).unwrap().wait_from(t, &stop));
        assert!(t.elapsed() >= Duration::from_millis(30));
        assert!(!InitialDelay::Never.wait_from(t, &stop));
    }
}
