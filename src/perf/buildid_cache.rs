//! perf's build-id cache filled as perf 6.1's `perf record` fills it after a recording
//! (`perf_session__cache_build_ids`, `build_id_cache__add`, tools/perf/util/build-id.c),
//! so that `perf report` and `perf script` find the recorded files by their build id
//! after the files at their paths have changed.
//!
//! Each object of the BUILD_ID table gets a directory `CACHE/PATH/ID` (`PATH` the file's
//! real path, `[kernel.kallsyms]` or `[vdso]`; `ID` its build id in hex) holding:
//!
//! * `elf`: the file, hard-linked where it can be, else copied (mode 0755); a file of a
//!   process in another mount namespace is copied from inside it;
//! * `vdso` for the vDSO: perf's own image of it, written to a temporary file under
//!   `/tmp` (mode 0600) and hard-linked, else copied;
//! * `kallsyms` for the kernel: a copy of `/proc/kallsyms` (mode 0755);
//! * `debug`: the file's separate debug file when `/usr/lib/debug/.build-id/XX/REST.debug`
//!   is there (linked or copied as `elf` is);
//! * `probes`: perf's SDT probe cache, an empty file (0644 less the umask) for a file
//!   without SDT notes;
//!
//! and a symbolic link `CACHE/.build-id/XX/REST` to the directory (`../../PATH/ID`).
//!
//! Nothing that exists is replaced: a file already there is kept, as is a link already
//! there (whatever it points to); only a regular file where the directory goes (the
//! cache's old layout) is removed, as perf removes it. perf says nothing when an object
//! cannot be added and goes on with the next; here each failure is a warning.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::data::abi::misc;
use super::data::host::vdso_image;
use super::data::write::BuildIdEntry;
use super::nsinfo::NsInfo;
use super::symbols::{build_id_debug_path, build_id_hex};

/// An object of a recording that could not be added to the build-id cache. The
/// recording is complete without it.
#[derive(Debug)]
#[non_exhaustive]
pub struct CacheWarning {
    /// The object, as the BUILD_ID table names it (`[kernel.kallsyms]`, a path); None
    /// when the cache directory itself could not be made.
    pub object: Option<String>,
    /// The build-id cache.
    pub cache: PathBuf,
    /// Why.
    pub source: io::Error,
}

impl std::fmt::Display for CacheWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.object {
            Some(o) => write!(
                f,
                "{o} was not added to the build-id cache {}: {}",
                self.cache.display(),
                self.source
            ),
            None => write!(
                f,
                "cannot make the build-id cache {}: {}",
                self.cache.display(),
                self.source
            ),
        }
    }
}

impl std::error::Error for CacheWarning {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// What perf names the vDSO's directory in the cache, whatever the vDSO's name.
const VDSO_DIR: &str = "[vdso]";
/// The kernel's name in the BUILD_ID table and its directory in the cache.
const KERNEL_NAME: &str = "[kernel.kallsyms]";

/// Add each object of a recording's BUILD_ID table to the cache at `cache`, with the
/// namespaces its file was read in: the warnings of those that could not be added.
/// The cache directory is made (not its parents) when missing; when it cannot be,
/// nothing is added.
pub(super) fn add_objects(
    cache: &Path,
    objects: &[(BuildIdEntry, Option<NsInfo>)],
) -> Vec<CacheWarning> {
    let warn = |object: Option<&str>, source| CacheWarning {
        object: object.map(str::to_string),
        cache: cache.to_path_buf(),
        source,
    };
    match std::fs::DirBuilder::new().mode(0o755).create(cache) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return vec![warn(None, e)],
        _ => {}
    }
    let mut warnings = Vec::new();
    for (entry, ns) in objects {
        if let Err(e) = add_object(cache, entry, ns.as_ref()) {
            warnings.push(warn(Some(&entry.filename), e));
        }
    }
    warnings
}

/// What kind of file an object is, for its place in the cache.
enum Kind {
    Kernel,
    Vdso,
    File,
}

fn add_object(cache: &Path, entry: &BuildIdEntry, ns: Option<&NsInfo>) -> io::Result<()> {
    let name = entry.filename.as_str();
    let kind = if entry.misc & misc::CPUMODE_MASK == misc::KERNEL {
        if name != KERNEL_NAME {
            // Modules are not in the tables written here.
            return Ok(());
        }
        Kind::Kernel
    } else if matches!(name, "[vdso]" | "[vdso32]" | "[vdsox32]") {
        Kind::Vdso
    } else {
        Kind::File
    };
    let hex = build_id_hex(&entry.id);
    match kind {
        Kind::Kernel => add_file(cache, &hex, KERNEL_NAME, None, None, "kallsyms"),
        Kind::Vdso => {
            // perf writes its own image of the vDSO to a file of its own, and caches that.
            let image = vdso_image().ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, "no vDSO image in /proc/self/maps")
            })?;
            let temp = VdsoFile::write(&image)?;
            let real = std::fs::canonicalize(&temp.path)?;
            let source = Source {
                name: &temp.path,
                real: &real,
            };
            add_file(cache, &hex, VDSO_DIR, Some(source), None, "vdso")
        }
        Kind::File => {
            let real = in_ns(ns, || std::fs::canonicalize(name))?;
            let real_name = real.to_str().ok_or_else(|| {
                io::Error::new(io::ErrorKind::InvalidData, "its real path is not UTF-8")
            })?;
            let source = Source {
                name: Path::new(name),
                real: &real,
            };
            add_file(cache, &hex, real_name, Some(source), ns, "elf")
        }
    }
}

/// The file an object is read from: its name, and its real path (where a hard link is
/// made from).
#[derive(Clone, Copy)]
struct Source<'a> {
    name: &'a Path,
    real: &'a Path,
}

/// The object's directory `cache/dir/hex` with `base` in it (from `source`, or from
/// /proc/kallsyms without one), its debug file, the `.build-id` link and the probes.
fn add_file(
    cache: &Path,
    hex: &str,
    dir: &str,
    source: Option<Source<'_>>,
    ns: Option<&NsInfo>,
    base: &str,
) -> io::Result<()> {
    let rel = format!("{}/{hex}", dir.trim_start_matches('/'));
    let dir_name = cache.join(&rel);
    // The cache's old layout kept the file where the directory now goes.
    if std::fs::symlink_metadata(&dir_name).is_ok_and(|m| m.is_file()) {
        std::fs::remove_file(&dir_name)?;
    }
    make_dirs(&dir_name)?;
    let filename = dir_name.join(base);
    if !filename.exists() {
        match source {
            None => copy_file(Path::new("/proc/kallsyms"), &filename, None)?,
            Some(s) => link_or_copy(s, &filename, ns)?,
        }
    }
    if let Some(s) = source.filter(|_| base == "elf") {
        let is_module = s.name.as_os_str().as_encoded_bytes().ends_with(b".ko");
        if !is_module {
            if let Some(debug) = find_debug(hex, ns) {
                let to = dir_name.join("debug");
                if !to.exists() {
                    let from = Source {
                        name: &debug,
                        real: &debug,
                    };
                    link_or_copy(from, &to, ns)?;
                }
            }
        }
    }
    let link_dir = cache.join(".build-id").join(&hex[..2.min(hex.len())]);
    make_dirs(&link_dir)?;
    let link = link_dir.join(hex.get(2..).unwrap_or_default());
    let linked = match std::os::unix::fs::symlink(format!("../../{rel}"), &link) {
        Ok(()) => Ok(()),
        // Kept, wherever it points (perf only notes that in its debug output).
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            std::fs::read_link(&link).map(|_| ()).map_err(|e| {
                io::Error::new(e.kind(), format!("Can't read link {}: {e}", link.display()))
            })
        }
        Err(e) => Err(e),
    };
    if let Some(s) = source {
        add_probes(&link, s.real, ns)?;
    }
    linked
}

/// perf's `mkdir_p(dir, 0755)`.
fn make_dirs(dir: &Path) -> io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o755)
        .create(dir)
}

/// Runs `f` in the mount namespace of `ns` when there is one to enter, else here.
fn in_ns<T: Send>(ns: Option<&NsInfo>, f: impl FnOnce() -> T + Send) -> T {
    match ns {
        Some(ns) => ns.enter(f),
        None => f(),
    }
}

/// A hard link `to` of the file, else a copy of it (perf's `link` then `copyfile`); a
/// file of another mount namespace is always copied from inside it.
fn link_or_copy(s: Source<'_>, to: &Path, ns: Option<&NsInfo>) -> io::Result<()> {
    if let Some(ns) = ns.filter(|n| n.need_setns) {
        return copy_file(s.name, to, Some(ns));
    }
    match std::fs::hard_link(s.real, to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(_) => copy_file(s.name, to, None),
    }
}

/// perf's `copyfile`: `from` (read inside the namespace of `ns`) copied to a hidden
/// temporary file next to `to`, given mode 0755, then linked as `to`, which must not
/// exist.
fn copy_file(from: &Path, to: &Path, ns: Option<&NsInfo>) -> io::Result<()> {
    let mut src = in_ns(ns, || File::open(from))?;
    let dir = to.parent().unwrap_or(Path::new("."));
    let base = to.file_name().unwrap_or_default().to_string_lossy();
    let (temp, mut out) = create_unique(dir, &format!(".{base}."), 0o600)?;
    let copied = io::copy(&mut src, &mut out)
        .and_then(|_| out.set_permissions(std::fs::Permissions::from_mode(0o755)))
        .and_then(|()| std::fs::hard_link(&temp, to));
    drop(out);
    let _ = std::fs::remove_file(&temp);
    copied
}

/// A new file `dir/PREFIX` followed by six characters, as `mkstemp` makes one.
fn create_unique(dir: &Path, prefix: &str, mode: u32) -> io::Result<(PathBuf, File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    const LETTERS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        ^ (u64::from(std::process::id()) << 32);
    for _ in 0..100 {
        let mut n = seed.wrapping_add(NEXT.fetch_add(0x9e37_79b9_7f4a_7c15, Ordering::Relaxed));
        let mut name = prefix.to_string();
        for _ in 0..6 {
            name.push(char::from(LETTERS[(n % LETTERS.len() as u64) as usize]));
            n /= LETTERS.len() as u64;
        }
        let path = dir.join(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&path)
        {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("no free temporary name in {}", dir.display()),
    ))
}

/// The separate debug file of a build id where perf looks for one to cache
/// (`/usr/lib/debug/.build-id/XX/REST.debug`, its real path, inside the namespace of
/// `ns`), when it is there and readable.
fn find_debug(hex: &str, ns: Option<&NsInfo>) -> Option<PathBuf> {
    let id: Vec<u8> = (0..hex.len() / 2)
        .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
        .collect();
    let path = build_id_debug_path(&id)?;
    in_ns(ns, || {
        let real = std::fs::canonicalize(&path).ok()?;
        File::open(&real).ok()?;
        Some(real)
    })
}

/// perf's SDT probe cache of the object (`probes`, opened through the `.build-id`
/// link): made empty for a file without SDT notes, an existing one left as it is; one
/// that cannot be opened (a link that leads elsewhere) is passed over, as perf does.
/// A file with SDT notes is an error: its probes are not written.
fn add_probes(link: &Path, real: &Path, ns: Option<&NsInfo>) -> io::Result<()> {
    let has_sdt = in_ns(ns, || {
        super::machine::map_file(real).is_some_and(|f| has_sdt_notes(f.bytes()))
    });
    if has_sdt {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "{} has SDT notes, which its probes file would list: not written",
                real.display()
            ),
        ));
    }
    // perf notes a probes file it cannot open in its debug output only.
    let _ = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o644)
        .open(link.join("probes"));
    Ok(())
}

/// Whether an ELF file has SystemTap SDT notes (`.note.stapsdt`).
fn has_sdt_notes(elf: &[u8]) -> bool {
    use object::{Object, ObjectSection};
    object::File::parse(elf).is_ok_and(|f| {
        f.section_by_name(".note.stapsdt")
            .is_some_and(|s| s.size() > 0)
    })
}

/// A temporary copy of the vDSO image in /tmp (mode 0600, a name of six random
/// characters after its prefix), as perf writes one, removed when dropped, as perf
/// removes its copy at exit.
struct VdsoFile {
    path: PathBuf,
}

impl VdsoFile {
    fn write(image: &[u8]) -> io::Result<VdsoFile> {
        let (path, mut f) = create_unique(Path::new("/tmp"), "tracectl-vdso.so-", 0o600)?;
        let file = VdsoFile { path };
        io::Write::write_all(&mut f, image)?;
        Ok(file)
    }
}

impl Drop for VdsoFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(misc: u16, id: &[u8], name: &str) -> BuildIdEntry {
        BuildIdEntry {
            misc,
            pid: -1,
            id: id.to_vec(),
            filename: name.to_string(),
        }
    }

    /// A file is linked under its real path and build id, with an empty probes file
    /// and the `.build-id` link to its directory; what is there already is kept.
    #[test]
    fn a_file_is_linked_by_its_build_id_and_existing_entries_are_kept() {
        let d = tempfile::tempdir().unwrap();
        let prog = d.path().join("prog");
        std::fs::write(&prog, b"not really an ELF").unwrap();
        std::os::unix::fs::symlink("prog", d.path().join("alias")).unwrap();
        let cache = d.path().join("cache");
        let alias = d.path().join("alias");
        let id = [0xab, 0xcd, 0xef, 0x01];
        let e = entry(misc::USER, &id, alias.to_str().unwrap());
        let warnings = add_objects(&cache, &[(e.clone(), None)]);
        assert!(warnings.is_empty(), "{warnings:?}");
        let real = std::fs::canonicalize(&prog).unwrap();
        let rel = format!(
            "{}/abcdef01",
            real.to_str().unwrap().trim_start_matches('/')
        );
        let elf = cache.join(&rel).join("elf");
        use std::os::unix::fs::MetadataExt;
        assert_eq!(
            std::fs::metadata(&elf).unwrap().ino(),
            std::fs::metadata(&prog).unwrap().ino(),
            "a hard link"
        );
        assert_eq!(std::fs::read(cache.join(&rel).join("probes")).unwrap(), b"");
        let link = cache.join(".build-id/ab/cdef01");
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            PathBuf::from(format!("../../{rel}"))
        );
        // Again, with other contents at the path and a link elsewhere: all kept.
        std::fs::remove_file(&link).unwrap();
        std::os::unix::fs::symlink("../../elsewhere", &link).unwrap();
        std::fs::remove_file(&prog).unwrap();
        std::fs::write(&prog, b"rebuilt").unwrap();
        assert!(add_objects(&cache, &[(e, None)]).is_empty());
        assert_eq!(std::fs::read(&elf).unwrap(), b"not really an ELF");
        assert_eq!(
            std::fs::read_link(&link).unwrap(),
            PathBuf::from("../../elsewhere")
        );
    }

    /// A file that is gone is a warning naming it; the others are added all the same.
    /// A cache whose parent is missing adds nothing.
    #[test]
    fn a_missing_file_is_a_warning_and_the_rest_is_added() {
        let d = tempfile::tempdir().unwrap();
        let prog = d.path().join("prog");
        std::fs::write(&prog, b"x").unwrap();
        let cache = d.path().join("cache");
        let gone = entry(misc::USER, &[1, 2], "/nonexistent/prog");
        let here = entry(misc::USER, &[3, 4], prog.to_str().unwrap());
        let w = add_objects(&cache, &[(gone, None), (here, None)]);
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].object.as_deref(), Some("/nonexistent/prog"));
        assert!(w[0]
            .to_string()
            .starts_with("/nonexistent/prog was not added"));
        assert!(cache.join(".build-id/03/04").exists());
        assert!(!cache.join(".build-id/01").exists());
        let w = add_objects(&d.path().join("no/cache"), &[]);
        assert_eq!(w.len(), 1);
        assert!(w[0].object.is_none());
    }

    /// The cache's old layout (a file where the directory goes) is replaced.
    #[test]
    fn an_old_style_entry_is_replaced_by_the_directory() {
        let d = tempfile::tempdir().unwrap();
        let prog = d.path().join("prog");
        std::fs::write(&prog, b"x").unwrap();
        let cache = d.path().join("cache");
        let real = std::fs::canonicalize(&prog).unwrap();
        let dir = cache.join(real.to_str().unwrap().trim_start_matches('/'));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("0102"), b"old").unwrap();
        let e = entry(misc::USER, &[1, 2], prog.to_str().unwrap());
        assert!(add_objects(&cache, &[(e, None)]).is_empty());
        assert_eq!(std::fs::read(dir.join("0102/elf")).unwrap(), b"x");
    }

    /// A copy is made through a hidden temporary file and has mode 0755.
    #[test]
    fn a_copy_has_mode_0755_and_leaves_no_temporary_file() {
        let d = tempfile::tempdir().unwrap();
        let from = d.path().join("from");
        std::fs::write(&from, b"data").unwrap();
        std::fs::set_permissions(&from, std::fs::Permissions::from_mode(0o600)).unwrap();
        let to = d.path().join("to");
        copy_file(&from, &to, None).unwrap();
        assert_eq!(std::fs::read(&to).unwrap(), b"data");
        let mode = std::fs::metadata(&to).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o755);
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
        assert!(copy_file(&from, &to, None).is_err(), "never over a file");
    }
}
