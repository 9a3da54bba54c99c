//! `perf report --stdio`'s table (perf 6.1): per event, the header comments, then one
//! row per distinct sort key (command, pid, shared object, symbol) with its share of
//! the event's period, and with `--children` each entry's share counting the samples
//! whose call chains pass through it. Under each row, the call graph of its samples
//! in the `-g` mode ([`crate::render::perf_callgraph`]).

use std::collections::HashMap;
use std::io::{self, Write};

use crate::perf::data::abi::{record, sample};
use crate::perf::data::{Event, PerfData, PerfDataError};
use crate::perf::machine::{ordered_records, Location, Machine};
use crate::render::perf_callgraph::{
    render, CallGraph, CallTree, ChainOrder, Frame, FrameKey, GraphContext, GraphMode,
};
use crate::render::perf_script::event_name;
use crate::render::tracecmd::DatCatalog;

/// A `--sort` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    /// `comm`: the command.
    Comm,
    /// `pid`: `tid:comm` (perf's thread key).
    Pid,
    /// `dso`: the shared object.
    Dso,
    /// `sym`: the symbol.
    Sym,
}

impl SortKey {
    /// Parse `comm,dso,sym`.
    pub fn parse_list(s: &str) -> Result<Vec<SortKey>, String> {
        s.split(',')
            .map(str::trim)
            .filter(|k| !k.is_empty())
            .map(|k| match k {
                "comm" => Ok(SortKey::Comm),
                "pid" => Ok(SortKey::Pid),
                "dso" => Ok(SortKey::Dso),
                "sym" | "symbol" => Ok(SortKey::Sym),
                other => Err(format!(
                    "unknown --sort key '{other}'; supported: comm, pid, dso, sym"
                )),
            })
            .collect()
    }

    fn header(self) -> &'static str {
        match self {
            SortKey::Comm => "Command",
            SortKey::Pid => "    Pid:Command",
            SortKey::Dso => "Shared Object",
            SortKey::Sym => "Symbol",
        }
    }
}

/// One row's identity: the values of the selected keys.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct Key {
    comm: String,
    pid: i32,
    /// Short name of the shared object; None when unmapped.
    dso: Option<String>,
    /// Symbol name, or the unresolved address.
    sym: Result<String, u64>,
}

#[derive(Debug, Default, Clone, Copy)]
struct Totals {
    self_: u64,
    children: u64,
    /// The thread of the sample that made the row. perf sizes the command column by
    /// this thread's comm at the end of the file (`thread__comm_len`), not by the comm
    /// the row shows, and cuts the shown comm to that width: a row made by a sample
    /// taken before an exec shows `perf-ex` when the thread ended as `sh`.
    first_tid: i32,
    /// `[k]` rather than `[.]`: the level of the location that made the row (perf does
    /// not tell rows apart by it).
    kernel: bool,
}

#[derive(Debug, Default)]
struct EventHists {
    samples: u64,
    period: u64,
    rows: HashMap<Key, Totals>,
    /// Call chains per row, when they are printed.
    trees: HashMap<Key, CallTree>,
}

fn short_dso(d: &str) -> String {
    if d.starts_with('[') {
        d.to_string()
    } else {
        d.rsplit('/').next().unwrap_or(d).to_string()
    }
}

/// `raw_ip`: an unresolved call chain entry is keyed (and printed) by the address as
/// sampled, as perf does, while the sample's own entry uses the file-relative one.
fn key_of(keys: &[SortKey], comm: &str, tid: i32, loc: &Location, raw_ip: Option<u64>) -> Key {
    let has = |k| keys.contains(&k);
    Key {
        // The thread key shows the thread's last comm (filled in at the end), the
        // command key the comm at the sample's time.
        comm: if has(SortKey::Comm) {
            comm.to_string()
        } else {
            String::new()
        },
        pid: if has(SortKey::Pid) { tid } else { 0 },
        dso: if has(SortKey::Dso) {
            loc.dso.map(short_dso)
        } else {
            None
        },
        sym: if has(SortKey::Sym) {
            match loc.sym {
                Some((n, _)) => Ok(n.to_string()),
                None => Err(raw_ip.unwrap_or(loc.addr)),
            }
        } else {
            Ok(String::new())
        },
    }
}

/// One call chain entry as the call graph keys and prints it.
fn frame_of(machine: &Machine, loc: &Location, raw: u64) -> Frame {
    let dso = loc
        .dso
        .and_then(|d| machine.dso_order(d))
        .map_or(0, |o| o + 1);
    let (addr, name) = match loc.sym {
        Some((n, off)) => (loc.addr.wrapping_sub(off), n.to_string()),
        // C's `%#llx`: no 0x for zero.
        None if raw == 0 => (raw, "0".to_string()),
        None => (raw, format!("{raw:#x}")),
    };
    Frame {
        key: FrameKey { dso, addr },
        name,
    }
}

/// Whether the file has events sampled with call chains.
pub fn has_call_chains(file: &PerfData) -> bool {
    file.attrs()
        .iter()
        .any(|a| a.sample_type & sample::CALLCHAIN != 0)
}

/// Write the report of `file`; `children` None: on when the samples have call chains.
/// `graph` says how call chains are printed under the rows.
pub fn write_report(
    file: &PerfData,
    mut machine: Machine,
    catalog: Option<&DatCatalog>,
    keys: &[SortKey],
    children: Option<bool>,
    graph: &CallGraph,
    out: &mut dyn Write,
) -> Result<(), PerfDataError> {
    let has_chains = has_call_chains(file);
    let children = children.unwrap_or(has_chains) && has_chains;
    let order = graph.order.unwrap_or(if children {
        ChainOrder::Caller
    } else {
        ChainOrder::Callee
    });
    let mut hists: Vec<EventHists> = file.attrs().iter().map(|_| EventHists::default()).collect();
    let mut lost = 0u64;
    for r in ordered_records(file)? {
        if r.type_ == record::LOST_SAMPLES {
            if let Some(b) = r.body.get(..8) {
                lost += file.endian().u64(b);
            }
            continue;
        }
        match file.decode(&r)? {
            Event::Sample(s) => {
                let comm = machine.comm(s.tid).to_string();
                let h = &mut hists[s.attr];
                h.samples += 1;
                h.period += s.period;
                let attr = &file.attrs()[s.attr];
                let ip = machine.resolve(s.pid, s.cpumode, s.ip);
                let self_key = key_of(keys, &comm, s.tid, &ip, None);
                h.rows
                    .entry(self_key.clone())
                    .or_insert(Totals {
                        first_tid: s.tid,
                        kernel: ip.kernel,
                        ..Totals::default()
                    })
                    .self_ += s.period;
                let chained = attr.sample_type & sample::CALLCHAIN != 0;
                let mut chain: Vec<(Key, bool, Frame)> = Vec::new();
                if chained && (children || graph.mode != GraphMode::None) {
                    let mut locs = Vec::new();
                    machine.callchain(&s, |l, raw| locs.push((l, raw)));
                    if order == ChainOrder::Caller {
                        locs.reverse();
                    }
                    // perf fills one location entry after the other and leaves the
                    // level of an unmapped address as the entry before it had it
                    // (the sample's own at the start).
                    let mut kernel = ip.kernel;
                    for (mut l, raw) in locs {
                        if l.dso.is_some() {
                            kernel = l.kernel;
                        } else {
                            l.kernel = kernel;
                        }
                        let k = key_of(keys, &comm, s.tid, &l, Some(raw));
                        chain.push((k, l.kernel, frame_of(&machine, &l, raw)));
                    }
                }
                let frames: Vec<Frame> = chain.iter().map(|(_, _, f)| f.clone()).collect();
                let trees = chained && graph.mode != GraphMode::None;
                if trees {
                    h.trees
                        .entry(self_key.clone())
                        .or_default()
                        .add(&frames, s.period);
                }
                if children {
                    // perf walks the chain in print order and counts each row once
                    // per sample, with the chain from that entry on.
                    let mut seen: Vec<(Key, bool)> = vec![(self_key, ip.kernel)];
                    for (i, (k, kernel, _)) in chain.iter().enumerate() {
                        if seen.iter().any(|(s, _)| s == k) {
                            continue;
                        }
                        seen.push((k.clone(), *kernel));
                        if trees {
                            h.trees
                                .entry(k.clone())
                                .or_default()
                                .add(&frames[i..], s.period);
                        }
                    }
                    for (k, kernel) in seen {
                        h.rows
                            .entry(k)
                            .or_insert(Totals {
                                first_tid: s.tid,
                                kernel,
                                ..Totals::default()
                            })
                            .children += s.period;
                    }
                }
            }
            other => machine.apply(&other),
        }
    }
    let w = |e: io::Error| {
        PerfDataError::new(
            file.path(),
            "output",
            0,
            crate::perf::data::PerfDataErrorKind::Io(e),
        )
    };
    let mut text = Vec::new();
    text.extend_from_slice(
        b"# To display the perf.data header info, please use --header/--header-only options.\n#\n#\n",
    );
    text.extend_from_slice(format!("# Total Lost Samples: {lost}\n#\n").as_bytes());
    for (i, h) in hists.iter().enumerate() {
        if h.samples == 0 {
            continue;
        }
        let name = event_name(&file.attrs()[i], catalog);
        // perf's convert_unit: K, M, G above a thousand, else a space.
        let (mut n, mut unit) = (h.samples, ' ');
        for u in ['K', 'M', 'G'] {
            if n > 1000 {
                n /= 1000;
                unit = u;
            }
        }
        text.extend_from_slice(
            format!(
                "# Samples: {n}{unit} of event '{name}'\n# Event count (approx.): {}\n#\n",
                h.period
            )
            .as_bytes(),
        );
        write_table(h, keys, children, graph, order, &mut machine, &mut text);
        text.extend_from_slice(b"\n\n");
    }
    text.extend_from_slice(b"#\n#\n");
    out.write_all(&text).map_err(w)?;
    Ok(())
}

fn cell(k: SortKey, key: &Key, t: &Totals, machine: &mut Machine) -> String {
    match k {
        SortKey::Comm => key.comm.clone(),
        SortKey::Pid => format!("{:>7}:{}", key.pid, machine.comm(key.pid)),
        SortKey::Dso => key.dso.clone().unwrap_or_else(|| "[unknown]".into()),
        SortKey::Sym => {
            let level = if t.kernel { "[k] " } else { "[.] " };
            match &key.sym {
                Ok(n) => format!("{level}{n}"),
                // C's `%#.16llx`: no 0x for zero.
                Err(0) => format!("{level}{:016x}", 0),
                Err(a) => format!("{level}0x{a:016x}"),
            }
        }
    }
}

fn write_table(
    h: &EventHists,
    keys: &[SortKey],
    children: bool,
    graph: &CallGraph,
    order: ChainOrder,
    machine: &mut Machine,
    out: &mut Vec<u8>,
) {
    let mut rows: Vec<(&Key, &Totals)> = h
        .rows
        .iter()
        .filter(|(_, t)| {
            if children {
                t.children > 0
            } else {
                t.self_ > 0
            }
        })
        .collect();
    let none_last = |a: &Option<String>, b: &Option<String>| match (a, b) {
        (Some(x), Some(y)) => x.cmp(y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    };
    let depth = |k: &Key| h.trees.get(k).map_or(0, CallTree::max_depth);
    let by_keys = |ka: &Key, kb: &Key| {
        let mut o = std::cmp::Ordering::Equal;
        for k in keys {
            o = o.then_with(|| match k {
                SortKey::Comm => ka.comm.cmp(&kb.comm),
                SortKey::Pid => ka.pid.cmp(&kb.pid),
                SortKey::Dso => none_last(&ka.dso, &kb.dso),
                SortKey::Sym => match (&ka.sym, &kb.sym) {
                    (Ok(x), Ok(y)) => x.cmp(y),
                    (Ok(_), Err(_)) => std::cmp::Ordering::Less,
                    (Err(_), Ok(_)) => std::cmp::Ordering::Greater,
                    (Err(x), Err(y)) => x.cmp(y),
                },
            });
        }
        o
    };
    let before = |(ka, ta): &(&Key, &Totals), (kb, tb): &(&Key, &Totals)| {
        let o = if children {
            tb.children
                .cmp(&ta.children)
                .then_with(|| {
                    // perf's tie-break of equal Children shares, callers first.
                    if graph.mode == GraphMode::None || ta.first_tid != tb.first_tid {
                        return std::cmp::Ordering::Equal;
                    }
                    match order {
                        ChainOrder::Caller => depth(kb).cmp(&depth(ka)),
                        ChainOrder::Callee => depth(ka).cmp(&depth(kb)),
                    }
                })
                .then(tb.self_.cmp(&ta.self_))
        } else {
            tb.self_.cmp(&ta.self_)
        };
        o.then_with(|| by_keys(ka, kb))
    };
    // The tie-break by chain depth holds only within a thread, so this is no total
    // order; like perf, insert the rows one by one (in key order) where a search by
    // it leads, which gives one answer for any input.
    rows.sort_by(|(ka, _), (kb, _)| by_keys(ka, kb));
    let mut sorted: Vec<(&Key, &Totals)> = Vec::with_capacity(rows.len());
    for r in rows {
        let at = sorted.partition_point(|x| before(&r, x) != std::cmp::Ordering::Less);
        sorted.insert(at, r);
    }
    let rows = sorted;
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|(k, t)| keys.iter().map(|&s| cell(s, k, t, machine)).collect())
        .collect();
    let unresolved = rows.iter().any(|(k, _)| k.sym.is_err());
    let widths: Vec<usize> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            let mut w = k.header().len();
            if *k == SortKey::Comm {
                for (_, t) in &rows {
                    w = w.max(machine.comm(t.first_tid).len());
                }
            } else {
                for c in &cells {
                    w = w.max(c[i].len());
                }
            }
            if *k == SortKey::Dso && unresolved {
                w = w.max(16);
            }
            if *k == SortKey::Sym && unresolved {
                w = w.max(22);
            }
            w
        })
        .collect();
    let mut head = String::from("# ");
    let mut dots = String::from("# ");
    if children {
        head.push_str("Children      Self");
        dots.push_str("........  ........");
    } else {
        head.push_str("Overhead");
        dots.push_str("........");
    }
    for (k, w) in keys.iter().zip(&widths) {
        head.push_str(&format!("  {:<w$}", k.header(), w = w));
        dots.push_str("  ");
        dots.push_str(&".".repeat(*w));
    }
    out.extend_from_slice(format!("{head}\n{dots}\n#\n").as_bytes());
    let pct = |v: u64| {
        if h.period == 0 {
            0.0
        } else {
            100.0 * v as f64 / h.period as f64
        }
    };
    for ((key, t), c) in rows.iter().zip(&cells) {
        let mut line = String::from("  ");
        if children {
            line.push_str(&format!("{:>8}", format!("{:.2}%", pct(t.children))));
            line.push_str("  ");
        }
        line.push_str(&format!("{:>8}", format!("{:.2}%", pct(t.self_))));
        for (i, (k, w)) in keys.iter().zip(&widths).enumerate() {
            line.push_str("  ");
            if *k == SortKey::Sym {
                line.push_str(&c[i]);
            } else {
                // C's `%-*.*s`: padded and cut to the width.
                line.push_str(&format!("{:<w$.w$}", c[i], w = w));
            }
        }
        line.push('\n');
        out.extend_from_slice(line.as_bytes());
        if let Some(tree) = h.trees.get(*key) {
            let cx = GraphContext {
                graph: *graph,
                total: h.period,
                row: if children { t.children } else { t.self_ },
                sym_first: keys.first() == Some(&SortKey::Sym),
            };
            out.extend_from_slice(render(tree, cx).as_bytes());
        }
    }
}
