//! The namespaces of a process as perf 6.1 keeps them to find its files (`struct nsinfo`,
//! tools/perf/util/namespaces.c): the process's mount namespace, when it is not ours,
//! is where the files it mapped are opened, and its pid in its own pid namespace (the
//! last `NStgid` of its status) is the pid a JIT inside names its perf map after.
//!
//! perf looks at the process as it runs when the file is read (after the recording),
//! so a process that is gone leaves its files to be read here, at the recorded paths.
//!
//! perf enters the namespace with `setns(2)` around each look-up. A mount namespace
//! can only be entered by a thread whose root and working directory are its own, so
//! [`NsInfo::enter`] runs the look-up in a thread of its own that first stops sharing
//! them (`unshare(CLONE_FS)`); its root and working directory are then the namespace's
//! root, as perf's are. (`/proc/PID/root` would follow the process's chroot too, which
//! perf does not.)

use std::ffi::OsString;
use std::fs::File;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::sched::CloneFlags;

/// What perf's `nsinfo__new(pid)` finds about a process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NsInfo {
    /// The process, as recorded.
    pub(super) pid: i32,
    /// Its `Tgid` here.
    pub(super) tgid: i32,
    /// Its tgid in its own pid namespace (the last of its `NStgid` line).
    pub(super) nstgid: i32,
    /// Its mount namespace is not ours (perf's `need_setns`): its files are opened
    /// inside it.
    pub(super) need_setns: bool,
    /// Where its mount namespace is (`/proc/PID/ns/mnt`).
    mntns: PathBuf,
}

impl NsInfo {
    /// perf's `nsinfo__new(pid)`, looking at the process under `proc` (`/proc`) as it
    /// runs now: None for pid 0. A process that is gone, or whose files under `proc`
    /// cannot be read, keeps its pid as tgid and is read here.
    pub(super) fn read(proc: &Path, pid: i32) -> Option<NsInfo> {
        if pid == 0 {
            return None;
        }
        let mntns = proc.join(format!("{pid}/ns/mnt"));
        let mut ns = NsInfo {
            pid,
            tgid: pid,
            nstgid: pid,
            need_setns: false,
            mntns,
        };
        // perf tells mount namespaces apart by the inode alone.
        let inode = |p: &Path| std::fs::metadata(p).ok().map(|m| m.ino());
        let (Some(ours), Some(theirs)) = (inode(&proc.join("self/ns/mnt")), inode(&ns.mntns))
        else {
            return Some(ns);
        };
        let Ok(status) = std::fs::read_to_string(proc.join(format!("{pid}/status"))) else {
            // perf's nsinfo__init fails here, and the namespace is not entered.
            return Some(ns);
        };
        ns.need_setns = ours != theirs;
        for line in status.lines() {
            // The value after the line's last tab, as perf reads it with strtol.
            let last = |l: &str| l.rsplit('\t').next().map(strtol);
            if line.contains("Tgid:") {
                ns.tgid = last(line).unwrap_or(0);
                ns.nstgid = ns.tgid;
            }
            if line.contains("NStgid:") {
                ns.nstgid = last(line).unwrap_or(0);
                break;
            }
        }
        Some(ns)
    }

    /// The same process read here (perf's copy with `need_setns` cleared, which it
    /// gives the kernel's vDSO: that image is the host's).
    pub(super) fn here(&self) -> NsInfo {
        NsInfo {
            need_setns: false,
            ..self.clone()
        }
    }

    /// Runs `f` inside the process's mount namespace when it is not ours (perf's
    /// `nsinfo__mountns_enter` ... `nsinfo__mountns_exit`), else here. Where the
    /// namespace cannot be entered (the process has gone since, or we lack the
    /// privilege), `f` runs here too, as perf's look-up then does.
    pub(super) fn enter<T: Send>(&self, f: impl FnOnce() -> T + Send) -> T {
        if !self.need_setns {
            return f();
        }
        std::thread::scope(|s| {
            s.spawn(|| {
                // Opened before leaving: the path is ours.
                if let Ok(ns) = File::open(&self.mntns) {
                    if nix::sched::unshare(CloneFlags::CLONE_FS).is_ok() {
                        let _ = nix::sched::setns(&ns, CloneFlags::CLONE_NEWNS);
                    }
                }
                f()
            })
            .join()
            .unwrap_or_else(|e| std::panic::resume_unwind(e))
        })
    }
}

/// C's `strtol(s, NULL, 10)` on an int: leading white space and a sign, then digits;
/// 0 without digits.
fn strtol(s: &str) -> i32 {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let sign = usize::from(t.starts_with(['+', '-']));
    let digits = t[sign..].bytes().take_while(u8::is_ascii_digit).count();
    t[..sign + digits].parse().unwrap_or(0)
}

/// Opens `path` if it is a regular file, where perf's `dso__load` tries each candidate
/// (in the mount namespace the caller runs in): when there is no such file and the
/// file belongs to process `pid`, perf tries again under that process's root as
/// `/proc/PID/root` names it there (`filename_with_chroot`: a chrooted process mapped
/// the file by a path under its root). Gives the path that was opened, which perf
/// keeps as the object's file name.
pub(super) fn open_regular(path: &Path, pid: Option<i32>) -> Option<(PathBuf, File)> {
    let open = |p: &Path| -> Option<File> {
        let f = File::open(p).ok()?;
        f.metadata().ok()?.is_file().then_some(f)
    };
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => open(path).map(|f| (path.to_path_buf(), f)),
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let root = std::fs::read_link(format!("/proc/{}/root", pid?)).ok()?;
            let root = root.into_os_string().into_vec();
            if root == b"/" || root.windows(9).any(|w| w == b"(deleted)") {
                return None;
            }
            // perf joins them with a slash of its own: `ROOT//path`.
            let mut joined = root;
            joined.push(b'/');
            joined.extend_from_slice(path.as_os_str().as_encoded_bytes());
            let joined = PathBuf::from(OsString::from_vec(joined));
            if !std::fs::metadata(&joined).is_ok_and(|m| m.is_file()) {
                return None;
            }
            open(&joined).map(|f| (joined, f))
        }
        Err(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A process in other namespaces (pid 42 here, 7 in its own pid namespace): perf
    /// enters its mount namespace only when it differs from ours, and reads its pid
    /// there from the last `NStgid`; a process that is gone keeps its pid and is
    /// read here.
    #[test]
    fn nsinfo_of_a_process_in_other_namespaces() {
        let proc = tempfile::tempdir().unwrap();
        let p = proc.path();
        let put = |path: &str, text: &str| {
            let f = p.join(path);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, text).unwrap();
        };
        assert_eq!(NsInfo::read(p, 0), None, "pid 0 has none");
        let gone = NsInfo::read(p, 42).unwrap();
        assert_eq!((gone.tgid, gone.nstgid, gone.need_setns), (42, 42, false));
        put("self/ns/mnt", "");
        put("42/ns/mnt", "");
        put(
            "42/status",
            "Name:\tjit\nTgid:\t42\nNgid:\t0\nPid:\t42\nNStgid:\t42\t7\nNSpid:\t42\t7\n",
        );
        let ns = NsInfo::read(p, 42).unwrap();
        assert_eq!((ns.tgid, ns.nstgid, ns.need_setns), (42, 7, true));
        assert!(!ns.here().need_setns);
        // The same mount namespace: looked up here.
        std::fs::remove_file(p.join("42/ns/mnt")).unwrap();
        std::fs::hard_link(p.join("self/ns/mnt"), p.join("42/ns/mnt")).unwrap();
        let ns = NsInfo::read(p, 42).unwrap();
        assert_eq!((ns.tgid, ns.nstgid, ns.need_setns), (42, 7, false));
        // Without a status, perf's nsinfo__init fails and enters nothing.
        std::fs::remove_file(p.join("42/ns/mnt")).unwrap();
        put("42/ns/mnt", "");
        std::fs::remove_file(p.join("42/status")).unwrap();
        let ns = NsInfo::read(p, 42).unwrap();
        assert_eq!((ns.tgid, ns.nstgid, ns.need_setns), (42, 42, false));
    }

    /// A file of our own process is opened where it is; a missing one is looked for
    /// under the process's root only when that root is not `/`.
    #[test]
    fn regular_files_only_and_no_chroot_for_a_process_at_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, "x").unwrap();
        let me = std::process::id() as i32;
        assert_eq!(open_regular(&f, Some(me)).map(|(p, _)| p), Some(f.clone()));
        assert!(open_regular(dir.path(), Some(me)).is_none(), "a directory");
        let missing = dir.path().join("missing");
        if std::fs::read_link("/proc/self/root").is_ok_and(|r| r == Path::new("/")) {
            assert!(open_regular(&missing, Some(me)).is_none());
        }
        assert!(open_regular(&missing, None).is_none());
    }

    /// Entering our own mount namespace's look-alike runs the closure here.
    #[test]
    fn enter_without_a_namespace_to_enter_runs_here() {
        let ns = NsInfo {
            pid: 1,
            tgid: 1,
            nstgid: 1,
            need_setns: false,
            mntns: PathBuf::from("/nonexistent"),
        };
        let here = std::thread::current().id();
        assert_eq!(ns.enter(|| std::thread::current().id()), here);
        // A namespace that cannot be opened: run in a thread, here all the same.
        let gone = NsInfo {
            need_setns: true,
            ..ns
        };
        assert_eq!(
            gone.enter(|| std::fs::metadata("/proc/self/ns/mnt").map(|m| m.ino()).ok()),
            std::fs::metadata("/proc/self/ns/mnt").map(|m| m.ino()).ok()
        );
    }
}
