#![allow(dead_code)]
//! Oracle check of the print-fmt engine: each record's text against the kernel's own
//! `trace` line for it.
//!
//! The page walker here is deliberately minimal (it only needs per-CPU record order and
//! timestamps); the full decoder lives in `tracectl::ring`.

use std::collections::BTreeMap;
use tracectl::endian::Endianness;

use tracectl::event::{HeaderPage, Kallsyms, PrintEnv, PrintkFormats, Record, Registry};
use tracectl::tracefs::Tracefs;

/// One decoded record: CPU, timestamp (ns) and payload.
pub struct Raw {
    pub ts: u64,
    pub data: Vec<u8>,
}

/// Walk the sub-buffers of one CPU's `trace_pipe_raw` bytes (little-endian host).
pub fn walk_pages(bytes: &[u8], header: &HeaderPage, page_size: usize) -> Vec<Raw> {
    let mut out = Vec::new();
    let u32at = |b: &[u8], o: usize| {
        b.get(o..o + 4)
            .map(|s| u32::from_le_bytes(s.try_into().unwrap()))
    };
    for page in bytes.chunks(page_size) {
        if page.len() < header.data_offset {
            break;
        }
        let mut ts = u64::from_le_bytes(
            page[header.timestamp_offset..header.timestamp_offset + 8]
                .try_into()
                .unwrap(),
        );
        let commit = if header.commit_size == 8 {
            u64::from_le_bytes(
                page[header.commit_offset..header.commit_offset + 8]
                    .try_into()
                    .unwrap(),
            )
        } else {
            u32at(page, header.commit_offset).unwrap() as u64
        };
        let len = (commit & ((1 << 27) - 1)) as usize;
        let data = &page[header.data_offset..(header.data_offset + len).min(page.len())];
        let mut off = 0;
        while off + 4 <= data.len() {
            let h = u32at(data, off).unwrap();
            let type_len = h & 31;
            let delta = (h >> 5) as u64;
            match type_len {
                29 => {
                    if delta == 0 {
                        break;
                    }
                    let Some(l) = u32at(data, off + 4) else { break };
                    ts += delta;
                    off += 4 + l as usize;
                }
                30 => {
                    let Some(a) = u32at(data, off + 4) else { break };
                    ts += delta | (a as u64) << 27;
                    off += 8;
                }
                31 => {
                    let Some(a) = u32at(data, off + 4) else { break };
                    let abs = delta | (a as u64) << 27;
                    ts = (ts & !((1u64 << 59) - 1)) | abs;
                    off += 8;
                }
                0 => {
                    let Some(l) = u32at(data, off + 4) else { break };
                    ts += delta;
                    let start = off + 8;
                    let end = (off + 4 + l as usize).min(data.len());
                    if start <= end {
                        out.push(Raw {
                            ts,
                            data: data[start..end].to_vec(),
                        });
                    }
                    off += 4 + (l as usize).max(4);
                }
                n => {
                    ts += delta;
                    let start = off + 4;
                    let end = (start + 4 * n as usize).min(data.len());
                    out.push(Raw {
                        ts,
                        data: data[start..end].to_vec(),
                    });
                    off = start + 4 * n as usize;
                }
            }
        }
    }
    out
}

/// A body line of the kernel's `trace`: CPU, timestamp in µs and the text after it.
pub struct Line {
    pub cpu: u32,
    pub usec: u64,
    pub body: String,
}

/// Find ` [NNN] FFFFF  SSSS.UUUUUU: ` and return what follows.
pub fn parse_trace(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let b = line.as_bytes();
        let mut found = None;
        for (i, _) in line.match_indices('[') {
            let Some(close) = b.get(i + 4) else { break };
            if *close != b']' || !b[i + 1..i + 4].iter().all(u8::is_ascii_digit) {
                continue;
            }
            let cpu: u32 = line[i + 1..i + 4].parse().unwrap();
            // flags: 5 chars after "] "
            let rest = match line.get(i + 5..) {
                Some(r) if r.len() > 7 => &r[7..],
                _ => continue,
            };
            let rest = rest.trim_start();
            let Some(colon) = rest.find(": ") else {
                continue;
            };
            let ts = &rest[..colon];
            let Some((s, us)) = ts.split_once('.') else {
                continue;
            };
            let (Ok(s), Ok(us)) = (s.parse::<u64>(), us.parse::<u64>()) else {
                continue;
            };
            found = Some(Line {
                cpu,
                usec: s * 1_000_000 + us,
                body: rest[colon + 2..].to_string(),
            });
            break;
        }
        match found {
            Some(l) => out.push(l),
            // Continuation of a multi-line event (stack traces).
            None if !line.starts_with("CPU:") => {
                if let Some(prev) = out.last_mut() {
                    prev.body.push('\n');
                    prev.body.push_str(line);
                }
            }
            None => {}
        }
    }
    out
}

/// Per event type: (matching, differing) and a few examples of differences.
#[derive(Default)]
pub struct Report {
    pub per_event: BTreeMap<String, (u64, u64)>,
    pub examples: Vec<String>,
    /// Records of the raw pages with no line of the same CPU and microsecond in the
    /// kernel's text, and such lines with no record: both come from one stopped buffer,
    /// so any is a decoding (or line parsing) error.
    pub unpaired: u64,
    /// Records of events whose print fmt no reader of the format file can render (it
    /// names enum constants the kernel does not define for tracing, or kernel variables
    /// such as `jiffies`): printed as field=value pairs, listed with the reason, and left
    /// out of the totals.
    pub fallback: u64,
}

impl Report {
    pub fn total(&self) -> (u64, u64) {
        self.per_event
            .values()
            .fold((0, 0), |a, v| (a.0 + v.0, a.1 + v.1))
    }

    pub fn print(&self, what: &str) {
        let (ok, bad) = self.total();
        eprintln!(
            "{what}: {ok} of {} records match the kernel's text ({} unpaired, {} of events \
             whose format cannot be rendered)",
            ok + bad,
            self.unpaired,
            self.fallback
        );
        for (ev, (o, b)) in &self.per_event {
            if *b > 0 || std::env::var("ORACLE_DEBUG").is_ok() {
                eprintln!(
                    "  {ev}: {o}/{} ({:.1}%)",
                    o + b,
                    100.0 * *o as f64 / (o + b) as f64
                );
            }
        }
        for e in &self.examples {
            eprintln!("{e}");
        }
    }
}

/// Decode the tree's raw pages and compare with its `trace` text.
pub fn check_tree(
    t: &Tracefs,
    kallsyms: Option<&Kallsyms>,
    trace_text: &str,
    raw: &[(u32, Vec<u8>)],
) -> Report {
    let reg = Registry::from_source(t).expect("registry");
    let header = HeaderPage::parse(&t.read_string("events/header_page").unwrap()).unwrap();
    let page_size = t
        .read_string("buffer_subbuf_size_kb")
        .ok()
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(header.page_size());
    let printk = t
        .read_string("printk_formats")
        .ok()
        .map(|s| PrintkFormats::parse(&s));
    let env = PrintEnv {
        kallsyms,
        functions: None,
        printk: printk.as_ref(),
        endian: Endianness::Little,
        long_size: header.long_size(),
        hz: None,
        style: Default::default(),
        time_in_ns: true,
    };
    let lines = parse_trace(trace_text);
    let mut report = Report::default();
    let mut out = Vec::new();
    for (cpu, bytes) in raw {
        let recs = walk_pages(bytes, &header, page_size);
        let mine: Vec<&Line> = lines.iter().filter(|l| l.cpu == *cpu).collect();
        let (mut i, mut j) = (0, 0);
        while i < recs.len() && j < mine.len() {
            let ru = (recs[i].ts + 500) / 1000;
            if ru < mine[j].usec {
                i += 1;
                report.unpaired += 1;
                continue;
            }
            if ru > mine[j].usec {
                j += 1;
                report.unpaired += 1;
                continue;
            }
            let rec = Record {
                cpu: *cpu,
                ts: recs[i].ts,
                data: &recs[i].data,
            };
            out.clear();
            reg.write_event(&rec, &env, &mut out);
            let name = reg
                .of(&rec)
                .map(|s| s.full_name())
                .unwrap_or_else(|| "<unknown>".into());
            let e = report.per_event.entry(name.clone()).or_default();
            if out != mine[j].body.as_bytes()
                && std::env::var("ORACLE_DEBUG").is_ok()
                && report.examples.len() < 3
            {
                for l in &mine[j.saturating_sub(3)..(j + 3).min(mine.len())] {
                    eprintln!("K cpu{cpu} {} {}", l.usec, l.body);
                }
                for raw in &recs[i.saturating_sub(3)..(i + 3).min(recs.len())] {
                    let r = Record {
                        cpu: *cpu,
                        ts: raw.ts,
                        data: &raw.data,
                    };
                    let mut o = Vec::new();
                    reg.write_event(&r, &env, &mut o);
                    eprintln!("O cpu{cpu} {} {}", raw.ts, String::from_utf8_lossy(&o));
                }
            }
            if out == mine[j].body.as_bytes() {
                e.0 += 1;
            } else {
                e.1 += 1;
                if report.examples.len() < 40 {
                    report.examples.push(format!(
                        "{name}:\n  kernel: {}\n  ours:   {}",
                        mine[j].body,
                        String::from_utf8_lossy(&out)
                    ));
                }
            }
            i += 1;
            j += 1;
        }
        // Whatever one side has left has no partner on the other.
        report.unpaired += (recs.len() - i + mine.len() - j) as u64;
    }
    // Text lines of CPUs without raw data have no partner either.
    report.unpaired += lines
        .iter()
        .filter(|l| !raw.iter().any(|(c, _)| *c == l.cpu))
        .count() as u64;
    for (ev, why, n) in reg.fallback_report() {
        if let Some((o, b)) = report.per_event.remove(&ev) {
            report.fallback += o + b;
        }
        report.examples.push(format!("fallback {ev} x{n}: {why}"));
    }
    report
}

/// Read every `per_cpu/cpuN/trace_pipe_raw` of a fixture tree.
pub fn fixture_raw(t: &Tracefs) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    for cpu in 0..1024u32 {
        let p = t.path(format!("per_cpu/cpu{cpu}/trace_pipe_raw"));
        match std::fs::read(&p) {
            Ok(b) => out.push((cpu, b)),
            Err(_) if cpu > 0 && !t.path(format!("per_cpu/cpu{cpu}")).exists() => break,
            Err(_) => {}
        }
    }
    out
}
