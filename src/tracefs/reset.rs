//! Putting a buffer back to the kernel's defaults.

use super::events::EventName;
use super::ftrace::FunctionFilter;
use super::instance::{BufferSize, Instance};
use super::ledger::Ledger;
use super::{AppendMode, Tracefs, TracefsError};

/// The kernel's default state of each trace option, as a freshly booted 6.x kernel shows
/// it in the top-level buffer. Instances start with the same values except for the
/// options that only make sense at the top (`trace_printk_dest`, `copy_trace_marker`),
/// which start off there.
pub const DEFAULT_OPTIONS: &[(&str, bool)] = &[
    ("annotate", true),
    ("bin", false),
    ("blk_cgname", false),
    ("blk_cgroup", false),
    ("blk_classic", false),
    ("block", false),
    ("context-info", true),
    ("copy_trace_marker", true),
    ("disable_on_free", false),
    ("display-graph", false),
    ("event-fork", false),
    ("fields", false),
    ("func-no-repeats", false),
    ("func_stack_trace", false),
    ("function-fork", false),
    ("function-trace", true),
    ("hash-ptr", true),
    ("hex", false),
    ("irq-info", true),
    ("latency-format", false),
    ("markers", true),
    ("overwrite", true),
    ("pause-on-trace", false),
    ("print-parent", true),
    ("printk-msg-only", false),
    ("raw", false),
    ("record-cmd", true),
    ("record-tgid", false),
    ("stacktrace", false),
    ("sym-addr", false),
    ("sym-offset", false),
    ("sym-userobj", false),
    ("test_nop_accept", false),
    ("test_nop_refuse", false),
    ("trace_printk", true),
    ("trace_printk_dest", true),
    ("userstacktrace", false),
    ("verbose", false),
];

/// The kernel's default per-CPU buffer size in KiB (1.4 MB rounded to pages, as
/// `buffer_size_kb` reads after boot).
pub const DEFAULT_BUFFER_KB: u64 = 1410;

/// The default value of an option in a buffer.
pub fn default_option(name: &str, top: bool) -> Option<bool> {
    if !top && (name == "trace_printk_dest" || name == "copy_trace_marker") {
        return Some(false);
    }
    DEFAULT_OPTIONS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| *v)
}

/// What a reset changed and what it had to leave alone.
#[derive(Debug, Default)]
pub struct ResetReport {
    /// Files written, relative to the root.
    pub changed: Vec<String>,
    /// Files the kernel refused or lacks, with the reason; the reset carried on.
    pub skipped: Vec<String>,
}

impl ResetReport {
    fn note(
        &mut self,
        inst: &Instance,
        file: &str,
        r: Result<(), TracefsError>,
    ) -> Result<(), TracefsError> {
        match r {
            Ok(()) => {
                self.changed.push(inst.rel(file).display().to_string());
                Ok(())
            }
            Err(e) if e.is_unavailable() => {
                self.skipped.push(e.to_string());
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

impl Instance {
    /// Put this buffer back to the kernel's defaults: tracing on, events off, event
    /// filters, triggers and pid filters cleared, function filters cleared, tracer `nop`,
    /// clock `local`, options and buffer sizes at their defaults, error_log kept.
    /// Files are only written when they differ from the default, so a reset of a buffer
    /// at its defaults changes nothing. Files the kernel refuses are skipped and reported.
    pub fn reset(&self) -> Result<ResetReport, TracefsError> {
        self.reset_to(None)
    }

    /// [`Instance::reset`] with the per-CPU buffer set to `buffer_kb` instead of the
    /// default (trace-cmd reset's `-b`; written even to a buffer not yet expanded).
    pub fn reset_to(&self, buffer_kb: Option<u64>) -> Result<ResetReport, TracefsError> {
        self.reset_into(buffer_kb, None)
    }

    /// [`Instance::reset`], saving in `ledger` each file before it is written, so that a
    /// command failing after the reset puts the buffer back as it was (`start`). Triggers
    /// come back as the kernel listed them; a histogram's counts start over.
    pub fn reset_saving(&self, ledger: &mut Ledger) -> Result<ResetReport, TracefsError> {
        self.reset_into(None, Some(ledger))
    }

    fn reset_into(
        &self,
        buffer_kb: Option<u64>,
        mut ledger: Option<&mut Ledger>,
    ) -> Result<ResetReport, TracefsError> {
        // Save `file` (when a ledger is given) before it is written.
        // Save `file` (when a ledger is given) before it is written; a `trigger` file by
        // its lines.
        let mut save = |file: &str| -> Result<(), TracefsError> {
            match (ledger.as_deref_mut(), file.strip_suffix("/trigger")) {
                (Some(l), Some(dir)) => l.save_triggers(self, dir),
                (Some(l), None) => l.save(self, file),
                (None, _) => Ok(()),
            }
        };
        let mut rep = ResetReport::default();
        let differs = |file: &str, want: &str| -> bool {
            match self.read_value(file) {
                Ok(v) => v != want,
                Err(_) => true,
            }
        };
        if self.current_tracer().map(|t| t != "nop").unwrap_or(false) {
            let r = save("current_tracer").and_then(|()| self.write_str("current_tracer", "nop"));
            rep.note(self, "current_tracer", r)?;
        }
        // Events off: `events/enable`, then `set_event` and any enable file still on
        // (a kernel turns them all off at once; a copied tree needs each file written).
        if differs("events/enable", "0") {
            let r = save("events/enable").and_then(|()| self.disable_all_events());
            rep.note(self, "events/enable", r)?;
        }
        if !self.enabled_events().map(|v| v.is_empty()).unwrap_or(true) {
            let r =
                save("set_event").and_then(|()| self.write("set_event", b"", AppendMode::Truncate));
            rep.note(self, "set_event", r)?;
        }
        // Triggers first (an enable_event trigger can re-enable events), then filters.
        let available: Vec<EventName> = self.tracefs().available_events().unwrap_or_default();
        let mut systems: Vec<&str> = Vec::new();
        for e in &available {
            if systems.last() != Some(&e.system.as_str()) {
                systems.push(&e.system);
            }
            let en = e.dir().join("enable").display().to_string();
            if self.read_value(&en).map(|v| v != "0").unwrap_or(false) {
                let r = save(&en).and_then(|()| self.write_str(&en, "0"));
                rep.note(self, &en, r)?;
            }
            let trig = e.dir().join("trigger").display().to_string();
            if self
                .trigger_lines(e)
                .map(|l| !l.is_empty())
                .unwrap_or(false)
            {
                let r = save(&trig).and_then(|()| self.clear_triggers(e).map(|_| ()));
                rep.note(self, &trig, r)?;
            }
            let filt = e.dir().join("filter").display().to_string();
            if let Ok(f) = self.read_value(&filt) {
                if !filter_is_clear(&f) {
                    let r = save(&filt).and_then(|()| self.clear_filter(e.dir()));
                    rep.note(self, &filt, r)?;
                }
            }
        }
        for s in systems {
            let en = format!("events/{s}/enable");
            if self.read_value(&en).map(|v| v != "0").unwrap_or(false) {
                let r = save(&en).and_then(|()| self.write_str(&en, "0"));
                rep.note(self, &en, r)?;
            }
            let filt = format!("events/{s}/filter");
            if let Ok(f) = self.read_value(&filt) {
                if !filter_is_clear(&f) {
                    let r = save(&filt).and_then(|()| self.clear_filter(format!("events/{s}")));
                    rep.note(self, &filt, r)?;
                }
            }
        }
        // Pid filters.
        for f in [
            "set_event_pid",
            "set_event_notrace_pid",
            "set_ftrace_pid",
            "set_ftrace_notrace_pid",
        ] {
            if let Ok(v) = self.read_value(f) {
                if !v.is_empty() && !v.starts_with("no pid") {
                    let r = save(f).and_then(|()| self.write(f, b"", AppendMode::Truncate));
                    rep.note(self, f, r)?;
                }
            }
        }
        // Function filters.
        for which in [
            FunctionFilter::Filter,
            FunctionFilter::Notrace,
            FunctionFilter::GraphFunction,
            FunctionFilter::GraphNotrace,
        ] {
            match self.function_filter(which) {
                Ok(v) if !v.is_empty() => {
                    let r = save(which.file()).and_then(|()| self.clear_function_filter(which));
                    rep.note(self, which.file(), r)?;
                }
                Ok(_) => {}
                Err(e) if self.exists(which.file()) && e.is_unavailable() => {
                    rep.skipped.push(e.to_string())
                }
                Err(_) => {}
            }
        }
        if let Ok(d) = self.max_graph_depth() {
            if d != 0 {
                let r =
                    save("max_graph_depth").and_then(|()| self.write_str("max_graph_depth", "0"));
                rep.note(self, "max_graph_depth", r)?;
            }
        }
        // Clock.
        if let Ok(c) = self.trace_clock() {
            if c.current != "local" {
                let r = save("trace_clock").and_then(|()| self.write_str("trace_clock", "local"));
                rep.note(self, "trace_clock", r)?;
            }
        }
        // Options.
        if let Ok(opts) = self.options() {
            for (name, on) in opts {
                if let Some(want) = default_option(&name, self.is_top()) {
                    if want != on {
                        let opt = format!("options/{name}");
                        let r = save(&opt).and_then(|()| self.set_option(&name, want));
                        rep.note(self, &opt, r)?;
                    }
                }
            }
        }
        // Buffer sizes: leave an unexpanded buffer alone (writing would expand it).
        match (self.buffer_size(), buffer_kb) {
            (Ok(BufferSize::Kb(kb)), Some(want)) if kb == want => {}
            (_, Some(want)) => {
                let r = save("buffer_size_kb").and_then(|()| self.set_buffer_size(want));
                rep.note(self, "buffer_size_kb", r)?;
            }
            (Ok(BufferSize::Unexpanded { .. }) | Err(_), None) => {}
            (Ok(b), None) if b.effective_kb() == Some(DEFAULT_BUFFER_KB) => {}
            (Ok(_), None) => {
                let r =
                    save("buffer_size_kb").and_then(|()| self.set_buffer_size(DEFAULT_BUFFER_KB));
                rep.note(self, "buffer_size_kb", r)?;
            }
        }
        // The default sub-buffer is one page of the kernel's; a tree does not record its
        // page size, so its sub-buffer size is left as it is.
        let page_kb = self
            .tracefs()
            .host()
            .page_size()
            .map(|p| u64::from(p / 1024));
        if let (Ok(kb), Some(page_kb)) = (self.subbuf_size_kb(), page_kb) {
            if kb != page_kb {
                let r =
                    save("buffer_subbuf_size_kb").and_then(|()| self.set_subbuf_size_kb(page_kb));
                rep.note(self, "buffer_subbuf_size_kb", r)?;
            }
        }
        if differs("buffer_percent", "50") && self.exists("buffer_percent") {
            let r = save("buffer_percent").and_then(|()| self.write_str("buffer_percent", "50"));
            rep.note(self, "buffer_percent", r)?;
        }
        if let Ok(mask) = self.cpumask() {
            let all = all_cpus_mask(self);
            if let Some(all) = all {
                if mask_value(&mask) != mask_value(&all) {
                    let r = save("tracing_cpumask")
                        .and_then(|()| self.write_str("tracing_cpumask", &all));
                    rep.note(self, "tracing_cpumask", r)?;
                }
            }
        }
        if differs("tracing_on", "1") {
            let r = save("tracing_on").and_then(|()| self.set_tracing_on(true));
            rep.note(self, "tracing_on", r)?;
        }
        Ok(rep)
    }
}

/// A kernel reads `none` for no filter; a copied tree holds the `0` that cleared it.
fn filter_is_clear(f: &str) -> bool {
    matches!(f, "none" | "0" | "")
}

/// The mask of every CPU this buffer has (`per_cpu/cpuN`), in hex.
fn all_cpus_mask(inst: &Instance) -> Option<String> {
    let cpus = inst.cpus().ok()?;
    let n = cpus.last().map(|c| c + 1)?;
    if n > 64 {
        return None;
    }
    let m: u64 = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    Some(format!("{m:x}"))
}

fn mask_value(mask: &str) -> Option<u128> {
    let hex: String = mask.chars().filter(|c| *c != ',').collect();
    u128::from_str_radix(hex.trim(), 16).ok()
}

/// One flag of `reset`, in command-line order (trace-cmd reset's `-B`, `-a`, `-t`, `-d`
/// and `-b`). The order matters: `-d` and `-b` act on the buffer(s) named by the closest
/// `-B`, `-a` or `-t` before them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResetFlag {
    /// `-B NAME`: reset this instance (and not the top level, unless `-t`).
    Instance(String),
    /// `-a`: reset every existing instance (and not the top level, unless `-t`).
    AllInstances,
    /// `-t`: reset the top level too.
    Top,
    /// `-d`: remove the instance(s) of the preceding `-B` or `-a` instead of resetting them.
    Delete,
    /// `-b KB`: set the per-CPU buffer size of the preceding `-B` instance, of every
    /// instance after `-a`, or of the top level after `-t` or before any `-B`/`-a`.
    BufferKb(u64),
}

/// What one reset does to one instance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceReset {
    /// The instance (`instances/NAME`).
    pub name: String,
    /// Remove it (`-d`) rather than reset it.
    pub delete: bool,
    /// The per-CPU buffer size to set (`-b`); the kernel's default otherwise.
    pub buffer_kb: Option<u64>,
}

/// The buffers a reset touches, decided from the flags before anything is written.
///
/// Without flags only the top level is reset: instances, which other tools may own, are
/// left alone. `-B NAME` and `-a` select instances instead of the top level; `-t` adds
/// the top level back; `-d` removes what the preceding `-B`/`-a` selected.
///
/// These are the rules of trace-cmd-reset(1). trace-cmd 3.1's code differs from its
/// manual in two corners, where the manual is followed: `-a` with no `-B` before it
/// resets the top level there too, and a `-B NAME -d` followed by `-a` keeps NAME. Its
/// `-b 0` means 1 KiB; here it is refused with the reason, as for `start`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResetPlan {
    /// Reset the top level.
    pub top: bool,
    /// The top level's per-CPU buffer size (`-b` after `-t` or before any `-B`/`-a`); it
    /// is set even when the top level is not otherwise reset.
    pub top_buffer_kb: Option<u64>,
    /// The instances, in the order first named.
    pub instances: Vec<InstanceReset>,
}

impl ResetPlan {
    /// The plan for `flags`, with `existing` the instances now under `instances/` (for
    /// `-a`). Fails, naming the flag, when `-d` has no instance to act on or a size is 0.
    fn from_flags(flags: &[ResetFlag], existing: &[String]) -> Result<ResetPlan, String> {
        #[derive(Clone, Copy)]
        enum Current {
            Top,
            Instance(usize),
            All,
        }
        let mut plan = ResetPlan::default();
        let mut current = Current::Top;
        let mut top_named = false;
        let mut instances_named = false;
        let add = |plan: &mut ResetPlan, name: &str| -> usize {
            match plan.instances.iter().position(|i| i.name == name) {
                Some(i) => i,
                None => {
                    plan.instances.push(InstanceReset {
                        name: name.to_string(),
                        delete: false,
                        buffer_kb: None,
                    });
                    plan.instances.len() - 1
                }
            }
        };
        for f in flags {
            match f {
                ResetFlag::Instance(n) => {
                    instances_named = true;
                    current = Current::Instance(add(&mut plan, n));
                }
                ResetFlag::AllInstances => {
                    instances_named = true;
                    for n in existing {
                        add(&mut plan, n);
                    }
                    current = Current::All;
                }
                ResetFlag::Top => {
                    top_named = true;
                    current = Current::Top;
                }
                ResetFlag::Delete => match current {
                    Current::Top => {
                        return Err(
                            "-d removes the instance(s) of the -B NAME or -a before it; the top level cannot be removed"
                                .into(),
                        )
                    }
                    Current::Instance(i) => plan.instances[i].delete = true,
                    Current::All => plan.instances.iter_mut().for_each(|i| i.delete = true),
                },
                ResetFlag::BufferKb(0) => {
                    return Err(
                        "-b 0: a buffer needs at least 1 KiB (-b 1 shrinks it to its minimum)"
                            .into(),
                    )
                }
                ResetFlag::BufferKb(kb) => match current {
                    Current::Top => plan.top_buffer_kb = Some(*kb),
                    Current::Instance(i) => plan.instances[i].buffer_kb = Some(*kb),
                    Current::All => plan
                        .instances
                        .iter_mut()
                        .for_each(|i| i.buffer_kb = Some(*kb)),
                },
            }
        }
        plan.top = top_named || !instances_named;
        Ok(plan)
    }
}

impl Tracefs {
    /// Decide what `flags` reset (see [`ResetPlan`]), checking every named instance
    /// exists: nothing has been written when this fails.
    pub fn reset_plan(&self, flags: &[ResetFlag]) -> Result<ResetPlan, TracefsError> {
        let wants_all = flags.contains(&ResetFlag::AllInstances);
        // A root without instances/ has none for -a to reset.
        let existing = match wants_all.then(|| self.instances()) {
            Some(Ok(names)) => names,
            Some(Err(e)) if !e.is_unavailable() => return Err(e),
            _ => Vec::new(),
        };
        let plan =
            ResetPlan::from_flags(flags, &existing).map_err(|detail| TracefsError::BadValue {
                path: self.root().to_path_buf(),
                detail,
            })?;
        for i in &plan.instances {
            self.instance(Some(&i.name))?;
        }
        Ok(plan)
    }

    /// Carry out a [`ResetPlan`]: the top level first, then each instance, reset or
    /// removed. An instance the kernel will not remove (a reader holds it open) is
    /// reported in `skipped`.
    pub fn reset(&self, plan: &ResetPlan) -> Result<ResetReport, TracefsError> {
        let mut rep = ResetReport::default();
        let top = self.top();
        if plan.top {
            let r = top.reset_to(plan.top_buffer_kb)?;
            rep.changed.extend(r.changed);
            rep.skipped.extend(r.skipped);
        } else if let Some(kb) = plan.top_buffer_kb {
            let r = top.set_buffer_size(kb);
            rep.note(&top, "buffer_size_kb", r)?;
        }
        for i in &plan.instances {
            if i.delete {
                match self.remove_instance(&i.name) {
                    Ok(()) => rep.changed.push(format!("instances/{} (removed)", i.name)),
                    Err(e) => rep.skipped.push(e.to_string()),
                }
            } else {
                let r = self.instance(Some(&i.name))?.reset_to(i.buffer_kb)?;
                rep.changed.extend(r.changed);
                rep.skipped.extend(r.skipped);
            }
        }
        Ok(rep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn option_defaults() {
        assert_eq!(default_option("hash-ptr", true), Some(true));
        assert_eq!(default_option("trace_printk_dest", true), Some(true));
        assert_eq!(default_option("trace_printk_dest", false), Some(false));
        assert_eq!(default_option("event-fork", false), Some(false));
        assert_eq!(default_option("no-such", true), None);
    }

    fn plan(flags: &[ResetFlag]) -> Result<ResetPlan, String> {
        ResetPlan::from_flags(flags, &["a".to_string(), "other".to_string()])
    }

    fn inst(name: &str, delete: bool, buffer_kb: Option<u64>) -> InstanceReset {
        InstanceReset {
            name: name.into(),
            delete,
            buffer_kb,
        }
    }

    #[test]
    fn reset_without_flags_leaves_instances_alone() {
        let p = plan(&[]).unwrap();
        assert!(p.top);
        assert!(p.instances.is_empty());
        let p = plan(&[ResetFlag::BufferKb(1024)]).unwrap();
        assert_eq!((p.top, p.top_buffer_kb), (true, Some(1024)));
        assert!(p.instances.is_empty());
    }

    #[test]
    fn instance_flags_leave_the_top_alone_unless_t() {
        use ResetFlag::*;
        // trace-cmd reset -B instance-one -b 4096 -B instance-two -d
        let p = plan(&[
            Instance("one".into()),
            BufferKb(4096),
            Instance("two".into()),
            Delete,
        ])
        .unwrap();
        assert!(!p.top);
        assert_eq!(
            p.instances,
            vec![inst("one", false, Some(4096)), inst("two", true, None)]
        );
        // trace-cmd reset -a -d
        let p = plan(&[AllInstances, Delete]).unwrap();
        assert!(!p.top);
        assert_eq!(
            p.instances,
            vec![inst("a", true, None), inst("other", true, None)]
        );
        // trace-cmd reset -t -a -d
        let p = plan(&[Top, AllInstances, Delete]).unwrap();
        assert!(p.top);
        assert!(p.instances.iter().all(|i| i.delete));
        // -b after -a sizes every instance, not the top level.
        let p = plan(&[AllInstances, BufferKb(8), Top]).unwrap();
        assert!(p.top);
        assert_eq!(p.top_buffer_kb, None);
        assert!(p.instances.iter().all(|i| i.buffer_kb == Some(8)));
        // -b after -t sizes the top level.
        let p = plan(&[Instance("a".into()), Top, BufferKb(16)]).unwrap();
        assert_eq!((p.top, p.top_buffer_kb), (true, Some(16)));
        assert_eq!(p.instances, vec![inst("a", false, None)]);
    }

    #[test]
    fn delete_needs_an_instance_before_it() {
        use ResetFlag::*;
        // trace-cmd reset -a -t -d is invalid: it would delete the top level.
        for flags in [
            vec![Delete],
            vec![AllInstances, Top, Delete],
            vec![Instance("a".into()), Top, Delete],
        ] {
            let e = plan(&flags).unwrap_err();
            assert!(e.contains("top level cannot be removed"), "{flags:?}: {e}");
        }
        assert!(plan(&[BufferKb(0)]).unwrap_err().contains("-b 0"));
    }

    #[test]
    fn masks() {
        assert_eq!(mask_value("3"), Some(3));
        assert_eq!(mask_value("ffffffff,ffffffff"), Some(u64::MAX as u128));
    }
}
