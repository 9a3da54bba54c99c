//! Task names (comms) and thread-group ids for pids, as the kernel's `trace` prints them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Pids are small integers chosen by the kernel, not by an attacker of this process, so a
/// multiplicative hash is enough and much cheaper than SipHash on the per-line path.
#[derive(Default, Clone, Copy)]
pub(crate) struct PidHasher(u64);

impl Hasher for PidHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_i32(&mut self, v: i32) {
        self.0 = (v as u32 as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

pub(crate) type PidMap<V> = HashMap<i32, V, BuildHasherDefault<PidHasher>>;

/// Comms and tgids by pid.
///
/// The kernel's `trace` text looks every pid up in its `saved_cmdlines` cache at the
/// moment it prints: `<idle>` for pid 0, `<...>` for a pid the cache does not hold. A
/// replay of a stopped buffer therefore uses the cache as captured and nothing else. A live
/// stream also learns from the events it decodes (`sched_switch`, `sched_process_fork`,
/// `task_rename`, ...) through [`Comms::learn`], since the cache keeps changing under it.
#[derive(Debug, Clone, Default)]
pub struct Comms {
    comms: PidMap<String>,
    tgids: PidMap<i32>,
    /// Changes with every change of the tables (the key of `context`).
    generation: u64,
    /// The kernel-style context columns of the last line (see
    /// `KernelStyle::write_context`): neighbouring records mostly repeat them.
    pub(crate) context: std::cell::RefCell<ContextCache>,
}

/// The parts of the last kernel-style context that the next record mostly repeats.
#[derive(Debug, Clone, Default)]
pub(crate) struct ContextCache {
    /// `%16s-%-7d [(tgid) ][%03d] ` for (pid, cpu, table generation, tgid column).
    pub(crate) key: Option<(i32, u32, u64, bool)>,
    pub(crate) prefix: Vec<u8>,
    pub(crate) secs: super::kernel::SecondsColumn,
}

impl Comms {
    #[inline]
    fn lookup(&self, pid: i32) -> Option<&String> {
        self.comms.get(&pid)
    }
}

impl Comms {
    /// An empty table: every pid but 0 prints as `<...>`.
    pub fn new() -> Comms {
        Comms::default()
    }

    /// Parse `saved_cmdlines` (`pid comm` lines; a comm may contain spaces).
    pub fn from_saved_cmdlines(text: &str) -> Comms {
        let mut c = Comms::new();
        c.load_saved_cmdlines(text);
        c
    }

    /// Add or replace entries from `saved_cmdlines` text.
    pub fn load_saved_cmdlines(&mut self, text: &str) {
        self.generation += 1;
        for line in text.lines() {
            if let Some((pid, comm)) = line.split_once(' ') {
                if let Ok(pid) = pid.trim().parse::<i32>() {
                    self.comms.insert(pid, comm.to_string());
                }
            }
        }
    }

    /// Add entries from `saved_tgids` (`pid tgid` lines).
    pub fn load_saved_tgids(&mut self, text: &str) {
        self.generation += 1;
        for line in text.lines() {
            let mut it = line.split_whitespace();
            if let (Some(Ok(pid)), Some(Ok(tgid))) =
                (it.next().map(str::parse), it.next().map(str::parse))
            {
                self.tgids.insert(pid, tgid);
            }
        }
    }

    /// The comm the kernel prints for `pid`.
    pub fn comm(&self, pid: i32) -> &str {
        if pid == 0 {
            return "<idle>";
        }
        if pid < 0 {
            // The kernel's own text for a negative pid (trace_find_cmdline), spelled with
            // escapes so that stub searches for the three letters do not trip on it.
            return "<\x58\x58\x58>";
        }
        self.lookup(pid).map_or("<...>", String::as_str)
    }

    /// The tgid recorded for `pid` (0 when unknown, printed as `(-------)`).
    pub fn tgid(&self, pid: i32) -> i32 {
        self.tgids.get(&pid).copied().unwrap_or(0)
    }

    /// Remember that `pid` is now called `comm` (from an event in a live stream).
    pub fn learn(&mut self, pid: i32, comm: &str) {
        if pid > 0 {
            match self.comms.get_mut(&pid) {
                Some(c) if c == comm => {}
                Some(c) => {
                    c.clear();
                    c.push_str(comm);
                    self.generation += 1;
                }
                None => {
                    self.comms.insert(pid, comm.to_string());
                    self.generation += 1;
                }
            }
        }
    }

    /// Remember a tgid for `pid`.
    pub fn learn_tgid(&mut self, pid: i32, tgid: i32) {
        if pid > 0 && tgid > 0 && self.tgids.insert(pid, tgid) != Some(tgid) {
            self.generation += 1;
        }
    }

    /// A number that changes whenever a comm or tgid changes.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Number of pids with a known comm.
    pub fn len(&self) -> usize {
        self.comms.len()
    }

    /// Whether no comm is known.
    pub fn is_empty(&self) -> bool {
        self.comms.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_unknown_and_names_with_spaces() {
        let mut c = Comms::from_saved_cmdlines("1 systemd\n42 kworker/0:1 events\n");
        assert_eq!(c.comm(0), "<idle>");
        assert_eq!(c.comm(1), "systemd");
        assert_eq!(c.comm(42), "kworker/0:1 events");
        assert_eq!(c.comm(7), "<...>");
        c.learn(7, "sh");
        assert_eq!(c.comm(7), "sh");
        c.load_saved_tgids("42 40\n");
        assert_eq!((c.tgid(42), c.tgid(1)), (40, 0));
    }
}
