//! Where the kallsyms text of a perf.data's kernel comes from, as perf 6.1 decides
//! it: for tracepoint text ([`KallsymsSource::for_file`]) and for the kernel frames
//! of samples ([`KallsymsSource::for_kernel_frames`]).
//!
//! The frames of the kernel perf runs on are symbolized with `/proc/kallsyms`, which
//! the kernel takes a while to write out (tens of milliseconds for a hundred thousand
//! lines); [`running_kernel_kallsyms`] reads the copy `perf record` keeps in its
//! build-id cache instead when that copy gives the same symbols.
//!
//! perf 6.1 reads `/proc/kallsyms` for the frames of the kernel it runs on
//! (`dso__find_kallsyms`: the file's kernel build id is the running kernel's, or the file
//! lists none). Its copy in the cache, `[kernel.kallsyms]/ID/kallsyms` under the running
//! kernel's build id, was written by the first `perf record` on that kernel and never
//! since, so it may come from another boot (other addresses under KASLR), from a
//! reader who saw the addresses as zeros, or from before modules, BPF programs or ftrace
//! trampolines came and went.
//!
//! The core kernel's lines (its own symbols, without a `[module]`) are the same in two
//! texts of one kernel build whenever its first text symbol (`_stext`, `_text`) is at
//! the same address in both: the names, types and order are the build's, and the
//! addresses its own plus the one KASLR offset, or all zeros for a reader not shown
//! them (the kernel decides that once per open, for every line). The lines with a
//! `[module]` change as modules, BPF programs and trampolines come and go; they lie
//! above or below the kernel's image, never inside it, so the core symbols' ends
//! (the next symbol's start, or a page on where a module symbol follows) and the choice
//! among symbols at one address do not depend on them. So [`running_kernel_kallsyms`]
//! compares the two texts up to and including their first text symbol, read from
//! `/proc/kallsyms` (a few lines for the kernel to write) and takes the copy when they
//! agree; symbols of modules are then read from `/proc/kallsyms` when first needed
//! (see [`KernelFrames`]).

use std::io::Read;
use std::path::Path;

use crate::event::{KallsymsSource, KallsymsText};

use super::data::abi::misc;
use super::data::host::kernel_build_id;
use super::data::PerfData;
use super::symbols::build_id_hex;

impl KallsymsSource {
    /// Where perf would take kernel symbols for `file` from: `path` when given (perf's
    /// `--kallsyms`), else the file's own (TRACING_DATA), else `/proc/kallsyms` when the
    /// file was recorded on this host (same hostname and kernel release), else none.
    pub fn for_file(file: &PerfData, own: Option<&str>, path: Option<&Path>) -> KallsymsSource {
        use super::data::abi::feature;
        if let Some(p) = path {
            return KallsymsSource::file(p.to_path_buf());
        }
        if let Some(t) = own.filter(|t| !t.is_empty()) {
            return KallsymsSource::text_of(t.to_string());
        }
        let here = |f: &str| {
            std::fs::read_to_string(f)
                .map(|s| s.trim().to_string())
                .ok()
        };
        let host = file.feature_string(feature::HOSTNAME).ok().flatten();
        let release = file.feature_string(feature::OSRELEASE).ok().flatten();
        if host.is_some()
            && host == here("/proc/sys/kernel/hostname")
            && release == here("/proc/sys/kernel/osrelease")
        {
            return KallsymsSource::file("/proc/kallsyms".into());
        }
        KallsymsSource::default()
    }

    /// Where perf 6.1 takes the symbols of kernel frames from (`dso__load_kernel_sym`,
    /// `dso__find_kallsyms`): `path` when given (`--kallsyms`); under `--symfs` none
    /// (perf reads only a vmlinux under the directory, which this does not read); else
    /// by the kernel's build id in the file's BUILD_ID list: none listed, or the running
    /// kernel's, is `/proc/kallsyms` (read from the cache's copy of it when that gives
    /// the same symbols, see [`running_kernel_kallsyms`]); another is the copy `perf
    /// record` keeps in the build-id cache `cache` (`[kernel.kallsyms]/ID/kallsyms`),
    /// and without one the frames have no symbols. See [`KernelFrames`].
    pub fn for_kernel_frames(
        file: &PerfData,
        path: Option<&Path>,
        symfs: Option<&Path>,
        cache: &Path,
    ) -> KernelFrames {
        let only = |symbols| KernelFrames {
            symbols,
            modules: None,
            missing: None,
        };
        if let Some(p) = path {
            return only(KallsymsSource::file(p.to_path_buf()));
        }
        if symfs.is_some() {
            return only(KallsymsSource::default());
        }
        let running = kernel_build_id();
        let proc = || {
            let copy = running.as_ref().map(|id| {
                cache
                    .join("[kernel.kallsyms]")
                    .join(build_id_hex(id))
                    .join("kallsyms")
            });
            let proc = Path::new("/proc/kallsyms");
            KernelFrames {
                symbols: KallsymsSource::load_with(move || {
                    running_kernel_kallsyms(proc, copy.as_deref())
                }),
                modules: Some(KallsymsSource::file(proc.to_path_buf())),
                missing: None,
            }
        };
        // Each entry of the kernel finds its one object; the last id listed holds.
        let listed = file.build_id_entries().ok().and_then(|v| {
            v.into_iter()
                .rev()
                .find(|e| e.misc == misc::KERNEL && e.filename == "[kernel.kallsyms]")
        });
        let Some(entry) = listed else {
            return proc();
        };
        if running.as_ref() == Some(&entry.id) {
            return proc();
        }
        let hex = build_id_hex(&entry.id);
        let copy = cache.join("[kernel.kallsyms]").join(&hex).join("kallsyms");
        if copy.is_file() {
            return only(KallsymsSource::file(copy));
        }
        let said = format!("No kallsyms or vmlinux with build-id {hex} was found");
        KernelFrames {
            missing: Some(said),
            ..only(KallsymsSource::default())
        }
    }
}

/// Where the symbols of a file's kernel frames come from
/// ([`KallsymsSource::for_kernel_frames`]).
#[derive(Debug, Clone)]
pub struct KernelFrames {
    /// The kallsyms text of the kernel's symbols, and of its modules' unless `modules`.
    pub symbols: KallsymsSource,
    /// The text the modules' symbols come from when it may not be `symbols`: a copy of
    /// the running kernel's kallsyms is read for the kernel's own symbols only, the
    /// modules' are `/proc/kallsyms`'s (see [`super::machine::Machine::set_module_kallsyms`]).
    pub modules: Option<KallsymsSource>,
    /// What perf says when it first looks a kernel frame up and finds no symbols (for
    /// the caller to print at that moment).
    pub missing: Option<String>,
}

/// How much of `/proc/kallsyms` is read at most to find the first text symbol: far
/// more than the lines before it (absolute and per-CPU symbols) ever take.
const PREFIX_LIMIT: usize = 1 << 20;

/// The kallsyms text of the running kernel's frames: the copy at `copy` when its lines up
/// to its first text symbol are those `proc` (`/proc/kallsyms`) starts with (see the
/// module's documentation), else the text of `proc`. None when neither can be read.
pub fn running_kernel_kallsyms(proc: &Path, copy: Option<&Path>) -> Option<KallsymsText> {
    if let Some(text) = copy.and_then(|c| same_core_copy(proc, c)) {
        return Some(KallsymsText::new(text, 0));
    }
    crate::event::symbols::read_whole(proc).map(|t| KallsymsText::new(t, 0))
}

/// The text of `copy` when it starts with the lines of `proc` through its first text
/// symbol.
fn same_core_copy(proc: &Path, copy: &Path) -> Option<String> {
    let mut copy = std::fs::File::open(copy).ok()?;
    if !copy.metadata().ok()?.is_file() {
        return None;
    }
    let prefix = through_first_text_symbol(&mut std::fs::File::open(proc).ok()?)?;
    let mut start = vec![0u8; prefix.len()];
    copy.read_exact(&mut start).ok()?;
    if start != prefix {
        return None;
    }
    let mut text = start;
    copy.read_to_end(&mut text).ok()?;
    crate::event::symbols::text_of(text)
}

/// The bytes of `f` up to and including its first whole line of a text symbol (type
/// `t` or `T`: `ADDRESS TYPE NAME`), None when there is none within [`PREFIX_LIMIT`].
fn through_first_text_symbol(f: &mut impl Read) -> Option<Vec<u8>> {
    let mut buf = Vec::with_capacity(16 << 10);
    let mut chunk = [0u8; 4096];
    let mut line_start = 0;
    loop {
        let n = f.read(&mut chunk).ok()?;
        if n == 0 || buf.len() + n > PREFIX_LIMIT {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        while let Some(nl) = memchr::memchr(b'\n', &buf[line_start..]) {
            let line = &buf[line_start..line_start + nl];
            line_start += nl + 1;
            let ty = memchr::memchr(b' ', line).and_then(|sp| line.get(sp + 1));
            if matches!(ty, Some(b't' | b'T')) {
                buf.truncate(line_start);
                return Some(buf);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CORE: &str = "0000000000000000 A fixed_percpu_data\n\
                        0000000000001000 D cpu_debug_store\n\
                        ffffffff81000000 T _stext\n\
                        ffffffff81000010 t early_fn\n";

    fn texts(proc: &str, copy: &str) -> (tempfile::TempDir, Option<String>) {
        let dir = tempfile::tempdir().unwrap();
        let (p, c) = (dir.path().join("proc"), dir.path().join("copy"));
        std::fs::write(&p, proc).unwrap();
        std::fs::write(&c, copy).unwrap();
        let text = running_kernel_kallsyms(&p, Some(&c)).map(|t| t.as_str().to_string());
        (dir, text)
    }

    #[test]
    fn a_copy_of_the_same_boot_is_read_whatever_its_modules() {
        let proc = format!("{CORE}ffffffffc0201000 t ftrace_trampoline\t[__builtin__ftrace]\n");
        let copy = format!("{CORE}ffffffffc0001000 t old_fn\t[gone]\n");
        assert_eq!(texts(&proc, &copy).1.as_deref(), Some(copy.as_str()));
    }

    #[test]
    fn a_copy_of_another_boot_or_reader_is_not_read() {
        let moved = CORE.replace("ffffffff81000000 T _stext", "ffffffff9a000000 T _stext");
        let hidden = CORE.replace("ffffffff81000000 T _stext", "0000000000000000 T _stext");
        let short = "0000000000000000 A fixed_percpu_data\n";
        for copy in [moved.as_str(), hidden.as_str(), short, ""] {
            assert_eq!(texts(CORE, copy).1.as_deref(), Some(CORE), "{copy:?}");
        }
    }

    #[test]
    fn without_a_text_symbol_or_a_copy_proc_is_read() {
        let data_only = "0000000000000000 A a\nffffffff82000000 D b\n";
        let other = "0000000000000000 A a\nffffffff82000000 D c\n";
        assert_eq!(texts(data_only, other).1.as_deref(), Some(data_only));
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("proc");
        std::fs::write(&p, CORE).unwrap();
        let missing = dir.path().join("none");
        let text = running_kernel_kallsyms(&p, Some(&missing)).unwrap();
        assert_eq!(text.as_str(), CORE);
        assert!(running_kernel_kallsyms(&missing, Some(&p)).is_none());
    }
}
