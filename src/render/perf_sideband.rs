//! The text perf 6.1 prints for a side-band record (its `perf_event__fprintf`):
//! `PERF_RECORD_COMM exec: ls:123/123`, `PERF_RECORD_FORK(124:124):(123:123)`,
//! `PERF_RECORD_MMAP2 123/123: [0x401000(0x78000) @ 0x1000 fe:00 1234 0]: r-xp /bin/ls`,
//! which `perf script --show-task-events` and its kin print after a sample's columns.

use crate::bytes::{push_dec, push_hex};
use crate::perf::data::abi::record;
use crate::perf::data::Event;

/// perf's `perf_event__name`: the name after `PERF_RECORD_` of a record type.
pub fn record_name(type_: u32) -> &'static str {
    match type_ {
        record::MMAP => "MMAP",
        record::LOST => "LOST",
        record::COMM => "COMM",
        record::EXIT => "EXIT",
        record::THROTTLE => "THROTTLE",
        record::UNTHROTTLE => "UNTHROTTLE",
        record::FORK => "FORK",
        record::READ => "READ",
        record::SAMPLE => "SAMPLE",
        record::MMAP2 => "MMAP2",
        11 => "AUX",
        12 => "ITRACE_START",
        record::LOST_SAMPLES => "LOST_SAMPLES",
        record::SWITCH => "SWITCH",
        record::SWITCH_CPU_WIDE => "SWITCH_CPU_WIDE",
        record::NAMESPACES => "NAMESPACES",
        record::KSYMBOL => "KSYMBOL",
        record::BPF_EVENT => "BPF_EVENT",
        record::CGROUP => "CGROUP",
        20 => "TEXT_POKE",
        21 => "AUX_OUTPUT_HW_ID",
        record::HEADER_ATTR => "ATTR",
        65 => "EVENT_TYPE",
        record::TRACING_DATA => "TRACING_DATA",
        record::BUILD_ID => "BUILD_ID",
        record::FINISHED_ROUND => "FINISHED_ROUND",
        69 => "ID_INDEX",
        70 => "AUXTRACE_INFO",
        71 => "AUXTRACE",
        72 => "AUXTRACE_ERROR",
        73 => "THREAD_MAP",
        74 => "CPU_MAP",
        75 => "STAT_CONFIG",
        76 => "STAT",
        77 => "STAT_ROUND",
        78 => "EVENT_UPDATE",
        79 => "TIME_CONV",
        80 => "FEATURE",
        record::COMPRESSED => "COMPRESSED",
        record::FINISHED_INIT => "FINISHED_INIT",
        _ => "UNKNOWN",
    }
}

/// C's `%#lx`: `0` for zero, else `0x` and lowercase hex digits.
fn push_alt_hex(out: &mut Vec<u8>, v: u64) {
    if v != 0 {
        out.extend_from_slice(b"0x");
    }
    push_hex(out, v, false);
}

fn push_i32(out: &mut Vec<u8>, v: i32) {
    if v < 0 {
        out.push(b'-');
    }
    push_dec(out, u64::from(v.unsigned_abs()));
}

/// `%02x`.
fn push_hex2(out: &mut Vec<u8>, v: u32) {
    if v < 0x10 {
        out.push(b'0');
    }
    push_hex(out, u64::from(v), false);
}

/// `%5d/%-5d` of a pid and tid.
fn push_pid_tid_padded(out: &mut Vec<u8>, pid: i32, tid: i32) {
    let mut p = Vec::new();
    push_i32(&mut p, pid);
    out.extend(std::iter::repeat(b' ').take(5usize.saturating_sub(p.len())));
    out.extend_from_slice(&p);
    out.push(b'/');
    let start = out.len();
    push_i32(out, tid);
    while out.len() - start < 5 {
        out.push(b' ');
    }
}

/// `PERF_RECORD_<NAME>` and what perf 6.1 prints of the record `ev` of type `type_`,
/// ending with a newline.
pub fn write_record_text(type_: u32, ev: &Event, out: &mut Vec<u8>) {
    out.extend_from_slice(b"PERF_RECORD_");
    out.extend_from_slice(record_name(type_).as_bytes());
    match *ev {
        Event::Comm {
            pid,
            tid,
            comm,
            exec,
            ..
        } => {
            if exec {
                out.extend_from_slice(b" exec");
            }
            out.extend_from_slice(b": ");
            out.extend_from_slice(comm);
            out.push(b':');
            push_i32(out, pid);
            out.push(b'/');
            push_i32(out, tid);
        }
        Event::Ksymbol {
            addr,
            len,
            ksym_type,
            flags,
            name,
            ..
        } => {
            out.extend_from_slice(b" addr ");
            push_hex(out, addr, false);
            out.extend_from_slice(b" len ");
            push_dec(out, u64::from(len));
            out.extend_from_slice(b" type ");
            push_dec(out, u64::from(ksym_type));
            out.extend_from_slice(b" flags 0x");
            push_hex(out, u64::from(flags), false);
            out.extend_from_slice(b" name ");
            out.extend_from_slice(name);
        }
        Event::BpfEvent {
            type_,
            flags,
            prog_id,
            ..
        } => {
            out.extend_from_slice(b" type ");
            push_dec(out, u64::from(type_));
            out.extend_from_slice(b", flags ");
            push_dec(out, u64::from(flags));
            out.extend_from_slice(b", id ");
            push_dec(out, u64::from(prog_id));
        }
        Event::Task {
            pid,
            ppid,
            tid,
            ptid,
            ..
        } => {
            out.push(b'(');
            push_i32(out, pid);
            out.push(b':');
            push_i32(out, tid);
            out.extend_from_slice(b"):(");
            push_i32(out, ppid);
            out.push(b':');
            push_i32(out, ptid);
            out.push(b')');
        }
        Event::Mmap {
            pid,
            tid,
            start,
            len,
            pgoff,
            filename,
            prot,
            flags,
            data,
            dso_id,
            build_id,
            ..
        } => {
            out.push(b' ');
            push_i32(out, pid);
            out.push(b'/');
            push_i32(out, tid);
            out.extend_from_slice(b": [");
            push_alt_hex(out, start);
            out.push(b'(');
            push_alt_hex(out, len);
            out.extend_from_slice(b") @ ");
            push_alt_hex(out, pgoff);
            if type_ == record::MMAP {
                out.extend_from_slice(b"]: ");
                out.push(if data { b'r' } else { b'x' });
            } else {
                match build_id {
                    Some(id) => {
                        out.extend_from_slice(b" <");
                        for b in id {
                            push_hex2(out, u32::from(*b));
                        }
                        out.push(b'>');
                    }
                    None => {
                        out.push(b' ');
                        push_hex2(out, dso_id.maj);
                        out.push(b':');
                        push_hex2(out, dso_id.min);
                        out.push(b' ');
                        push_dec(out, dso_id.ino);
                        out.push(b' ');
                        push_dec(out, dso_id.ino_generation);
                    }
                }
                out.extend_from_slice(b"]: ");
                /// `PROT_READ`, `PROT_WRITE`, `PROT_EXEC`, `MAP_SHARED`.
                const BITS: [u32; 3] = [1, 2, 4];
                for (bit, c) in BITS.iter().zip(*b"rwx") {
                    out.push(if prot & bit != 0 { c } else { b'-' });
                }
                out.push(if flags & 1 != 0 { b's' } else { b'p' });
            }
            out.push(b' ');
            out.extend_from_slice(filename);
        }
        Event::Lost { lost, .. } => {
            out.extend_from_slice(b" lost ");
            push_dec(out, lost);
        }
        Event::Switch {
            out: switched_out,
            preempt,
            next_prev,
            cpu_wide,
            ..
        } => {
            let in_out: &[u8] = match (switched_out, preempt) {
                (false, _) => b"IN         ",
                (true, false) => b"OUT        ",
                (true, true) => b"OUT preempt",
            };
            out.push(b' ');
            out.extend_from_slice(in_out);
            if cpu_wide {
                out.extend_from_slice(if switched_out {
                    b"  next pid/tid: "
                } else {
                    b"  prev pid/tid: "
                });
                push_pid_tid_padded(out, next_prev.0, next_prev.1);
            }
        }
        Event::Namespaces {
            pid,
            tid,
            nr,
            links,
            ..
        } => {
            let links = links.iter();
            let count = links.len();
            out.push(b' ');
            push_i32(out, pid);
            out.push(b'/');
            push_i32(out, tid);
            out.extend_from_slice(b" - nr_namespaces: ");
            push_dec(out, u64::from(nr));
            out.extend_from_slice(b"\n\t\t[");
            for (i, (dev, ino)) in links.enumerate() {
                if i > 0 && i % 4 == 0 {
                    out.extend_from_slice(b"\n\t\t ");
                }
                push_dec(out, i as u64);
                out.push(b'/');
                out.extend_from_slice(namespace_name(i).as_bytes());
                out.extend_from_slice(b": ");
                push_dec(out, dev);
                out.push(b'/');
                push_alt_hex(out, ino);
                out.extend_from_slice(if i + 1 == count { b"]" } else { b", " });
            }
            // perf ends the line only after the last namespace.
            if count == 0 {
                return;
            }
        }
        Event::Cgroup { cgroup, path, .. } => {
            out.extend_from_slice(b" cgroup: ");
            push_dec(out, cgroup);
            out.push(b' ');
            out.extend_from_slice(path);
        }
        _ => {}
    }
    out.push(b'\n');
}

/// perf's `perf_ns__name`: the name of the namespace at `index` of a NAMESPACES
/// record, `(null)` (glibc's text for a null string) past the ones perf knows.
fn namespace_name(index: usize) -> &'static str {
    record::NAMESPACE_NAMES
        .get(index)
        .copied()
        .unwrap_or("(null)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::data::{DsoId, SampleId};

    /// Lines perf 6.1 printed here with `perf script --show-task-events
    /// --show-mmap-events`.
    #[test]
    fn records_print_as_perf_prints_them() {
        let text = |type_, ev: Event| {
            let mut v = Vec::new();
            write_record_text(type_, &ev, &mut v);
            String::from_utf8(v).unwrap()
        };
        let id = SampleId::default();
        assert_eq!(
            text(
                record::COMM,
                Event::Comm {
                    pid: 11853,
                    tid: 11853,
                    comm: b"ls",
                    exec: true,
                    id
                }
            ),
            "PERF_RECORD_COMM exec: ls:11853/11853\n"
        );
        assert_eq!(
            text(
                record::FORK,
                Event::Task {
                    exit: false,
                    pid: 11853,
                    ppid: 11850,
                    tid: 11853,
                    ptid: 11850,
                    time: 0,
                    synthesized: false,
                    id
                }
            ),
            "PERF_RECORD_FORK(11853:11853):(11850:11850)\n"
        );
        let mmap = |type_, pgoff, dso_id| {
            text(
                type_,
                Event::Mmap {
                    pid: 11850,
                    tid: 11850,
                    start: 0x7f1191fe9000,
                    len: 0x2000,
                    pgoff,
                    filename: b"[vdso]",
                    exec: true,
                    prot: 5,
                    flags: 2,
                    data: false,
                    mmap2: type_ == record::MMAP2,
                    cpumode: 2,
                    dso_id,
                    build_id: None,
                    id,
                },
            )
        };
        assert_eq!(
            mmap(record::MMAP2, 0, DsoId::default()),
            "PERF_RECORD_MMAP2 11850/11850: [0x7f1191fe9000(0x2000) @ 0 00:00 0 0]: r-xp [vdso]\n"
        );
        assert_eq!(
            mmap(
                record::MMAP2,
                0x4000,
                DsoId {
                    maj: 0xfe,
                    min: 0,
                    ino: 247076,
                    ino_generation: 0
                }
            ),
            "PERF_RECORD_MMAP2 11850/11850: [0x7f1191fe9000(0x2000) @ 0x4000 fe:00 247076 0]: r-xp [vdso]\n"
        );
        assert_eq!(
            mmap(record::MMAP, 0x4000, DsoId::default()),
            "PERF_RECORD_MMAP 11850/11850: [0x7f1191fe9000(0x2000) @ 0x4000]: x [vdso]\n"
        );
    }
}
