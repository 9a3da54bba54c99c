//! JIT perf maps (`/tmp/perf-PID.map`, `START SIZE NAME` lines): where perf 6.1 reads
//! them for a process, and the name its reports give them.

use std::path::{Path, PathBuf};

use super::nsinfo::NsInfo;
use super::symbols::SymbolTable;

/// How the names of JIT perf maps start: perf reads symbols of an object so named from
/// the map (`START SIZE NAME` lines) instead of an ELF file.
pub(super) const PERF_MAP_PREFIX: &str = "/tmp/perf-";

/// The name `perf report` shows for a JIT's perf map (`/tmp/perf-PID.map`) in its
/// `Shared Object` column, `[JIT] tid PID`; None for any other object.
pub fn jit_map_shown_name(name: &str) -> Option<String> {
    let pid = name.strip_prefix(PERF_MAP_PREFIX).and_then(scanf_int)?;
    Some(format!("[JIT] tid {pid}"))
}

/// C's `sscanf(s, "%d")`: an int after optional white space and sign, with what follows
/// ignored; None without digits.
fn scanf_int(s: &str) -> Option<i32> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\r', '\x0b', '\x0c']);
    let sign = usize::from(t.starts_with(['+', '-']));
    let digits = t[sign..].bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    // glibc gives a value out of range as the low bits of the long it read.
    let v = t[..sign + digits]
        .parse::<i64>()
        .unwrap_or(if t.starts_with('-') {
            i64::MIN
        } else {
            i64::MAX
        });
    Some(v as i32)
}

/// The symbols of the perf map of the process `ns` describes, where perf 6.1 reads it
/// (`dso__find_perf_map`): a process in another mount namespace wrote its map inside
/// it, under the pid it has in its own pid namespace, so that map is read inside the
/// namespace when it is there; otherwise (or when the process is gone)
/// `/tmp/perf-TGID.map` here.
pub(super) fn perf_map_symbols(ns: &NsInfo) -> Option<SymbolTable> {
    if ns.need_setns {
        let inside = PathBuf::from(format!("/tmp/perf-{}.map", ns.nstgid));
        // perf settles on the map inside once it can read it, whatever its load gives.
        let read = ns.enter(|| {
            std::fs::File::open(&inside)
                .ok()
                .map(|_| read_perf_map(&inside))
        });
        if let Some(table) = read {
            return table;
        }
    }
    read_perf_map(Path::new(&format!("/tmp/perf-{}.map", ns.tgid)))
}

/// The symbols of a JIT's perf map, read into memory rather than mapped: the process
/// that writes it may still be running and rewrite it while it is read.
pub(super) fn read_perf_map(path: &Path) -> Option<SymbolTable> {
    let f = std::fs::File::open(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    let mut text = Vec::new();
    std::io::Read::read_to_end(&mut &f, &mut text).ok()?;
    Some(SymbolTable::from_perf_map(&text))
}
