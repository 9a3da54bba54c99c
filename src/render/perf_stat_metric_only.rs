//! `perf stat --metric-only`: one line per reading (per CPU with `-A`, per socket, die,
//! core or node), with only the derived metrics, under a header line of their units, in
//! perf 6.1's layout.
//!
//! perf leaves out of this layout the metrics whose unit holds "/sec" or
//! "CPUs utilized" (in the table and CSV; JSON headers keep them), and it names units only
//! when counts are split per CPU: with any other split, perf 6.1 prints only the metrics
//! of `-M` metric groups in the header, so its units line is blank.

use std::fmt::Write as _;

use super::perf_stat::{metric_of, HwMetric, StatGroup, StatRow, StatSplit, StatStyle};

/// perf's `metric_only_len`: the width of a metric's column.
const METRIC_ONLY_LEN: usize = 20;

/// The columns before the first unit in the table header (perf's `aggr_header_lens`).
fn header_indent(split: StatSplit) -> usize {
    match split {
        StatSplit::Whole => 0,
        StatSplit::Cpu | StatSplit::Node => 6,
        StatSplit::Socket => 12,
        StatSplit::Die => 18,
        StatSplit::Core | StatSplit::Thread => 24,
    }
}

/// The CSV header's leading columns (perf's `aggr_header_csv`, commas whatever `-x`).
fn csv_header(split: StatSplit) -> &'static str {
    match split {
        StatSplit::Whole => "",
        StatSplit::Cpu => "cpu,",
        StatSplit::Socket => "socket,cpus",
        StatSplit::Die => "die,cpus",
        StatSplit::Core => "core,cpus,",
        StatSplit::Node => "node,",
        StatSplit::Thread => "comm-pid,",
    }
}

/// The start of the interval header in the table (`-I`), before the units.
fn interval_start(split: StatSplit) -> &'static str {
    match split {
        StatSplit::Whole => "#           time",
        StatSplit::Cpu => "#           time CPU    ",
        StatSplit::Socket => "#           time socket cpus",
        StatSplit::Die => "#           time die          cpus",
        StatSplit::Core => "#           time core            cpus",
        StatSplit::Node => "#           time node   cpus",
        StatSplit::Thread => "#           time             comm-pid",
    }
}

/// The rows of one line: the rows of `rows` that count the same part of the system, in
/// the order the parts first appear.
fn lines<'r, 'a>(rows: &'r [StatRow<'a>]) -> Vec<Vec<&'r StatRow<'a>>> {
    let mut out: Vec<Vec<&StatRow>> = Vec::new();
    let id = |r: &StatRow| r.group.as_ref().map(StatGroup::id);
    for r in rows {
        match out.iter_mut().find(|l| id(l[0]) == id(r)) {
            Some(l) => l.push(r),
            None => out.push(vec![r]),
        }
    }
    out
}

/// The unit perf names a row's metric by in the header, where it names one: `None` for a
/// row without a metric (perf 6.1 crashes on such a row in a JSON header).
fn header_unit(row: &StatRow, line: &[&StatRow]) -> Option<String> {
    let has_clock = |nonzero: bool| {
        line.iter().any(|r| {
            r.is_clock && r.cgroup == row.cgroup && (!nonzero || r.value().is_some_and(|v| v > 0.0))
        })
    };
    if let Some(m) = row.hw_metric {
        return Some(match m {
            HwMetric::InsnPerCycle => "insn per cycle".to_string(),
            // perf spells it "Ghz" when there is no time to divide by.
            HwMetric::Ghz => if has_clock(true) { "GHz" } else { "Ghz" }.to_string(),
            HwMetric::OfAll(u) => format!("{} {u}", row.name),
            HwMetric::Idle(u) => u.to_string(),
        });
    }
    if row.is_clock {
        return Some("CPUs utilized".to_string());
    }
    has_clock(false).then(|| "/sec".to_string())
}

/// Whether perf keeps a unit in the metric-only table and CSV.
fn shown(unit: &str) -> bool {
    !unit.contains("/sec") && !unit.contains("CPUs utilized")
}

/// The header line of the units. `interval` is set for the header of `-I`, which starts
/// with the time column.
pub fn header(rows: &[StatRow], style: &StatStyle, split: StatSplit, interval: bool) -> String {
    let mut out = String::new();
    let units: Vec<Option<String>> = if split == StatSplit::Cpu {
        lines(rows)
            .first()
            .map(|line| line.iter().map(|r| header_unit(r, line)).collect())
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    match style {
        StatStyle::Table => {
            if interval {
                out.push_str(interval_start(split));
                out.push(' ');
            } else {
                let _ = write!(out, "{:w$}", "", w = header_indent(split));
            }
            for u in units.iter().flatten().filter(|u| shown(u)) {
                let _ = write!(out, "{u:>METRIC_ONLY_LEN$} ");
            }
        }
        StatStyle::Csv(sep) => {
            if interval {
                out.push_str(" time,");
            }
            out.push_str(csv_header(split));
            for u in units.iter().flatten().filter(|u| shown(u)) {
                let _ = write!(out, "{u}{sep}");
            }
        }
        StatStyle::Json => {
            out.push('{');
            if !interval {
                let _ = write!(out, "{:w$}", "", w = header_indent(split));
            }
            let names: Vec<String> = units
                .iter()
                .map(|u| {
                    format!(
                        "\"unit\" : {}",
                        serde_json::Value::String(u.clone().unwrap_or_default())
                    )
                })
                .collect();
            out.push_str(&names.join(", "));
            out.push('}');
        }
    }
    out.push('\n');
    out
}

/// The metric text of a counted row, as perf's `print_metric_only*` prints it, or
/// `None` where perf prints nothing for the row.
fn metric_text(row: &StatRow, rows: &[StatRow], elapsed_ns: f64) -> Option<String> {
    let m = metric_of(row, rows, elapsed_ns)?;
    if !shown(m.unit) {
        return None;
    }
    Some(format!("{:>w$.p$}", m.value, w = m.width, p = m.prec))
}

/// The value lines: one per CPU or aggregate (one in all without a split), every metric
/// of its counters in a column. `prefix` is the interval time of `-I`; `summary` marks
/// each counter of CSV totals after intervals, as perf marks them.
pub fn write_lines(
    out: &mut String,
    rows: &[StatRow],
    style: &StatStyle,
    elapsed_ns: f64,
    prefix: Option<&str>,
    summary: Option<&str>,
) {
    for line in lines(rows) {
        if let Some(p) = prefix {
            match style {
                StatStyle::Json => {
                    let _ = write!(out, "{{\"interval\" : {}}}", p.trim());
                }
                StatStyle::Csv(sep) => {
                    let _ = write!(out, "{p}{sep}");
                }
                StatStyle::Table => {
                    let _ = write!(out, "{p} ");
                }
            }
        }
        if let Some(g) = &line[0].group {
            label(out, g, style, prefix.is_some());
        }
        for row in &line {
            if let (StatStyle::Csv(sep), Some(s)) = (style, summary) {
                let _ = write!(out, "{s}{sep}");
            }
            let text = if row.value().is_none() {
                Some(String::new())
            } else {
                metric_text(row, rows, elapsed_ns)
            };
            let Some(text) = text else { continue };
            match style {
                StatStyle::Table => {
                    let _ = write!(out, "{text:>METRIC_ONLY_LEN$} ");
                }
                StatStyle::Csv(sep) => {
                    let _ = write!(out, "{}{sep}", csv_number(&text));
                }
                StatStyle::Json => {
                    let _ = write!(out, "{{\"metric-value\" : \"{}\"}}", csv_number(&text));
                }
            }
        }
        out.push('\n');
    }
}

/// The leading number of a formatted metric, as perf cuts it for CSV and JSON.
fn csv_number(text: &str) -> &str {
    let t = text.trim_start();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    &t[..end]
}

/// A line's label: its first counter's group (perf counts the CPUs of an aggregate with
/// the line's first counter).
fn label(out: &mut String, g: &StatGroup, style: &StatStyle, interval: bool) {
    match style {
        StatStyle::Table => out.push_str(&g.table_label()),
        StatStyle::Csv(sep) => {
            let _ = write!(out, "{}{sep}", g.id());
            if let Some(n) = g.cpus() {
                let _ = write!(out, "{n}{sep}");
            }
        }
        StatStyle::Json => {
            if !interval {
                out.push('{');
            }
            out.push_str(&g.json_label());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::stat::Count;
    use crate::perf::CounterReading;

    fn row<'a>(name: &'a str, cpu: u32, count: Count) -> StatRow<'a> {
        StatRow {
            name,
            is_clock: name == "task-clock",
            msec: name == "task-clock",
            ns: false,
            is_instructions: false,
            is_cycles: name == "cycles",
            hw_metric: (name == "cycles").then_some(HwMetric::Ghz),
            cgroup: None,
            count,
            mean: None,
            noise_pct: None,
            group: Some(StatGroup::Cpu(cpu)),
        }
    }

    #[test]
    fn per_cpu_lines_as_perf_prints_them() {
        let v = Count::Value(CounterReading {
            value: 5,
            enabled: 10,
            running: 10,
        });
        // perf 6.1: `perf stat -a -A --metric-only -e task-clock,cycles` on a machine
        // without a cpu PMU.
        let rows = [
            row("task-clock", 0, v),
            row("task-clock", 1, v),
            row("cycles", 0, Count::NotSupported),
            row("cycles", 1, Count::NotSupported),
        ];
        let h = header(&rows, &StatStyle::Table, StatSplit::Cpu, false);
        assert_eq!(h, "                       GHz \n");
        let mut s = String::new();
        write_lines(&mut s, &rows, &StatStyle::Table, 1e6, None, None);
        assert_eq!(
            s,
            "CPU0                            \nCPU1                            \n"
        );
        let h = header(&rows, &StatStyle::Json, StatSplit::Cpu, false);
        assert_eq!(
            h,
            "{      \"unit\" : \"CPUs utilized\", \"unit\" : \"GHz\"}\n"
        );
    }
}
