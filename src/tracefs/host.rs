//! Live kernel or recorded tree, and what a root says about its kernel outside tracefs.
//!
//! A root is live when it is a mounted tracefs (or debugfs); anything else is a recording
//! (a fixture tree). [`Tracefs::is_live`] is the one test for it, and [`Host`] the one
//! reader of the kernel's metadata beyond tracefs: kallsyms, uname, the online CPUs, the
//! kernel config, enum values and the page size. For a tree every answer comes from its
//! `host/` directory and nothing on this machine is read or written; a live root reads
//! /proc and /sys.

use std::collections::HashMap;
use std::path::Path;

use super::{Tracefs, TracefsError};

/// `statfs` magic numbers of the filesystems a live root lives on.
const TRACEFS_MAGIC: i64 = 0x7472_6163;
const DEBUGFS_MAGIC: i64 = 0x6462_6720;

/// Whether `path` is on a mounted tracefs/debugfs rather than a copy on disk.
pub(crate) fn on_tracefs(path: &Path) -> bool {
    match nix::sys::statfs::statfs(path) {
        Ok(s) => {
            // The magic is a C long: i32 on 32-bit targets, hence the conversion.
            #[allow(clippy::useless_conversion)]
            let ty = i64::from(s.filesystem_type().0);
            ty == TRACEFS_MAGIC || ty == DEBUGFS_MAGIC
        }
        Err(_) => false,
    }
}

impl Tracefs {
    /// Whether the root is a live kernel's tracefs (or debugfs `tracing/`) mount rather
    /// than a recorded tree.
    pub fn is_live(&self) -> bool {
        on_tracefs(self.root())
    }

    /// Fail, before anything is read or written, when the root is a recorded tree:
    /// `command` (e.g. `record`) needs a running kernel.
    pub fn require_live(&self, command: &str) -> Result<(), TracefsError> {
        if self.is_live() {
            return Ok(());
        }
        Err(TracefsError::NotLive {
            path: self.root().to_path_buf(),
            command: command.to_string(),
        })
    }

    /// The kernel metadata that goes with this root.
    pub fn host(&self) -> Host<'_> {
        Host {
            t: self,
            live: self.is_live(),
        }
    }
}

/// The switch of the kernel's function tracing (`-d`/`-D` of record).
const FTRACE_ENABLED: &str = "/proc/sys/kernel/ftrace_enabled";

/// The metadata of the kernel behind a root: this machine's for a live root, the tree's
/// `host/` files for a recording.
#[derive(Debug, Clone, Copy)]
pub struct Host<'a> {
    t: &'a Tracefs,
    live: bool,
}

impl Host<'_> {
    /// Whether the answers come from the running kernel.
    pub fn is_live(&self) -> bool {
        self.live
    }

    fn tree_file(&self, rel: &str) -> Option<Vec<u8>> {
        // Through read_file: a device or FIFO in a tree is refused, not read forever.
        super::read_file(&self.t.path(Path::new("host").join(rel))).ok()
    }

    /// The text of kallsyms: a tree's `host/kallsyms.zst` or `host/kallsyms`, or
    /// /proc/kallsyms (whose addresses read as 0 unless `kptr_restrict` allows them).
    pub fn kallsyms(&self) -> Option<String> {
        if self.live {
            return std::fs::read_to_string("/proc/kallsyms").ok();
        }
        let bytes = match self.tree_file("kallsyms.zst") {
            Some(z) => zstd::decode_all(&z[..]).ok()?,
            None => self.tree_file("kallsyms")?,
        };
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// [`Host::kallsyms`] with real addresses: live, `kptr_restrict` is lowered to 0 while
    /// /proc/kallsyms is read and put back at once (as trace-cmd does). A tree's copy is
    /// returned as it is, and /proc is not touched.
    pub fn kallsyms_with_addresses(&self) -> Option<String> {
        if !self.live {
            return self.kallsyms();
        }
        let knob = Path::new("/proc/sys/kernel/kptr_restrict");
        let old = std::fs::read_to_string(knob).ok();
        let lowered = matches!(old.as_deref().map(str::trim), Some(v) if v != "0")
            && std::fs::write(knob, "0").is_ok();
        let text = self.kallsyms();
        if let (true, Some(o)) = (lowered, old) {
            let _ = std::fs::write(knob, o.trim());
        }
        text
    }

    /// /proc/sys/kernel/ftrace_enabled (trimmed), live only.
    pub fn ftrace_enabled(&self) -> Option<String> {
        if !self.live {
            return None;
        }
        std::fs::read_to_string(FTRACE_ENABLED)
            .ok()
            .map(|s| s.trim().to_string())
    }

    /// Write /proc/sys/kernel/ftrace_enabled (`0` stops every function-tracing user, also
    /// outside tracefs). Refused on a recorded tree.
    pub fn set_ftrace_enabled(&self, value: &str) -> Result<(), TracefsError> {
        self.t.require_live("writing ftrace_enabled")?;
        std::fs::write(FTRACE_ENABLED, value).map_err(|e| TracefsError::from_io(FTRACE_ENABLED, e))
    }

    /// `uname -a`-like line: `sysname nodename release version machine` (a tree's
    /// `host/uname`, first line).
    pub fn uname_line(&self) -> Option<String> {
        if self.live {
            let u = nix::sys::utsname::uname().ok()?;
            return Some(format!(
                "{} {} {} {} {}",
                u.sysname().to_string_lossy(),
                u.nodename().to_string_lossy(),
                u.release().to_string_lossy(),
                u.version().to_string_lossy(),
                u.machine().to_string_lossy()
            ));
        }
        let text = String::from_utf8_lossy(&self.tree_file("uname")?).into_owned();
        Some(text.lines().next()?.trim().to_string())
    }

    /// uname as trace-cmd stores it in a trace.dat: `sysname nodename release machine`
    /// (empty when unknown).
    pub fn uname(&self) -> String {
        let Some(line) = self.uname_line() else {
            return String::new();
        };
        // The version (`#1 SMP PREEMPT_DYNAMIC ...`) has spaces: keep the first three
        // words and the last.
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.len() <= 4 {
            return words.join(" ");
        }
        let mut kept = words[..3].to_vec();
        kept.push(words[words.len() - 1]);
        kept.join(" ")
    }

    /// The online CPU list (`0-1`): a tree's `host/cpu_online`, or
    /// /sys/devices/system/cpu/online.
    pub fn cpu_online(&self) -> Option<String> {
        let bytes = if self.live {
            std::fs::read("/sys/devices/system/cpu/online").ok()?
        } else {
            self.tree_file("cpu_online")?
        };
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// The kernel config text: a tree's `host/config` or `host/config.gz`, or
    /// /proc/config.gz.
    pub fn config(&self) -> Option<String> {
        if !self.live {
            if let Some(b) = self.tree_file("config") {
                return Some(String::from_utf8_lossy(&b).into_owned());
            }
        }
        let gz = if self.live {
            std::fs::read("/proc/config.gz").ok()?
        } else {
            self.tree_file("config.gz")?
        };
        let mut s = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&gz[..]), &mut s).ok()?;
        Some(s)
    }

    /// The value of every enum constant the kernel knows: a tree's `host/enums` (only
    /// the constants its formats name), or the running kernel's BTF.
    pub fn enum_values(&self) -> Option<HashMap<String, i64>> {
        if self.live {
            let btf = std::fs::read("/sys/kernel/btf/vmlinux").ok()?;
            return Some(crate::btf::enums(&btf).ok()?.into_iter().collect());
        }
        let text = String::from_utf8_lossy(&self.tree_file("enums")?).into_owned();
        Some(parse_enums(&text))
    }

    /// This machine's page size for a live root; None for a tree (which does not record
    /// it: take the page size `events/header_page` describes).
    pub fn page_size(&self) -> Option<u32> {
        if !self.live {
            return None;
        }
        nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .map(|v| v as u32)
    }
}

/// `host/enums` text: `NAME VALUE` lines.
fn parse_enums(text: &str) -> std::collections::HashMap<String, i64> {
    text.lines()
        .filter_map(|l| {
            let (n, v) = l.split_once(' ')?;
            Some((n.to_string(), v.trim().parse().ok()?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree_with(files: &[(&str, &[u8])]) -> (tempfile::TempDir, Tracefs) {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("host")).unwrap();
        for (f, b) in files {
            std::fs::write(d.path().join("host").join(f), b).unwrap();
        }
        let t = Tracefs::at(d.path());
        (d, t)
    }

    #[test]
    fn a_tree_answers_from_its_host_directory_only() {
        let z = zstd::encode_all(&b"ffffffff81000000 T tree_only_symbol\n"[..], 3).unwrap();
        let (_d, t) = tree_with(&[
            ("kallsyms.zst", &z),
            (
                "uname",
                b"Linux treehost 9.9.9-tree #7 SMP PREEMPT_DYNAMIC @0 x86_64\n",
            ),
            ("cpu_online", b"0-3\n"),
            ("enums", b"I_DIRTY_SYNC 16\n"),
        ]);
        assert!(!t.is_live());
        let h = t.host();
        assert_eq!(
            h.kallsyms().as_deref(),
            Some("ffffffff81000000 T tree_only_symbol\n")
        );
        assert_eq!(h.kallsyms_with_addresses(), h.kallsyms());
        assert_eq!(h.uname(), "Linux treehost 9.9.9-tree x86_64");
        assert_eq!(h.cpu_online().as_deref(), Some("0-3\n"));
        assert_eq!(h.enum_values().unwrap()["I_DIRTY_SYNC"], 16);
        assert_eq!(h.page_size(), None);
        assert_eq!(h.config(), None);
    }

    #[test]
    fn a_tree_without_host_files_knows_nothing() {
        let (_d, t) = tree_with(&[]);
        let h = t.host();
        assert_eq!(h.kallsyms(), None);
        assert_eq!(h.uname(), "");
        assert_eq!(h.cpu_online(), None);
        assert!(h.enum_values().is_none());
        let e = t.require_live("record").unwrap_err().to_string();
        assert!(e.contains("recorded tree") && e.contains("record"), "{e}");
    }
}
