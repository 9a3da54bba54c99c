//! Where perf 6.1 finds the files of a user object's symbols (`dso__load`,
//! tools/perf/util/symbol.c): it tries the places of its `binary_type_symtab` table in
//! order ([`SEARCH_ORDER`]) and keeps the first file with a `.symtab` for the symbols and
//! the first file with a `.dynsym` as the one that was mapped (its sections place the
//! symbols and give the PLT), stopping once it has both. A file is used only when its
//! build id is the object's (`symsrc__init`), when the object has one: the one the
//! recording gave it, else the one of the file at its path.
//!
//! With `--symfs DIR` every place but the build-id cache is under `DIR` (and the cache
//! is `DIR/.debug`, see [`super::machine::build_id_cache`]).

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

use super::symbols::{build_id_hex, elf_build_id, elf_symbol_tables};

/// One place perf looks for an object's symbols (its `enum dso_binary_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BinaryType {
    /// The file `.gnu_debuglink` names, next to the object (`DEBUGLINK`).
    Debuglink,
    /// `CACHE/.build-id/XX/REST/elf` (`vdso` for the vDSO): perf's copy of the object.
    BuildIdCache,
    /// `CACHE/.build-id/XX/REST/debug`: perf's copy of its debug file.
    BuildIdCacheDebug,
    /// `/usr/lib/debug/PATH.debug` (`FEDORA_DEBUGINFO`).
    FedoraDebug,
    /// `/usr/lib/debug/PATH` (`UBUNTU_DEBUGINFO`).
    UbuntuDebug,
    /// `/usr/lib/debug/.build-id/XX/REST.debug` (`BUILDID_DEBUGINFO`).
    BuildIdDebug,
    /// The object's own path (`SYSTEM_PATH_DSO`).
    SystemPath,
    /// `DIR/.debug/NAME` for `DIR/NAME` (`OPENEMBEDDED_DEBUGINFO`).
    OpenEmbeddedDebug,
    /// `/usr/lib/debug/lib/...` for `/usr/lib/...` (`MIXEDUP_UBUNTU_DEBUGINFO`).
    MixedUpUbuntuDebug,
}

/// perf 6.1's `binary_type_symtab` as it applies to a user object.
pub(super) const SEARCH_ORDER: [BinaryType; 9] = [
    BinaryType::Debuglink,
    BinaryType::BuildIdCache,
    BinaryType::BuildIdCacheDebug,
    BinaryType::FedoraDebug,
    BinaryType::UbuntuDebug,
    BinaryType::BuildIdDebug,
    BinaryType::SystemPath,
    BinaryType::OpenEmbeddedDebug,
    BinaryType::MixedUpUbuntuDebug,
];

/// What the search knows of one object.
pub(super) struct Wanted<'a> {
    /// The path the recording names (perf's `long_name`).
    pub(super) path: &'a str,
    /// The object's build id, if it has one.
    pub(super) build_id: Option<&'a [u8]>,
    /// `--symfs`.
    pub(super) symfs: Option<&'a Path>,
    /// perf's build-id cache.
    pub(super) cache: &'a Path,
    /// Whether the object is the kernel's vDSO (kept in the cache as `vdso`).
    pub(super) vdso: bool,
}

/// A file the search opened: its bytes are kept by the caller's type `F`.
pub(super) trait OpenedFile {
    /// The file's bytes.
    fn bytes(&self) -> &[u8];
}

/// The files perf reads an object's symbols from.
pub(super) struct SymbolFiles<F> {
    /// The first file with a `.dynsym` (perf's `runtime_ss`).
    pub(super) runtime: Option<F>,
    /// The first file with a `.symtab` (perf's `syms_ss`), when it is not `runtime`.
    pub(super) syms: Option<F>,
    /// Whether `runtime` is also the file with the `.symtab`.
    pub(super) runtime_has_symtab: bool,
}

/// `path` under `--symfs` (perf's `__symbol__join_symfs`).
pub(super) fn under_symfs(symfs: Option<&Path>, path: &str) -> PathBuf {
    match symfs {
        Some(root) => {
            let mut s = root.as_os_str().to_os_string();
            s.push("/");
            s.push(path);
            PathBuf::from(s)
        }
        None => PathBuf::from(path),
    }
}

/// perf's `dso__build_id_equal`: the same bytes; an id of 20 bytes (the size the
/// BUILD_ID feature holds) also equals a shorter one it starts with, followed by zeros.
pub(super) fn build_ids_equal(want: &[u8], got: &[u8]) -> bool {
    if want.len() > got.len() && want.len() == 20 {
        return want.starts_with(got) && want[got.len()..].iter().all(|&b| b == 0);
    }
    want == got
}

/// The path of `ty` for `o`, or None where perf has none (`dso__read_binary_type_filename`
/// failing). `exists(path, cache)` says whether a regular file is there (the cache's
/// paths are looked up outside the object's mount namespace); `debuglink(path)` reads the
/// `.gnu_debuglink` name of the file at `path`.
pub(super) fn binary_type_path(
    ty: BinaryType,
    o: &Wanted<'_>,
    exists: &dyn Fn(&Path, bool) -> bool,
    debuglink: &dyn Fn(&Path) -> Option<String>,
) -> Option<PathBuf> {
    let symfs = |p: &str| under_symfs(o.symfs, p);
    let hex = o.build_id.map(build_id_hex);
    // perf's `dso__build_id_filename`: the cache's link, or the file in the directory
    // it points to (an old cache holds the file at the link itself).
    let cached = |base: &str| -> Option<PathBuf> {
        let hex = hex.as_ref()?;
        if hex.len() < 2 {
            return None;
        }
        let link = o.cache.join(".build-id").join(&hex[..2]).join(&hex[2..]);
        Some(if exists(&link, true) {
            link
        } else {
            link.join(base)
        })
    };
    match ty {
        BinaryType::Debuglink => {
            let file = symfs(o.path);
            if !exists(&file, false) {
                return None;
            }
            let link = debuglink(&file)?;
            let file = file.to_string_lossy().into_owned();
            let dir = &file[..file.rfind('/').unwrap_or(0)];
            [
                link.clone(),
                format!("{dir}/{link}"),
                format!("{dir}/.debug/{link}"),
                format!("/usr/lib/debug{dir}/{link}"),
            ]
            .into_iter()
            .map(PathBuf::from)
            .find(|p| exists(p, false))
        }
        BinaryType::BuildIdCache => cached(if o.vdso { "vdso" } else { "elf" }),
        BinaryType::BuildIdCacheDebug => cached("debug"),
        BinaryType::FedoraDebug => Some(symfs(&format!("/usr/lib/debug{}.debug", o.path))),
        BinaryType::UbuntuDebug => Some(symfs(&format!("/usr/lib/debug{}", o.path))),
        BinaryType::BuildIdDebug => {
            let hex = hex.as_ref()?;
            let (head, rest) = hex.split_at(2.min(hex.len()));
            Some(symfs(&format!(
                "/usr/lib/debug/.build-id/{head}/{rest}.debug"
            )))
        }
        BinaryType::SystemPath => Some(symfs(o.path)),
        BinaryType::OpenEmbeddedDebug => {
            // perf copies the name up to its last slash, or its first character when it
            // has none, then `.debug` and the rest from that slash (or the whole name).
            // In bytes: a recorded name's first character may be any byte.
            let p = o.path.as_bytes();
            let slash = p.iter().rposition(|&b| b == b'/').unwrap_or(0);
            let mut name = p[..(slash + 1).min(p.len())].to_vec();
            name.extend_from_slice(b".debug");
            name.extend_from_slice(&p[slash..]);
            Some(symfs(&String::from_utf8_lossy(&name)))
        }
        BinaryType::MixedUpUbuntuDebug => {
            let rest = o.path.strip_prefix("/usr/lib/")?;
            Some(symfs(&format!("/usr/lib/debug/lib/{rest}")))
        }
    }
}

/// What perf's `symsrc__init` sees in a file: None when it is not an ELF file it can
/// use for `o` (not ELF, or without the object's build id); else whether it has a
/// `.symtab` and a `.dynsym` (see [`elf_symbol_tables`]).
pub(super) fn symbol_source(data: &[u8], o: &Wanted<'_>) -> Option<(bool, bool)> {
    let tables = elf_symbol_tables(data)?;
    if let Some(want) = o.build_id {
        let got = elf_build_id(data)?;
        if !build_ids_equal(want, &got) {
            return None;
        }
    }
    Some(tables)
}

/// The name a file's `.gnu_debuglink` section holds (perf's `filename__read_debuglink`).
pub(super) fn debuglink_of(data: &[u8]) -> Option<String> {
    let file = object::File::parse(data).ok()?;
    let section = file.section_by_name(".gnu_debuglink")?;
    let bytes = section.data().ok()?;
    let name = &bytes[..memchr::memchr(0, bytes).unwrap_or(bytes.len())];
    Some(String::from_utf8_lossy(name).into_owned())
}

/// perf's search for the symbol files of `o`: each place of [`SEARCH_ORDER`] in turn,
/// `open(path, cache)` opening a regular file there.
pub(super) fn find<F: OpenedFile>(
    o: &Wanted<'_>,
    open: &dyn Fn(&Path, bool) -> Option<F>,
) -> SymbolFiles<F> {
    let exists = |p: &Path, cache: bool| open(p, cache).is_some();
    let debuglink = |p: &Path| open(p, false).and_then(|f| debuglink_of(f.bytes()));
    let mut out = SymbolFiles {
        runtime: None,
        syms: None,
        runtime_has_symtab: false,
    };
    let mut have_syms = false;
    for ty in SEARCH_ORDER {
        let Some(path) = binary_type_path(ty, o, &exists, &debuglink) else {
            continue;
        };
        let cache = matches!(ty, BinaryType::BuildIdCache | BinaryType::BuildIdCacheDebug);
        let Some(file) = open(&path, cache) else {
            continue;
        };
        let Some((symtab, dynsym)) = symbol_source(file.bytes(), o) else {
            continue;
        };
        let take_syms = !have_syms && symtab;
        let take_runtime = out.runtime.is_none() && dynsym;
        if take_runtime {
            out.runtime = Some(file);
            out.runtime_has_symtab = take_syms;
        } else if take_syms {
            out.syms = Some(file);
        }
        have_syms |= take_syms;
        if have_syms && out.runtime.is_some() {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object<'a>(path: &'a str, id: Option<&'a [u8]>, symfs: Option<&'a Path>) -> Wanted<'a> {
        Wanted {
            path,
            build_id: id,
            symfs,
            cache: Path::new("/c"),
            vdso: false,
        }
    }

    /// The paths perf stats for `/usr/lib/x/libz.so` (seen with strace on perf 6.1):
    /// every place of the table but the debug link, which needs the file.
    #[test]
    fn paths_in_perf_s_order() {
        let id = [0xab, 0xcd, 0xef];
        let symfs = Path::new("s");
        let o = object("/usr/lib/x/libz.so", Some(&id), Some(symfs));
        let none = |_: &Path, _: bool| false;
        let no_link = |_: &Path| None;
        let paths: Vec<String> = SEARCH_ORDER
            .iter()
            .filter_map(|&t| binary_type_path(t, &o, &none, &no_link))
            .map(|p| p.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            paths,
            [
                "/c/.build-id/ab/cdef/elf",
                "/c/.build-id/ab/cdef/debug",
                "s//usr/lib/debug/usr/lib/x/libz.so.debug",
                "s//usr/lib/debug/usr/lib/x/libz.so",
                "s//usr/lib/debug/.build-id/ab/cdef.debug",
                "s//usr/lib/x/libz.so",
                "s//usr/lib/x/.debug/libz.so",
                "s//usr/lib/debug/lib/x/libz.so",
            ]
        );
    }

    /// A recorded name without a slash that starts with a character of several bytes
    /// (a corrupt file's) gives a place to try, not a panic.
    #[test]
    fn a_name_without_a_slash_in_any_bytes() {
        let o = object("\u{e9}x]", None, None);
        let none = |_: &Path, _: bool| false;
        let no_link = |_: &Path| None;
        let p = binary_type_path(BinaryType::OpenEmbeddedDebug, &o, &none, &no_link);
        assert!(p.is_some_and(|p| p.to_string_lossy().contains(".debug")));
    }

    /// The debug link is looked for as named (from the working directory), next to the
    /// file, in its `.debug` directory and under `/usr/lib/debug`; an old cache keeps
    /// the file at the link.
    #[test]
    fn debug_link_and_old_cache() {
        let id = [0xab, 0xcd];
        let o = object("/t/prog", Some(&id), None);
        let link = |_: &Path| Some("prog.dbg".to_string());
        for (there, want) in [
            ("prog.dbg", "prog.dbg"),
            ("/t/prog.dbg", "/t/prog.dbg"),
            ("/t/.debug/prog.dbg", "/t/.debug/prog.dbg"),
            ("/usr/lib/debug/t/prog.dbg", "/usr/lib/debug/t/prog.dbg"),
        ] {
            let exists = |p: &Path, _: bool| p == Path::new("/t/prog") || p == Path::new(there);
            let got = binary_type_path(BinaryType::Debuglink, &o, &exists, &link);
            assert_eq!(got.as_deref(), Some(Path::new(want)));
        }
        let old = |p: &Path, cache: bool| cache && p == Path::new("/c/.build-id/ab/cd");
        let got = binary_type_path(BinaryType::BuildIdCache, &o, &old, &link);
        assert_eq!(got.as_deref(), Some(Path::new("/c/.build-id/ab/cd")));
    }

    /// An id of 20 bytes matches a shorter one padded with zeros, as in perf.
    #[test]
    fn padded_build_ids_match() {
        let mut padded = [0u8; 20];
        padded[..16].copy_from_slice(&[7; 16]);
        assert!(build_ids_equal(&padded, &[7; 16]));
        assert!(!build_ids_equal(&padded, &[7; 15]));
        assert!(!build_ids_equal(&[7; 16], &padded));
        assert!(build_ids_equal(&[1, 2], &[1, 2]));
    }
}
