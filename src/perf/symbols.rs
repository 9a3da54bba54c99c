//! Symbol tables for perf samples, built with perf's rules: kernel symbols from a
//! kallsyms text, user symbols from the ELF files that MMAP records name, and JIT code
//! from the `/tmp/perf-PID.map` its process wrote.
//!
//! perf 6.1 first gives a symbol without a size the end where the next one starts
//! (`symbols__fixup_end`), then keeps, of several symbols at one address, the one with a
//! size, then a non-weak one, then a global one, then the one with fewer leading
//! underscores, then the longer name, then any but one named `SyS...`
//! (`symbols__fixup_duplicate`). [`SymbolTable`] applies the same rules in the same
//! order, so `name+0xoff` comes out as `perf script` prints it. Where symbols still
//! overlap (a label inside a function, a JIT map's entries, which perf leaves as they
//! are) a lookup follows perf's red-black tree of the table ([`super::rbtree`]).

use std::sync::{Arc, OnceLock};

use object::Endianness;

use super::rbtree::RbOrder;
use crate::event::symbols::parse_hex;

mod demangle;
mod elf;
mod kallsyms;
pub use demangle::demangle;
use elf::load_elf;
pub(crate) use elf::{build_id_debug_path, build_id_hex};
pub use elf::{elf_build_id, elf_symbol_tables};
pub use kallsyms::KernelSymbols;

/// Binding of a symbol, as perf ranks them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Binding {
    Local,
    Global,
    Weak,
}

/// A symbol whose name is `len` bytes at `at` in its table's names (one buffer for the
/// whole table, so that loading a file's or the kernel's symbols allocates per table,
/// not per symbol).
#[derive(Debug, Clone, Copy)]
struct Sym {
    start: u64,
    end: u64,
    at: u32,
    len: u32,
    binding: Binding,
    /// Shown as stored (a kallsyms name).
    plain: bool,
    /// A `.plt` entry: shown as its function's demangled name followed by `@plt`
    /// ([`shown_name`]), made only when a lookup shows it.
    plt: bool,
    /// The kernel module of a kallsyms symbol (an index into the table's list of
    /// modules, plus one), 0 for the core kernel and for every other symbol.
    module: u32,
    /// The order in which perf inserted the symbol into its table.
    seq: u32,
    /// Whether it overlaps another symbol of its table (see [`mark_clusters`]): only
    /// a lookup landing on such a symbol needs perf's tree.
    clustered: bool,
    /// In a table's list, a place whose symbol perf's duplicate rules choose by the
    /// demangled names of several, not chosen yet: the number of that
    /// [`UndecidedRun`] plus one. 0 for a symbol of its own.
    undecided: u32,
}

/// The bytes of a file a table's names are read from, shared with the table.
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// The length of a name in the file that ends at its NUL byte, found when the name is
/// first read: a big library's string table runs to tens of megabytes, of which a
/// profile shows a few names, and most symbols are never compared by name.
const NUL_ENDED: u32 = u32::MAX;

/// Where a table's names are: those of the file it was read from stay in the file (a
/// big library's run to tens of megabytes, of which a profile shows a few; the
/// kernel's stay in the kallsyms text), and the others (made here) in a buffer of the
/// table's own. A name at `at` is in the file below `own_at`, in the buffer from there
/// on. Names in the file are bytes as stored, checked as UTF-8 when shown.
#[derive(Default)]
struct Names {
    file: Option<SharedBytes>,
    own_at: u32,
    own: String,
}

impl std::fmt::Debug for Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Names")
            .field("file", &self.file.as_ref().map(|b| (**b).as_ref().len()))
            .field("own", &self.own.len())
            .finish()
    }
}

impl Names {
    /// Names read from `file`, when its offsets fit the table's (else in the buffer).
    fn in_file(file: SharedBytes) -> Names {
        match u32::try_from((*file).as_ref().len()) {
            Ok(own_at) if own_at < u32::MAX / 2 => Names {
                file: Some(file),
                own_at,
                own: String::new(),
            },
            _ => Names::default(),
        }
    }

    /// The bytes of the name of `len` bytes at `at` ([`NUL_ENDED`]: up to its NUL).
    fn bytes(&self, at: u32, len: u32) -> &[u8] {
        let at = at as usize;
        if at >= self.own_at as usize {
            let (from, own) = (at - self.own_at as usize, self.own.as_bytes());
            return own.get(from..from + len as usize).unwrap_or_default();
        }
        let Some(file) = self.file.as_ref().map(|f| (**f).as_ref()) else {
            return &[];
        };
        if len == NUL_ENDED {
            let rest = file.get(at..).unwrap_or_default();
            return &rest[..memchr::memchr(0, rest).unwrap_or(rest.len())];
        }
        file.get(at..at + len as usize).unwrap_or_default()
    }

    /// Up to the first `n` bytes of the name of `len` bytes at `at`, without finding a
    /// [`NUL_ENDED`] name's end first.
    fn head(&self, at: u32, len: u32, n: usize) -> &[u8] {
        if len != NUL_ENDED || at >= self.own_at {
            let b = self.bytes(at, len);
            return &b[..b.len().min(n)];
        }
        let Some(file) = self.file.as_ref().map(|f| (**f).as_ref()) else {
            return &[];
        };
        let at = at as usize;
        let head = file
            .get(at..file.len().min(at.saturating_add(n)))
            .unwrap_or_default();
        &head[..memchr::memchr(0, head).unwrap_or(head.len())]
    }

    /// Where `bytes` are in the file, if they are there.
    fn file_offset(&self, bytes: &[u8]) -> Option<u32> {
        Names::offset_in((**self.file.as_ref()?).as_ref(), bytes)
    }

    /// Where `bytes` are in `file` (the table's file), if they are there.
    fn offset_in(file: &[u8], bytes: &[u8]) -> Option<u32> {
        let at = (bytes.as_ptr() as usize).checked_sub(file.as_ptr() as usize)?;
        (at + bytes.len() <= file.len()).then_some(at as u32)
    }

    /// Add `name` to the buffer: where it is, None when the table's offsets cannot
    /// reach it.
    fn push(&mut self, name: &str) -> Option<u32> {
        let at = u32::try_from(self.own_at as usize + self.own.len()).ok()?;
        u32::try_from(at as usize + name.len()).ok()?;
        self.own.push_str(name);
        Some(at)
    }
}

/// How [`SymbolTable::from_elf_files`] loads a table.
#[derive(Debug, Clone, Copy)]
struct Load {
    /// Every choice among symbols at one address made while loading, rather than when
    /// a lookup first needs it.
    eager: bool,
    /// Names demangled when shown (perf's default), or shown as stored.
    demangle: bool,
}

/// Symbols and their names while a table is built.
#[derive(Debug, Default)]
struct Builder {
    syms: Vec<Sym>,
    names: Names,
    /// How many symbols were pushed (taking `syms` leaves it).
    pushed: u32,
    /// Every name pushed is plain, shown as stored (perf's `--no-demangle`).
    all_plain: bool,
}

impl Builder {
    fn push(&mut self, start: u64, end: u64, binding: Binding, name: &str, plain: bool) {
        self.push_in(start, end, binding, name, plain, 0);
    }

    fn push_in(
        &mut self,
        start: u64,
        end: u64,
        binding: Binding,
        name: &str,
        plain: bool,
        module: u32,
    ) {
        // A table's names stay far below 4 GiB (the kernel's are about 5 MB); a name that
        // would not fit is dropped rather than stored wrong.
        let (Some(at), Ok(len)) = (self.names.push(name), u32::try_from(name.len())) else {
            return;
        };
        self.push_at(start, end, binding, at, len, plain, module);
    }

    /// Add a symbol whose name is already in the table's names, `len` bytes at `at`.
    #[allow(clippy::too_many_arguments)]
    fn push_at(
        &mut self,
        start: u64,
        end: u64,
        binding: Binding,
        at: u32,
        len: u32,
        plain: bool,
        module: u32,
    ) {
        self.syms.push(Sym {
            start,
            end,
            at,
            len,
            binding,
            plain: plain || self.all_plain,
            plt: false,
            module,
            seq: self.pushed,
            clustered: false,
            undecided: 0,
        });
        self.pushed += 1;
    }
}

/// Address-sorted symbols with perf's duplicate and end rules.
#[derive(Debug, Default)]
pub struct SymbolTable {
    syms: Vec<Sym>,
    names: Names,
    /// The name shown for each place, made on its first lookup: most symbols of a big
    /// file never are.
    shown: ShownNames,
    /// perf's tree of the table, for tables whose symbols overlap (where a lookup
    /// finds the first symbol holding the address on its way down from the root),
    /// rebuilt when a lookup first lands among overlapping symbols.
    tree: Option<LazyTree>,
    /// The places whose symbol is chosen by demangled names, on first need.
    undecided: Vec<UndecidedRun>,
    /// See [`SymbolTable::incomplete`].
    incomplete: bool,
    /// The symbols' starts, searched instead of the symbols themselves.
    starts: StartIndex,
}

/// The starts of a table's symbols (sorted), and every [`StartIndex::STRIDE`]th of them
/// again: a lookup searches the few kilobytes of the latter, then one stride of the
/// former, rather than the whole table. A big library's table runs to megabytes, and a
/// search of it misses the cache at nearly every step.
#[derive(Debug, Default)]
struct StartIndex {
    all: Vec<u64>,
    every: Vec<u64>,
}

impl StartIndex {
    const STRIDE: usize = 32;

    fn of(syms: &[Sym]) -> StartIndex {
        let all: Vec<u64> = syms.iter().map(|s| s.start).collect();
        let every = all.iter().step_by(Self::STRIDE).copied().collect();
        StartIndex { all, every }
    }

    /// How many starts are at or below `addr`.
    fn at_or_below(&self, addr: u64) -> usize {
        let Some(block) = self.every.partition_point(|&a| a <= addr).checked_sub(1) else {
            return 0;
        };
        // The start at `from` is at or below `addr`, the one a stride on (if any) above.
        let from = block * Self::STRIDE;
        let to = (from + Self::STRIDE).min(self.all.len());
        from + self.all[from..to].partition_point(|&a| a <= addr)
    }
}

/// Per place of a table, the name a lookup shows (demangled, or checked as UTF-8),
/// made when first asked for. The cells are allocated a group at a time, on first use,
/// so that a table of a few hundred thousand symbols of which a profile shows a few
/// thousand costs a few bytes per group rather than a cell per symbol.
#[derive(Debug, Default)]
struct ShownNames {
    groups: Box<[OnceLock<ShownGroup>]>,
}

/// The names of one group of places.
type ShownGroup = Box<[OnceLock<Box<str>>]>;

impl ShownNames {
    /// Places per group.
    const GROUP: usize = 64;

    /// Room for `n` places.
    fn new(n: usize) -> ShownNames {
        ShownNames {
            groups: (0..n.div_ceil(Self::GROUP))
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    /// The name of place `i`, made by `make` the first time; None for a place out of
    /// range.
    fn get_or_init(&self, i: usize, make: impl FnOnce() -> Box<str>) -> Option<&str> {
        let group = self
            .groups
            .get(i / Self::GROUP)?
            .get_or_init(|| (0..Self::GROUP).map(|_| OnceLock::new()).collect());
        Some(group[i % Self::GROUP].get_or_init(make))
    }
}

/// A table's symbols in the red-black tree perf keeps them in.
#[derive(Debug)]
struct SearchTree {
    tree: RbOrder,
    /// Per tree item (perf's insertion order), its index in the table.
    sym_of: Vec<u32>,
}

/// perf's tree of a table, rebuilt from its history on first use: a big library's table
/// has a few overlapping symbols (its `name@plt` entries at one address, labels inside
/// functions) that samples rarely hit, and rebuilding its tree costs more than the rest
/// of its loading.
#[derive(Debug)]
struct LazyTree {
    history: TreeHistory,
    /// Per symbol, the furthest end of it and the symbols before it.
    reach: Vec<u64>,
    built: OnceLock<SearchTree>,
}

/// How perf's tree of a table came to be: the symbols' starts by insertion number, and
/// the insertions and removals (`rb_erase`) in the order perf made them.
#[derive(Debug, Default)]
struct TreeHistory {
    starts: Vec<u64>,
    ops: Vec<TreeOp>,
}

#[derive(Debug, Clone, Copy)]
enum TreeOp {
    /// The insertion of this many symbols, the next ones by insertion number (a file's
    /// symbols go in a table at a time: one op stands for them all).
    Insert(u32),
    Remove(u32),
    /// The removal of the symbol an undecided run's comparison `k` drops.
    RemoveLoser {
        run: u32,
        k: u32,
    },
    /// The removal of the symbol an undecided run keeps (a later one beat it).
    RemoveKept {
        run: u32,
    },
}

/// Symbols at one address among which perf's duplicate rules choose by their demangled
/// names alone ([`prefer_by_name`]): their sizes, ends and bindings tie. The
/// choice is made when a lookup or perf's tree first needs it, so that the names of a
/// big library's aliases that no sample lands in are never demangled.
#[derive(Debug)]
struct UndecidedRun {
    /// In the order perf compared them: the first symbol, then each one compared with
    /// the one kept so far.
    candidates: Vec<Sym>,
    outcome: OnceLock<RunOutcome>,
}

/// What perf's comparisons of an [`UndecidedRun`] chose.
#[derive(Debug)]
struct RunOutcome {
    /// The index of the symbol kept, in the run's candidates.
    kept: usize,
    /// Per comparison, the insertion number of the symbol it dropped.
    dropped: Vec<u32>,
    /// The name shown for the symbol kept, when a comparison made it: a lookup shows
    /// it without demangling it again.
    kept_name: Option<Box<str>>,
}

impl UndecidedRun {
    /// The comparisons made as perf makes them, one after the other; each candidate's
    /// name is demangled once.
    fn outcome(&self, names: &Names) -> &RunOutcome {
        self.outcome.get_or_init(|| {
            let c = &self.candidates;
            let mut kept = 0;
            let mut kept_name = None;
            let mut dropped = Vec::with_capacity(c.len().saturating_sub(1));
            for k in 1..c.len() {
                let mut name = None;
                if prefer_by_name(names, &c[kept], &c[k], &|_| 0, &mut kept_name, &mut name) {
                    dropped.push(c[k].seq);
                } else {
                    dropped.push(c[kept].seq);
                    kept = k;
                    kept_name = name;
                }
            }
            RunOutcome {
                kept,
                dropped,
                kept_name: kept_name.map(|n| n.into_owned().into_boxed_str()),
            }
        })
    }

    /// The symbol the comparisons keep.
    fn kept(&self, names: &Names) -> &Sym {
        &self.candidates[self.outcome(names).kept]
    }
}

impl TreeHistory {
    /// Record the insertion of a symbol starting at `start`: its insertion number.
    fn insert(&mut self, start: u64) -> u32 {
        self.starts.push(start);
        match self.ops.last_mut() {
            Some(TreeOp::Insert(n)) => *n += 1,
            _ => self.ops.push(TreeOp::Insert(1)),
        }
        self.starts.len() as u32 - 1
    }
}

/// Mark the symbols of `syms` (sorted by start) that overlap another: one starting at
/// the same address, or before the end of an earlier one. True if any does.
///
/// perf's lookup goes down its tree and stops at the first symbol holding the address.
/// On its way it passes symbols that do not hold it, each sending it toward the
/// address's side, which is the side of the symbol `S` holding it unless that symbol
/// starts within `S` before the address (or where `S` starts): the two overlap. So an
/// address held by a symbol that overlaps none is found in it, whatever the tree's
/// shape, as a search of the sorted symbols finds it. So is one held by only the last
/// symbol to start at or before it, when no other starts where it does.
fn mark_clusters(syms: &mut [Sym]) -> bool {
    let mut reach = None::<u64>;
    let mut any = false;
    for i in 0..syms.len() {
        let s = syms[i];
        // Sorted by start, the next symbol is the first to start after this one.
        let next = syms.get(i + 1);
        let clustered = reach.is_some_and(|r| r > s.start)
            || (i > 0 && syms[i - 1].start == s.start)
            || next.is_some_and(|n| n.start < s.end || n.start == s.start);
        syms[i].clustered = clustered;
        any |= clustered;
        reach = Some(reach.map_or(s.end, |r| r.max(s.end)));
    }
    any
}

/// Whether perf's lookup of `addr` stops at `s` (its `symbols__find` comparison).
fn holds(s: &Sym, addr: u64) -> bool {
    s.start <= addr && addr <= s.end && (addr != s.end || addr == s.start)
}

impl SearchTree {
    /// perf's tree of the symbols of `table`, rebuilt from its history (`history`).
    ///
    /// A comparison of an undecided run removes one of two symbols that start (and
    /// end) together. When the second is the leftmost item below the first's right
    /// child, removing either leaves the same tree with the other in the same place
    /// (see [`RbOrder::successor_below`]): the item left stands for whichever the run
    /// keeps, and the run stays undecided. Otherwise the run is decided and the item
    /// of the symbol perf drops is removed. A run decided before (while loading, when
    /// later removals may name its symbols) is replayed as decided.
    fn build(table: &SymbolTable, history: &TreeHistory) -> SearchTree {
        let starts = &history.starts;
        let mut tree = RbOrder::new();
        // Per run, the item standing for the symbol it keeps so far.
        let mut stand_in: Vec<u32> = table
            .undecided
            .iter()
            .map(|r| r.candidates.first().map_or(u32::MAX, |c| c.seq))
            .collect();
        for op in &history.ops {
            match *op {
                TreeOp::Insert(n) => {
                    for _ in 0..n {
                        let start = starts[tree.len()];
                        tree.insert(|e| start < starts[e]);
                    }
                }
                TreeOp::Remove(r) => tree.remove(r as usize),
                TreeOp::RemoveLoser { run, k } => {
                    let r = &table.undecided[run as usize];
                    let (kept, next) = (stand_in[run as usize], r.candidates[k as usize + 1].seq);
                    let same_tree = r.outcome.get().is_none()
                        && tree.successor_below(kept as usize) == Some(next as usize);
                    if same_tree || r.outcome(&table.names).dropped[k as usize] == next {
                        tree.remove(next as usize);
                    } else {
                        tree.remove(kept as usize);
                        stand_in[run as usize] = next;
                    }
                }
                TreeOp::RemoveKept { run } => tree.remove(stand_in[run as usize] as usize),
            }
        }
        let mut sym_of = vec![u32::MAX; starts.len()];
        for (i, s) in table.syms.iter().enumerate() {
            let item = match s.undecided {
                0 => s.seq,
                r => stand_in[r as usize - 1],
            };
            if let Some(slot) = sym_of.get_mut(item as usize) {
                *slot = i as u32;
            }
        }
        SearchTree { tree, sym_of }
    }

    /// perf's `symbols__find`: the first symbol on the way down that holds `addr`.
    fn find(&self, syms: &[Sym], addr: u64) -> Option<usize> {
        use std::cmp::Ordering;
        let item = self.tree.find(|e| {
            let Some(s) = self.sym_of.get(e).and_then(|&i| syms.get(i as usize)) else {
                return Ordering::Greater;
            };
            if addr < s.start {
                Ordering::Less
            } else if addr > s.end || (addr == s.end && addr != s.start) {
                Ordering::Greater
            } else {
                Ordering::Equal
            }
        })?;
        Some(self.sym_of[item] as usize)
    }
}

/// perf's `symbols__fixup_end`: a symbol without a size ends where the next one starts
/// (one at the same address leaves it without a size), the last one a page after the
/// page it starts in. In kallsyms (`kallsyms`), where a core kernel symbol is followed
/// by a module's or a module's by a core one, the first ends a page on instead.
fn fix_ends(syms: &mut [Sym], kallsyms: bool) {
    let page_after = |a: u64| a.wrapping_add(4095) / 4096 * 4096;
    for i in 1..syms.len() {
        if syms[i - 1].end == syms[i - 1].start {
            let (prev, curr) = (&syms[i - 1], &syms[i]);
            syms[i - 1].end = if kallsyms && (prev.module == 0) != (curr.module == 0) {
                page_after(prev.start.wrapping_add(4096))
            } else {
                curr.start
            };
        }
    }
    if let Some(last) = syms.last_mut() {
        if last.end == last.start {
            last.end = page_after(last.start).wrapping_add(4096);
        }
    }
}

fn underscores(s: &str) -> usize {
    s.bytes().take_while(|&b| b == b'_').count()
}

/// The stored name of `s` in `names` (bytes that are not UTF-8 shown as U+FFFD).
fn raw_name<'n>(names: &'n Names, s: &Sym) -> std::borrow::Cow<'n, str> {
    raw_text(raw_bytes(names, s))
}

/// A stored name's bytes as text (bytes that are not UTF-8 shown as U+FFFD).
fn raw_text(raw: &[u8]) -> std::borrow::Cow<'_, str> {
    // The check of valid text (nearly every name) is quicker than the lossy walk.
    match std::str::from_utf8(raw) {
        Ok(text) => std::borrow::Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(raw),
    }
}

/// The bytes of [`raw_name`], for comparisons that need not check them as UTF-8 again.
fn raw_bytes<'n>(names: &'n Names, s: &Sym) -> &'n [u8] {
    names.bytes(s.at, s.len)
}

/// Whether [`demangle`] may change `name` (it leaves every other name as it is).
fn mangled(name: &[u8]) -> bool {
    name.starts_with(b"_Z") || name.starts_with(b"_R")
}

/// Whether two symbols' stored names are the same and hold neither `SyS` nor a `$`:
/// they print the same, and perf's last rule (no `SyS` at the start) cannot tell them
/// apart (see [`prefer_by_name`]).
fn same_plain_name(names: &Names, a: &Sym, b: &Sym) -> bool {
    a.plain == b.plain
        && a.plt == b.plt
        && same_plain_bytes(raw_bytes(names, a), raw_bytes(names, b))
}

/// [`same_plain_name`] of two symbols of one kind, by their stored names' bytes.
fn same_plain_bytes(raw: &[u8], other: &[u8]) -> bool {
    // Names are short: a search for `S` is quicker than setting up a substring search.
    raw == other
        && !memchr::memchr_iter(b'S', raw).any(|i| raw[i..].starts_with(b"SyS"))
        && memchr::memchr(b'$', raw).is_none()
}

/// The name perf shows for `s`: demangled, unless it is plain (a plain `.plt` entry's
/// too); a `.plt` entry's as
/// perf 6.1's `dso__synthesize_plt_symbols` makes it, the demangled name and `@plt` in
/// a buffer of 1,024 bytes (at most 1,023 of them kept, whole characters here).
fn shown_name<'n>(names: &'n Names, s: &Sym) -> std::borrow::Cow<'n, str> {
    shown_name_of(raw_bytes(names, s), s)
}

/// [`shown_name`] of `s` from its stored name's bytes, `raw`.
fn shown_name_of<'n>(raw: &'n [u8], s: &Sym) -> std::borrow::Cow<'n, str> {
    let raw = raw_text(raw);
    if s.plt {
        let mut name = if !s.plain && mangled(raw.as_bytes()) {
            demangle(&raw)
        } else {
            raw.into_owned()
        };
        name.push_str("@plt");
        if name.len() > 1023 {
            let mut cut = 1023;
            while !name.is_char_boundary(cut) {
                cut -= 1;
            }
            name.truncate(cut);
        }
        return std::borrow::Cow::Owned(name);
    }
    if s.plain || !mangled(raw.as_bytes()) {
        raw
    } else {
        std::borrow::Cow::Owned(demangle(&raw))
    }
}

/// perf's `choose_best_symbol` (true when `a` is kept over `b`) before the names: a
/// symbol with a size over one without, then a non-weak one, then a global one. None
/// when they tie, and [`prefer_by_name`] decides.
fn prefer_by_kind(a: &Sym, b: &Sym) -> Option<bool> {
    let (la, lb) = (a.end.wrapping_sub(a.start), b.end.wrapping_sub(b.start));
    if (la == 0) != (lb == 0) {
        return Some(la > 0);
    }
    let (wa, wb) = (a.binding == Binding::Weak, b.binding == Binding::Weak);
    if wa != wb {
        return Some(wb);
    }
    let (ga, gb) = (a.binding == Binding::Global, b.binding == Binding::Global);
    if ga != gb {
        return Some(ga);
    }
    None
}

/// Whether [`prefer_by_name`] tells `a` and `b` apart without demangling:
/// the same stored name (see [`prefer_by_name`]), or names shown as stored.
fn names_compare_as_stored(names: &Names, a: &Sym, b: &Sym) -> bool {
    let shown_as_stored = |s: &Sym| !s.plt && (s.plain || !mangled(names.head(s.at, s.len, 2)));
    (shown_as_stored(a) && shown_as_stored(b)) || same_plain_name(names, a, b)
}

/// perf's `choose_best_symbol` from the names on (true when `a` is kept over `b`):
/// fewer leading underscores, then the longer name, then any but a `SyS` one; on a tie
/// `a`. `extra(s)` is what perf's name of `s` holds beyond the shown one (a kallsyms
/// module's `\t[name]`). `shown_a` and `shown_b` hold the names shown, made here when
/// needed, kept for the caller.
fn prefer_by_name<'n>(
    names: &'n Names,
    a: &Sym,
    b: &Sym,
    extra: &impl Fn(&Sym) -> usize,
    shown_a: &mut Option<std::borrow::Cow<'n, str>>,
    shown_b: &mut Option<std::borrow::Cow<'n, str>>,
) -> bool {
    // A `.dynsym` symbol mostly repeats one of `.symtab`. Of two equal names only
    // perf's last rule (no `SyS` at the start) is left to tell, and a demangled name
    // starts with `SyS` only if the mangled one holds those letters (demanglers copy
    // names' letters, and add only their own words, none of which holds them), unless
    // a `$` escape in a Rust name spells them.
    // Each stored name is found (a NUL-ended one's end searched for) once.
    let (ra, rb) = (raw_bytes(names, a), raw_bytes(names, b));
    let same_kind = a.plain == b.plain && a.plt == b.plt;
    if extra(a) == extra(b) && same_kind && same_plain_bytes(ra, rb) {
        return true;
    }
    let same = same_kind && ra == rb;
    let na: &str = shown_a.get_or_insert_with(|| shown_name_of(ra, a));
    let nb: &str = if same {
        na
    } else {
        shown_b.get_or_insert_with(|| shown_name_of(rb, b))
    };
    let (ua, ub) = (underscores(na), underscores(nb));
    if ub != ua {
        return ub > ua;
    }
    let (la, lb) = (na.len() + extra(a), nb.len() + extra(b));
    if la != lb {
        return la > lb;
    }
    // perf's default `arch__choose_best_symbol` (x86 has no other): not a syscall's
    // `SyS` alias.
    !(na.starts_with("SyS") || na.starts_with("compat_SyS"))
}

/// perf's `symbols__fixup_duplicate` on address-sorted symbols: of each run at one
/// address, the one perf's `choose_best_symbol` keeps ([`prefer_by_kind`], then
/// [`prefer_by_name`]), comparing the kept one with each next. The
/// removals of the symbols dropped are added to `removed` in the order perf makes them.
///
/// With `undecided`, a comparison that only demangled names would decide, between
/// symbols that end together, is left for later: the place keeps the first symbol
/// marked with a new [`UndecidedRun`] (or joins the run it is marked with), and the
/// removal names the comparison. The place holds the same start, end and binding
/// whichever symbol the run keeps.
fn drop_duplicates(
    names: &Names,
    mut syms: Vec<Sym>,
    extra: impl Fn(&Sym) -> usize,
    removed: &mut Vec<TreeOp>,
    mut undecided: Option<&mut Vec<UndecidedRun>>,
) -> Vec<Sym> {
    // In place: `kept` symbols are kept at the front.
    let mut kept: usize = 0;
    for i in 0..syms.len() {
        // Only a place kept by an earlier pass can be undecided, and it comes first
        // among the symbols at its address: `s` never is.
        let s = syms[i];
        let Some(last) = kept
            .checked_sub(1)
            .map(|k| syms[k])
            .filter(|l| l.start == s.start)
        else {
            syms[kept] = s;
            kept += 1;
            continue;
        };
        let by_name = |a: &Sym| prefer_by_name(names, a, &s, &extra, &mut None, &mut None);
        let keep_last = match (prefer_by_kind(&last, &s), undecided.as_deref_mut()) {
            (Some(k), _) => k,
            (None, None) => by_name(&last),
            (None, Some(runs)) if last.undecided == 0 => {
                if last.end != s.end || names_compare_as_stored(names, &last, &s) {
                    by_name(&last)
                } else {
                    let run = runs.len() as u32;
                    runs.push(UndecidedRun {
                        candidates: vec![last, s],
                        outcome: OnceLock::new(),
                    });
                    removed.push(TreeOp::RemoveLoser { run, k: 0 });
                    syms[kept - 1].undecided = run + 1;
                    continue;
                }
            }
            (None, Some(runs)) => {
                let run = last.undecided - 1;
                let r = &mut runs[run as usize];
                if last.end == s.end {
                    r.candidates.push(s);
                    let k = r.candidates.len() as u32 - 2;
                    removed.push(TreeOp::RemoveLoser { run, k });
                    continue;
                }
                // The symbol kept decides the place's end: the run is decided now.
                let chosen = chosen(&last, r.kept(names));
                syms[kept - 1] = chosen;
                by_name(&chosen)
            }
        };
        if keep_last {
            removed.push(TreeOp::Remove(s.seq));
        } else {
            removed.push(match last.undecided {
                0 => TreeOp::Remove(last.seq),
                r => TreeOp::RemoveKept { run: r - 1 },
            });
            syms[kept - 1] = s;
        }
    }
    syms.truncate(kept);
    syms
}

/// The symbol an undecided place (`place`) holds once its run kept `kept`: the
/// place's start, end and binding (fixed ends included) with the name of `kept`.
fn chosen(place: &Sym, kept: &Sym) -> Sym {
    Sym {
        at: kept.at,
        len: kept.len,
        seq: kept.seq,
        plain: kept.plain,
        plt: kept.plt,
        undecided: 0,
        ..*place
    }
}

impl SymbolTable {
    /// A table of address-sorted symbols, with perf's tree (from `history`, how perf
    /// built it) if any overlap.
    /// `undecided` are the runs its undecided places are marked with.
    fn of_sorted(
        mut syms: Vec<Sym>,
        names: Names,
        history: Option<TreeHistory>,
        undecided: Vec<UndecidedRun>,
    ) -> SymbolTable {
        let tree = history
            .filter(|_| mark_clusters(&mut syms))
            .map(|history| LazyTree {
                history,
                reach: syms
                    .iter()
                    .scan(0, |r, s| {
                        *r = s.end.max(*r);
                        Some(*r)
                    })
                    .collect(),
                built: OnceLock::new(),
            });
        SymbolTable {
            shown: ShownNames::new(syms.len()),
            starts: StartIndex::of(&syms),
            syms,
            names,
            tree,
            undecided,
            incomplete: false,
        }
    }

    /// The symbol at place `i`, its run decided if it is undecided.
    fn decided(&self, i: usize) -> Sym {
        let s = self.syms[i];
        match s.undecided {
            0 => s,
            r => chosen(&s, self.undecided[r as usize - 1].kept(&self.names)),
        }
    }

    /// The symbol holding `addr`: its name and start. A symbol without a size holds
    /// its own address only, as in perf's `symbols__find`.
    pub fn find(&self, addr: u64) -> Option<(&str, u64)> {
        self.find_span(addr).map(|(name, start, _)| (name, start))
    }

    /// [`SymbolTable::find`] with where the symbol ends (perf's `sym->end`), which perf
    /// report compares an inlined function's rows by.
    pub fn find_span(&self, addr: u64) -> Option<(&str, u64, u64)> {
        let i = self.find_index(addr)?;
        // A place's start is that of whichever symbol its run keeps.
        let start = self.syms[i].start;
        let shown = self.shown.get_or_init(i, || {
            let run = self.syms[i].undecided.checked_sub(1);
            if let Some(name) = run.and_then(|r| {
                self.undecided[r as usize]
                    .outcome(&self.names)
                    .kept_name
                    .clone()
            }) {
                return name;
            }
            shown_name(&self.names, &self.decided(i))
                .into_owned()
                .into_boxed_str()
        })?;
        Some((shown, start, self.syms[i].end))
    }

    /// The index of the symbol perf's lookup of `addr` finds.
    fn find_index(&self, addr: u64) -> Option<usize> {
        let i = self.starts.at_or_below(addr).checked_sub(1)?;
        let s = &self.syms[i];
        if !s.clustered {
            return holds(s, addr).then_some(i);
        }
        let tree = self.tree.as_ref()?;
        self.find_among_overlapping(tree, i, addr)
            .unwrap_or_else(|| {
                tree.built
                    .get_or_init(|| SearchTree::build(self, &tree.history))
                    .find(&self.syms, addr)
            })
    }

    /// What perf's lookup of `addr` finds when the last symbol starting at or before
    /// it, `i`, overlaps another, if that does not depend on perf's tree: no symbol
    /// holding the address, or symbols that all print the same (one start, one name)
    /// with none else starting between them and the address. None when the tree
    /// decides.
    ///
    /// A symbol holding the address starts at or before it, after the last symbol
    /// before it that overlaps none (see `mark_clusters`), and reaches it: the walk back
    /// stops where no symbol so far reaches it, or after a few symbols.
    fn find_among_overlapping(
        &self,
        tree: &LazyTree,
        i: usize,
        addr: u64,
    ) -> Option<Option<usize>> {
        const LOOK_BACK: usize = 64;
        let mut holder: Option<usize> = None;
        let mut others_after = false;
        let mut j = i;
        loop {
            let s = &self.syms[j];
            if !s.clustered || tree.reach[j] < addr {
                break;
            }
            if i - j >= LOOK_BACK {
                return None;
            }
            if holds(s, addr) {
                match holder.map(|h| self.decided(h)) {
                    Some(h)
                        if h.start == s.start && {
                            let s = self.decided(j);
                            h.plain == s.plain
                                && h.plt == s.plt
                                && raw_bytes(&self.names, &h) == raw_bytes(&self.names, &s)
                        } => {}
                    Some(_) => return None,
                    None => {
                        if others_after {
                            return None;
                        }
                        holder = Some(j);
                    }
                }
            } else if holder.is_some_and(|h| self.syms[h].start == s.start) {
                return None;
            } else if holder.is_none() {
                // Not holding the address and after every holder: it may send perf's
                // way down past them.
                others_after = true;
            }
            if j == 0 {
                break;
            }
            j -= 1;
        }
        match holder {
            None => Some(None),
            // A symbol before the walk at the holders' start, not reaching the address.
            Some(h)
                if j < h
                    && j != i
                    && self.syms[j].start == self.syms[h].start
                    && !holds(&self.syms[j], addr) =>
            {
                None
            }
            Some(h) => Some(Some(h)),
        }
    }

    /// One symbol, `name`, of `len` bytes at `addr` (a kernel symbol of a BPF program).
    pub fn single(addr: u64, len: u32, name: &[u8]) -> SymbolTable {
        let mut line = format!("{addr:x} {len:x} ").into_bytes();
        line.extend_from_slice(name);
        line.push(b'\n');
        SymbolTable::from_perf_map(&line)
    }

    /// The symbols of this host's vDSO image ([`crate::perf::data::host::vdso_image`]):
    /// what perf reads, from its own copy, for a vDSO the recording names no build id of.
    pub fn host_vdso() -> Option<SymbolTable> {
        SymbolTable::from_elf(&crate::perf::data::host::vdso_image()?, None).ok()
    }

    /// The symbols of a JIT's perf map (`/tmp/perf-PID.map`), read line by line as
    /// perf 6.1's `dso__load_perf_map` reads them: each line loses its last byte (the
    /// newline, or the last character of a final line without one), then a start and a
    /// size are read as `strtoull(.., 16)` reads them, each followed by one separator
    /// byte, and the rest of the line is the name. A line too short to hold a name
    /// after those is skipped; any other line gives a symbol, whatever it holds, as it
    /// does in perf. Symbols keep their sizes (a zero size holds one address) and their
    /// names as written, and several at one address all stay.
    pub fn from_perf_map(text: &[u8]) -> SymbolTable {
        let mut b = Builder::default();
        let mut rest = text;
        while !rest.is_empty() {
            let (line, next) = match memchr::memchr(b'\n', rest) {
                Some(i) => (&rest[..i], &rest[i + 1..]),
                // perf drops the last byte of every line it reads.
                None => (&rest[..rest.len() - 1], &rest[rest.len()..]),
            };
            rest = next;
            let (start, mut len) = strtoull_hex(line);
            len += 1;
            if len + 2 >= line.len() {
                continue;
            }
            let (size, used) = strtoull_hex(&line[len..]);
            len += used + 1;
            if len + 2 >= line.len() {
                continue;
            }
            // The name is a C string: it ends at a NUL byte.
            let name = &line[len..];
            let name = &name[..memchr::memchr(0, name).unwrap_or(name.len())];
            let end = if size == 0 {
                start
            } else {
                start.wrapping_add(size)
            };
            b.push(
                start,
                end,
                Binding::Global,
                &String::from_utf8_lossy(name),
                true,
            );
        }
        let Builder {
            mut syms, names, ..
        } = b;
        let mut history = TreeHistory::default();
        for s in &syms {
            history.insert(s.start);
        }
        syms.sort_by_key(|s| s.start);
        SymbolTable::of_sorted(syms, names, Some(history), Vec::new())
    }

    /// The end of the last symbol.
    pub fn end(&self) -> Option<u64> {
        self.syms.last().map(|s| s.end)
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// Whether perf's loading of the file stopped at a symbol naming a section the file
    /// does not have: the table holds the symbols read before it, and perf's first
    /// lookup in the file finds nothing (its `map__load` fails once; the file counts as
    /// loaded after that).
    pub fn incomplete(&self) -> bool {
        self.incomplete
    }

    /// The ELF symbols of a mapped file at file offsets, read as perf 6.1's `dso__load`
    /// reads them: the `.symtab` of `debug` when a separate debug file is given, else
    /// of the file itself, then the `.dynsym` of that same file, into one table. From
    /// each it keeps named functions and data objects, and untyped symbols (assembler
    /// labels) of default or protected visibility in sections named like text or data,
    /// in loaded sections, each moved by the segment (`PT_LOAD`) holding its address to
    /// its file offset (by its section when no segment holds it); after each of the two, ends and duplicates are fixed over all
    /// the symbols so far. A symbol naming a section the file does not have ends the
    /// loading there: the table keeps what was read, unfixed, gets no `name@plt`
    /// symbols and is [`SymbolTable::incomplete`]. Otherwise the `.plt` entries get
    /// `name@plt` symbols. Names are demangled when looked up, and so are those that
    /// decide which of several symbols at one address is kept.
    pub fn from_elf(runtime: &[u8], debug: Option<&[u8]>) -> Result<SymbolTable, String> {
        Self::from_elf_files(
            runtime,
            debug,
            [None, None],
            Load {
                eager: false,
                demangle: true,
            },
        )
    }

    /// [`SymbolTable::from_elf`] on files the table may keep: the names it reads stay
    /// in them rather than being copied.
    pub fn from_shared_elf(
        runtime: SharedBytes,
        debug: Option<SharedBytes>,
        demangle: bool,
    ) -> Result<SymbolTable, String> {
        fn bytes(f: &SharedBytes) -> &[u8] {
            (**f).as_ref()
        }
        Self::from_elf_files(
            bytes(&runtime),
            debug.as_ref().map(bytes),
            [Some(&runtime), debug.as_ref()],
            Load {
                eager: false,
                demangle,
            },
        )
    }

    /// [`SymbolTable::from_elf`] with names kept in the files of `shared` (the runtime
    /// and the debug file, as shared bytes) when given, and every choice among symbols
    /// at one address made while loading or left until needed, names demangled or
    /// not, as `load` says.
    fn from_elf_files(
        runtime: &[u8],
        debug: Option<&[u8]>,
        shared: [Option<&SharedBytes>; 2],
        load: Load,
    ) -> Result<SymbolTable, String> {
        use object::elf::{FileHeader32, FileHeader64};
        match object::FileKind::parse(runtime).map_err(|e| e.to_string())? {
            object::FileKind::Elf32 => {
                load_elf::<FileHeader32<Endianness>>(runtime, debug, shared, load)
            }
            object::FileKind::Elf64 => {
                load_elf::<FileHeader64<Endianness>>(runtime, debug, shared, load)
            }
            kind => Err(format!("not an ELF file ({kind:?})")),
        }
    }
}

/// C's `strtoull(s, &end, 16)` on the bytes of `s` (a NUL ends them): the value and
/// the number of bytes read, 0 when no digit was found. Leading white space, a sign
/// and a `0x` are read as C reads them; a value too big is `u64::MAX`.
fn strtoull_hex(s: &[u8]) -> (u64, usize) {
    let mut i = 0;
    while i < s.len() && matches!(s[i], b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r') {
        i += 1;
    }
    let negative = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let hex = |b: Option<&u8>| b.is_some_and(u8::is_ascii_hexdigit);
    if s.get(i) == Some(&b'0') && matches!(s.get(i + 1), Some(b'x' | b'X')) && hex(s.get(i + 2)) {
        i += 2;
    }
    let first = i;
    let mut value: u64 = 0;
    let mut overflow = false;
    while let Some(d) = s.get(i).and_then(|&c| (c as char).to_digit(16)) {
        match value
            .checked_mul(16)
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
        i += 1;
    }
    if i == first {
        return (0, 0);
    }
    if overflow {
        return (u64::MAX, i);
    }
    (
        if negative {
            value.wrapping_neg()
        } else {
            value
        },
        i,
    )
}

#[cfg(test)]
mod tests {
    use super::{
        build_id_debug_path, build_id_hex, raw_name, Binding, KernelSymbols, SearchTree,
        SharedBytes, StartIndex, Sym, SymbolTable,
    };

    /// perf's `~/.debug/PATH/ID/elf` and bfd's `.build-id/XX/REST.debug` spell ids so.
    #[test]
    fn build_id_names() {
        let id = [0x0a, 0xb1, 0x00, 0xff];
        assert_eq!(build_id_hex(&id), "0ab100ff");
        assert_eq!(
            build_id_debug_path(&id).as_deref(),
            Some("/usr/lib/debug/.build-id/0a/b100ff.debug")
        );
        assert_eq!(build_id_debug_path(&[0x0a]), None);
    }

    /// Whatever a perf map holds, reading it and looking addresses up neither panics
    /// nor loops: empty text, bare newlines, NULs, signs, numbers too big, entries
    /// that wrap around the address space, many entries at one address.
    #[test]
    fn any_perf_map_text_is_read_without_panic() {
        let mut texts: Vec<Vec<u8>> = vec![
            b"".to_vec(),
            b"\n".to_vec(),
            b"x".to_vec(),
            b"\n\n\n".to_vec(),
            b"1000 10 a\0b\n".to_vec(),
            b"-10 20 negative\n".to_vec(),
            b"ffffffffffffffffffff 10 too_big\n".to_vec(),
            b"fffffffffffffff0 100 wraps\n".to_vec(),
            b"0x 0x name\n".to_vec(),
            b"  +1000\t10\tspaced\r\n".to_vec(),
            vec![0xff; 64],
        ];
        let mut same_address = Vec::new();
        for i in 0..500 {
            same_address.extend_from_slice(format!("1000 {:x} n{i}\n", i % 7).as_bytes());
        }
        texts.push(same_address);
        for text in &texts {
            let t = SymbolTable::from_perf_map(text);
            for addr in [
                0,
                0x10,
                0xfff,
                0x1000,
                0x1005,
                0x2000,
                u64::MAX - 1,
                u64::MAX,
            ] {
                let _ = t.find(addr);
            }
        }
    }

    /// Lines in the kernel's layout, read at fixed places, give what the same lines give
    /// when read word by word (spaces instead of the tab, a `+` before the address).
    #[test]
    fn kallsyms_lines_in_any_spacing_give_the_same_symbols() {
        let kernel = "ffffffff81000000 T _text\n\
                      ffffffff81000100 t helper\n\
                      ffffffff81000200 r not_code\n\
                      ffffffff81000300 W weak_fn\n\
                      ffffffffc0001000 t mod_fn\t[nf_tables]\n\
                      ffffffffc0001080 T mod_other\t[nf_tables]\n";
        let spaced = "+ffffffff81000000  T   _text\n\
                      ffffffff81000100 t helper \r\n\
                      ffffffff81000200 r not_code\n\
                      ffffffff81000300\tW weak_fn\n\
                      ffffffffc0001000 t mod_fn [nf_tables]\n\
                      ffffffffc0001080 T  mod_other   [nf_tables]";
        // A form feed also ends a name.
        let form_feed = kernel.replace("helper\n", "helper\x0c\n");
        // Lines ended by a carriage return too, a module word followed by a space, and
        // a last line without its newline.
        let crlf = kernel.replace('\n', "\r\n");
        let module_space = kernel.replace("]\n", "] \n");
        let unended = kernel.trim_end_matches('\n');
        for text in [kernel, spaced, &form_feed, &crlf, &module_space, unended] {
            let k = KernelSymbols::parse(text);
            assert_eq!(k.kernel.len(), 3, "{text:?}");
            assert_eq!(
                k.kernel.find(0xffffffff81000104),
                Some(("helper", 0xffffffff81000100))
            );
            assert_eq!(
                k.kernel.find(0xffffffff81000210),
                Some(("helper", 0xffffffff81000100))
            );
            assert_eq!(
                k.kernel.find(0xffffffff81000300),
                Some(("weak_fn", 0xffffffff81000300))
            );
            let m = &k.modules["nf_tables"];
            assert_eq!(
                m.find(0xffffffffc0001010),
                Some(("mod_fn", 0xffffffffc0001000))
            );
            assert_eq!(
                m.find(0xffffffffc0001090),
                Some(("mod_other", 0xffffffffc0001080))
            );
        }
    }

    /// What a lookup prints: the symbol's name and start.
    fn printed(
        t: &SymbolTable,
        i: Option<usize>,
    ) -> Option<(std::borrow::Cow<'_, str>, bool, u64)> {
        let s = &t.decided(i?);
        Some((raw_name(&t.names, s), s.plain, s.start))
    }

    /// Every lookup near each symbol's start and end finds, without perf's tree, what
    /// perf's tree finds (built for every lookup, as perf does). The number of tables
    /// whose symbols overlap.
    fn lookups_agree_with_the_tree(t: &SymbolTable) -> usize {
        let Some(lazy) = &t.tree else {
            return 0;
        };
        let tree = SearchTree::build(t, &lazy.history);
        let mut addrs: Vec<u64> = Vec::new();
        for s in &t.syms {
            for a in [s.start, s.end, s.start / 2 + s.end / 2] {
                addrs.extend([a.wrapping_sub(1), a, a.wrapping_add(1)]);
            }
        }
        for addr in addrs {
            assert_eq!(
                printed(t, t.find_index(addr)),
                printed(t, tree.find(&t.syms, addr)),
                "{addr:#x}"
            );
        }
        1
    }

    /// Real files, with perf's `name@plt` points, labels, aliases and a table left
    /// unfixed by a missing section: the shortcut past perf's tree finds what it does.
    /// The ELF files the perf goldens were recorded from (tests/data/perf/symfs/tmp/tpf).
    fn test_elf_files() -> Vec<std::path::PathBuf> {
        let data =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/symfs/tmp/tpf");
        std::fs::read_dir(&data)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect()
    }

    #[test]
    fn lookups_past_the_tree_find_what_perf_s_tree_finds_in_real_files() {
        let mut files = test_elf_files();
        // System files where they exist (rustc's `_fini` reaches over its `.plt`).
        let home = std::env::var("HOME").unwrap_or_default();
        for f in [
            "/usr/lib/x86_64-linux-gnu/libc.so.6",
            "/usr/lib/x86_64-linux-gnu/libstdc++.so.6",
            "/usr/bin/perf",
            &format!("{home}/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/bin/rustc"),
        ] {
            files.push(f.into());
        }
        let mut overlapping = 0;
        for f in files {
            let Ok(bytes) = std::fs::read(&f) else {
                continue;
            };
            if let Ok(t) = SymbolTable::from_elf(&bytes, None) {
                overlapping += lookups_agree_with_the_tree(&t);
            }
        }
        assert!(overlapping >= 2, "{overlapping}");
    }

    /// A table whose choices among aliases were left until needed (and whose names stay
    /// in the file) holds, place by place, the symbols the table decided while loading
    /// (with its names copied) holds, and perf's tree of each (which decides them all)
    /// finds the same symbols near each one.
    #[test]
    fn choices_left_for_later_find_what_deciding_while_loading_finds() {
        let mut files = test_elf_files();
        // C++ constructors and destructors (`C1`/`C2`, `D1`/`D2`) share addresses.
        files.push("/usr/lib/x86_64-linux-gnu/libstdc++.so.6".into());
        let mut runs = 0;
        for f in files {
            let Ok(bytes) = std::fs::read(&f) else {
                continue;
            };
            let shared: SharedBytes = std::sync::Arc::new(bytes);
            let bytes = (*shared).as_ref();
            let (Ok(eager), Ok(lazy)) = (
                SymbolTable::from_elf_files(
                    bytes,
                    None,
                    [None, None],
                    super::Load {
                        eager: true,
                        demangle: true,
                    },
                ),
                SymbolTable::from_elf_files(
                    bytes,
                    None,
                    [Some(&shared), None],
                    super::Load {
                        eager: false,
                        demangle: true,
                    },
                ),
            ) else {
                continue;
            };
            assert!(eager.undecided.is_empty() && eager.names.file.is_none());
            assert!(lazy.names.file.is_some());
            runs += lazy.undecided.len();
            assert_eq!(eager.len(), lazy.len(), "{f:?}");
            for i in 0..eager.len() {
                let (e, l) = (eager.syms[i], lazy.decided(i));
                assert_eq!(
                    (e.start, e.end, e.seq, e.binding, e.clustered),
                    (l.start, l.end, l.seq, l.binding, l.clustered),
                    "{f:?} {i}"
                );
                assert_eq!(printed(&eager, Some(i)), printed(&lazy, Some(i)));
            }
            let (Some(et), Some(lt)) = (&eager.tree, &lazy.tree) else {
                assert!(eager.tree.is_none() && lazy.tree.is_none());
                continue;
            };
            let (et, lt) = (
                SearchTree::build(&eager, &et.history),
                SearchTree::build(&lazy, &lt.history),
            );
            for s in &eager.syms {
                for a in [s.start, s.end, s.start / 2 + s.end / 2] {
                    for addr in [a.wrapping_sub(1), a, a.wrapping_add(1)] {
                        assert_eq!(
                            printed(&eager, et.find(&eager.syms, addr)),
                            printed(&lazy, lt.find(&lazy.syms, addr)),
                            "{f:?} {addr:#x}"
                        );
                        assert_eq!(eager.find(addr), lazy.find(addr), "{f:?} {addr:#x}");
                    }
                }
            }
        }
        assert!(runs > 0);
    }

    /// Random perf maps, whose entries overlap in every way (nested, equal starts,
    /// equal names, size 0, wrapping): the shortcut past perf's tree finds what it does.
    #[test]
    fn lookups_past_the_tree_find_what_perf_s_tree_finds_in_random_maps() {
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..40 {
            let mut text = String::new();
            let entries = 1 + next(400);
            let spread = 1 + next(0x4000);
            for _ in 0..entries {
                let start = 0x1000 + next(spread);
                let size = match next(5) {
                    0 => 0,
                    1 => next(8),
                    _ => next(1 + spread / 8),
                };
                let start = if round == 7 {
                    u64::MAX - next(64)
                } else {
                    start
                };
                text.push_str(&format!("{start:x} {size:x} n{}\n", next(6)));
            }
            let t = SymbolTable::from_perf_map(text.as_bytes());
            lookups_agree_with_the_tree(&t);
        }
    }

    /// The index counts the starts at or below an address as a search of all of them
    /// does: tables shorter and longer than a stride, runs of one start across a
    /// stride's edge, addresses before, between, at and after the starts.
    #[test]
    fn the_start_index_counts_as_a_search_of_every_start() {
        let sym = |start| Sym {
            start,
            end: start,
            at: 0,
            len: 0,
            binding: Binding::Global,
            plain: true,
            plt: false,
            module: 0,
            seq: 0,
            clustered: false,
            undecided: 0,
        };
        let stride = StartIndex::STRIDE as u64;
        for n in [0, 1, 2, stride - 1, stride, stride + 1, 3 * stride + 5] {
            for repeat in [1, 3, stride + 2] {
                let syms: Vec<Sym> = (0..n).map(|i| sym(100 + i / repeat * 10)).collect();
                let index = StartIndex::of(&syms);
                for addr in (0..100 + n * 10 + 20).chain([u64::MAX]) {
                    assert_eq!(
                        index.at_or_below(addr),
                        syms.partition_point(|s| s.start <= addr),
                        "{n} symbols, {repeat} a start, address {addr}"
                    );
                }
            }
        }
    }

    fn rsyms_library(name: &str) -> SymbolTable {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/perf/symfs/tmp/tpf")
            .join(name);
        SymbolTable::from_elf(&std::fs::read(path).unwrap(), None).unwrap()
    }

    /// librsalias.so (tests/data/perf/README): a `.dynsym` entry naming a section the
    /// file lacks stops the loading after the aliases before it were read from
    /// `.dynsym`, unfixed; the tree finds the alias perf named, not the longest one.
    #[test]
    fn a_symbol_naming_a_missing_section_leaves_the_table_incomplete() {
        let t = rsyms_library("librsalias.so");
        assert!(t.incomplete());
        assert_eq!(t.find(0x110f), Some(("alias_number_five_eeeee_e", 0x10f9)));
    }

    /// librsplt.so: a function only `.dynsym` names is found, and a `.plt` without an
    /// entry size gets its `@plt` symbols at its start, holding that address only.
    #[test]
    fn dynsym_is_read_after_symtab_and_a_plt_without_entry_size_holds_one_address() {
        let t = rsyms_library("librsplt.so");
        assert!(!t.incomplete());
        assert_eq!(t.find(0x1187), Some(("only_in_dynsym", 0x116d)));
        assert_eq!(t.find(0x1020), Some(("plt_leaf@plt", 0x1020)));
        assert_eq!(t.find(0x1030), None);
        // A usual `.plt` (16-byte entries after a 16-byte header).
        let exe = rsyms_library("rsyms");
        assert_eq!(exe.find(0x1050), Some(("plt_leaf@plt", 0x1050)));
    }

    /// A symbol no loaded segment holds (perf's JIT dump files have no program headers)
    /// is moved by its section instead, not left out: librsplt.so with its `PT_LOAD`
    /// headers turned into `PT_NULL` gives the same symbols.
    #[test]
    fn a_symbol_outside_every_segment_is_placed_by_its_section() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/perf/symfs/tmp/tpf/librsplt.so");
        let mut elf = std::fs::read(path).unwrap();
        let u16_at = |e: &[u8], at: usize| u16::from_le_bytes([e[at], e[at + 1]]) as usize;
        let phoff = u64::from_le_bytes(elf[0x20..0x28].try_into().unwrap()) as usize;
        let (phentsize, phnum) = (u16_at(&elf, 0x36), u16_at(&elf, 0x38));
        let mut loads = 0;
        for i in 0..phnum {
            let at = phoff + i * phentsize;
            if elf[at..at + 4] == 1u32.to_le_bytes() {
                elf[at..at + 4].copy_from_slice(&0u32.to_le_bytes());
                loads += 1;
            }
        }
        assert!(loads > 1);
        let t = SymbolTable::from_elf(&elf, None).unwrap();
        assert!(!t.incomplete());
        assert_eq!(t.find(0x1187), Some(("only_in_dynsym", 0x116d)));
        assert_eq!(t.find(0x1020), Some(("plt_leaf@plt", 0x1020)));
    }
}
