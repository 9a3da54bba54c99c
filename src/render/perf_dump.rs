//! perf 6.1's `-D`/`--dump-raw-trace` of `perf script` and `perf report`: each record
//! as it is taken (a record of perf's own types as it is read, a kernel record when its
//! round releases it), with its file offset and size, a hex dump of its bytes, and
//! perf's one-line decode of it; a sample's fields after it (call chain entries, user
//! registers, the stack copy's size, data source, counter values) and the thread and
//! file its address was found in.

use crate::bytes::{push_dec, push_hex};
use crate::perf::data::abi::{read_format, record, sample};
use crate::perf::data::{Event, PerfData, PerfDataError, RawRecord, Sample, SampleId};
use crate::perf::machine::Machine;
use crate::perf::regs::x86_64_reg_name;
use crate::render::perf_header::ranges;
use crate::render::perf_sideband::{record_name, write_record_text};

/// What `perf report -D` prints before the records.
pub const REPORT_HEAD: &str =
    "# To display the perf.data header info, please use --header/--header-only options.\n#\n";

/// The dump of the records of one file.
#[derive(Debug)]
pub struct RecordDump<'f> {
    file: &'f PerfData,
    /// The file as perf names it after the offset (`0x108@perf.data`): the path given.
    shown: String,
    /// `perf report`'s (which has no handler for THREAD_MAP and CPU_MAP records).
    report: bool,
    /// The `sample_type` bits of all the events together (perf's combined type).
    sample_type: u64,
    sample_id_all: bool,
}

impl<'f> RecordDump<'f> {
    /// The dump of `file`, named `shown` as the input was given; `report` for `perf
    /// report`'s.
    pub fn new(file: &'f PerfData, shown: &str, report: bool) -> RecordDump<'f> {
        let sample_type = file.attrs().iter().fold(0, |t, a| t | a.sample_type);
        let sample_id_all = file.attrs().first().is_some_and(|a| a.sample_id_all());
        // perf names a pipe-mode input "pipe", whatever file it came from.
        let shown = if file.is_pipe() { "pipe" } else { shown };
        RecordDump {
            file,
            shown: shown.to_string(),
            report,
            sample_type,
            sample_id_all,
        }
    }

    /// The block of record `r`: where it is, its bytes, and perf's decode of it (for a
    /// sample, its fields). Errors name the record's offset when it cannot be decoded.
    pub fn write_record(&self, r: &RawRecord, out: &mut Vec<u8>) -> Result<(), PerfDataError> {
        let size = r.body.len() as u64 + 8;
        let offset = self.file.stored_offset(r.offset);
        out.extend_from_slice(
            format!(
                "\n{}@{} [{size:#x}]: event: {}\n",
                alt_hex(offset),
                self.shown,
                r.type_
            )
            .as_bytes(),
        );
        let mut bytes = Vec::with_capacity(size as usize);
        let e = self.file.endian();
        bytes.extend_from_slice(&e.u32_bytes(r.type_));
        bytes.extend_from_slice(&e.u16_bytes(r.misc));
        bytes.extend_from_slice(&e.u16_bytes(size as u16));
        bytes.extend_from_slice(r.body);
        write_hex_dump(&bytes, out);
        let user = r.type_ >= 64;
        let ev = if user {
            None
        } else {
            Some(self.file.decode(r)?)
        };
        // perf's time stamp: the CPU and time of the sample or of the record's sample
        // id (zero for perf's own records). A pipe announces its events among the
        // records: perf knows only those announced before the record.
        let (sample_type, sample_id_all) = match self.file.attrs_before(r.offset) {
            _ if !self.file.is_pipe() => (self.sample_type, self.sample_id_all),
            0 => (0, false),
            n => {
                let known = &self.file.attrs()[..n];
                let t = known.iter().fold(0, |t, a| t | a.sample_type);
                (t, known[0].sample_id_all())
            }
        };
        if (!user || self.file.is_pipe()) && r.type_ != record::SAMPLE && !sample_id_all {
            out.extend_from_slice(b"-1 -1 ");
        } else {
            let (cpu, time) = match &ev {
                // perf's "none" (all ones) for what the sample's event leaves out.
                Some(Event::Sample(s)) => {
                    let st = self.file.attrs()[s.attr].sample_type;
                    let cpu = if st & sample::CPU != 0 {
                        s.cpu
                    } else {
                        u32::MAX
                    };
                    let time = if st & sample::TIME != 0 {
                        s.time
                    } else {
                        u64::MAX
                    };
                    (u64::from(cpu), time)
                }
                Some(ev) => {
                    let id = sample_id(ev);
                    (u64::from(id.cpu.unwrap_or(0)), id.time.unwrap_or(0))
                }
                None => (0, 0),
            };
            if sample_type & sample::CPU != 0 {
                push_dec(out, cpu);
                out.push(b' ');
            }
            if sample_type & sample::TIME != 0 {
                push_dec(out, time);
                out.push(b' ');
            }
        }
        out.extend_from_slice(format!("{} [{size:#x}]: ", alt_hex(offset)).as_bytes());
        match &ev {
            Some(Event::Sample(s)) => self.write_sample(r, s, out),
            Some(ev) => self.write_kernel_record(r, ev, out),
            None => self.write_user_record(r, out),
        }
        Ok(())
    }

    /// A kernel record's decode, as perf's machine prints it when it takes the record.
    fn write_kernel_record(&self, r: &RawRecord, ev: &Event, out: &mut Vec<u8>) {
        let e = self.file.endian();
        match (r.type_, ev) {
            (
                record::MMAP
                | record::MMAP2
                | record::COMM
                | record::FORK
                | record::EXIT
                | record::SWITCH
                | record::SWITCH_CPU_WIDE
                | record::NAMESPACES
                | record::CGROUP
                | record::KSYMBOL
                | record::BPF_EVENT,
                _,
            ) => {
                // perf_event__fprintf's text, but a COMM's which ends before the comm
                // with ": " (the same) and the names perf's machine prints before them.
                write_record_text(r.type_, ev, out);
            }
            (record::LOST, _) => {
                let id = r.body.get(..8).map_or(0, |b| e.u64(b));
                let lost = r.body.get(8..16).map_or(0, |b| e.u64(b));
                out.extend_from_slice(b"PERF_RECORD_LOST: id:");
                push_dec(out, id);
                out.extend_from_slice(b": lost:");
                push_dec(out, lost);
                out.push(b'\n');
            }
            (record::LOST_SAMPLES, Event::LostSamples { lost, id }) => {
                // The event's id as the record's trailer gives it; perf's "none" (all
                // ones) without one.
                out.extend_from_slice(b"PERF_RECORD_LOST_SAMPLES: id:");
                push_dec(out, id.id.unwrap_or(u64::MAX));
                out.extend_from_slice(b": lost samples :");
                push_dec(out, *lost);
                out.push(b'\n');
            }
            _ => {
                out.extend_from_slice(b"PERF_RECORD_");
                out.extend_from_slice(record_name(r.type_).as_bytes());
                out.extend_from_slice(b": unhandled!\n");
            }
        }
    }

    /// A record of perf's own types, as perf prints it when it reads it.
    fn write_user_record(&self, r: &RawRecord, out: &mut Vec<u8>) {
        let e = self.file.endian();
        let word = |i: usize| r.body.get(i * 8..i * 8 + 8).map_or(0, |b| e.u64(b));
        out.extend_from_slice(b"PERF_RECORD_");
        out.extend_from_slice(record_name(r.type_).as_bytes());
        match r.type_ {
            record::FINISHED_ROUND => out.push(b'\n'),
            // A pipe's attrs, features and tracing data: perf takes them in without a
            // word (nor the end of the line).
            record::HEADER_ATTR | record::HEADER_FEATURE | record::TRACING_DATA
                if self.file.is_pipe() => {}
            69 => {
                // ID_INDEX: nr, then id, idx, cpu and tid of each.
                let nr = word(0);
                out.extend_from_slice(b" nr: ");
                push_dec(out, nr);
                out.push(b'\n');
                let entries = (r.body.len().saturating_sub(8) / 32) as u64;
                for i in 0..nr.min(entries) as usize {
                    let at = 1 + i * 4;
                    out.extend_from_slice(
                        format!(
                            " ... id: {}  idx: {}  cpu: {}  tid: {}\n",
                            word(at),
                            word(at + 1),
                            word(at + 2) as i64,
                            word(at + 3) as i64
                        )
                        .as_bytes(),
                    );
                }
            }
            73 => {
                // THREAD_MAP: nr, then pid and a 16-byte comm of each.
                let nr = word(0);
                out.extend_from_slice(b" nr: ");
                push_dec(out, nr);
                let entries = (r.body.len().saturating_sub(8) / 24) as u64;
                for i in 0..nr.min(entries) as usize {
                    let at = 8 + i * 24;
                    let pid = e.u64(&r.body[at..at + 8]) as i32;
                    out.extend_from_slice(if i == 0 { b" thread: " } else { b"," });
                    out.extend_from_slice(pid.to_string().as_bytes());
                }
                out.push(b'\n');
                if self.report {
                    out.extend_from_slice(b": unhandled!\n");
                }
            }
            74 => {
                out.extend_from_slice(b": ");
                out.extend_from_slice(ranges(&cpu_map(r.body, e)).as_bytes());
                out.push(b'\n');
                if self.report {
                    out.extend_from_slice(b": unhandled!\n");
                }
            }
            78 => {
                // EVENT_UPDATE: its kind, the event's id, then what it sets.
                out.extend_from_slice(format!("\n... id:    {}\n", word(1)).as_bytes());
                let data = r.body.get(16..).unwrap_or_default();
                match word(0) {
                    0 => {
                        out.extend_from_slice(b"... unit:  ");
                        out.extend_from_slice(until_nul(data));
                        out.push(b'\n');
                    }
                    1 => {
                        let scale = f64::from_bits(word(2));
                        out.extend_from_slice(format!("... scale: {scale:.6}\n").as_bytes());
                    }
                    2 => {
                        out.extend_from_slice(b"... name:  ");
                        out.extend_from_slice(until_nul(data));
                        out.push(b'\n');
                    }
                    3 => {
                        out.extend_from_slice(b"... ");
                        out.extend_from_slice(ranges(&cpu_map(data, e)).as_bytes());
                        out.push(b'\n');
                    }
                    _ => out.extend_from_slice(b"... unknown type\n"),
                }
            }
            _ => out.extend_from_slice(b": unhandled!\n"),
        }
    }

    /// A sample's line and the fields perf prints under it (its `dump_sample`).
    fn write_sample(&self, r: &RawRecord, s: &Sample, out: &mut Vec<u8>) {
        let file = self.file;
        let attr = &file.attrs()[s.attr];
        let st = attr.sample_type;
        out.extend_from_slice(
            format!(
                "PERF_RECORD_SAMPLE(IP, {:#x}): {}/{}: {} period: {} addr: {}\n",
                r.misc,
                s.pid,
                s.tid,
                alt_hex(s.ip),
                s.period,
                alt_hex(s.addr)
            )
            .as_bytes(),
        );
        if st & sample::CALLCHAIN != 0 {
            let n = s.callchain_raw.len() / 8;
            out.extend_from_slice(format!("... FP chain: nr:{n}\n").as_bytes());
            for (i, ip) in s.callchain().enumerate() {
                out.extend_from_slice(format!("..... {i:2}: {ip:016x}\n").as_bytes());
            }
        }
        let regs = |what: &str, regs: &crate::perf::data::UserRegs, out: &mut Vec<u8>| {
            if regs.abi == 0 {
                return;
            }
            let abi = match regs.abi {
                1 => "32-bit",
                2 => "64-bit",
                _ => "none",
            };
            out.extend_from_slice(
                format!("... {what} regs: mask {:#x} ABI {abi}\n", regs.mask).as_bytes(),
            );
            for reg in 0..64u32 {
                if let Some(v) = regs.get(reg, s.endian) {
                    out.extend_from_slice(
                        format!(".... {:<5} 0x{v:016x}\n", x86_64_reg_name(reg)).as_bytes(),
                    );
                }
            }
        };
        if st & sample::REGS_USER != 0 {
            regs("user", &s.user_regs, out);
        }
        if st & sample::REGS_INTR != 0 {
            regs("intr", &s.intr_regs, out);
        }
        if st & sample::STACK_USER != 0 {
            let offset = s.user_stack_offset;
            out.extend_from_slice(
                format!(
                    "... ustack: size {}, offset {:#x}\n",
                    s.user_stack.len(),
                    offset
                )
                .as_bytes(),
            );
        }
        if st & (sample::WEIGHT | sample::WEIGHT_STRUCT) != 0 {
            out.extend_from_slice(format!("... weight: {}", s.weight).as_bytes());
            if st & sample::WEIGHT_STRUCT != 0 {
                out.extend_from_slice(format!(",{:#x},0x0", s.ins_lat).as_bytes());
            }
            out.push(b'\n');
        }
        if st & sample::DATA_SRC != 0 {
            out.extend_from_slice(format!(" . data_src: {:#x}\n", s.data_src).as_bytes());
        }
        if st & sample::PHYS_ADDR != 0 {
            out.extend_from_slice(format!(" .. phys_addr: {:#x}\n", s.phys_addr).as_bytes());
        }
        if st & sample::READ != 0 {
            self.write_read(s, attr.read_format, out);
        }
    }

    /// The counter values of a READ sample (perf's `sample_read__printf`).
    fn write_read(&self, s: &Sample, format: u64, out: &mut Vec<u8>) {
        let e = self.file.endian();
        let mut words = s.read.chunks_exact(8).map(|b| e.u64(b));
        out.extend_from_slice(b"... sample_read:\n");
        let mut next = || words.next().unwrap_or(0);
        let group = format & read_format::GROUP != 0;
        let nr = if group { next() } else { 1 };
        if format & read_format::TOTAL_TIME_ENABLED != 0 {
            out.extend_from_slice(format!("...... time enabled {:016x}\n", next()).as_bytes());
        }
        if format & read_format::TOTAL_TIME_RUNNING != 0 {
            out.extend_from_slice(format!("...... time running {:016x}\n", next()).as_bytes());
        }
        if group {
            out.extend_from_slice(format!(".... group nr {nr}\n").as_bytes());
        }
        let values = (s.read.len() / 8) as u64;
        for _ in 0..nr.min(values) {
            let value = next();
            let id = if format & read_format::ID != 0 {
                next()
            } else {
                0
            };
            out.extend_from_slice(format!("..... id {id:016x}, value {value:016x}").as_bytes());
            if format & read_format::LOST != 0 {
                out.extend_from_slice(format!(", lost {}", next()).as_bytes());
            }
            out.push(b'\n');
        }
    }
}

/// The thread and the file a sample's address was found in, as perf prints them when
/// it resolves the sample (its `machine__resolve`).
pub fn write_sample_place(machine: &Machine, s: &Sample, out: &mut Vec<u8>) {
    out.extend_from_slice(b" ... thread: ");
    out.extend_from_slice(machine.comm_of(s.tid).as_bytes());
    out.push(b':');
    out.extend_from_slice(s.tid.to_string().as_bytes());
    out.extend_from_slice(b"\n ...... dso: ");
    match machine.object_at(s.pid, s.cpumode, s.ip) {
        Some(o) => out.extend_from_slice(machine.object_name(o).as_bytes()),
        None if s.cpumode == crate::perf::data::abi::misc::HYPERVISOR => {
            out.extend_from_slice(b"[hypervisor]")
        }
        None => out.extend_from_slice(b"<not found>"),
    }
    out.push(b'\n');
}

/// The sample id of a decoded record other than a sample.
fn sample_id(ev: &Event) -> SampleId {
    match *ev {
        Event::Mmap { id, .. }
        | Event::Comm { id, .. }
        | Event::Task { id, .. }
        | Event::Lost { id, .. }
        | Event::LostSamples { id, .. }
        | Event::Switch { id, .. }
        | Event::Namespaces { id, .. }
        | Event::Cgroup { id, .. }
        | Event::Ksymbol { id, .. }
        | Event::BpfEvent { id, .. }
        | Event::Other { id, .. } => id,
        Event::Sample(_) | Event::FinishedRound => SampleId::default(),
    }
}

/// The bytes of `b` before its first NUL.
fn until_nul(b: &[u8]) -> &[u8] {
    &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())]
}

/// C's `%#lx`: `0` for zero, else `0x` and lowercase hex digits.
fn alt_hex(v: u64) -> String {
    if v == 0 {
        "0".to_string()
    } else {
        format!("{v:#x}")
    }
}

/// perf's hex dump of a record (its `trace_event`): a line with a dot, the size, then
/// 16 bytes a line with their printable characters, and an empty line.
fn write_hex_dump(bytes: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(b".\n. ... raw event: size ");
    push_dec(out, bytes.len() as u64);
    out.extend_from_slice(b" bytes\n");
    for (n, line) in bytes.chunks(16).enumerate() {
        out.extend_from_slice(format!(".  {:04x}: ", n * 16).as_bytes());
        for b in line {
            out.push(b' ');
            if *b < 0x10 {
                out.push(b'0');
            }
            push_hex(out, u64::from(*b), false);
        }
        for _ in line.len()..16 {
            out.extend_from_slice(b"   ");
        }
        out.extend_from_slice(b"  ");
        for &b in line {
            out.push(if (0x20..0x7f).contains(&b) { b } else { b'.' });
        }
        for _ in line.len()..16 {
            out.push(b' ');
        }
        out.push(b'\n');
    }
    out.push(b'\n');
}

/// The CPUs of a CPU_MAP record: a list, a mask or a range (-1 for "any CPU").
fn cpu_map(body: &[u8], e: crate::endian::Endianness) -> Vec<i64> {
    let u16_at = |i: usize| body.get(i..i + 2).map_or(0, |b| e.u16(b));
    let mut cpus = Vec::new();
    match u16_at(0) {
        0 => {
            let nr = usize::from(u16_at(2));
            for i in 0..nr {
                if body.len() < 4 + i * 2 + 2 {
                    break;
                }
                let c = u16_at(4 + i * 2);
                cpus.push(if c == u16::MAX { -1 } else { i64::from(c) });
            }
        }
        1 => {
            let nr = usize::from(u16_at(2));
            let long_size = usize::from(u16_at(4));
            let (start, width) = if long_size == 4 { (6, 4) } else { (8, 8) };
            for w in 0..nr {
                let at = start + w * width;
                let Some(b) = body.get(at..at + width) else {
                    break;
                };
                let bits = if width == 4 {
                    u64::from(e.u32(b))
                } else {
                    e.u64(b)
                };
                for bit in 0..width * 8 {
                    if bits & (1 << bit) != 0 {
                        cpus.push((w * width * 8 + bit) as i64);
                    }
                }
            }
        }
        2 => {
            if body.get(2).is_some_and(|&a| a != 0) {
                cpus.push(-1);
            }
            cpus.extend(i64::from(u16_at(4))..=i64::from(u16_at(6)));
        }
        _ => {}
    }
    cpus
}
