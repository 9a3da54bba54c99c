//! Helpers shared by the trace.dat tests: recording with trace-cmd, counting events the
//! way `trace-cmd report` prints them, and counting what our reader finds.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use tracectl::dat::{buffers_of, write_dat, DatFile, Metadata, NewOption, WriteOptions};

use super::tracecmd as tracecmd_common;

/// Why live trace-cmd tests cannot run here, if they cannot.
pub fn skip_reason() -> Option<String> {
    tracecmd_common::why_not_record()
}

/// `scripts/trace-cmd-record`: trace-cmd with the project's LD_PRELOAD library.
pub fn tracecmd_here() -> PathBuf {
    tracecmd_common::recorder_path()
}

/// Record with trace-cmd: `record <args> -o out -- sleep 0.2`.
pub fn tracecmd_record(out: &Path, args: &[&str]) {
    // Under load trace-cmd 3.1.6 sometimes stops its recorders before they wrote a page
    // and leaves a file that ends at the CPU table; record again until it holds data.
    for attempt in 1..=4 {
        let _ = std::fs::remove_file(out);
        let st = Command::new(tracecmd_here())
            .arg("record")
            .args(args)
            .arg("-o")
            .arg(out)
            .args(["--", "sleep", "0.2"])
            .output()
            .expect("run scripts/trace-cmd-record");
        assert!(
            out.exists(),
            "trace-cmd record wrote nothing: {}",
            String::from_utf8_lossy(&st.stderr)
        );
        let report = Command::new("trace-cmd")
            .arg("report")
            .arg("-i")
            .arg(out)
            .output()
            .expect("run trace-cmd report");
        if String::from_utf8_lossy(&report.stdout).lines().count() > 1 {
            return;
        }
        eprintln!("trace-cmd recorded no events (attempt {attempt}); recording again");
    }
    panic!("trace-cmd record {args:?} gave no events in 4 attempts");
}

/// Event name of one `trace-cmd report` line: `comm-pid [cpu] ts: name: ...`.
fn report_event_name(line: &str) -> Option<&str> {
    let rest = &line[line.find("] ")? + 2..];
    let mut it = rest.split_whitespace();
    let ts = it.next()?;
    if !ts.ends_with(':') {
        return None;
    }
    let name = it.next()?;
    name.strip_suffix(':')
}

/// Lines per event name in `trace-cmd report FILE` (optionally extra args).
pub fn report_counts(file: &Path, extra: &[&str]) -> BTreeMap<String, u64> {
    let out = Command::new("trace-cmd")
        .arg("report")
        .args(extra)
        .arg(file)
        .output()
        .expect("run trace-cmd report");
    let err = String::from_utf8_lossy(&out.stderr).to_lowercase();
    assert!(out.status.success(), "trace-cmd report failed: {err}");
    for bad in ["error", "fail", "bug", "warn", "invalid", "unknown"] {
        assert!(
            !err.contains(bad),
            "trace-cmd report complained about {}: {err}",
            file.display()
        );
    }
    let mut m = BTreeMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        if line.contains("[LOST") || line.starts_with("cpus=") {
            continue;
        }
        if let Some(n) = report_event_name(line) {
            *m.entry(n.to_string()).or_insert(0) += 1;
        }
    }
    m
}

/// Minimal sub-buffer walker for counting (the full decoder is `tracectl::ring`).
pub fn count_page(
    page: &[u8],
    long: usize,
    be: bool,
    names: &BTreeMap<u16, String>,
    out: &mut BTreeMap<String, u64>,
) {
    let rd32 = |b: &[u8]| {
        if be {
            u32::from_be_bytes(b[..4].try_into().unwrap())
        } else {
            u32::from_le_bytes(b[..4].try_into().unwrap())
        }
    };
    let commit = if long == 8 {
        let b: [u8; 8] = page[8..16].try_into().unwrap();
        (if be {
            u64::from_be_bytes(b)
        } else {
            u64::from_le_bytes(b)
        }) as usize
    } else {
        rd32(&page[8..12]) as usize
    } & ((1 << 27) - 1);
    let data = &page[8 + long..];
    let end = commit.min(data.len());
    let mut p = 0;
    while p + 4 <= end {
        let w = rd32(&data[p..]);
        let (tl, delta) = if be {
            (w >> 27, w & ((1 << 27) - 1))
        } else {
            (w & 31, w >> 5)
        };
        let (payload, size) = match tl {
            0 => {
                let len = rd32(&data[p + 4..]) as usize;
                (Some(p + 8), 4 + ((len + 3) & !3))
            }
            1..=28 => (Some(p + 4), 4 + tl as usize * 4),
            29 => {
                if delta == 0 {
                    break;
                }
                (None, 4 + rd32(&data[p + 4..]) as usize)
            }
            _ => (None, 8),
        };
        if let Some(at) = payload {
            let b = &data[at..at + 2];
            let id = if be {
                u16::from_be_bytes([b[0], b[1]])
            } else {
                u16::from_le_bytes([b[0], b[1]])
            };
            let name = names.get(&id).cloned().unwrap_or_else(|| format!("id{id}"));
            *out.entry(name).or_insert(0) += 1;
        }
        p += size;
    }
}

/// Event ids to names from the format texts of a file.
pub fn names(dat: &DatFile) -> BTreeMap<u16, String> {
    let mut m = BTreeMap::new();
    for (_, text) in dat.all_formats() {
        let name = text
            .lines()
            .find_map(|l| l.strip_prefix("name: "))
            .map(str::trim);
        let id = text
            .lines()
            .find_map(|l| l.strip_prefix("ID: "))
            .and_then(|s| s.trim().parse::<u16>().ok());
        if let (Some(n), Some(i)) = (name, id) {
            m.insert(i, n.to_string());
        }
    }
    m
}

/// Events per name in buffer `buffer` as read by our reader.
pub fn our_counts(dat: &DatFile, buffer: usize) -> BTreeMap<String, u64> {
    let names = names(dat);
    let long = dat.long_size();
    let mut out = BTreeMap::new();
    for i in 0..dat.buffers()[buffer].cpus().len() {
        let mut pages = dat.cpu_pages(buffer, i).unwrap();
        while let Some(p) = pages.next_page().unwrap() {
            count_page(p, long, dat.endian().is_big(), &names, &mut out);
        }
    }
    out
}

/// Events per name decoded with the library's page decoder (`tracectl::ring`), and the
/// timestamps in order per CPU (checked to never go backwards).
pub fn ring_counts(dat: &DatFile, buffer: usize) -> BTreeMap<String, u64> {
    use tracectl::ring::{Entry, PageLayout, SubBuffer};
    let names = names(dat);
    let hp = dat.header_page_layout().unwrap();
    let b = &dat.buffers()[buffer];
    let layout = PageLayout::new(&hp, Some(b.page_size), dat.endian());
    let mut out = BTreeMap::new();
    for i in 0..b.cpus().len() {
        let mut pages = dat.cpu_pages(buffer, i).unwrap();
        let cpu = pages.cpu();
        let mut index = 0;
        let mut last = 0;
        while let Some(p) = pages.next_page().unwrap() {
            for e in SubBuffer::new(layout, p, cpu, index).unwrap() {
                if let Entry::Event(r) = e.unwrap() {
                    assert!(r.ts >= last, "cpu{cpu} page {index}: time goes backwards");
                    last = r.ts;
                    let id = r.event_id(dat.endian()).unwrap();
                    *out.entry(names.get(&id).cloned().unwrap_or_else(|| format!("id{id}")))
                        .or_insert(0) += 1;
                }
            }
            index += 1;
        }
    }
    out
}

/// `src` rewritten by our writer as `version` with `compression`: all its options,
/// metadata and pages. Returns the source, opened.
pub fn rewrite(
    src: &std::path::Path,
    dst: &std::path::Path,
    version: u32,
    compression: tracectl::dat::Compression,
) -> DatFile {
    let d = DatFile::open(src).unwrap();
    let opts: Vec<NewOption> = d.options().all.iter().map(NewOption::from).collect();
    let wo = WriteOptions {
        version,
        compression,
        endian: d.endian(),
        long_size: d.header().file_long_size,
        page_size: d.header().page_size,
    };
    write_dat(
        dst,
        &wo,
        &Metadata::from_dat(&d).unwrap(),
        &opts,
        buffers_of(&d).unwrap(),
    )
    .unwrap();
    d
}
