//! Cgroups to count in (`perf stat -G`, `--for-each-cgroup`) and to name in a recording
//! (`perf record --all-cgroups`): found under the mount point perf uses, a cgroup v1
//! hierarchy with the `perf_event` controller or else the cgroup v2 hierarchy
//! (`/proc/self/mounts`).

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

/// The name of every cgroup, as perf walks them to match its patterns: the root first
/// (named ""), each cgroup before those below it, in the order the file system lists a
/// directory's entries; names are paths below the mount point.
pub fn all_names() -> io::Result<Vec<String>> {
    let mut names = vec![String::new()];
    walk_below(&mount_point()?, "", &mut |_, name| {
        names.push(name.to_string());
        Ok(())
    })?;
    Ok(names)
}

/// A cgroup as a PERF_RECORD_CGROUP names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupRecord {
    /// The kernel's id of the cgroup (its directory's file handle).
    pub id: u64,
    /// The path below the mount point, from "/" (the root).
    pub path: String,
}

/// Every cgroup, as `perf record --all-cgroups` walks them for its CGROUP records: in
/// [`all_names`]' order, each with its id. A cgroup whose id cannot be read ends the
/// walk, as it ends perf's: the cgroups before it come with the error.
pub fn all_records() -> (Vec<CgroupRecord>, Option<io::Error>) {
    let mut found = Vec::new();
    let walked = mount_point().and_then(|mount| {
        let mut visit = |dir: &std::path::Path, name: &str| {
            let id = super::sys::cgroup_id(dir)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
            found.push(CgroupRecord {
                id,
                path: format!("/{name}"),
            });
            Ok(())
        };
        visit(&mount, "")?;
        walk_below(&mount, "", &mut visit)
    });
    (found, walked.err())
}

/// Call `visit` with the directory and the name of each cgroup below `dir` (named
/// `rel`), each before those below it.
fn walk_below(
    dir: &std::path::Path,
    rel: &str,
    visit: &mut dyn FnMut(&std::path::Path, &str) -> io::Result<()>,
) -> io::Result<()> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", dir.display())))?;
    for entry in entries {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = match rel {
            "" => name,
            _ => format!("{rel}/{name}"),
        };
        visit(&entry.path(), &child)?;
        walk_below(&entry.path(), &child, visit)?;
    }
    Ok(())
}

/// Whether perf reads a `--for-each-cgroup` list as regular expressions: it holds one of
/// their special characters (a `.` alone does not count).
pub fn is_pattern_list(list: &str) -> bool {
    list.contains(['{', '}', '[', ']', '(', ')', '|', '*', '+', '?', '^', '$'])
}

/// The cgroups a `--for-each-cgroup` pattern list names, in walk order ([`all_names`]),
/// each once: those whose name one of the comma-separated basic regular expressions
/// (case-sensitive, unanchored) matches; an empty item names the root.
pub fn matching(list: &str) -> Result<Vec<String>, String> {
    let all = all_names().map_err(|e| format!("listing the cgroups: {e}"))?;
    let mut used = vec![false; all.len()];
    for item in list.split(',') {
        if item.is_empty() {
            used[0] = true;
            continue;
        }
        let re = crate::bre::basic_regex_exact_case(item)?;
        for (u, name) in used.iter_mut().zip(&all) {
            *u |= re.is_match(name);
        }
    }
    let names: Vec<String> = all
        .into_iter()
        .zip(used)
        .filter_map(|(n, u)| u.then_some(n))
        .collect();
    if names.is_empty() {
        return Err(format!("no cgroup matched: {list}"));
    }
    Ok(names)
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
