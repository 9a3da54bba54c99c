//! `perf stat` output: the standard table, `-x SEP` CSV and `--json` lines, in perf 6.1's
//! layout, with its derived metrics (CPUs utilized, rates per second of task time,
//! instructions per cycle) and the noise of repeated runs.

use std::fmt::Write as _;

use crate::perf::stat::Count;

/// How counts are printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatStyle {
    /// The standard aligned table.
    Table,
    /// One line per counter, fields joined by this separator (`-x`).
    Csv(String),
    /// One JSON object per counter (`--json`).
    Json,
}

/// One counter's line.
#[derive(Debug, Clone)]
pub struct StatRow<'a> {
    /// The event name as typed.
    pub name: &'a str,
    /// `cpu-clock`/`task-clock`, however spelled: nanoseconds, the base of perf's
    /// CPUs utilized and /sec metrics.
    pub is_clock: bool,
    /// Shown in msec: perf's unit and scale of the clock events spelled by their names
    /// (a clock spelled `software/config=1/` has neither and prints nanoseconds).
    pub msec: bool,
    /// Shown in ns: perf's unit of its tool events (`duration_time` ...).
    pub ns: bool,
    /// `instructions` (gets insn per cycle when `cycles` counted).
    pub is_instructions: bool,
    /// `cycles`.
    pub is_cycles: bool,
    /// The metric perf derives for a hardware event from another one, named in the
    /// headers of `--metric-only`.
    pub hw_metric: Option<HwMetric>,
    /// The cgroup the counter counts in (`-G`, `--for-each-cgroup`): `Some("")` for a
    /// counter without one when others have one, as perf prints an empty name then.
    pub cgroup: Option<&'a str>,
    /// The count (a mean over runs for `-r`).
    pub count: Count,
    /// The mean scaled value over runs (`-r`), overriding `count`'s own value.
    pub mean: Option<f64>,
    /// The noise of repeated runs, in percent of the mean (`-r`).
    pub noise_pct: Option<f64>,
    /// What the row counts when counts are not summed over everything: a CPU (`-A`),
    /// a socket, die, core or node (`--per-socket` ...), or a thread (`--per-thread`).
    pub group: Option<StatGroup>,
}

/// The metric perf derives for a hardware event from another count (its "shadow"
/// statistics), by the unit it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HwMetric {
    /// `instructions`: per cycle.
    InsnPerCycle,
    /// `cycles`: GHz of the clock event's time.
    Ghz,
    /// Misses as a part of their accesses, e.g. "of all branches" (perf puts the
    /// event's name before it in the headers).
    OfAll(&'static str),
    /// Stalled cycles: "frontend cycles idle", "backend cycles idle".
    Idle(&'static str),
}

/// The part of the system one row counts (perf's aggregation id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StatGroup {
    /// One CPU (`-A`).
    Cpu(u32),
    /// A socket (`--per-socket`).
    Socket {
        /// `physical_package_id`.
        socket: i32,
        /// The number of its CPUs counted.
        cpus: usize,
    },
    /// A die of a socket (`--per-die`).
    Die {
        /// `physical_package_id`.
        socket: i32,
        /// `die_id`.
        die: i32,
        /// The number of its CPUs counted.
        cpus: usize,
    },
    /// A core of a die (`--per-core`).
    Core {
        /// `physical_package_id`.
        socket: i32,
        /// `die_id`.
        die: i32,
        /// `core_id`.
        core: i32,
        /// The number of its CPUs (hardware threads) counted.
        cpus: usize,
    },
    /// A NUMA node (`--per-node`).
    Node {
        /// The node number.
        node: i32,
        /// The number of its CPUs counted.
        cpus: usize,
    },
    /// A thread (`--per-thread`).
    Thread {
        /// Its command name.
        comm: String,
        /// Its thread id.
        tid: i32,
    },
}

/// How counts are split into rows (perf's aggregation mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatSplit {
    /// One row per event.
    Whole,
    /// Per CPU (`-A`).
    Cpu,
    /// `--per-socket`.
    Socket,
    /// `--per-die`.
    Die,
    /// `--per-core`.
    Core,
    /// `--per-node`.
    Node,
    /// `--per-thread`.
    Thread,
}

impl StatGroup {
    /// The row's leading column(s) in the standard table (perf's widths).
    pub(super) fn table_label(&self) -> String {
        match self {
            StatGroup::Cpu(c) => format!("CPU{c:<7} "),
            StatGroup::Socket { socket, cpus } => format!("S{socket:<5} {cpus:>4} "),
            StatGroup::Die { socket, die, cpus } => format!("S{socket}-D{die:<8} {cpus:>4} "),
            StatGroup::Core {
                socket,
                die,
                core,
                cpus,
            } => format!("S{socket}-D{die}-C{core:<8} {cpus:>4} "),
            StatGroup::Node { node, cpus } => format!("N{node:<5} {cpus:>4} "),
            StatGroup::Thread { comm, tid } => format!("{comm:>16}-{tid:<8} "),
        }
    }

    /// The id as perf names it (`S0-D0-C1`, `N0`, `comm-tid`), without the CPU count.
    pub(super) fn id(&self) -> String {
        match self {
            StatGroup::Cpu(c) => format!("CPU{c}"),
            StatGroup::Socket { socket, .. } => format!("S{socket}"),
            StatGroup::Die { socket, die, .. } => format!("S{socket}-D{die}"),
            StatGroup::Core {
                socket, die, core, ..
            } => format!("S{socket}-D{die}-C{core}"),
            StatGroup::Node { node, .. } => format!("N{node}"),
            StatGroup::Thread { comm, tid } => format!("{comm}-{tid}"),
        }
    }

    /// The number of CPUs summed into the row, for the groups that print it.
    pub(super) fn cpus(&self) -> Option<usize> {
        match self {
            StatGroup::Socket { cpus, .. }
            | StatGroup::Die { cpus, .. }
            | StatGroup::Core { cpus, .. }
            | StatGroup::Node { cpus, .. } => Some(*cpus),
            StatGroup::Cpu(_) | StatGroup::Thread { .. } => None,
        }
    }

    /// The row's leading members of a `--json` object.
    pub(super) fn json_label(&self) -> String {
        let key = match self {
            StatGroup::Cpu(c) => return format!("\"cpu\" : \"{c}\", "),
            StatGroup::Thread { .. } => {
                return format!("\"thread\" : {}, ", serde_json::Value::String(self.id()))
            }
            StatGroup::Socket { .. } => "socket",
            StatGroup::Die { .. } => "die",
            StatGroup::Core { .. } => "core",
            StatGroup::Node { .. } => "node",
        };
        format!(
            "\"{key}\" : \"{}\", \"aggregate-number\" : {}, ",
            self.id(),
            self.cpus().unwrap_or(0)
        )
    }
}

impl StatRow<'_> {
    pub(super) fn value(&self) -> Option<f64> {
        self.mean.or_else(|| self.count.scaled())
    }

    /// The unit perf prints after the count.
    pub(super) fn unit(&self) -> &'static str {
        match (self.msec, self.ns) {
            (true, _) => "msec",
            (_, true) => "ns",
            _ => "",
        }
    }
}

/// What the header names as the target.
#[derive(Debug, Clone)]
pub enum StatTarget {
    /// A command line.
    Command(String),
    /// `-a` (or `-a -C`).
    SystemWide,
    /// `-C` without `-a`.
    Cpus(String),
    /// `-p`.
    Process(String),
    /// `-t`.
    Thread(String),
}

/// The standard header (`Performance counter stats for ...`).
pub fn header(target: &StatTarget, runs: u32) -> String {
    let what = match target {
        StatTarget::Command(c) => format!("'{c}"),
        StatTarget::SystemWide => "'system wide".to_string(),
        StatTarget::Cpus(c) => format!("'CPU(s) {c}"),
        StatTarget::Process(p) => format!("process id '{p}"),
        StatTarget::Thread(t) => format!("thread id '{t}"),
    };
    let runs = if runs > 1 {
        format!(" ({runs} runs)")
    } else {
        String::new()
    };
    format!("\n Performance counter stats for {what}'{runs}:\n\n")
}

/// The interval header of `-I` in the standard style.
pub fn interval_header(split: StatSplit) -> &'static str {
    match split {
        StatSplit::Whole => "#           time             counts unit events\n",
        StatSplit::Cpu => "#           time CPU                    counts unit events\n",
        StatSplit::Socket => "#           time socket cpus             counts unit events\n",
        StatSplit::Die => "#           time die          cpus             counts unit events\n",
        StatSplit::Core => "#           time core            cpus             counts unit events\n",
        StatSplit::Node => "#           time node   cpus             counts unit events\n",
        StatSplit::Thread => {
            "#           time             comm-pid                  counts unit events\n"
        }
    }
}

/// perf's K/M/G scaling of a rate.
fn rate_unit(v: f64) -> (f64, &'static str) {
    if v > 1e9 {
        (v / 1e9, "G/sec")
    } else if v > 1e6 {
        (v / 1e6, "M/sec")
    } else if v > 1e3 {
        (v / 1e3, "K/sec")
    } else {
        (v, "/sec")
    }
}

/// A derived metric: value, its printf width/precision, and its unit.
pub(super) struct Metric {
    pub(super) value: f64,
    pub(super) width: usize,
    pub(super) prec: usize,
    pub(super) unit: &'static str,
}

pub(super) fn metric_of(row: &StatRow, rows: &[StatRow], elapsed_ns: f64) -> Option<Metric> {
    let v = row.value()?;
    let same_cpu = |r: &&StatRow| r.group == row.group && r.cgroup == row.cgroup;
    if row.is_clock {
        if elapsed_ns <= 0.0 {
            return None;
        }
        return Some(Metric {
            value: v / elapsed_ns,
            width: 8,
            prec: 3,
            unit: "CPUs utilized",
        });
    }
    if row.is_instructions {
        if let Some(cycles) = rows
            .iter()
            .filter(same_cpu)
            .find(|r| r.is_cycles)
            .and_then(|r| r.value())
            .filter(|&c| c > 0.0)
        {
            return Some(Metric {
                value: v / cycles,
                width: 7,
                prec: 2,
                unit: " insn per cycle",
            });
        }
    }
    // A clock that did not count (in an interval) gives a rate of 0, as in perf.
    let clock = rows
        .iter()
        .filter(same_cpu)
        .find(|r| r.is_clock)
        .map(|r| r.value().unwrap_or(0.0))?;
    let rate = if clock > 0.0 { 1e9 * v / clock } else { 0.0 };
    let (value, unit) = rate_unit(rate);
    Some(Metric {
        value,
        width: 8,
        prec: 3,
        unit,
    })
}

fn count_text(row: &StatRow) -> String {
    match row.value() {
        Some(v) if row.msec => format!("{:.2}", v / 1e6),
        // perf picks the precision by the event's scale, not the value: counts (scale 1)
        // print whole, even a mean over runs.
        Some(v) => format!("{v:.0}"),
        None => match row.count {
            Count::NotSupported => "<not supported>".to_string(),
            _ => "<not counted>".to_string(),
        },
    }
}

fn running(row: &StatRow) -> (u64, f64) {
    match row.count {
        Count::Value(r) => {
            let pct = if r.enabled != r.running && r.enabled > 0 {
                100.0 * r.running as f64 / r.enabled as f64
            } else {
                100.0
            };
            (r.running, pct)
        }
        Count::NotCounted => (0, 100.0),
        Count::NotSupported => (0, 100.0),
    }
}

/// Width of the metric column of the table.
const METRIC_LEN: usize = 35;

/// Write the counter lines (one per row) in `style`. `prefix` starts every line (the
/// interval time of `-I`).
pub fn write_rows(
    out: &mut String,
    rows: &[StatRow],
    style: &StatStyle,
    elapsed_ns: f64,
    prefix: Option<&str>,
) {
    for row in rows {
        let metric = metric_of(row, rows, elapsed_ns);
        let unit = row.unit();
        let (run, pct) = running(row);
        match style {
            StatStyle::Table => {
                if let Some(p) = prefix {
                    out.push_str(p);
                    out.push(' ');
                }
                if let Some(g) = &row.group {
                    out.push_str(&g.table_label());
                }
                let _ = write!(out, "{:>18} {unit:<4} ", count_text(row));
                let cgroup = row.cgroup.map(|c| format!(" {c}")).unwrap_or_default();
                // perf pads the name to 25 columns on a line without a count, to 32
                // on the others.
                if row.value().is_none() {
                    let _ = write!(out, "{:<25}{cgroup}", row.name);
                } else {
                    let _ = write!(out, "{:<32}{cgroup}", row.name);
                }
                match (&metric, row.value()) {
                    (Some(m), _) => {
                        let val = format!("{:>w$.p$}", m.value, w = m.width, p = m.prec);
                        let n = 3 + val.len();
                        let _ = write!(
                            out,
                            " # {val} {:<w$}",
                            m.unit.trim_start(),
                            w = METRIC_LEN.saturating_sub(n + 1)
                        );
                    }
                    (None, Some(_)) => {
                        let _ = write!(out, "{:METRIC_LEN$}", "");
                    }
                    (None, None) => {
                        let _ = write!(out, "{:METRIC_LEN$}", "");
                    }
                }
                if let Some(n) = row.noise_pct.filter(|&n| n != 0.0) {
                    let _ = write!(out, "  ( +-{n:>6.2}% )");
                }
                if pct != 100.0 {
                    let _ = write!(out, "  ({pct:.2}%)");
                }
                out.push('\n');
            }
            StatStyle::Csv(sep) => {
                if let Some(p) = prefix {
                    out.push_str(p);
                    out.push_str(sep);
                }
                if let Some(g) = &row.group {
                    let _ = write!(out, "{}{sep}", g.id());
                    if let Some(n) = g.cpus() {
                        let _ = write!(out, "{n}{sep}");
                    }
                }
                let _ = write!(out, "{}{sep}{unit}{sep}{}", count_text(row), row.name);
                if let Some(c) = row.cgroup {
                    let _ = write!(out, "{sep}{c}");
                }
                if let Some(n) = row.noise_pct {
                    let _ = write!(out, "{sep}{n:.2}%");
                }
                let _ = write!(out, "{sep}{run}{sep}{pct:.2}");
                match &metric {
                    Some(m) => {
                        let _ = write!(
                            out,
                            "{sep}{:.p$}{sep}{}",
                            m.value,
                            m.unit.trim_start(),
                            p = m.prec
                        );
                    }
                    None => {
                        let _ = write!(out, "{sep}{sep}");
                    }
                }
                out.push('\n');
            }
            StatStyle::Json => {
                out.push('{');
                if let Some(p) = prefix {
                    let _ = write!(out, "\"interval\" : {}, ", p.trim());
                }
                if let Some(g) = &row.group {
                    out.push_str(&g.json_label());
                }
                let value = match row.value() {
                    Some(v) if row.msec => format!("{:.6}", v / 1e6),
                    Some(v) => format!("{v:.6}"),
                    None => count_text(row),
                };
                let _ = write!(
                    out,
                    "\"counter-value\" : \"{value}\", \"unit\" : \"{unit}\", \"event\" : {}, ",
                    serde_json::Value::String(row.name.to_string())
                );
                if let Some(c) = row.cgroup {
                    let _ = write!(
                        out,
                        "\"cgroup\" : {}, ",
                        serde_json::Value::String(c.to_string())
                    );
                }
                let _ = write!(
                    out,
                    "\"event-runtime\" : {run}, \"pcnt-running\" : {pct:.2}"
                );
                if let Some(n) = row.noise_pct {
                    let _ = write!(out, ", \"variance\" : {n:.2}");
                }
                // A counted event without a metric: perf prints its null unit as C does.
                let none = if row.value().is_some() { "(null)" } else { "" };
                let (mv, mu) = metric
                    .as_ref()
                    .map_or((0.0, none), |m| (m.value, m.unit.trim_start()));
                let _ = writeln!(
                    out,
                    ", \"metric-value\" : {mv:.6}, \"metric-unit\" : \"{mu}\"}}"
                );
            }
        }
    }
}

/// perf's precision for a run's spread: enough digits to show the standard deviation.
fn precision_for(sd: f64) -> usize {
    if sd > 1.0 || sd <= 0.0 {
        return 0;
    }
    (-sd.log10()).ceil() as usize
}

/// The standard footer: elapsed time (with its spread over runs), then user and system
/// time of a command run once. `runs` (`--table`) lists each run's elapsed seconds.
pub fn footer(
    elapsed_s: f64,
    elapsed_sd: Option<f64>,
    user_sys: Option<(f64, f64)>,
    runs: Option<&[f64]>,
) -> String {
    let mut out = String::from("\n");
    match elapsed_sd {
        Some(sd) => {
            let p = precision_for(sd) + 2;
            if let Some(runs) = runs {
                write_run_table(&mut out, runs, elapsed_s, p);
            }
            let _ = write!(out, " {elapsed_s:>17.p$} +- {sd:.p$} seconds time elapsed");
            if elapsed_s != 0.0 {
                let pct = 100.0 * sd / elapsed_s;
                if pct != 0.0 {
                    let _ = write!(out, "  ( +-{pct:>6.2}% )");
                }
            }
        }
        None => {
            let _ = write!(out, " {elapsed_s:>17.9} seconds time elapsed");
            if let Some((u, s)) = user_sys {
                let _ = write!(out, "\n\n {u:>17.9} seconds user\n {s:>17.9} seconds sys\n");
            }
        }
    }
    out.push_str("\n\n");
    out
}

/// perf's `--table`: each run's elapsed time, its distance from the mean, and a bar of
/// one `#` plus one per whole 5% of that distance, indented like the mean's digits.
fn write_run_table(out: &mut String, runs: &[f64], mean: f64, p: usize) {
    let mean_text = format!(" {mean:>17.p$}");
    let indent = mean_text.len() - mean_text.trim_start().len();
    let _ = writeln!(out, "{:indent$}# Table of individual measurements:", "");
    for &run in runs {
        let pct = if run != 0.0 {
            (100.0 * (run - mean) / run) as i32
        } else {
            0
        };
        let bar = 1 + (pct / 5).unsigned_abs() as usize;
        let _ = writeln!(
            out,
            " {run:>17.p$} ({:+.p$}) {}",
            run - mean,
            "#".repeat(bar)
        );
    }
    let _ = write!(out, "\n{:indent$}# Final result:\n", "");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::CounterReading;

    fn row(name: &str, clock: bool, value: u64) -> StatRow<'_> {
        StatRow {
            name,
            is_clock: clock,
            msec: clock,
            ns: false,
            is_instructions: false,
            is_cycles: false,
            hw_metric: None,
            cgroup: None,
            count: Count::Value(CounterReading {
                value,
                enabled: 100,
                running: 100,
            }),
            mean: None,
            noise_pct: None,
            group: None,
        }
    }

    #[test]
    fn rates_and_units() {
        assert_eq!(rate_unit(1500.0), (1.5, "K/sec"));
        assert_eq!(rate_unit(1000.0), (1000.0, "/sec"));
        assert_eq!(precision_for(0.00131), 3);
        assert_eq!(precision_for(2.0), 0);
        // perf 6.1's --table for three runs of `sleep 0.01`.
        let mut t = String::new();
        write_run_table(&mut t, &[0.01181, 0.01799, 0.01156], 0.01379, 5);
        assert_eq!(
            t,
            "           # Table of individual measurements:\n           0.01181 (-0.00198) ####\n           0.01799 (+0.00420) #####\n           0.01156 (-0.00223) ####\n\n           # Final result:\n"
        );
        let rows = [row("cs", false, 1), row("task-clock", true, 789_000)];
        let mut s = String::new();
        write_rows(
            &mut s,
            &rows,
            &StatStyle::Csv(",".into()),
            300_000_000.0,
            None,
        );
        assert_eq!(
            s,
            "1,,cs,100,100.00,1.267,K/sec\n0.79,msec,task-clock,100,100.00,0.003,CPUs utilized\n"
        );
    }
}
