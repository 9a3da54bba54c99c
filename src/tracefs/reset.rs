//! Putting a buffer back to the kernel's defaults.

use super::events::EventName;
use super::ftrace::FunctionFilter;
use super::instance::{BufferSize, Instance};
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
        let mut rep = ResetReport::default();
        let differs = |file: &str, want: &str| -> bool {
            match self.read_value(file) {
                Ok(v) => v != want,
                Err(_) => true,
            }
        };
        if self.current_tracer().map(|t| t != "nop").unwrap_or(false) {
            let r = self.write_str("current_tracer", "nop");
            rep.note(self, "current_tracer", r)?;
        }
        // Events off: `events/enable`, then `set_event` and any enable file still on
        // (a kernel turns them all off at once; a copied tree needs each file written).
        if differs("events/enable", "0") {
            let r = self.disable_all_events();
            rep.note(self, "events/enable", r)?;
        }
        if !self.enabled_events().map(|v| v.is_empty()).unwrap_or(true) {
            let r = self.write("set_event", b"", AppendMode::Truncate);
            rep.note(self, "set_event", r)?;
        }
        // Triggers first (an enable_event trigger can re-enable events), then filters.
        let available: Vec<EventName> = self.tracefs().available_events().unwrap_or_default();
        let mut systems: Vec<&str> = Vec::new();
        for e in &available {
            if systems.last() != Some(&e.system.as_str()) {
                systems.push(&e.system);
            }
            let en = e.dir().join("enable");
            if self.read_value(&en).map(|v| v != "0").unwrap_or(false) {
                let r = self.write_str(&en, "0");
                rep.note(self, &en.display().to_string(), r)?;
            }
            let trig = e.dir().join("trigger");
            if self
                .trigger_lines(e)
                .map(|l| !l.is_empty())
                .unwrap_or(false)
            {
                let r = self.clear_triggers(e).map(|_| ());
                rep.note(self, &trig.display().to_string(), r)?;
            }
            let filt = e.dir().join("filter");
            if let Ok(f) = self.read_value(&filt) {
                if !filter_is_clear(&f) {
                    let r = self.clear_filter(e.dir());
                    rep.note(self, &filt.display().to_string(), r)?;
                }
            }
        }
        for s in systems {
            let en = format!("events/{s}/enable");
            if self.read_value(&en).map(|v| v != "0").unwrap_or(false) {
                let r = self.write_str(&en, "0");
                rep.note(self, &en, r)?;
            }
            let filt = format!("events/{s}/filter");
            if let Ok(f) = self.read_value(&filt) {
                if !filter_is_clear(&f) {
                    let r = self.clear_filter(format!("events/{s}"));
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
                    let r = self.write(f, b"", AppendMode::Truncate);
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
                    let r = self.clear_function_filter(which);
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
                let r = self.write_str("max_graph_depth", "0");
                rep.note(self, "max_graph_depth", r)?;
            }
        }
        // Clock.
        if let Ok(c) = self.trace_clock() {
            if c.current != "local" {
                let r = self.write_str("trace_clock", "local");
                rep.note(self, "trace_clock", r)?;
            }
        }
        // Options.
        if let Ok(opts) = self.options() {
            for (name, on) in opts {
                if let Some(want) = default_option(&name, self.is_top()) {
                    if want != on {
                        let r = self.set_option(&name, want);
                        rep.note(self, &format!("options/{name}"), r)?;
                    }
                }
            }
        }
        // Buffer sizes: leave an unexpanded buffer alone (writing would expand it).
        match self.buffer_size() {
            Ok(BufferSize::Unexpanded { .. }) | Err(_) => {}
            Ok(b) if b.effective_kb() == Some(DEFAULT_BUFFER_KB) => {}
            Ok(_) => {
                let r = self.set_buffer_size(DEFAULT_BUFFER_KB);
                rep.note(self, "buffer_size_kb", r)?;
            }
        }
        let page_kb = (nix::unistd::sysconf(nix::unistd::SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .unwrap_or(4096)
            / 1024) as u64;
        if let Ok(kb) = self.subbuf_size_kb() {
            if kb != page_kb {
                let r = self.set_subbuf_size_kb(page_kb);
                rep.note(self, "buffer_subbuf_size_kb", r)?;
            }
        }
        if differs("buffer_percent", "50") && self.exists("buffer_percent") {
            let r = self.write_str("buffer_percent", "50");
            rep.note(self, "buffer_percent", r)?;
        }
        if let Ok(mask) = self.cpumask() {
            let all = all_cpus_mask(self);
            if let Some(all) = all {
                if mask_value(&mask) != mask_value(&all) {
                    let r = self.write_str("tracing_cpumask", &all);
                    rep.note(self, "tracing_cpumask", r)?;
                }
            }
        }
        if differs("tracing_on", "1") {
            let r = self.set_tracing_on(true);
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

impl Tracefs {
    /// Reset the top level, then remove every instance (unless `keep_instances`: then
    /// they are left exactly as they are, for tools sharing the machine). An instance
    /// that is busy (a reader holds it open) is reported in `skipped`.
    pub fn reset_all(&self, keep_instances: bool) -> Result<ResetReport, TracefsError> {
        let mut rep = self.top().reset()?;
        if keep_instances {
            return Ok(rep);
        }
        for name in self.instances().unwrap_or_default() {
            match self.remove_instance(&name) {
                Ok(()) => rep.changed.push(format!("instances/{name} (removed)")),
                Err(e) => rep.skipped.push(e.to_string()),
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

    #[test]
    fn masks() {
        assert_eq!(mask_value("3"), Some(3));
        assert_eq!(mask_value("ffffffff,ffffffff"), Some(u64::MAX as u128));
    }
}
