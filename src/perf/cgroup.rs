//! Cgroups to count in (`perf stat -G`, `--for-each-cgroup`): found under the mount
//! point perf uses, a cgroup v1 hierarchy with the `perf_event` controller or else the
//! cgroup v2 hierarchy (`/proc/self/mounts`).

use std::fs::File;
use std::io;
use std::path::PathBuf;

/// The mount point of the cgroup hierarchy that perf events are attached to.
pub fn mount_point() -> io::Result<PathBuf> {
    let mounts = std::fs::read_to_string("/proc/self/mounts")?;
    let all: Vec<_> = crate::tracefs::mount_lines(&mounts).collect();
    let v1 = all
        .iter()
        .find(|(_, kind, opts)| *kind == "cgroup" && opts.split(',').any(|o| o == "perf_event"));
    let v2 = all.iter().find(|(_, kind, _)| *kind == "cgroup2");
    v1.or(v2)
        .map(|(dir, _, _)| PathBuf::from(dir))
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "no cgroup file system with the perf_event controller (v1) or cgroup2 is mounted",
            )
        })
}

/// A cgroup's directory, opened for `perf_event_open`'s `PERF_FLAG_PID_CGROUP`, with the
/// path it was opened at.
#[derive(Debug)]
pub struct Cgroup {
    /// The name as given (relative to the mount point).
    pub name: String,
    /// `mount point/name`.
    pub path: PathBuf,
    /// The open directory.
    pub dir: File,
}

/// Open the cgroup `name` (a path below the mount point, as perf takes it).
pub fn open(name: &str) -> io::Result<Cgroup> {
    let path = PathBuf::from(format!("{}/{name}", mount_point()?.display()));
    let dir = File::open(&path).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("no access to cgroup {}: {e}", path.display()),
        )
    })?;
    Ok(Cgroup {
        name: name.to_string(),
        path,
        dir,
    })
}
