//! The state perf rebuilds while it reads a perf.data: threads and their comms, the
//! mappings of each process and of the kernel, and the symbols of each mapped file.
//!
//! Records must be applied in time order ([`ordered_records`]), as `perf script` and
//! `perf report` do, so that a sample sees the comm and mappings of its moment.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::event::KallsymsSource;

use super::data::abi::{context, misc, record};
use super::data::host::{kernel_build_id, vdso_build_id};
use super::data::write::BuildIdEntry;
use super::data::{DsoId, Event, PerfData, PerfDataError, RawRecord, Sample};
use super::nsinfo::{open_regular, NsInfo};
use super::perf_map::{perf_map_symbols, read_perf_map, PERF_MAP_PREFIX};
use super::rbtree::RbOrder;
use super::symbols::{elf_build_id, KernelSymbols, SharedBytes, SymbolTable};
use super::symsrc;
use super::sys::MappedFile;
use super::unwind::{ElfCfi, ProcessMap, Unwinders, UserState};
use crate::render::comm::PidMap;

mod tasks;
use tasks::ThreadLink;
pub use tasks::{Task, TaskMap};

/// perf's build-id cache (`buildid_dir`): `.debug` under `symfs` (`--symfs`) when
/// given, else `buildid_dir` (`--buildid-dir`, or `buildid.dir` of perf's config files),
/// else `$HOME/.debug` (`.debug` without a HOME, `/.debug` with an empty one).
pub fn build_id_cache(symfs: Option<&Path>, buildid_dir: Option<&Path>) -> PathBuf {
    if let Some(root) = symfs {
        return root.join(".debug");
    }
    if let Some(dir) = buildid_dir {
        return dir.to_path_buf();
    }
    match std::env::var_os("HOME") {
        Some(mut home) => {
            home.push("/.debug");
            PathBuf::from(home)
        }
        None => PathBuf::from(".debug"),
    }
}

/// The records of a file in the order perf delivers them: queued by time and released
/// at each FINISHED_ROUND up to the newest time seen before the previous round, the
/// rest at the end (so a record that arrives after newer ones were released comes out
/// late, as in perf). Records without a time (or with time 0, synthesized at the start)
/// are delivered at once. With them, how many came out of order (see
/// [`for_each_ordered`]).
pub fn ordered_records(file: &PerfData) -> Result<(Vec<RawRecord<'_>>, u64), PerfDataError> {
    let mut out = Vec::new();
    let late = for_each_ordered(file, |r| {
        out.push(r);
        Ok::<(), PerfDataError>(())
    })?;
    Ok((out, late))
}

/// [`ordered_records`] handed to `f` one by one as each round is released, so that only
/// the records of two rounds are held at a time. Stops at the first error, of the file
/// or of `f`. Returns how many records were older than one already released (perf's
/// `nr_unordered_events`, which it warns of: "N out of order events recorded.").
pub fn for_each_ordered<'a, E: From<PerfDataError>>(
    file: &'a PerfData,
    f: impl FnMut(RawRecord<'a>) -> Result<(), E>,
) -> Result<u64, E> {
    ordered_walk(file, false, f)
}

/// [`for_each_ordered`] that also hands over the FINISHED_ROUND and FINISHED_INIT
/// records, each when it is read (a round's before the records it releases), as perf
/// takes them: what `-D` shows.
pub fn for_each_ordered_with_marks<'a, E: From<PerfDataError>>(
    file: &'a PerfData,
    f: impl FnMut(RawRecord<'a>) -> Result<(), E>,
) -> Result<u64, E> {
    ordered_walk(file, true, f)
}

/// [`for_each_ordered`], with the round and init records handed over when `marks`.
fn ordered_walk<'a, E: From<PerfDataError>>(
    file: &'a PerfData,
    marks: bool,
    mut f: impl FnMut(RawRecord<'a>) -> Result<(), E>,
) -> Result<u64, E> {
    fn flush<'a, E>(
        queue: &mut Vec<(u64, RawRecord<'a>)>,
        limit: u64,
        released: &mut u64,
        f: &mut impl FnMut(RawRecord<'a>) -> Result<(), E>,
    ) -> Result<(), E> {
        sort_by_time(queue);
        let n = queue.partition_point(|(t, _)| *t <= limit);
        for (t, r) in queue.drain(..n) {
            *released = t;
            f(r)?;
        }
        Ok(())
    }
    let mut queue: Vec<(u64, RawRecord)> = Vec::new();
    let mut max_ts = 0u64;
    let mut next_flush = 0u64;
    let mut released = 0u64;
    let mut late = 0u64;
    for r in file.records() {
        let r = r?;
        if r.type_ == record::FINISHED_ROUND {
            if marks {
                f(r)?;
            }
            flush(&mut queue, next_flush, &mut released, &mut f)?;
            next_flush = max_ts;
            continue;
        }
        if r.type_ == record::FINISHED_INIT {
            if marks {
                f(r)?;
            }
            continue;
        }
        match file.time_of(&r) {
            Some(t) if t != 0 && t != u64::MAX => {
                max_ts = max_ts.max(t);
                late += u64::from(t < released);
                queue.push((t, r));
            }
            _ => f(r)?,
        }
    }
    flush(&mut queue, u64::MAX, &mut released, &mut f)?;
    Ok(late)
}

/// The BUILD_ID table perf 6.1's `perf record` writes for the records of `file`
/// (`process_buildids`, then `dsos__write_buildid_table`): the records are read back in
/// perf's order onto a machine of their own, and every object a sample's address falls
/// in is hit (perf's `dso->hit`, set from the sample's ip alone, not its call chain).
/// Each object hit, and the vDSO in any case, is listed once, in the order the objects
/// were made (the kernel's first), with the build id of its own file: read inside the
/// mount namespace of the process that mapped it last while that one lives (or under
/// its root), so two files at one path are two entries. Objects whose file has no
/// build id (or none is found) are left out, as are the kernel's modules (not read).
pub fn recorded_build_ids(file: &PerfData) -> Result<Vec<BuildIdEntry>, PerfDataError> {
    Ok(recorded_objects(file, false)?
        .into_iter()
        .map(|(e, _)| e)
        .collect())
}

/// [`recorded_build_ids`], each entry with the namespaces its file was read in (perf's
/// `dso->nsinfo`), where `perf record` copies it into the build-id cache from. With
/// `all` (`--buildid-all`), every object the records map counts as hit.
pub(super) fn recorded_objects(
    file: &PerfData,
    all: bool,
) -> Result<Vec<(BuildIdEntry, Option<NsInfo>)>, PerfDataError> {
    let mut machine = Machine::new(KallsymsSource::default(), None);
    let mut hit = std::collections::HashSet::new();
    for_each_ordered(file, |r| {
        if r.type_ == record::SAMPLE {
            file.with_sample(&r, |s| {
                if let Some(o) = machine.object_at(s.pid, s.cpumode, s.ip) {
                    hit.insert(o);
                }
            })?;
        } else if let Ok(ev) = file.decode(&r) {
            machine.apply(&ev);
        }
        Ok::<(), PerfDataError>(())
    })?;
    let mut out = Vec::new();
    for (i, d) in machine.dsos.iter().enumerate() {
        let vdso = d.kernel.is_none() && d.name == "[vdso]";
        if !all && !vdso && !hit.contains(&ObjectId(i)) {
            continue;
        }
        let (misc, id) = match &d.kernel {
            Some(None) => (misc::KERNEL, kernel_build_id()),
            Some(Some(_)) => continue,
            None if vdso => (misc::USER, vdso_build_id()),
            None if d.name.starts_with('/') => (misc::USER, machine.file_build_id(d)),
            None => continue,
        };
        if let Some(id) = id {
            let ns = machine.nsinfo_of(d);
            let entry = BuildIdEntry {
                misc,
                pid: -1,
                id,
                filename: d.name.clone(),
            };
            out.push((entry, ns));
        }
    }
    Ok(out)
}

/// Sort `queue` by its times, keeping the order of equal ones, as `sort_by_key` does.
///
/// The queue of a round is a few runs already in time order (perf copies each CPU's
/// buffer in turn, and what the last round kept back is sorted), and rounds are small (a
/// dozen records each in a busy system-wide recording): a stable insertion sort moves
/// only the records that overtake others, where a general sort paid its setup per round.
/// A long queue is sorted the general way.
fn sort_by_time<T: Copy>(queue: &mut [(u64, T)]) {
    /// Longer queues are sorted the general way.
    const INSERTION_MAX: usize = 256;
    if queue.len() > INSERTION_MAX {
        queue.sort_by_key(|(t, _)| *t);
        return;
    }
    for i in 1..queue.len() {
        let x = queue[i];
        if x.0 >= queue[i - 1].0 {
            continue;
        }
        // After the last record of the same time or earlier: equal times keep their order.
        let at = queue[..i].partition_point(|(t, _)| *t <= x.0);
        queue.copy_within(at..i, at + 1);
        queue[at] = x;
    }
}

#[derive(Debug, Clone)]
struct Map {
    start: u64,
    end: u64,
    pgoff: u64,
    /// The file offset perf keeps (`map->pgoff`), which for memory without a file is
    /// not `pgoff`; moved with it when the map is cut.
    file_pgoff: u64,
    dso: usize,
    /// `PROT_*` and `MAP_*` as perf keeps them (`map->prot`, `map->flags`): an MMAP2
    /// record's, `PROT_EXEC` for an MMAP record of code, nothing for the kernel's.
    prot: u32,
    flags: u32,
}

/// The name perf files its own vDSO under: its copy, `/tmp/perf-vdso.so-` and six
/// characters `mkstemp` chose.
const VDSO_COPY: &[u8] = b"/tmp/perf-vdso.so-";

impl Map {
    /// A kernel map (its addresses are its own offsets).
    fn kernel(start: u64, end: u64, dso: usize) -> Map {
        let pgoff = start;
        Map {
            start,
            end,
            pgoff,
            file_pgoff: pgoff,
            dso,
            prot: 0,
            flags: 0,
        }
    }
}

#[derive(Debug)]
struct Dso {
    /// The name perf prints: the path as recorded, `[kernel.kallsyms]`, `[module]`.
    name: String,
    /// The name perf files it under (its `long_name`): the path as recorded.
    key: Vec<u8>,
    /// The device and inode of its file (perf's `dso->id`), empty until a record
    /// gives them.
    id: DsoId,
    /// The build id its files must have (perf's `dso->bid`): the last one the file's
    /// BUILD_ID feature lists for its path, for the object made for that list, or the
    /// one an MMAP2 record of it carried (`--buildid-mmap`), or the one copied from the
    /// object of the list when it was mapped (see [`Machine::apply`]).
    build_id: Option<Vec<u8>>,
    /// Whether `build_id` came from the BUILD_ID feature (perf's `header_build_id`):
    /// only such an id is copied to the objects of its path made later.
    header_build_id: bool,
    /// Kernel code: addresses print as they are and symbols come from kallsyms.
    kernel: Option<Option<String>>,
    /// Shared with the machines made by [`Machine::sharing_symbols`].
    symbols: SharedTable,
    /// Whether its symbols were asked for: perf's first lookup in a file whose loading
    /// failed part way finds nothing.
    looked_up: AtomicBool,
    /// Its call frame information, for unwinding user stacks.
    cfi: OnceLock<Option<Arc<ElfCfi>>>,
    /// The process whose namespaces its files are looked up in (perf's `dso->nsinfo`):
    /// the last one to map it, and whether that is done here all the same (the
    /// kernel's vDSO, whose image is the host's). None for the kernel's objects.
    mapped_by: Option<(i32, bool)>,
}

/// One object (perf's `struct dso`) of a [`Machine`]: a file as the records tell it
/// apart, by its path and, where the records give them, its device and inode. Objects
/// order as they were first mapped, which perf's call graphs order the entries of
/// different objects by (it compares their addresses).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectId(usize);

impl ObjectId {
    /// How many objects were mapped before this one.
    pub fn order(self) -> usize {
        self.0
    }
}

/// Where an address is: the address as perf prints it, its symbol and its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location<'a> {
    /// The address relative to its file (user space) or as sampled (kernel, unmapped).
    pub addr: u64,
    /// The symbol holding the address and the offset into it.
    pub sym: Option<(&'a str, u64)>,
    /// The file (`[kernel.kallsyms]`, a path), if the address is mapped.
    pub dso: Option<&'a str>,
    /// The object the file is, if the address is mapped: two files mapped at one path
    /// are two objects of one name.
    pub object: Option<ObjectId>,
    /// Whether the address was sampled in the kernel (perf's `[k]` level).
    pub kernel: bool,
    /// What perf's `map__unmap_ip` adds to a file-relative address to get the sampled
    /// one: the mapping's start less its file offset (0 for the kernel's identity
    /// maps and unmapped addresses).
    pub unmap_delta: u64,
    /// The size of the mapping holding the address (perf's `map__size`), 0 when
    /// unmapped. The kernel's map reaches as far as its symbols do.
    pub map_size: u64,
    /// Where the symbol of `sym` ends, in the address's terms (perf's `sym->end`); 0
    /// without a symbol.
    pub sym_end: u64,
}

/// Threads, mappings and symbols of one perf.data file.
#[derive(Debug)]
pub struct Machine {
    /// Comm per thread, and whether a record set it (perf copies only a set comm to a
    /// forked thread).
    comms: PidMap<(String, bool)>,
    maps: PidMap<Vec<Map>>,
    kernel_maps: Vec<Map>,
    dsos: Vec<Dso>,
    /// The objects of each name, in the order they were made.
    by_name: HashMap<Vec<u8>, Vec<usize>>,
    /// The objects as perf files them (see [`Machine::dso`]): item `i` is object `i`.
    tree: RbOrder,
    /// The vDSO's object once [`Machine::vdso`] found or made it (every process maps
    /// the one image).
    vdso: Option<usize>,
    kallsyms: KallsymsSource,
    /// Filled by whichever thread asks first, shared with the machines made by
    /// [`Machine::sharing_symbols`].
    kernel: Arc<OnceLock<Option<KernelSymbols>>>,
    /// Counts the records that changed a mapping (see [`Machine::map_changes`]).
    map_changes: u64,
    /// Counts the records that changed a kernel mapping (see
    /// [`Machine::kernel_map_changes`]).
    kernel_map_changes: u64,
    /// Where the modules' symbols come from when not from `kallsyms`
    /// ([`Machine::set_module_kallsyms`]), and their tables, shared as `kernel` is.
    module_kallsyms: Option<KallsymsSource>,
    modules: Arc<OnceLock<Option<KernelSymbols>>>,
    symfs: Option<PathBuf>,
    /// perf's `--buildid-dir`: the build-id cache, when not `~/.debug`.
    buildid_dir: Option<PathBuf>,
    /// The file's BUILD_ID feature, as [`Machine::set_build_ids`] was given it.
    build_ids: Vec<BuildIdEntry>,
    unwinders: Mutex<Unwinders>,
    /// The namespaces of each process whose files were looked up, read from /proc
    /// when first needed.
    nsinfo: Mutex<HashMap<i32, Option<Arc<NsInfo>>>>,
    /// The symbol table of each user file by name and the id it was first mapped
    /// with, shared with the machines made by [`Machine::sharing_symbols`], so that a
    /// table is loaded once for all of them.
    tables: Arc<Mutex<HashMap<TableKey, SharedTable>>>,
    /// How names show ([`Machine::set_symbol_conf`]).
    conf: SymbolConf,
    /// The threads the COMM, FORK, EXIT and MMAP records made, by tid, as perf's
    /// machine keeps them (see [`Machine::tasks`]).
    threads: PidMap<ThreadLink>,
}

/// How symbols show: perf's `symbol_conf` as its `--demangle` and `--inline` options
/// set it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolConf {
    /// C++ and Rust names demangled (perf's default); false shows them as the files
    /// store them, and they decide which of several symbols at one address is kept
    /// as stored (`--no-demangle`).
    pub demangle: bool,
    /// The functions inlined at unwound call-chain addresses shown as entries of their
    /// own (perf's default; `--no-inline`).
    pub inline: bool,
}

impl Default for SymbolConf {
    fn default() -> Self {
        SymbolConf {
            demangle: true,
            inline: true,
        }
    }
}

/// `PROT_EXEC` of mmap(2).
const PROT_EXEC: u32 = 4;

/// The slots of [`Machine::look_up_ahead`]'s memory of addresses looked up (a power of
/// two): enough for the distinct addresses of a deep call-chain profile's hot paths.
const LOOKED_UP_SLOTS: usize = 1 << 14;

/// A file's symbol table, loaded by whichever machine asks first.
type SharedTable = Arc<OnceLock<Option<SymbolTable>>>;

/// What a shared symbol table is found by: the object's name and the id it was first
/// mapped with.
type TableKey = (Vec<u8>, DsoId);

impl Machine {
    /// A machine resolving kernel addresses with `kallsyms` and reading ELF files under
    /// `symfs` (perf's `--symfs`) when given.
    pub fn new(kallsyms: KallsymsSource, symfs: Option<PathBuf>) -> Machine {
        let mut comms = PidMap::default();
        comms.insert(0, ("swapper".to_string(), true));
        Machine {
            comms,
            maps: PidMap::default(),
            kernel_maps: Vec::new(),
            dsos: Vec::new(),
            by_name: HashMap::new(),
            tree: RbOrder::new(),
            vdso: None,
            kallsyms,
            kernel: Arc::default(),
            map_changes: 0,
            kernel_map_changes: 0,
            module_kallsyms: None,
            modules: Arc::default(),
            symfs,
            buildid_dir: None,
            build_ids: Vec::new(),
            unwinders: Mutex::default(),
            nsinfo: Mutex::default(),
            tables: Arc::default(),
            conf: SymbolConf::default(),
            // perf's idle thread, `swapper`, is there from the start.
            threads: [(0, ThreadLink { pid: 0, ppid: -1 })].into_iter().collect(),
        }
    }

    /// Show names as `conf` says, from the first lookup on (call before any).
    pub fn set_symbol_conf(&mut self, conf: SymbolConf) {
        self.conf = conf;
    }

    /// How names show.
    pub fn symbol_conf(&self) -> SymbolConf {
        self.conf
    }

    /// A machine of its own (no thread, mapping or object yet) that shares this one's
    /// kernel symbols and the symbol tables of its files: what it loads or looks up
    /// there ([`Machine::look_up_ahead`]), this one finds done. It runs on another
    /// thread while this one is used.
    pub fn sharing_symbols(&self) -> Machine {
        let mut m = Machine {
            buildid_dir: self.buildid_dir.clone(),
            tables: Arc::clone(&self.tables),
            kernel: Arc::clone(&self.kernel),
            module_kallsyms: self.module_kallsyms.clone(),
            modules: Arc::clone(&self.modules),
            conf: self.conf,
            ..Machine::new(self.kallsyms.clone(), self.symfs.clone())
        };
        m.set_build_ids(self.build_ids.clone());
        m
    }

    /// Take the symbols of the kernel's modules from `kallsyms` rather than from the
    /// text of the kernel's own ([`super::kernel_kallsyms::KernelFrames::modules`]).
    pub fn set_module_kallsyms(&mut self, kallsyms: KallsymsSource) {
        self.module_kallsyms = Some(kallsyms);
    }

    /// Read and parse the kernel's symbols now, unless they were.
    pub fn load_kernel_symbols(&self) {
        self.kernel_symbols();
    }

    /// In a machine made by [`Machine::sharing_symbols`], go through the records of
    /// `file` in file order and look up the user addresses of each sample (its ip and
    /// call chain) in the tables of their files: the tables are loaded, perf's trees
    /// built where lookups need them and the names shown made, for the machine this
    /// one shares them with, which then finds them ready. `reached` is the file offset
    /// of the last record the other machine took: samples before it are passed over
    /// (it looked them up itself), and `u64::MAX` ends the pass.
    ///
    /// What the other machine prints does not change: lookups give the same answers
    /// whoever makes them first, and the rule of a first lookup in a file whose loading
    /// failed is kept per machine. Nothing is reported: a record that cannot be read
    /// ends the pass, and reading the file in order reports it.
    pub fn look_up_ahead(&mut self, file: &PerfData, reached: &AtomicU64) {
        let mut seen = vec![0u64; LOOKED_UP_SLOTS];
        for r in file.records() {
            let Ok(r) = r else {
                break;
            };
            let at = reached.load(Ordering::Relaxed);
            if at == u64::MAX {
                break;
            }
            if r.type_ == record::SAMPLE {
                if r.offset > at {
                    let _ = file.with_sample(&r, |s| self.load_user_tables(s, &mut seen));
                }
            } else if let Ok(ev) = file.decode(&r) {
                self.apply(&ev);
            }
        }
    }

    /// Load the tables of the user files that the ip and the call chain of `s` land in,
    /// and look the addresses up there. `seen` remembers the latest file and address
    /// looked up in each of its slots (by the address's hash): an address found there
    /// was looked up already, and a second lookup would find everything made (the
    /// main thread then pays the repeated lookups alone).
    fn load_user_tables(&self, s: &Sample<'_>, seen: &mut [u64]) {
        let Some(maps) = self.maps.get(&s.pid) else {
            return;
        };
        let mut mode = s.cpumode;
        let first = (!s.callchain().any(|_| true)).then_some(s.ip);
        for ip in first.into_iter().chain(s.callchain()) {
            if ip >= context::MAX {
                mode = if ip == context::USER {
                    misc::USER
                } else {
                    misc::KERNEL
                };
                continue;
            }
            if mode != misc::USER {
                continue;
            }
            if let Some(m) = find_map(maps, ip) {
                let d = &self.dsos[m.dso];
                if d.kernel.is_none() && !d.name.starts_with(PERF_MAP_PREFIX) {
                    let at = ip.wrapping_sub(m.start).wrapping_add(m.pgoff);
                    // Object indexes and file offsets both fit: the key is a hint only,
                    // a collision costs one lookup more or less, never another answer.
                    let key = at ^ ((m.dso as u64 + 1) << 48);
                    let slot = &mut seen[key.wrapping_mul(0x9E37_79B9_7F4A_7C15) as usize
                        >> (usize::BITS - LOOKED_UP_SLOTS.trailing_zeros())];
                    if *slot == key {
                        continue;
                    }
                    *slot = key;
                    if let Some(t) = self.elf_symbols(m.dso) {
                        t.find(at);
                    }
                }
            }
        }
    }

    /// The object of `name` and `id`, made when there is none: perf 6.1's
    /// `dsos__findnew_id`. perf files its objects in a red-black tree ordered by name,
    /// then by device, inode and inode generation (greater ones first; an empty id, all
    /// zero, compares equal to any, and so does an inode generation of 0), and a lookup
    /// takes the first object that compares equal on its way down from the root. So an
    /// empty id (an MMAP record, memory without a file) finds one of the objects of the
    /// name, the one the tree's shape puts highest, and an object without an id takes
    /// the first id it is found with.
    fn dso(&mut self, name: &[u8], id: DsoId, kernel: Option<Option<String>>) -> usize {
        if let Some(i) = self.tree.find(|e| object_cmp(name, &id, &self.dsos[e])) {
            if self.dsos[i].id.is_empty() {
                self.dsos[i].id = id;
            }
            return i;
        }
        let printed = match &kernel {
            Some(Some(m)) => format!("[{m}]"),
            Some(None) => "[kernel.kallsyms]".to_string(),
            None => String::from_utf8_lossy(name).into_owned(),
        };
        self.add_dso(name, printed, id, kernel)
    }

    /// The kernel's vDSO object, as perf 6.1's `machine__findnew_vdso` finds it: the
    /// first object made whose short name is `[vdso]` (the BUILD_ID feature's, when it
    /// lists one), else a new one, which perf files under the name of the copy of its
    /// own vDSO it writes (`/tmp/perf-vdso.so-` and six random characters)
    /// after filing it under `[vdso]`: taken out of the tree and put in again.
    fn vdso(&mut self) -> usize {
        if let Some(i) = self.vdso {
            return i;
        }
        let found = self
            .dsos
            .iter()
            .position(|d| d.kernel.is_none() && d.name == "[vdso]");
        if let Some(i) = found {
            self.vdso = Some(i);
            return i;
        }
        let i = self.add_dso(b"[vdso]", "[vdso]".into(), DsoId::default(), None);
        // Only the prefix orders it among the other names: none shares it.
        self.tree.remove(i);
        self.dsos[i].key = VDSO_COPY.to_vec();
        let dsos = &self.dsos;
        self.tree.insert_again(i, |e| {
            object_cmp(VDSO_COPY, &DsoId::default(), &dsos[e]) == std::cmp::Ordering::Less
        });
        self.vdso = Some(i);
        i
    }

    /// A new object filed in the tree under `name`, printed as `printed`.
    fn add_dso(
        &mut self,
        name: &[u8],
        printed: String,
        id: DsoId,
        kernel: Option<Option<String>>,
    ) -> usize {
        let i = self.dsos.len();
        let symbols = match kernel {
            None => Arc::clone(
                self.tables
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .entry((name.to_vec(), id))
                    .or_default(),
            ),
            Some(_) => Arc::default(),
        };
        self.dsos.push(Dso {
            name: printed,
            key: name.to_vec(),
            id,
            build_id: None,
            header_build_id: false,
            kernel,
            symbols,
            looked_up: AtomicBool::new(false),
            cfi: OnceLock::new(),
            mapped_by: None,
        });
        self.by_name.entry(name.to_vec()).or_default().push(i);
        let dsos = &self.dsos;
        let at = self
            .tree
            .insert(|e| object_cmp(name, &id, &dsos[e]) == std::cmp::Ordering::Less);
        debug_assert_eq!(at, i, "every object is filed in the tree as it is made");
        i
    }

    /// How many records applied so far changed the mappings (an MMAP, a FORK): what
    /// [`Machine::resolve`] answers for an address of a process changes only when this
    /// does, except for the first lookup in a file whose loading failed part way (see
    /// [`Machine::first_lookup_differs`]).
    pub fn map_changes(&self) -> u64 {
        self.map_changes
    }

    /// How many records applied so far changed the kernel's mappings: what
    /// [`Machine::resolve`] answers for a kernel address changes only when this does
    /// (with the same exception as [`Machine::map_changes`]). A system-wide profile
    /// maps and forks processes all along, and leaves the kernel's mappings as they are.
    pub fn kernel_map_changes(&self) -> u64 {
        self.kernel_map_changes
    }

    /// Whether a lookup of an address in `object` that found no symbol may find one the
    /// next time: the first lookup in a file whose loading failed part way finds
    /// nothing, the later ones find what was loaded.
    pub fn first_lookup_differs(&self, object: ObjectId) -> bool {
        self.dsos
            .get(object.0)
            .and_then(|d| d.symbols.get())
            .is_some_and(|t| t.as_ref().is_some_and(SymbolTable::incomplete))
    }

    /// Apply a COMM, MMAP, KSYMBOL, FORK or EXIT record (others are ignored).
    pub fn apply(&mut self, ev: &Event) {
        if matches!(ev, Event::Mmap { .. } | Event::Task { exit: false, .. }) {
            self.map_changes += 1;
        }
        match *ev {
            Event::Comm { pid, tid, comm, .. } => {
                self.find_new_thread(pid, tid);
                self.comms
                    .insert(tid, (String::from_utf8_lossy(comm).into_owned(), true));
            }
            Event::Task {
                exit: true,
                pid,
                tid,
                ..
            } => {
                self.update_thread_pid(tid, pid);
            }
            Event::Task {
                exit: false,
                pid,
                ppid,
                tid,
                ptid,
                synthesized,
                ..
            } => {
                self.fork_thread(pid, tid, ppid, ptid);
                match self.comms.get(&ptid) {
                    Some((c, true)) => {
                        let c = (c.clone(), true);
                        self.comms.insert(tid, c);
                    }
                    _ => {
                        self.comms.remove(&tid);
                    }
                }
                self.unwinders
                    .get_mut()
                    .unwrap_or_else(|e| e.into_inner())
                    .forget(pid);
                if pid != ppid && tid == pid {
                    // As perf's `machine__process_fork_event`: a new process's first
                    // thread starts afresh even when records of its pid came before (out
                    // of time order, or a pid used again), with a copy of its parent's
                    // mappings, or none when perf wrote the fork for a task that ran
                    // before the recording (its own mappings follow).
                    match self.maps.get(&ppid).filter(|_| !synthesized).cloned() {
                        Some(m) => self.maps.insert(pid, m),
                        None => self.maps.remove(&pid),
                    };
                } else if pid != ppid && !self.maps.contains_key(&pid) {
                    if let Some(m) = self.maps.get(&ppid).cloned() {
                        self.maps.insert(pid, m);
                    }
                }
            }
            Event::Ksymbol {
                addr,
                len,
                flags,
                name,
                ..
            } => {
                // perf's `machine__process_ksymbol`: a kernel map one symbol long.
                self.kernel_map_changes += 1;
                let dsos = &self.dsos;
                self.kernel_maps
                    .retain(|m| m.start != addr || dsos[m.dso].kernel.is_some());
                if flags & 1 == 0 {
                    let dso = self.dso(name, DsoId::default(), None);
                    let table = SymbolTable::single(addr, len, name);
                    let _ = self.dsos[dso].symbols.set(Some(table));
                    let end = addr.saturating_add(u64::from(len));
                    insert_map(&mut self.kernel_maps, Map::kernel(addr, end, dso));
                }
            }
            Event::Mmap {
                pid,
                tid,
                start,
                len,
                pgoff,
                filename,
                exec,
                prot,
                flags,
                data,
                mmap2,
                cpumode,
                dso_id,
                build_id,
                ..
            } => {
                let end = start.saturating_add(len);
                let kernel_space = cpumode == misc::KERNEL || pid == -1;
                if kernel_space {
                    self.kernel_map_changes += 1;
                    let (name, module) = if filename.starts_with(b"[kernel.kallsyms]") {
                        (&b"[kernel.kallsyms]"[..], None)
                    } else {
                        (filename, Some(module_name(filename)))
                    };
                    // perf finds the kernel's objects by name alone.
                    let dso = self.dso(name, DsoId::default(), Some(module));
                    insert_map(&mut self.kernel_maps, Map::kernel(start, end, dso));
                } else {
                    // As perf's map__new: memory without a file (anonymous, a JIT's code,
                    // the stack) keeps its addresses as they are, and executable
                    // memory of that kind is named after the process's perf map file.
                    let anon = filename == b"//anon"
                        || filename.starts_with(b"/dev/zero")
                        || filename.starts_with(b"/anon_hugepage");
                    let no_file = filename.starts_with(b"[stack")
                        || filename.starts_with(b"/SYSV")
                        || filename == b"[heap]";
                    let perf_map;
                    // perf keeps the recorded offset (the vDSO's as 0) and maps the
                    // addresses of memory without a file as they are.
                    let vdso = filename == b"[vdso]";
                    let file_pgoff = if vdso { 0 } else { pgoff };
                    let (name, pgoff) = if anon || no_file {
                        perf_map = format!("/tmp/perf-{pid}.map");
                        let name = if exec { perf_map.as_bytes() } else { filename };
                        (name, start)
                    } else {
                        (filename, pgoff)
                    };
                    // perf finds the kernel's vDSO by name alone (one image for every
                    // process), other files by name and id.
                    let dso = if vdso {
                        self.vdso()
                    } else {
                        self.dso(name, dso_id, None)
                    };
                    // As perf's map__new: the object is looked up in the namespaces of
                    // the process that mapped it last, the vDSO here; a build id the
                    // record carries (not all zero) is the one its files must have.
                    // Without one, the object takes the id of the object of its name
                    // that a lookup by name alone meets first, if that one's came from
                    // the BUILD_ID feature: the feature's object, or this one.
                    self.dsos[dso].mapped_by = Some((pid, vdso));
                    if let Some(b) = build_id.filter(|b| b.iter().any(|&x| x != 0)) {
                        self.dsos[dso].build_id = Some(b.to_vec());
                    } else {
                        let anyone = DsoId::default();
                        let listed = self
                            .tree
                            .find(|e| object_cmp(name, &anyone, &self.dsos[e]))
                            .filter(|&h| self.dsos[h].header_build_id);
                        if let Some(h) = listed {
                            let b = self.dsos[h].build_id.clone();
                            let d = &mut self.dsos[dso];
                            d.build_id = b;
                            d.header_build_id = true;
                        }
                    }
                    // perf's `machine__process_mmap_event`: an MMAP record's mapping
                    // is code unless it says it is data.
                    let (prot, flags) = match (mmap2, data) {
                        (true, _) => (prot, flags),
                        (false, false) => (PROT_EXEC, 0),
                        (false, true) => (0, 0),
                    };
                    self.find_new_thread(pid, tid);
                    let maps = self.maps.entry(pid).or_default();
                    insert_map(
                        maps,
                        Map {
                            start,
                            end,
                            pgoff,
                            file_pgoff,
                            dso,
                            prot,
                            flags,
                        },
                    );
                    self.unwinders
                        .get_mut()
                        .unwrap_or_else(|e| e.into_inner())
                        .forget(pid);
                }
            }
            _ => {}
        }
    }

    /// The comm of a thread as perf names it (`:TID` before any COMM record).
    pub fn comm(&mut self, tid: i32) -> &str {
        &self
            .comms
            .entry(tid)
            .or_insert_with(|| (format!(":{tid}"), false))
            .0
    }

    /// [`Machine::comm`] without remembering the `:TID` name (for readers that share
    /// the machine).
    pub fn comm_of(&self, tid: i32) -> std::borrow::Cow<'_, str> {
        match self.comms.get(&tid) {
            Some((c, _)) => std::borrow::Cow::Borrowed(c),
            None => std::borrow::Cow::Owned(format!(":{tid}")),
        }
    }

    fn kernel_symbols(&self) -> Option<&KernelSymbols> {
        self.kernel
            .get_or_init(|| kernel_symbols_of(&self.kallsyms))
            .as_ref()
    }

    fn symbols(&self, dso: usize) -> Option<&SymbolTable> {
        let d = &self.dsos[dso];
        match &d.kernel {
            Some(None) => self.kernel_symbols().map(|k| &k.kernel),
            Some(Some(m)) => match &self.module_kallsyms {
                None => self.kernel_symbols()?.modules.get(m),
                Some(k) => self
                    .modules
                    .get_or_init(|| kernel_symbols_of(k))
                    .as_ref()?
                    .modules
                    .get(m),
            },
            // perf reads a JIT's map, not an ELF file, for any object of that name, and
            // only when its symbols are first needed (so a map the process wrote while
            // it ran is read after the recording).
            None if d.name.starts_with(PERF_MAP_PREFIX) => d
                .symbols
                .get_or_init(|| match self.nsinfo_of(d) {
                    Some(ns) => perf_map_symbols(&ns),
                    None => read_perf_map(Path::new(&d.name)),
                })
                .as_ref(),
            None => {
                let table = self.elf_symbols(dso)?;
                // perf's `map__load` reports the failed load to the first lookup only;
                // the file counts as loaded from then on.
                let first = !d.looked_up.swap(true, Ordering::Relaxed);
                (!(first && table.incomplete())).then_some(table)
            }
        }
    }

    /// The namespaces the files of `d` are looked up in (perf's `dso->nsinfo`): those
    /// of the process that mapped it last, read when first asked for.
    fn nsinfo_of(&self, d: &Dso) -> Option<NsInfo> {
        let (pid, here) = d.mapped_by?;
        let ns = self
            .nsinfo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(pid)
            .or_insert_with(|| NsInfo::read(Path::new("/proc"), pid).map(Arc::new))
            .clone()?;
        Some(if here { ns.here() } else { (*ns).clone() })
    }

    /// The symbols of the ELF file of object `dso`, loaded when first asked for.
    fn elf_symbols(&self, dso: usize) -> Option<&SymbolTable> {
        self.dsos[dso]
            .symbols
            .get_or_init(|| {
                let Some((elf, debug)) = self.elf_files(ObjectId(dso)) else {
                    // perf's own vDSO (its copy) for one the recording has no build id of.
                    let own = self.dsos[dso].key.starts_with(VDSO_COPY);
                    return own.then(SymbolTable::host_vdso).flatten();
                };
                // The table keeps the files its names are in.
                let shared = |f: MappedFile| -> SharedBytes { Arc::new(f) };
                SymbolTable::from_shared_elf(shared(elf), debug.map(shared), self.conf.demangle)
                    .ok()
            })
            .as_ref()
    }

    /// Look for files in the build-id cache at `dir` (perf's `--buildid-dir`, or
    /// `buildid.dir` of its config files, see [`super::config`]) rather than in
    /// `~/.debug`. `--symfs` wins, as in perf: its cache is `SYMFS/.debug`.
    pub fn set_buildid_dir(&mut self, dir: PathBuf) {
        self.buildid_dir = Some(dir);
    }

    /// perf's build-id cache for this machine (see [`build_id_cache`]).
    fn build_id_cache(&self) -> PathBuf {
        build_id_cache(self.symfs.as_deref(), self.buildid_dir.as_deref())
    }

    /// Take the build ids of the file (its BUILD_ID feature), before any record: files
    /// are then looked up in perf's build-id cache first, and a file whose build id
    /// differs is not used. As perf 6.1 reads the list, each entry of the kernel or of
    /// user space finds the object of its path by name alone, or makes one (with no
    /// device or inode yet), and gives it its id: the last one listed for a path holds.
    /// Those objects are filed in the tree first, and an object made later for a
    /// mapping of the path copies the id (see [`Machine::apply`]).
    pub fn set_build_ids(&mut self, ids: Vec<BuildIdEntry>) {
        for e in &ids {
            let kernel = match e.misc & misc::CPUMODE_MASK {
                misc::KERNEL if e.filename.starts_with("[kernel.kallsyms]") => Some(None),
                misc::KERNEL => Some(Some(module_name(e.filename.as_bytes()))),
                misc::USER => None,
                // Guests' entries belong to machines of their own.
                _ => continue,
            };
            let dso = self.dso(e.filename.as_bytes(), DsoId::default(), kernel);
            let d = &mut self.dsos[dso];
            d.build_id = Some(e.id.clone());
            d.header_build_id = true;
        }
        self.build_ids = ids;
    }

    /// The mapped file and, when its symbols are elsewhere, the file with them, where
    /// perf looks (see [`super::symsrc`]).
    fn elf_files(&self, object: ObjectId) -> Option<(MappedFile, Option<MappedFile>)> {
        let (runtime, debug) = self.elf_files_at(object)?;
        Some((runtime.file, debug.map(|d| d.file)))
    }

    /// [`Machine::elf_files`] with the paths they were found at: the file perf takes as
    /// the mapped one (its first with a `.dynsym`, else the one with the symbols) and,
    /// when another, the one with the `.symtab`.
    pub(super) fn elf_files_at(&self, object: ObjectId) -> Option<(FoundFile, Option<FoundFile>)> {
        let found = self.search_files(object, |wanted, look| symsrc::find(wanted, look))?;
        match (found.runtime, found.syms) {
            (Some(runtime), syms) => Some((runtime, syms)),
            (None, Some(syms)) => Some((syms, None)),
            (None, None) => None,
        }
    }

    /// `search(wanted, open)` with what perf knows of `object`'s files (its path, build
    /// id, `--symfs`, the build-id cache) and `open(path, cache)` opening a regular file
    /// where perf opens it: in the namespaces of the process that mapped the object
    /// while it lives, except in the build-id cache (`cache`), which is ours.
    pub(super) fn search_files<R>(
        &self,
        object: ObjectId,
        search: impl FnOnce(&symsrc::Wanted<'_>, &dyn Fn(&Path, bool) -> Option<FoundFile>) -> R,
    ) -> Option<R> {
        let d = self.dsos.get(object.0)?;
        let name = d.name.as_str();
        let ns = self.nsinfo_of(d);
        let look = |path: &Path, cache: bool| match &ns {
            Some(ns) if !cache => open_in(ns, path),
            _ => open_here(path, ns.as_ref().map(|n| n.pid)),
        };
        // An object the recording gave no build id takes the one of the file at its
        // path (under `--symfs`), when there is a file at its path as it is.
        let read_id = || {
            let here = match &ns {
                Some(ns) => ns.enter(|| std::fs::metadata(name)),
                None => std::fs::metadata(name),
            };
            if !here.is_ok_and(|m| m.is_file()) {
                return None;
            }
            let f = look(&symsrc::under_symfs(self.symfs.as_deref(), name), false)?;
            elf_build_id(f.file.bytes())
        };
        let id = d.build_id.clone().or_else(read_id);
        let cache = self.build_id_cache();
        let wanted = symsrc::Wanted {
            path: name,
            build_id: id.as_deref(),
            symfs: self.symfs.as_deref(),
            cache: &cache,
            vdso: matches!(name, "[vdso]" | "[vdso32]" | "[vdsox32]"),
        };
        Some(search(&wanted, &look))
    }

    fn kernel_location(&self, addr: u64) -> Option<Location<'_>> {
        let m = find_map(&self.kernel_maps, addr).or_else(|| {
            // The recorded kernel map ends at _etext; perf's reaches as far as the
            // kernel's symbols do (.init.text, for boot-time stacks).
            let &k = self.by_name.get(&b"[kernel.kallsyms]"[..])?.first()?;
            let m = self.kernel_maps.iter().find(|m| m.dso == k)?;
            let end = self.kernel_symbols()?.kernel.end()?;
            (addr >= m.start && addr < end).then_some(m)
        })?;
        let d = &self.dsos[m.dso];
        let span = self.symbols(m.dso).and_then(|t| t.find_span(addr));
        let end = match d.kernel {
            Some(None) => self
                .kernel_symbols()
                .and_then(|k| k.kernel.end())
                .map_or(m.end, |e| e.max(m.end)),
            _ => m.end,
        };
        Some(Location {
            addr,
            sym: span.map(|(n, s, _)| (n, addr - s)),
            dso: Some(&d.name),
            object: Some(ObjectId(m.dso)),
            kernel: true,
            unmap_delta: m.start.wrapping_sub(m.pgoff),
            map_size: end.wrapping_sub(m.start),
            sym_end: span.map_or(0, |(_, _, e)| e),
        })
    }

    /// The symbol of `object` that holds `addr` (file-relative for a user file, as
    /// sampled for the kernel's) and where it starts: perf's `map__find_symbol`.
    pub fn symbol_at(&self, object: ObjectId, addr: u64) -> Option<(&str, u64)> {
        self.symbols(object.0)?.find(addr)
    }

    /// [`Machine::symbol_at`] with where the symbol ends.
    pub fn symbol_span_at(&self, object: ObjectId, addr: u64) -> Option<(&str, u64, u64)> {
        self.symbols(object.0)?.find_span(addr)
    }

    /// The name perf gives `object` (its `long_name`): the path as recorded,
    /// `[kernel.kallsyms]`.
    pub fn object_name(&self, object: ObjectId) -> &str {
        &self.dsos[object.0].name
    }

    /// The object an address of process `pid` sampled in `cpumode` falls in, its
    /// symbols left unread (perf's `thread__find_map`). The kernel's map reaches from
    /// its start to the next map above it, as perf's does.
    pub fn object_at(&self, pid: i32, cpumode: u16, addr: u64) -> Option<ObjectId> {
        if cpumode != misc::KERNEL {
            let maps = self.maps.get(&pid)?;
            return find_map(maps, addr).map(|m| ObjectId(m.dso));
        }
        if let Some(m) = find_map(&self.kernel_maps, addr) {
            return Some(ObjectId(m.dso));
        }
        let &k = self.by_name.get(&b"[kernel.kallsyms]"[..])?.first()?;
        let m = self.kernel_maps.iter().find(|m| m.dso == k)?;
        let next = self
            .kernel_maps
            .iter()
            .map(|n| n.start)
            .filter(|&s| s > m.start)
            .min()
            .unwrap_or(u64::MAX);
        (addr >= m.start && addr < next).then_some(ObjectId(k))
    }

    /// The build id of the file of a user object, read where perf reads it
    /// (`dsos__read_build_ids`): inside the mount namespace of the process that mapped
    /// it last while that one lives, or under its root, else here.
    fn file_build_id(&self, d: &Dso) -> Option<Vec<u8>> {
        let path = Path::new(&d.name);
        let found = match self.nsinfo_of(d) {
            Some(ns) => open_in(&ns, path),
            None => open_here(path, None),
        }?;
        elf_build_id(found.file.bytes())
    }

    /// Resolve an address of process `pid` sampled in `cpumode` ([`misc`]).
    pub fn resolve(&self, pid: i32, cpumode: u16, addr: u64) -> Location<'_> {
        let kernel = cpumode == misc::KERNEL || cpumode == misc::GUEST_KERNEL;
        let unknown = Location {
            addr,
            sym: None,
            dso: None,
            object: None,
            kernel,
            unmap_delta: 0,
            map_size: 0,
            sym_end: 0,
        };
        if kernel {
            return self.kernel_location(addr).unwrap_or(unknown);
        }
        if let Some(m) = self.maps.get(&pid).and_then(|v| find_map(v, addr)) {
            let ip = addr.wrapping_sub(m.start).wrapping_add(m.pgoff);
            let span = self.symbols(m.dso).and_then(|t| t.find_span(ip));
            return Location {
                addr: ip,
                sym: span.map(|(n, s, _)| (n, ip - s)),
                sym_end: span.map_or(0, |(_, _, e)| e),
                dso: Some(&self.dsos[m.dso].name),
                object: Some(ObjectId(m.dso)),
                kernel: false,
                unmap_delta: m.start.wrapping_sub(m.pgoff),
                map_size: m.end - m.start,
            };
        }
        // A user-space address outside every mapping stays unknown, even one that looks
        // like a kernel address (perf falls back to the kernel's maps only on machines
        // with one address space for both, which x86 is not).
        unknown
    }

    /// The call chain of a sample, resolved, markers skipped: innermost frame first,
    /// each with the address as sampled. A sample with user registers and stack
    /// (`--call-graph dwarf`) gets its user frames unwound after the chain it carries
    /// (the kernel's part), as perf lists them.
    pub fn callchain<'m>(&'m self, s: &Sample<'_>, mut f: impl FnMut(Location<'m>, u64)) {
        self.callchain_frames(s, |loc, ip, _| f(loc, ip));
    }

    /// [`Machine::callchain`], telling each frame the unwinder found (true) from one
    /// the sample carries: perf 6.1 lists inlined functions only at the former.
    pub fn callchain_frames<'m>(&'m self, s: &Sample<'_>, f: impl FnMut(Location<'m>, u64, bool)) {
        self.callchain_frames_limited(s, usize::MAX, false, f);
    }

    /// [`Machine::callchain_frames`] of at most `max_stack` addresses of the chain the
    /// sample carries and `max_stack` unwound ones (perf's `--max-stack`, which limits
    /// each on its own; context markers do not count). With `outermost_first` the
    /// addresses the sample carries are looked up from the outermost, as perf does for
    /// a report in caller order (which matters to the first lookup in an object whose
    /// loading failed part way); they are listed innermost first all the same.
    pub fn callchain_frames_limited<'m>(
        &'m self,
        s: &Sample<'_>,
        max_stack: usize,
        outermost_first: bool,
        mut f: impl FnMut(Location<'m>, u64, bool),
    ) {
        if !self.chain_shown(s, max_stack) {
            return;
        }
        if outermost_first {
            let mut entries = Vec::new();
            Self::chain_entries(s, max_stack, &mut |mode, ip| entries.push((mode, ip)));
            let mut locs: Vec<Location<'m>> = entries
                .iter()
                .rev()
                .map(|&(mode, ip)| self.resolve(s.pid, mode, ip))
                .collect();
            locs.reverse();
            for (loc, (_, ip)) in locs.into_iter().zip(entries) {
                f(loc, ip, false);
            }
        } else {
            self.sampled_chain(s, max_stack, &mut |loc, ip| f(loc, ip, false));
        }
        for ip in self.unwind_user(s).into_iter().take(max_stack) {
            f(self.resolve(s.pid, misc::USER, ip), ip, true);
        }
    }

    /// Whether perf shows the chain of `s` (up to `max_stack` entries): it takes any
    /// other context marker (a guest's too) among the entries it reaches for a corrupt
    /// chain and shows none of it.
    fn chain_shown(&self, s: &Sample<'_>, max_stack: usize) -> bool {
        let known = |ip: u64| matches!(ip, context::KERNEL | context::USER | context::HV);
        let mut taken = 0;
        for ip in s.callchain() {
            if taken >= max_stack {
                break;
            }
            if ip < context::MAX {
                taken += 1;
            } else if !known(ip) {
                return false;
            }
        }
        true
    }

    /// The entries of the chain `s` carries as [`Machine::callchain_frames_limited`]
    /// lists them, unresolved: the cpumode each address is resolved in
    /// ([`Machine::resolve`]) and the address. Unwound frames are not listed.
    pub fn sampled_chain_entries(
        &self,
        s: &Sample<'_>,
        max_stack: usize,
        mut f: impl FnMut(u16, u64),
    ) {
        if !self.chain_shown(s, max_stack) {
            return;
        }
        Self::chain_entries(s, max_stack, &mut f);
    }

    /// The entries of the chain the sample carries, each with its cpumode.
    fn chain_entries(s: &Sample<'_>, max_stack: usize, f: &mut impl FnMut(u16, u64)) {
        let mut mode = s.cpumode;
        let mut taken = 0;
        for ip in s.callchain() {
            if taken >= max_stack {
                break;
            }
            if ip >= context::MAX {
                mode = match ip {
                    context::KERNEL => misc::KERNEL,
                    context::USER => misc::USER,
                    _ => misc::HYPERVISOR,
                };
                continue;
            }
            taken += 1;
            f(mode, ip);
        }
    }

    /// The user frames of a sample unwound from its registers and stack copy (none
    /// without them).
    fn unwind_user(&self, s: &Sample<'_>) -> Vec<u64> {
        let Some(state) = UserState::of(s) else {
            return Vec::new();
        };
        // perf unwinds through the address space it sets up at a process's first
        // mapping; without one it lists no user frame, not even the sampled one.
        if !self.maps.get(&s.pid).is_some_and(|m| !m.is_empty()) {
            return Vec::new();
        }
        // perf's unwinder reads through every mapping of the process: code to find
        // the call frame information, the rest for the words outside the stack copy.
        let maps = || {
            self.maps.get(&s.pid).map_or_else(Vec::new, |maps| {
                maps.iter()
                    .map(|m| ProcessMap {
                        avma: m.start..m.end,
                        pgoff: m.pgoff,
                        object: m.dso,
                        file: self.cfi(m.dso),
                    })
                    .collect()
            })
        };
        self.unwinders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .unwind(s.pid, &state, maps)
    }

    /// The call frame information of a user file, read once.
    fn cfi(&self, dso: usize) -> Option<Arc<ElfCfi>> {
        let d = &self.dsos[dso];
        if d.kernel.is_some() {
            return None;
        }
        d.cfi
            .get_or_init(|| {
                let (elf, _) = self.elf_files(ObjectId(dso))?;
                ElfCfi::read(Arc::new(elf)).map(Arc::new)
            })
            .clone()
    }

    /// The entries of the chain the sample carries.
    fn sampled_chain<'m>(
        &'m self,
        s: &Sample<'_>,
        max_stack: usize,
        f: &mut impl FnMut(Location<'m>, u64),
    ) {
        Self::chain_entries(s, max_stack, &mut |mode, ip| {
            f(self.resolve(s.pid, mode, ip), ip)
        });
    }
}

/// How perf 6.1 orders the object `name`, `id` against `d` in its tree of objects
/// (`__dso__cmp_long_name`): by name (strcmp), then by id, unless either is empty.
fn object_cmp(name: &[u8], id: &DsoId, d: &Dso) -> std::cmp::Ordering {
    name.cmp(&d.key).then_with(|| {
        if id.is_empty() || d.id.is_empty() {
            return std::cmp::Ordering::Equal;
        }
        // Greater ones first (`__dso_id__cmp`); generations count only when both are set.
        let generation = if id.ino_generation != 0 && d.id.ino_generation != 0 {
            d.id.ino_generation.cmp(&id.ino_generation)
        } else {
            std::cmp::Ordering::Equal
        };
        d.id.maj
            .cmp(&id.maj)
            .then(d.id.min.cmp(&id.min))
            .then(d.id.ino.cmp(&id.ino))
            .then(generation)
    })
}

/// The kernel's symbols from `kallsyms`, their names left in its text.
fn kernel_symbols_of(kallsyms: &KallsymsSource) -> Option<KernelSymbols> {
    let text = kallsyms.text()?;
    Some(KernelSymbols::parse_shared(
        text,
        Arc::new(KallsymsBytes(kallsyms.clone())),
    ))
}

/// The text of a kallsyms source that has read it, as the bytes a table's names are in.
struct KallsymsBytes(KallsymsSource);

impl AsRef<[u8]> for KallsymsBytes {
    fn as_ref(&self) -> &[u8] {
        self.0.text().unwrap_or_default().as_bytes()
    }
}

/// A file found for an object, and where.
pub(super) struct FoundFile {
    /// The path it was opened at (perf's name for the file it read).
    pub(super) path: PathBuf,
    pub(super) file: MappedFile,
    /// Whether it was opened inside another mount namespace (the path names another
    /// file here, or none).
    pub(super) inside: bool,
}

impl symsrc::OpenedFile for FoundFile {
    fn bytes(&self) -> &[u8] {
        self.file.bytes()
    }
}

/// The regular file at `path` inside the mount namespace of `ns` (here when it is
/// ours or cannot be entered), mapped.
fn open_in(ns: &NsInfo, path: &Path) -> Option<FoundFile> {
    let (path, file) = ns.enter(|| open_regular(path, Some(ns.pid)))?;
    Some(FoundFile {
        path,
        file: MappedFile::map(&file).ok().flatten()?,
        inside: ns.need_setns,
    })
}

/// The regular file at `path` here, mapped; a file of process `pid` is looked for under
/// its root too, as perf does for a chrooted process.
fn open_here(path: &Path, pid: Option<i32>) -> Option<FoundFile> {
    let (path, file) = open_regular(path, pid)?;
    Some(FoundFile {
        path,
        file: MappedFile::map(&file).ok().flatten()?,
        inside: false,
    })
}

/// A file mapped read-only (symbol tables read a few pages of a big library, not all of
/// it); None when it cannot be opened or is empty.
pub(super) fn map_file(path: &Path) -> Option<MappedFile> {
    let f = std::fs::File::open(path).ok()?;
    if !f.metadata().ok()?.is_file() {
        return None;
    }
    MappedFile::map(&f).ok().flatten()
}

/// `[name]` of a kernel module file (`/lib/modules/.../foo-bar.ko.xz` is `foo_bar`).
fn module_name(filename: &[u8]) -> String {
    let s = String::from_utf8_lossy(filename);
    let s = s.trim_matches(|c| c == '[' || c == ']');
    let base = s.rsplit('/').next().unwrap_or(s);
    let base = base.split(".ko").next().unwrap_or(base);
    base.replace('-', "_")
}

fn find_map(maps: &[Map], addr: u64) -> Option<&Map> {
    let i = maps.partition_point(|m| m.start <= addr);
    let m = maps.get(i.checked_sub(1)?)?;
    (addr < m.end).then_some(m)
}

/// Insert a mapping, cutting the parts of older ones it overlaps (the newest wins).
fn insert_map(maps: &mut Vec<Map>, new: Map) {
    let mut out = Vec::with_capacity(maps.len() + 2);
    for m in maps.drain(..) {
        if m.end <= new.start || m.start >= new.end {
            out.push(m);
            continue;
        }
        if m.start < new.start {
            out.push(Map {
                end: new.start,
                ..m.clone()
            });
        }
        if m.end > new.end {
            out.push(Map {
                start: new.end,
                pgoff: m.pgoff.wrapping_add(new.end - m.start),
                file_pgoff: m.file_pgoff.wrapping_add(new.end - m.start),
                ..m
            });
        }
    }
    out.push(new);
    out.sort_by_key(|m| m.start);
    *maps = out;
}

#[cfg(test)]
mod tests;
