//! Finding (and if need be mounting) the tracefs root.

use std::path::{Path, PathBuf};

use super::{Tracefs, TracefsError};

/// One line of /proc/mounts that can hold tracefs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// Where the tracing files are: the tracefs mount point, or `<debugfs>/tracing`.
    pub root: PathBuf,
    /// `tracefs` or `debugfs`.
    pub fstype: String,
    /// Mounted with `ro`.
    pub read_only: bool,
}

/// Each line of a /proc/mounts text as (mount point, file system type, options), the
/// mount point's octal escapes undone; lines of fewer than four fields are left out.
pub fn mount_lines(text: &str) -> impl Iterator<Item = (String, &str, &str)> {
    text.lines().filter_map(|line| {
        let mut it = line.split_whitespace();
        let (_src, dir, fstype, opts) = (it.next()?, it.next()?, it.next()?, it.next()?);
        Some((unescape_mount_path(dir), fstype, opts))
    })
}

/// The tracefs (and debugfs `tracing/`) roots listed in a /proc/mounts text, tracefs first.
pub fn parse_mounts(text: &str) -> Vec<MountEntry> {
    let mut tracefs = Vec::new();
    let mut debugfs = Vec::new();
    for (dir, fstype, opts) in mount_lines(text) {
        let read_only = opts.split(',').any(|o| o == "ro");
        match fstype {
            "tracefs" => tracefs.push(MountEntry {
                root: PathBuf::from(dir),
                fstype: fstype.into(),
                read_only,
            }),
            "debugfs" => debugfs.push(MountEntry {
                root: Path::new(&dir).join("tracing"),
                fstype: fstype.into(),
                read_only,
            }),
            _ => {}
        }
    }
    tracefs.extend(debugfs);
    tracefs
}

/// /proc/mounts writes space, tab, newline and backslash as octal escapes.
fn unescape_mount_path(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Where tracefs usually lives when /proc/mounts does not say.
pub const USUAL_PATHS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// A directory looks like a tracing root when it has the files every kernel has.
pub fn looks_like_tracefs(dir: &Path) -> bool {
    dir.join("trace").exists()
        || dir.join("available_events").exists()
        || dir.join("events").is_dir()
}

impl Tracefs {
    /// Find the live tracefs root: /proc/mounts (tracefs, else debugfs + `tracing/`), then
    /// the usual paths; when none is there and we are root, mount tracefs at
    /// /sys/kernel/tracing.
    pub fn discover() -> Result<Tracefs, TracefsError> {
        let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
        let entries = parse_mounts(&mounts);
        for e in &entries {
            // A read-only mount still serves list/show/stat; writes fail with EROFS,
            // which becomes TracefsError::ReadOnly naming the file.
            if looks_like_tracefs(&e.root) {
                return Ok(Tracefs::at(&e.root));
            }
        }
        for p in USUAL_PATHS {
            if looks_like_tracefs(Path::new(p)) {
                return Ok(Tracefs::at(p));
            }
        }
        if !nix::unistd::geteuid().is_root() {
            return Err(TracefsError::NotMounted {
                detail: "tracefs is not mounted and mounting it needs root: run as root, or \
                         `sudo mount -t tracefs nodev /sys/kernel/tracing`, or pass --tracefs DIR"
                    .into(),
            });
        }
        let target = Path::new(USUAL_PATHS[0]);
        nix::mount::mount(
            Some("nodev"),
            target,
            Some("tracefs"),
            nix::mount::MsFlags::empty(),
            None::<&str>,
        )
        .map_err(|e| TracefsError::NotMounted {
            detail: format!(
                "not mounted, and mounting tracefs on {} failed: {e} (is CONFIG_TRACING enabled? \
                     pass --tracefs DIR to use another root)",
                target.display()
            ),
        })?;
        Ok(Tracefs::at(target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mounts_prefer_tracefs_over_debugfs() {
        let text = "sysfs /sys sysfs rw 0 0\n\
                    debugfs /sys/kernel/debug debugfs rw,relatime 0 0\n\
                    tracefs /sys/kernel/tracing tracefs rw,nosuid 0 0\n\
                    tracefs /mnt/my\\040trace tracefs ro 0 0\n";
        let m = parse_mounts(text);
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].root, PathBuf::from("/sys/kernel/tracing"));
        assert!(!m[0].read_only);
        assert_eq!(m[1].root, PathBuf::from("/mnt/my trace"));
        assert!(m[1].read_only);
        assert_eq!(m[2].root, PathBuf::from("/sys/kernel/debug/tracing"));
        assert_eq!(m[2].fstype, "debugfs");
    }
}
