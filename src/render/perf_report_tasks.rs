//! The views of `perf report` that list what the records say rather than the samples'
//! shares: `--stats` (the records of each type, and each event's samples) and `--tasks`
//! / `--mmaps` (the threads as trees of parents and children, with their processes'
//! mappings), as perf 6.1 prints them.

use std::io::Write;

use crate::event::KallsymsSource;
use crate::perf::data::abi::{record, sample};
use crate::perf::data::ReadPeriods;
use crate::perf::data::{Event, PerfData, PerfDataError, PerfDataErrorKind};
use crate::perf::machine::{for_each_ordered, for_each_ordered_with_marks, Machine};
use crate::render::perf_dump::{write_sample_place, RecordDump, REPORT_HEAD};
use crate::render::perf_script::event_name;
use crate::render::perf_sideband::record_name;
use crate::render::tracecmd::DatCatalog;

/// perf 6.1's `PERF_RECORD_HEADER_MAX`: record types below it are counted.
const TYPES: usize = 83;

/// `perf report --stats`: how many records of each type the data section holds (those
/// inside COMPRESSED records too, and the COMPRESSED records themselves), with each
/// type's share of them all, then each event's samples. With `skip_empty` (perf's
/// default), types and events without any are left out.
pub fn write_stats(
    file: &PerfData,
    catalog: Option<&DatCatalog>,
    skip_empty: bool,
    out: &mut dyn Write,
) -> Result<(), PerfDataError> {
    write_counts(file, catalog, skip_empty, true, out)
}

/// The counts of [`write_stats`] as perf's `--stats` reader (`stats_mode`) or its
/// `-D` takes them: only the first counts each event's lost samples (elsewhere perf's
/// LOST_SAMPLES handler only prints the record), and it stops at a pipe's tracing data.
fn write_counts(
    file: &PerfData,
    catalog: Option<&DatCatalog>,
    skip_empty: bool,
    stats_mode: bool,
    out: &mut dyn Write,
) -> Result<(), PerfDataError> {
    let mut counts = [0u64; TYPES];
    let mut samples = vec![0u64; file.attrs().len()];
    let mut lost = vec![0u64; file.attrs().len()];
    // A sample that reads a group counts once for each event whose counter grew, as
    // perf hands each such value on as a sample of that event.
    let mut periods = ReadPeriods::default();
    for r in file.records() {
        let r = r?;
        if let Some(c) = counts.get_mut(r.type_ as usize) {
            *c += 1;
        }
        if stats_mode && file.is_pipe() && r.type_ == record::TRACING_DATA {
            // perf's --stats does not take a pipe's tracing data in, and so reads what
            // follows it as records, to the end of what it can make of them: none.
            break;
        }
        if r.type_ == record::SAMPLE {
            let reads = file.with_sample(&r, |s| {
                let reads = file.attrs()[s.attr].sample_type & sample::READ != 0;
                if !reads {
                    samples[s.attr] += 1;
                }
                reads
            })?;
            if reads {
                for s in periods.split(file, file.sample(&r)?) {
                    samples[s.attr] += 1;
                }
            }
        } else if r.type_ == record::LOST_SAMPLES && stats_mode {
            if let Event::LostSamples { lost: n, id } = file.decode(&r)? {
                if let Some(a) = file.attr_of_record(&id) {
                    lost[a] += n;
                }
            }
        }
    }
    // The records the COMPRESSED ones held were counted above; these only here.
    for r in file.stored_records() {
        if r?.type_ == record::COMPRESSED {
            counts[record::COMPRESSED as usize] += 1;
        }
    }
    let total: u64 = counts.iter().sum();
    let mut text = String::from("\nAggregated stats:\n");
    text.push_str(&format!("{:>16} events: {:>10}\n", "TOTAL", total));
    for (type_, &n) in counts.iter().enumerate().skip(1) {
        let name = record_name(type_ as u32);
        if name == "UNKNOWN" || (skip_empty && n == 0) {
            continue;
        }
        if total > 0 {
            let share = 100.0 * n as f64 / total as f64;
            text.push_str(&format!("{name:>16} events: {n:>10}  ({share:4.1}%)\n"));
        } else {
            text.push_str(&format!("{name:>16} events: {n:>10}\n"));
        }
    }
    for (i, attr) in file.attrs().iter().enumerate() {
        let (n, l) = (samples[i], lost[i]);
        if skip_empty && n == 0 && l == 0 {
            continue;
        }
        text.push_str(&format!("{} stats:\n", event_name(attr, catalog)));
        if n > 0 {
            text.push_str(&format!("{:>16} events: {n:>10}\n", "SAMPLE"));
        }
        if l > 0 {
            text.push_str(&format!("{:>16} events: {l:>10}\n", "LOST_SAMPLES"));
        }
    }
    out.write_all(text.as_bytes())
        .map_err(|e| PerfDataError::new(file.path(), "output", 0, PerfDataErrorKind::Io(e)))
}

/// `perf report -D`: every record dumped as perf takes it (see [`RecordDump`]), each
/// sample with the thread and file it was found in on `machine`, then the counts of
/// `--stats`.
pub fn write_dump(
    file: &PerfData,
    mut machine: Machine,
    catalog: Option<&DatCatalog>,
    shown: &str,
    out: &mut dyn Write,
) -> Result<(), PerfDataError> {
    let io = |e| PerfDataError::new(file.path(), "output", 0, PerfDataErrorKind::Io(e));
    let dump = RecordDump::new(file, shown, true);
    let mut buf: Vec<u8> = REPORT_HEAD.as_bytes().to_vec();
    let mut periods = ReadPeriods::default();
    for_each_ordered_with_marks(file, |r| {
        dump.write_record(&r, &mut buf)?;
        if r.type_ == record::SAMPLE {
            let s = file.sample(&r)?;
            for s in periods.split(file, s) {
                write_sample_place(&machine, &s, &mut buf);
            }
        } else if r.type_ < 64 {
            machine.apply(&file.decode(&r)?);
        }
        if buf.len() >= 1 << 16 {
            out.write_all(&buf).map_err(io)?;
            buf.clear();
        }
        Ok::<(), PerfDataError>(())
    })?;
    out.write_all(&buf).map_err(io)?;
    write_counts(file, catalog, true, false, out)
}

/// `perf report --tasks` (and with `mmaps`, `--mmaps`): the threads the COMM, FORK
/// and EXIT records (and MMAP records, with `mmaps`) make, in perf's order (see
/// [`Machine::tasks`]), each under its parent, indented by its depth, with its
/// process's mappings under it when asked. A thread whose parent no record made is
/// an error, as in perf.
pub fn write_tasks(file: &PerfData, mmaps: bool, out: &mut dyn Write) -> Result<(), PerfDataError> {
    let mut machine = Machine::new(KallsymsSource::default(), None);
    for_each_ordered(file, |r| {
        let take = matches!(r.type_, record::COMM | record::FORK | record::EXIT)
            || (mmaps && matches!(r.type_, record::MMAP | record::MMAP2));
        if take {
            machine.apply(&file.decode(&r)?);
        }
        Ok::<(), PerfDataError>(())
    })?;
    let tasks = machine.tasks(mmaps).map_err(|why| {
        PerfDataError::new(file.path(), "the tasks", 0, PerfDataErrorKind::Corrupt(why))
    })?;
    let mut text = format!("# {:>8} {:>8} {:>8}  {}\n", "pid", "tid", "ppid", "comm");
    for t in &tasks {
        let head = format!(
            "  {:>8} {:>8} {:>8} |{:level$}",
            t.pid,
            t.tid,
            t.ppid,
            "",
            level = t.level
        );
        text.push_str(&head);
        text.push_str(&t.comm);
        text.push('\n');
        for m in &t.maps {
            let flag = |set: bool, c: char| if set { c } else { '-' };
            text.push_str(&format!(
                "{:indent$}  {:x}-{:x} {}{}{}{} {:08x} {} {}\n",
                "",
                m.start,
                m.end,
                flag(m.prot & 1 != 0, 'r'),
                flag(m.prot & 2 != 0, 'w'),
                flag(m.prot & 4 != 0, 'x'),
                if m.flags & 1 != 0 { 's' } else { 'p' },
                m.pgoff,
                m.ino,
                m.name,
                indent = head.len()
            ));
        }
    }
    out.write_all(text.as_bytes())
        .map_err(|e| PerfDataError::new(file.path(), "output", 0, PerfDataErrorKind::Io(e)))
}
