//! A function_graph recording as folded stacks weighted by self time, for flame graphs.
//!
//! Each task (a pid; the idle task per CPU) has a stack of open calls. A
//! `funcgraph_entry` pushes its function, a `funcgraph_exit` pops it: the call's duration
//! is the exit's `rettime - calltime`, and its self time is that duration minus the
//! durations of the calls it made. Every call then adds its self time to the line
//! `comm;outer;...;func`, summed over identical stacks, so the self times of a stack add
//! up to the durations of its outermost calls.
//!
//! The ring buffer holds no merged leaf: the `func();` lines of the kernel's text and of
//! `report` are an entry followed by its own exit, which the stack handles like any call.
//! An entry whose format carries `calltime` and `rettime` itself is a finished call
//! without an exit and counts at once.
//!
//! A trace does not always hold whole calls:
//! * an exit whose entry came before the buffer's start (or was lost) is a call of known
//!   duration whose callers are unknown: it is drawn at the root of its task, and the
//!   calls seen inside it are subtracted from it as usual;
//! * an entry whose exit never came (tracing stopped inside the call, or the exit was
//!   lost) has no duration: its callees keep their own self times, it gets none;
//! * frames at the same or a deeper level than a new entry or an exit that matches
//!   nothing below them lost their exits, and are closed the same way.

use std::collections::{BTreeMap, HashMap};

use crate::dat::{DatError, DatFile};
use crate::render::plugins::{resolve, Plugin};
use crate::render::tracecmd::{
    read_uint, Catalog, Cmdlines, DatCatalog, DatSource, FieldSpec, RecordSource, SourceError,
};

/// Whose stack a record belongs to: the pid, and for the idle task (pid 0, one per CPU)
/// the CPU.
pub type TaskKey = (i32, u32);

/// The task of `pid` on `cpu`.
pub fn task_key(pid: i32, cpu: u32) -> TaskKey {
    if pid == 0 {
        (0, cpu)
    } else {
        (pid, u32::MAX)
    }
}

#[derive(Debug)]
struct Open {
    func: u64,
    name: String,
    depth: u32,
    /// Durations of the finished calls made from this one.
    callees: u64,
    /// The finished calls made from this one ([`SelfTimeFolder::keep_calls`]).
    children: Vec<Call>,
}

/// One finished call, with the calls it made ([`SelfTimeFolder::keep_calls`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The function.
    pub name: String,
    /// Its depth in the graph (0: the outermost traced call).
    pub depth: u32,
    /// When it began (`calltime`, in the trace clock's ns).
    pub start: u64,
    /// How long it ran, in ns.
    pub duration: u64,
    /// `duration` less the durations of the calls it made.
    pub self_ns: u64,
    /// The calls it made, in order.
    pub children: Vec<Call>,
}

/// A call that is not inside another finished call: an outermost call, or one whose
/// caller was entered before the trace began or never returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootCall {
    /// Its task.
    pub task: TaskKey,
    /// The task's name when the call returned.
    pub comm: String,
    /// The call.
    pub call: Call,
}

/// Times of one function over all its calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionTime {
    /// Calls that returned.
    pub calls: u64,
    /// Their durations, summed (a recursive function counts each level).
    pub total: u64,
    /// Their self times, summed.
    pub self_ns: u64,
    /// The longest call.
    pub max: u64,
}

#[derive(Debug, Default)]
struct Task {
    frames: Vec<Open>,
    /// Durations of finished calls at depth `d + 1` whose caller at depth `d` was entered
    /// before the trace began (its exit may still come).
    orphaned: HashMap<u32, u64>,
}

/// What the trace held besides whole calls.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FoldStats {
    /// Calls whose exit came (or leaves with their duration).
    pub calls: u64,
    /// Exits without their entry (drawn at the root of their task).
    pub exits_without_entry: u64,
    /// Entries never closed (no self time).
    pub unfinished: u64,
    /// Exits whose `rettime` lies before `calltime` (counted as 0 ns).
    pub negative: u64,
}

/// Self-time folding of function_graph calls (see the module documentation).
#[derive(Debug, Default)]
pub struct SelfTimeFolder {
    tasks: HashMap<TaskKey, Task>,
    folded: BTreeMap<String, u64>,
    stats: FoldStats,
    functions: HashMap<String, FunctionTime>,
    keep_calls: bool,
    roots: Vec<RootCall>,
}

impl SelfTimeFolder {
    /// An empty folder.
    pub fn new() -> SelfTimeFolder {
        SelfTimeFolder::default()
    }

    /// Also keep every finished call as a tree ([`SelfTimeFolder::take_roots`]).
    pub fn keep_calls(&mut self) {
        self.keep_calls = true;
    }

    /// A call of `func` (named `name`) at `depth` begins in `task`.
    pub fn entry(&mut self, task: TaskKey, func: u64, name: &str, depth: u32) {
        let t = self.tasks.entry(task).or_default();
        while t.frames.last().is_some_and(|f| f.depth >= depth) {
            let f = t.frames.pop().expect("checked");
            self.stats.unfinished += 1;
            Self::orphan_children(&mut self.roots, task, f.children);
        }
        t.orphaned.remove(&depth);
        t.frames.push(Open {
            func,
            name: name.to_string(),
            depth,
            callees: 0,
            children: Vec::new(),
        });
    }

    /// The finished calls of a frame that never returned become roots.
    fn orphan_children(roots: &mut Vec<RootCall>, task: TaskKey, children: Vec<Call>) {
        roots.extend(children.into_iter().map(|call| RootCall {
            task,
            comm: String::new(),
            call,
        }));
    }

    /// A call of `func` at `depth` returns in `task` (named `comm` now); it ran over
    /// `(calltime, rettime)`.
    pub fn exit(
        &mut self,
        task: TaskKey,
        comm: &str,
        func: u64,
        name: &str,
        depth: u32,
        span: (u64, u64),
    ) {
        let duration = self.duration(span);
        let t = self.tasks.entry(task).or_default();
        let open = t
            .frames
            .iter()
            .rposition(|f| f.func == func && f.depth == depth);
        let (callees, children) = match open {
            Some(i) => {
                self.stats.unfinished += (t.frames.len() - i - 1) as u64;
                for f in t.frames.drain(i + 1..) {
                    Self::orphan_children(&mut self.roots, task, f.children);
                }
                let f = t.frames.pop().expect("frame i exists");
                (f.callees, f.children)
            }
            None => {
                self.stats.exits_without_entry += 1;
                while t.frames.last().is_some_and(|f| f.depth >= depth) {
                    let f = t.frames.pop().expect("checked");
                    self.stats.unfinished += 1;
                    Self::orphan_children(&mut self.roots, task, f.children);
                }
                (t.orphaned.remove(&depth).unwrap_or(0), Vec::new())
            }
        };
        let call = self.keep_calls.then(|| Call {
            name: name.to_string(),
            depth,
            start: span.0,
            duration,
            self_ns: duration.saturating_sub(callees),
            children,
        });
        self.finish(task, comm, name, depth, duration, callees, call);
    }

    /// A call at `depth` that came as one record with its `(calltime, rettime)` (no exit).
    pub fn leaf(&mut self, task: TaskKey, comm: &str, name: &str, depth: u32, span: (u64, u64)) {
        let duration = self.duration(span);
        let t = self.tasks.entry(task).or_default();
        while t.frames.last().is_some_and(|f| f.depth >= depth) {
            let f = t.frames.pop().expect("checked");
            self.stats.unfinished += 1;
            Self::orphan_children(&mut self.roots, task, f.children);
        }
        t.orphaned.remove(&depth);
        let call = self.keep_calls.then(|| Call {
            name: name.to_string(),
            depth,
            start: span.0,
            duration,
            self_ns: duration,
            children: Vec::new(),
        });
        self.finish(task, comm, name, depth, duration, 0, call);
    }

    fn duration(&mut self, (calltime, rettime): (u64, u64)) -> u64 {
        rettime.checked_sub(calltime).unwrap_or_else(|| {
            self.stats.negative += 1;
            0
        })
    }

    /// Add the self time of a call that returned (its frame already off the stack) and
    /// its duration to its caller.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &mut self,
        task: TaskKey,
        comm: &str,
        name: &str,
        depth: u32,
        duration: u64,
        callees: u64,
        call: Option<Call>,
    ) {
        self.stats.calls += 1;
        let t = self.tasks.get_mut(&task).expect("task made by the caller");
        let self_ns = duration.saturating_sub(callees);
        let ft = match self.functions.get_mut(name) {
            Some(ft) => ft,
            None => self.functions.entry(name.to_string()).or_default(),
        };
        ft.calls += 1;
        ft.total += duration;
        ft.self_ns += self_ns;
        ft.max = ft.max.max(duration);
        if let Some(call) = call {
            match t.frames.last_mut() {
                Some(caller) if caller.depth + 1 == depth => caller.children.push(call),
                _ => self.roots.push(RootCall {
                    task,
                    comm: comm.to_string(),
                    call,
                }),
            }
        }
        if self_ns > 0 {
            let mut key = String::with_capacity(64);
            key.push_str(comm);
            for f in &t.frames {
                key.push(';');
                key.push_str(&f.name);
            }
            key.push(';');
            key.push_str(name);
            *self.folded.entry(key).or_insert(0) += self_ns;
        }
        match t.frames.last_mut() {
            Some(caller) if caller.depth + 1 == depth => caller.callees += duration,
            // The caller's entry was not seen: its exit, if it comes, subtracts this.
            _ if depth > 0 => *t.orphaned.entry(depth - 1).or_insert(0) += duration,
            _ => {}
        }
    }

    /// The folded lines (`comm;f1;...;fn SELF_NS`), sorted.
    pub fn folded(&self) -> String {
        let mut s = String::new();
        for (k, v) in &self.folded {
            s.push_str(k);
            s.push(' ');
            s.push_str(&v.to_string());
            s.push('\n');
        }
        s
    }

    /// What the trace held besides whole calls (so far).
    pub fn stats(&self) -> &FoldStats {
        &self.stats
    }

    /// Calls, total, self and longest time of each function that returned.
    pub fn functions(&self) -> &HashMap<String, FunctionTime> {
        &self.functions
    }

    /// The calls kept so far ([`SelfTimeFolder::keep_calls`]) that are not inside another
    /// finished call, in the order they returned, and the calls still open (their
    /// finished callees become roots too).
    pub fn take_roots(&mut self) -> Vec<RootCall> {
        let mut tasks: Vec<TaskKey> = self.tasks.keys().copied().collect();
        tasks.sort_unstable();
        for task in tasks {
            if let Some(t) = self.tasks.get_mut(&task) {
                for f in t.frames.iter_mut() {
                    let children = std::mem::take(&mut f.children);
                    Self::orphan_children(&mut self.roots, task, children);
                }
            }
        }
        std::mem::take(&mut self.roots)
    }
}

/// A trace.dat that could not be folded.
#[derive(Debug)]
#[non_exhaustive]
pub enum GraphFoldError {
    /// The file could not be read.
    Dat(DatError),
    /// Its records could not be read.
    Source(SourceError),
    /// It has no usable `ftrace/funcgraph_entry` or `funcgraph_exit` format.
    NotFunctionGraph(String),
    /// It holds no `funcgraph_entry` or `funcgraph_exit` record.
    NoCalls(String),
}

impl std::fmt::Display for GraphFoldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GraphFoldError::Dat(e) => write!(f, "{e}"),
            GraphFoldError::Source(e) => write!(f, "reading the records: {e}"),
            GraphFoldError::NotFunctionGraph(p) => write!(
                f,
                "{p}: no ftrace/funcgraph_entry and funcgraph_exit formats with func, depth, \
                 calltime and rettime: record it with the function_graph tracer \
                 (`-p function_graph`)"
            ),
            GraphFoldError::NoCalls(p) => write!(
                f,
                "{p}: no funcgraph_entry or funcgraph_exit records: it was not recorded with \
                 the function_graph tracer (`-p function_graph`), or nothing ran the graphed \
                 functions"
            ),
        }
    }
}

impl std::error::Error for GraphFoldError {}

impl From<DatError> for GraphFoldError {
    fn from(e: DatError) -> Self {
        GraphFoldError::Dat(e)
    }
}

/// Folded stacks of a function_graph trace.dat and what was met on the way.
#[derive(Debug, Clone, Default)]
pub struct GraphFold {
    /// `comm;f1;...;fn SELF_NS` lines, sorted.
    pub folded: String,
    /// Calls and the partial ones.
    pub stats: FoldStats,
    /// Sub-buffers skipped and lost events, one line each, for the caller to show.
    pub warnings: Vec<String>,
}

/// Fold the top buffer of `dat`, naming functions with the file's kallsyms (the function
/// map `report` uses) and tasks with its saved cmdlines.
pub fn fold_dat(dat: &DatFile) -> Result<GraphFold, GraphFoldError> {
    let catalog = DatCatalog::from_dat(dat);
    let endian = catalog.endian();
    let not_graph = || GraphFoldError::NotFunctionGraph(dat.path().display().to_string());
    let id = |name: &str| catalog.registry().by_name("ftrace", name).map(|s| s.id);
    let (entry_id, exit_id) = (
        id("funcgraph_entry").ok_or_else(not_graph)?,
        id("funcgraph_exit").ok_or_else(not_graph)?,
    );
    let Some(Plugin::FuncgraphEntry { f: ent }) =
        resolve(&catalog, entry_id, "ftrace", "funcgraph_entry")
    else {
        return Err(not_graph());
    };
    let Some(Plugin::FuncgraphExit { f: ret }) =
        resolve(&catalog, exit_id, "ftrace", "funcgraph_exit")
    else {
        return Err(not_graph());
    };
    let entry_times = catalog
        .field(entry_id, "calltime")
        .zip(catalog.field(entry_id, "rettime"));
    let pid_field = catalog
        .field(entry_id, "common_pid")
        .ok_or_else(not_graph)?;
    let mut cmdlines = Cmdlines::new();
    cmdlines.load(dat.cmdlines());
    let mut names: HashMap<u64, String> = HashMap::new();
    let mut name_of = |func: u64| -> String {
        names
            .entry(func)
            .or_insert_with(|| match catalog.function(func) {
                Some((n, _)) => n.to_string(),
                None => format!("0x{func:x}"),
            })
            .clone()
    };
    let num = |data: &[u8], f: FieldSpec| read_uint(data, f, endian).unwrap_or(0);
    let mut folder = SelfTimeFolder::new();
    let mut warnings = Vec::new();
    let mut source = DatSource::open(dat, 0)?;
    let mut seen = false;
    while source.peek_ts().map_err(GraphFoldError::Source)?.is_some() {
        let Some(taken) = source.take() else { break };
        let rec = taken.rec;
        if let Some(count) = taken.missed {
            warnings.push(match count {
                Some(n) => format!(
                    "CPU {}: {n} events lost; calls across the gap are cut",
                    rec.cpu
                ),
                None => format!("CPU {}: events lost; calls across the gap are cut", rec.cpu),
            });
        }
        let Some(id) = rec.event_id(endian) else {
            continue;
        };
        if id != entry_id && id != exit_id {
            continue;
        }
        seen = true;
        let d = rec.data;
        let pid = num(d, pid_field) as u32 as i32;
        let task = task_key(pid, rec.cpu);
        if id == entry_id {
            let func = num(d, ent[0]);
            let depth = num(d, ent[1]) as u32;
            let name = name_of(func);
            match entry_times {
                Some((c, r)) => {
                    let comm = cmdlines.comm(pid).to_string();
                    folder.leaf(task, &comm, &name, depth, (num(d, c), num(d, r)));
                }
                None => folder.entry(task, func, &name, depth),
            }
        } else {
            let func = num(d, ret[0]);
            let depth = num(d, ret[1]) as u32;
            let name = name_of(func);
            let comm = cmdlines.comm(pid).to_string();
            folder.exit(
                task,
                &comm,
                func,
                &name,
                depth,
                (num(d, ret[2]), num(d, ret[3])),
            );
        }
    }
    warnings.extend(source.take_warnings());
    if !seen {
        return Err(GraphFoldError::NoCalls(dat.path().display().to_string()));
    }
    Ok(GraphFold {
        folded: folder.folded(),
        stats: folder.stats().clone(),
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(f: &SelfTimeFolder) -> Vec<String> {
        f.folded().lines().map(str::to_string).collect()
    }

    #[test]
    fn nested_calls_get_their_self_time() {
        let t = task_key(7, 0);
        let mut f = SelfTimeFolder::new();
        f.entry(t, 1, "a", 0);
        f.entry(t, 2, "b", 1);
        // A leaf: entry then its own exit.
        f.entry(t, 3, "c", 2);
        f.exit(t, "sh", 3, "c", 2, (100, 130));
        f.exit(t, "sh", 2, "b", 1, (90, 150));
        f.entry(t, 3, "c", 1);
        f.exit(t, "sh", 3, "c", 1, (160, 170));
        f.exit(t, "sh", 1, "a", 0, (0, 200));
        assert_eq!(
            lines(&f),
            ["sh;a 130", "sh;a;b 30", "sh;a;b;c 30", "sh;a;c 10"]
        );
        assert_eq!(f.stats().calls, 4);
    }

    #[test]
    fn partial_calls_keep_the_total() {
        let t = task_key(7, 0);
        let mut f = SelfTimeFolder::new();
        // Entered before the trace: its callee finishes, then its exit comes.
        f.entry(t, 3, "c", 2);
        f.exit(t, "sh", 3, "c", 2, (10, 20));
        f.exit(t, "sh", 2, "b", 1, (0, 50));
        // Never finished: the callee keeps its time.
        f.entry(t, 4, "d", 0);
        f.entry(t, 5, "e", 1);
        f.exit(t, "sh", 5, "e", 1, (60, 65));
        // A leaf given whole, on the idle task of CPU 1 (not CPU 0's).
        f.leaf(task_key(0, 1), "<idle>", "x", 0, (0, 9));
        assert_eq!(lines(&f), ["<idle>;x 9", "sh;b 40", "sh;c 10", "sh;d;e 5"]);
        assert_eq!(f.stats().exits_without_entry, 1);
        // `d` is still open; a new entry at its depth closes it unfinished.
        f.entry(t, 6, "g", 0);
        assert_eq!(f.stats().unfinished, 1);
        f.exit(t, "sh", 6, "g", 0, (100, 90));
        assert_eq!(f.stats().negative, 1);
    }
}
