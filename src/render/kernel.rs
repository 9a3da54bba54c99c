//! Kernel style: the exact lines of the kernel's `trace` / `trace_pipe` files.
//!
//! A body line is the context columns (`comm-pid`, optional `(tgid)`, `[cpu]`, the five
//! latency characters, the timestamp), then what the event prints. The column widths, the
//! flag letters and the timestamp forms below are those of the 6.18 `trace` file.

use super::comm::Comms;
use crate::bytes::dec_len;
use crate::endian::Endianness;
use crate::event::EventFormatter;
use crate::event::{Record, Registry, Schema};
use crate::tracefs::{Instance, Tracefs};

/// IRQS_OFF: interrupts disabled.
const F_IRQS_OFF: u8 = 0x01;
/// NEED_RESCHED_LAZY (6.13+; the same bit was IRQS_NOSUPPORT before).
const F_NEED_RESCHED_LAZY: u8 = 0x02;
const F_NEED_RESCHED: u8 = 0x04;
const F_HARDIRQ: u8 = 0x08;
const F_SOFTIRQ: u8 = 0x10;
const F_PREEMPT_RESCHED: u8 = 0x20;
const F_NMI: u8 = 0x40;
const F_BH_OFF: u8 = 0x80;

/// Where the common fields sit in every event payload.
///
/// Every format file lists them first; the values below are those of all kernels since
/// `common_lock_depth` went away, and [`CommonFields::of`] reads them from an event's schema
/// when one is at hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommonFields {
    /// `common_flags` (u8).
    pub flags: usize,
    /// `common_preempt_count` (u8: preempt depth, migrate-disable depth in the high nibble).
    pub preempt_count: usize,
    /// `common_pid` (s32).
    pub pid: usize,
}

impl Default for CommonFields {
    fn default() -> Self {
        CommonFields {
            flags: 2,
            preempt_count: 3,
            pid: 4,
        }
    }
}

impl CommonFields {
    /// The offsets `schema` declares for the common fields (the defaults for those it
    /// lacks).
    pub fn of(schema: &Schema) -> CommonFields {
        let mut c = CommonFields::default();
        for f in &schema.fields {
            match f.name.as_str() {
                "common_flags" => c.flags = f.offset,
                "common_preempt_count" => c.preempt_count = f.offset,
                "common_pid" => c.pid = f.offset,
                _ => {}
            }
        }
        c
    }

    /// Those of the first event of `registry` whose format parses and declares
    /// `common_pid` (every event of a kernel has the same); the defaults when none does.
    pub fn from_registry(registry: &Registry) -> CommonFields {
        registry
            .events()
            .filter_map(|(system, name, _)| registry.by_name(system, name))
            .find(|s| s.field("common_pid").is_some())
            .map_or_else(CommonFields::default, CommonFields::of)
    }
}

/// The five latency characters of the 6.13+ kernels: irqs-off/BH-disabled, need-resched,
/// hardirq/softirq, preempt depth, migrate-disable depth.
#[inline]
pub fn latency_chars(flags: u8, preempt_count: u8) -> [u8; 5] {
    // From tables made at compile time: the flags differ from one record to the next, and
    // the branches that decode them were mispredicted often enough to show.
    let [c0, c1, c2] = FLAG_CHARS[flags as usize];
    let [d0, d1] = DEPTH_CHARS[preempt_count as usize];
    [c0, c1, c2, d0, d1]
}

static FLAG_CHARS: [[u8; 3]; 256] = {
    let mut t = [[0; 3]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = flag_chars(i as u8);
        i += 1;
    }
    t
};

static DEPTH_CHARS: [[u8; 2]; 256] = {
    let mut t = [[0; 2]; 256];
    let mut i = 0;
    while i < 256 {
        t[i] = [depth_char(i as u8 & 0xf), depth_char(i as u8 >> 4)];
        i += 1;
    }
    t
};

/// A preempt or migrate-disable depth: `.` for none, else one hex digit.
const fn depth_char(n: u8) -> u8 {
    if n == 0 {
        b'.'
    } else {
        b"0123456789abcdef"[n as usize]
    }
}

/// The irqs-off/BH-disabled, need-resched and hardirq/softirq characters of `flags`.
const fn flag_chars(flags: u8) -> [u8; 3] {
    let irqs_off = flags & F_IRQS_OFF != 0;
    let bh_off = flags & F_BH_OFF != 0;
    let c0 = match (irqs_off, bh_off) {
        (true, true) => b'D',
        (true, false) => b'd',
        (false, true) => b'b',
        (false, false) => b'.',
    };
    let nr = flags & F_NEED_RESCHED != 0;
    let lazy = flags & F_NEED_RESCHED_LAZY != 0;
    let pr = flags & F_PREEMPT_RESCHED != 0;
    let c1 = match (nr, lazy, pr) {
        (true, true, true) => b'B',
        (true, false, true) => b'N',
        (false, true, true) => b'L',
        (true, true, false) => b'b',
        (true, false, false) => b'n',
        (false, false, true) => b'p',
        (false, true, false) => b'l',
        (false, false, false) => b'.',
    };
    let nmi = flags & F_NMI != 0;
    let hard = flags & F_HARDIRQ != 0;
    let soft = flags & F_SOFTIRQ != 0;
    let c2 = if nmi && hard {
        b'Z'
    } else if nmi {
        b'z'
    } else if hard && soft {
        b'H'
    } else if hard {
        b'h'
    } else if soft {
        b's'
    } else {
        b'.'
    };
    [c0, c1, c2]
}

/// How the kernel prints the context columns of one buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelStyle {
    /// The trace clock counts nanoseconds (`sec.usec` shown); false for `counter` and
    /// `x86-tsc`, whose raw counts are shown.
    pub time_in_ns: bool,
    /// `options/record-tgid`: a `(tgid)` column.
    pub record_tgid: bool,
    /// `options/irq-info`: the five latency characters.
    pub irq_info: bool,
    /// Byte order of the payloads.
    pub endian: Endianness,
    /// Offsets of the common fields.
    pub common: CommonFields,
}

impl Default for KernelStyle {
    fn default() -> Self {
        KernelStyle {
            time_in_ns: true,
            record_tgid: false,
            irq_info: true,
            endian: Endianness::NATIVE,
            common: CommonFields::default(),
        }
    }
}

/// Whether a `trace_clock` name counts nanoseconds (the kernel then prints `sec.usec`).
///
/// `counter`, `uptime` (jiffies) and the architecture clocks (`x86-tsc`, `ppc-tb`, ...)
/// are printed as raw counts.
pub fn clock_in_ns(clock: &str) -> bool {
    matches!(
        clock,
        "local" | "global" | "perf" | "mono" | "mono_raw" | "boot" | "tai"
    )
}

/// The selected clock in `trace_clock` text (`[local] global ...` -> `local`).
pub fn selected_clock(trace_clock: &str) -> Option<&str> {
    let start = trace_clock.find('[')? + 1;
    let end = start + trace_clock[start..].find(']')?;
    Some(&trace_clock[start..end])
}

impl KernelStyle {
    /// Read `trace_clock`, `options/record-tgid` and `options/irq-info` under `t` (a root,
    /// an instance directory or a fixture tree); missing files keep the kernel defaults.
    pub fn from_tracefs(t: &Tracefs, endian: Endianness) -> KernelStyle {
        KernelStyle::from_instance(&t.top(), endian)
    }

    /// [`KernelStyle::from_tracefs`] for one buffer: its `options/*` and `trace_clock`.
    pub fn from_instance(t: &Instance, endian: Endianness) -> KernelStyle {
        let opt = |name: &str, default: bool| {
            t.read_string(format!("options/{name}"))
                .map(|s| s.trim() == "1")
                .unwrap_or(default)
        };
        let time_in_ns = t
            .read_string("trace_clock")
            .ok()
            .and_then(|s| selected_clock(&s).map(clock_in_ns))
            .unwrap_or(true);
        KernelStyle {
            time_in_ns,
            record_tgid: opt("record-tgid", false),
            irq_info: opt("irq-info", true),
            endian,
            common: CommonFields::default(),
        }
    }

    /// The pid of a record (`common_pid`).
    #[inline]
    pub fn pid(&self, rec: &Record) -> i32 {
        let o = self.common.pid;
        let Some(b) = rec.data.get(o..o + 4) else {
            return 0;
        };
        let b: [u8; 4] = b.try_into().unwrap_or_default();
        self.endian.u32(&b) as i32
    }

    /// `common_flags` and `common_preempt_count`.
    #[inline]
    pub fn flags(&self, rec: &Record) -> (u8, u8) {
        (
            rec.data.get(self.common.flags).copied().unwrap_or(0),
            rec.data
                .get(self.common.preempt_count)
                .copied()
                .unwrap_or(0),
        )
    }

    /// Write the context columns up to and including the `: ` after the timestamp.
    #[inline]
    pub fn write_context(&self, out: &mut Vec<u8>, rec: &Record, comms: &Comms) {
        let pid = self.pid(rec);
        let key = (pid, rec.cpu, comms.generation(), self.record_tgid);
        let Ok(mut cache) = comms.context.try_borrow_mut() else {
            return self.write_context_slow(out, rec, comms.comm(pid).as_bytes(), pid, comms);
        };
        if cache.key != Some(key) {
            let comm = comms.comm(pid);
            if comm.len() > 64 {
                drop(cache);
                return self.write_context_slow(out, rec, comm.as_bytes(), pid, comms);
            }
            self.make_prefix(&mut cache.prefix, comm.as_bytes(), pid, rec.cpu, comms);
            cache.key = Some(key);
        }
        crate::bytes::put(out, &cache.prefix);
        // Written piece by piece into `out` (see `crate::bytes` on reading back digits).
        if self.irq_info {
            let (f, p) = self.flags(rec);
            crate::bytes::put_array(out, latency_chars(f, p));
        }
        if self.time_in_ns {
            cache.secs.write_usecs(out, rec.ts, *b": ");
        } else {
            let mut b = [b' '; 32];
            let i = put_right(&mut b, 1, rec.ts, 12);
            b[i..i + 2].copy_from_slice(b": ");
            crate::bytes::put(out, &b[..i + 2]);
        }
    }

    /// `%16s-%-7d [(tgid) ][%03d] ` for a comm of at most 64 bytes: what
    /// [`KernelStyle::write_context`] keeps for the next records of this pid and CPU. Out
    /// of line, so that the per-record path stays small.
    #[cold]
    fn make_prefix(&self, prefix: &mut Vec<u8>, comm: &[u8], pid: i32, cpu: u32, comms: &Comms) {
        let mut b = [b' '; 128];
        let mut i = 16usize.saturating_sub(comm.len());
        b[i..i + comm.len()].copy_from_slice(comm);
        i += comm.len();
        b[i] = b'-';
        i += 1;
        let start = i;
        i = put_i64(&mut b, i, i64::from(pid));
        i = i.max(start + 7) + 1;
        if self.record_tgid {
            let tgid = comms.tgid(pid);
            if tgid == 0 {
                b[i..i + 10].copy_from_slice(b"(-------) ");
                i += 10;
            } else {
                b[i] = b'(';
                i = put_right(&mut b, i + 1, u64::from(tgid.unsigned_abs()), 7);
                b[i..i + 2].copy_from_slice(b") ");
                i += 2;
            }
        }
        b[i] = b'[';
        i = put_zero(&mut b, i + 1, u64::from(cpu), 3);
        b[i..i + 2].copy_from_slice(b"] ");
        prefix.clear();
        prefix.extend_from_slice(&b[..i + 2]);
    }

    /// The same columns for a comm too long for the stack buffer (never seen in practice:
    /// comms are at most 15 bytes, but a tree's saved_cmdlines is input).
    fn write_context_slow(
        &self,
        out: &mut Vec<u8>,
        rec: &Record,
        comm: &[u8],
        pid: i32,
        comms: &Comms,
    ) {
        crate::bytes::put(out, comm);
        out.push(b'-');
        let before = out.len();
        crate::bytes::push_i64(out, i64::from(pid));
        let w = out.len() - before;
        out.resize(out.len() + 7usize.saturating_sub(w), b' ');
        out.push(b' ');
        if self.record_tgid {
            let tgid = comms.tgid(pid);
            if tgid == 0 {
                crate::bytes::put(out, b"(-------) ");
            } else {
                out.push(b'(');
                crate::bytes::push_dec_padded(out, u64::from(tgid.unsigned_abs()), 7, b' ');
                crate::bytes::put(out, b") ");
            }
        }
        out.push(b'[');
        crate::bytes::push_dec_padded(out, u64::from(rec.cpu), 3, b'0');
        crate::bytes::put(out, b"] ");
        if self.irq_info {
            let (f, p) = self.flags(rec);
            crate::bytes::put(out, &latency_chars(f, p));
        }
        out.push(b' ');
        if self.time_in_ns {
            let us = rec.ts.saturating_add(500) / 1000;
            crate::bytes::push_dec_padded(out, us / 1_000_000, 5, b' ');
            out.push(b'.');
            crate::bytes::push_dec_padded(out, us % 1_000_000, 6, b'0');
        } else {
            crate::bytes::push_dec_padded(out, rec.ts, 12, b' ');
        }
        crate::bytes::put(out, b": ");
    }

    /// Write one whole body line: context, the event's text and a newline.
    #[inline]
    pub fn write_line(
        &self,
        out: &mut Vec<u8>,
        rec: &Record,
        comms: &Comms,
        events: &dyn EventFormatter,
    ) {
        self.write_context(out, rec, comms);
        events.write_event(rec, out);
        out.push(b'\n');
    }

    /// `CPU:N [LOST M EVENTS]` (or `CPU:N [LOST EVENTS]` when the count is unknown).
    pub fn write_lost(&self, out: &mut Vec<u8>, cpu: u32, count: Option<u64>) {
        crate::bytes::put(out, b"CPU:");
        crate::bytes::push_i64(out, i64::from(cpu));
        match count {
            Some(n) => {
                crate::bytes::put(out, b" [LOST ");
                crate::bytes::push_dec(out, n);
                crate::bytes::put(out, b" EVENTS]\n");
            }
            None => crate::bytes::put(out, b" [LOST EVENTS]\n"),
        }
    }

    /// The kernel's header lines for the `trace` file: tracer, entry counts, CPU count and
    /// the column legend matching these options.
    pub fn write_header(
        &self,
        out: &mut Vec<u8>,
        tracer: &str,
        entries: u64,
        written: u64,
        cpus: usize,
    ) {
        crate::bytes::put(out, format!("# tracer: {tracer}\n#\n").as_bytes());
        crate::bytes::put(
            out,
            format!("# entries-in-buffer/entries-written: {entries}/{written}   #P:{cpus}\n#\n")
                .as_bytes(),
        );
        let pad = if self.record_tgid {
            "            "
        } else {
            "  "
        };
        if self.irq_info {
            for rest in [
                "  _-----=> irqs-off/BH-disabled",
                " / _----=> need-resched",
                "| / _---=> hardirq/softirq",
                "|| / _--=> preempt-depth",
                "||| / _-=> migrate-disable",
                "|||| /     delay",
            ] {
                // The legend's bars line up over the latency columns.
                crate::bytes::put(out, b"#                            ");
                crate::bytes::put(out, pad.as_bytes());
                crate::bytes::put(out, rest.as_bytes());
                out.push(b'\n');
            }
            if self.record_tgid {
                crate::bytes::put(
                    out,
                    b"#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n",
                );
                crate::bytes::put(
                    out,
                    b"#              | |           |       |   |||||     |         |\n",
                );
            } else {
                crate::bytes::put(
                    out,
                    b"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n",
                );
                crate::bytes::put(
                    out,
                    b"#              | |         |   |||||     |         |\n",
                );
            }
        } else if self.record_tgid {
            crate::bytes::put(
                out,
                b"#           TASK-PID       TGID    CPU#     TIMESTAMP  FUNCTION\n",
            );
            crate::bytes::put(
                out,
                b"#              | |           |       |         |         |\n",
            );
        } else {
            crate::bytes::put(
                out,
                b"#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n",
            );
            crate::bytes::put(out, b"#              | |         |         |         |\n");
        }
    }
}

/// The `n` decimal digits of `v` into `b[..end]`, ending at `end`.
#[inline]
fn dec_into(b: &mut [u8], end: usize, v: u64, n: usize) {
    debug_assert_eq!(n, dec_len(v));
    crate::bytes::write_dec(&mut b[end - n..end], v);
}

/// The ` %5lu.` of whole seconds that starts a time column, kept for the seconds it was
/// last made for (neighbouring records mostly share them).
///
/// Kept in a fixed array and written with one store whatever its length (at most 22
/// bytes: a blank, 20 digits and the dot), so that a line's time costs two stores.
#[derive(Debug, Clone, Default)]
pub(crate) struct SecondsColumn {
    secs: Option<u64>,
    text: [u8; SECONDS_ROOM],
    len: u8,
}

/// Room for ` %5lu.` of any u64.
const SECONDS_ROOM: usize = 24;

impl SecondsColumn {
    #[inline]
    pub(crate) fn text(&mut self, secs: u64) -> &[u8] {
        if self.secs != Some(secs) {
            self.make(secs);
        }
        &self.text[..usize::from(self.len)]
    }

    /// ` %5lu.%06lu` of `ts`, rounded to the nearest microsecond like the kernel's
    /// ns2usecs(), then the `N` bytes of `after` (`:`, `: `); the whole seconds
    /// as the last call's, mostly.
    #[inline]
    pub(crate) fn write_usecs<const N: usize>(
        &mut self,
        out: &mut Vec<u8>,
        ts: u64,
        after: [u8; N],
    ) {
        let us = ts.saturating_add(500) / 1000;
        let secs = us / 1_000_000;
        if self.secs != Some(secs) {
            self.make(secs);
        }
        // SAFETY: `make` keeps `len` within the array.
        unsafe { crate::bytes::put_prefix(out, self.text, usize::from(self.len)) };
        crate::bytes::push_dec6_then(out, (us % 1_000_000) as u32, after);
    }

    #[cold]
    fn make(&mut self, secs: u64) {
        let mut b = [b' '; SECONDS_ROOM];
        let n = put_right(&mut b, 1, secs, 5);
        b[n] = b'.';
        self.text = b;
        self.len = (n + 1) as u8;
        self.secs = Some(secs);
    }
}

/// `v` right-aligned in `width` (spaces already in `b`) at `at`; returns the end.
#[inline]
pub(crate) fn put_right(b: &mut [u8], at: usize, v: u64, width: usize) -> usize {
    let n = dec_len(v);
    let end = at + width.max(n);
    dec_into(b, end, v, n);
    end
}

/// `v` zero-padded to `width` at `at`; returns the end.
#[inline]
pub(crate) fn put_zero(b: &mut [u8], at: usize, v: u64, width: usize) -> usize {
    let n = dec_len(v);
    let end = at + width.max(n);
    for c in &mut b[at..end - n] {
        *c = b'0';
    }
    dec_into(b, end, v, n);
    end
}

/// Signed `v` at `at`, left-aligned; returns the end.
#[inline]
pub(crate) fn put_i64(b: &mut [u8], mut at: usize, v: i64) -> usize {
    if v < 0 {
        b[at] = b'-';
        at += 1;
    }
    let u = v.unsigned_abs();
    let n = dec_len(u);
    dec_into(b, at + n, u, n);
    at + n
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Name(&'static str);
    impl EventFormatter for Name {
        fn write_event(&self, _rec: &Record, out: &mut Vec<u8>) -> bool {
            crate::bytes::put(out, self.0.as_bytes());
            true
        }
    }

    fn payload(flags: u8, preempt: u8, pid: i32) -> Vec<u8> {
        let mut d = vec![0u8; 8];
        d[2] = flags;
        d[3] = preempt;
        d[4..8].copy_from_slice(&pid.to_le_bytes());
        d
    }

    #[test]
    fn line_prefix_matches_the_kernel_text() {
        // From tracefs-fixtures/linux-6.18-sched-irq/trace:
        let want = "             cc1-9643    [000] d.h2.   595.863753: sched_waking: x\n";
        let comms = Comms::from_saved_cmdlines("9643 cc1\n");
        let data = payload(F_IRQS_OFF | F_HARDIRQ, 2, 9643);
        let rec = Record {
            cpu: 0,
            ts: 595_863_753_400,
            data: &data,
        };
        let style = KernelStyle {
            endian: Endianness::Little,
            ..KernelStyle::default()
        };
        let mut out = Vec::new();
        style.write_line(&mut out, &rec, &comms, &Name("sched_waking: x"));
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    #[test]
    fn tgid_column_raw_clock_and_idle() {
        let mut comms = Comms::new();
        comms.load_saved_tgids("5 4\n");
        let data = payload(0, 0, 0);
        let rec = Record {
            cpu: 1,
            ts: 123456789,
            data: &data,
        };
        let style = KernelStyle {
            record_tgid: true,
            time_in_ns: false,
            endian: Endianness::Little,
            ..KernelStyle::default()
        };
        let mut out = Vec::new();
        style.write_context(&mut out, &rec, &comms);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "          <idle>-0       (-------) [001] .....    123456789: "
        );
        let data = payload(0, 0, 5);
        let rec = Record {
            cpu: 1,
            ts: 1_000_000_499,
            data: &data,
        };
        let style = KernelStyle {
            record_tgid: true,
            endian: Endianness::Little,
            irq_info: false,
            ..KernelStyle::default()
        };
        let mut out = Vec::new();
        style.write_context(&mut out, &rec, &comms);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "           <...>-5       (      4) [001]      1.000000: "
        );
    }

    #[test]
    fn contexts_follow_flags_time_and_learned_names() {
        // Neighbouring records share columns; what changes between them must show.
        let mut comms = Comms::from_saved_cmdlines("7 one\n");
        let style = KernelStyle {
            endian: Endianness::Little,
            ..KernelStyle::default()
        };
        let line = |comms: &Comms, flags: u8, pid: i32, cpu: u32, ts: u64| {
            let data = payload(flags, 0, pid);
            let mut out = Vec::new();
            style.write_context(
                &mut out,
                &Record {
                    cpu,
                    ts,
                    data: &data,
                },
                comms,
            );
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            line(&comms, 0, 7, 0, 1_999_999_499),
            "             one-7       [000] .....     1.999999: "
        );
        assert_eq!(
            line(&comms, F_IRQS_OFF, 7, 0, 1_999_999_500),
            "             one-7       [000] d....     2.000000: "
        );
        assert_eq!(
            line(&comms, 0, 7, 1, 2_000_001_000),
            "             one-7       [001] .....     2.000001: "
        );
        assert_eq!(
            line(&comms, 0, 8, 1, 2_000_002_000),
            "           <...>-8       [001] .....     2.000002: "
        );
        comms.learn(8, "two");
        assert_eq!(
            line(&comms, 0, 8, 1, 2_000_003_000),
            "             two-8       [001] .....     2.000003: "
        );
        comms.learn(8, "three");
        assert_eq!(
            line(&comms, 0, 8, 1, 2_000_004_000),
            "           three-8       [001] .....     2.000004: "
        );
    }

    #[test]
    fn long_numbers_and_long_comms_take_the_same_columns() {
        let long = "x".repeat(80);
        let comms = Comms::from_saved_cmdlines(&format!("4194304 {long}\n"));
        let data = payload(0, 0, 4_194_304);
        let rec = Record {
            cpu: 1234,
            ts: 123_456_789_012_345_678,
            data: &data,
        };
        let style = KernelStyle {
            endian: Endianness::Little,
            ..KernelStyle::default()
        };
        let mut out = Vec::new();
        style.write_context(&mut out, &rec, &comms);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("{long}-4194304 [1234] ..... 123456789.012346: ")
        );
        let comms = Comms::from_saved_cmdlines("4194304 short\n");
        let mut out = Vec::new();
        let style = KernelStyle {
            record_tgid: true,
            time_in_ns: false,
            endian: Endianness::Little,
            ..KernelStyle::default()
        };
        style.write_context(&mut out, &rec, &comms);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "           short-4194304 (-------) [1234] ..... 123456789012345678: "
        );
    }

    #[test]
    fn raw_clocks() {
        // `trace` of an instance with trace_clock=uptime on 6.18:
        // " qemu-system-x86-19293   [000] d..2.       192026: sched_switch: ..."
        assert!(!clock_in_ns(
            selected_clock("local global counter [uptime] perf").unwrap()
        ));
        assert!(!clock_in_ns("x86-tsc") && !clock_in_ns("counter"));
        assert!(
            clock_in_ns(selected_clock("[local] global counter").unwrap()) && clock_in_ns("boot")
        );
        let comms = Comms::from_saved_cmdlines("19293 qemu-system-x86\n");
        let data = payload(F_IRQS_OFF, 2, 19293);
        let rec = Record {
            cpu: 0,
            ts: 192026,
            data: &data,
        };
        let style = KernelStyle {
            time_in_ns: false,
            endian: Endianness::Little,
            ..KernelStyle::default()
        };
        let mut out = Vec::new();
        style.write_context(&mut out, &rec, &comms);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            " qemu-system-x86-19293   [000] d..2.       192026: "
        );
    }

    #[test]
    fn latency_letters_of_6_13_and_later() {
        assert_eq!(&latency_chars(0, 0), b".....");
        assert_eq!(&latency_chars(F_IRQS_OFF | F_BH_OFF, 0x21), b"D..12");
        assert_eq!(&latency_chars(F_BH_OFF | F_NEED_RESCHED_LAZY, 0), b"bl...");
        assert_eq!(
            &latency_chars(F_NEED_RESCHED | F_NEED_RESCHED_LAZY | F_PREEMPT_RESCHED, 0),
            b".B..."
        );
        assert_eq!(
            &latency_chars(F_NEED_RESCHED | F_PREEMPT_RESCHED, 0),
            b".N..."
        );
        assert_eq!(
            &latency_chars(F_NEED_RESCHED_LAZY | F_PREEMPT_RESCHED, 0),
            b".L..."
        );
        assert_eq!(
            &latency_chars(F_NEED_RESCHED | F_NEED_RESCHED_LAZY, 0),
            b".b..."
        );
        assert_eq!(&latency_chars(F_PREEMPT_RESCHED, 0), b".p...");
        assert_eq!(&latency_chars(F_NMI | F_HARDIRQ, 0xf), b"..Zf.");
        assert_eq!(&latency_chars(F_NMI, 0), b"..z..");
        assert_eq!(&latency_chars(F_HARDIRQ | F_SOFTIRQ, 0), b"..H..");
        assert_eq!(&latency_chars(F_SOFTIRQ, 0), b"..s..");
    }

    #[test]
    fn header_legends_match_the_kernel() {
        // Texts read from a 6.18 instance with these options.
        let mut out = Vec::new();
        KernelStyle::default().write_header(&mut out, "nop", 949, 949, 2);
        let want = "# tracer: nop\n#\n# entries-in-buffer/entries-written: 949/949   #P:2\n#\n\
#                                _-----=> irqs-off/BH-disabled\n\
#                               / _----=> need-resched\n\
#                              | / _---=> hardirq/softirq\n\
#                              || / _--=> preempt-depth\n\
#                              ||| / _-=> migrate-disable\n\
#                              |||| /     delay\n\
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n\
#              | |         |   |||||     |         |\n";
        assert_eq!(String::from_utf8(out).unwrap(), want);
        let mut out = Vec::new();
        KernelStyle {
            record_tgid: true,
            ..KernelStyle::default()
        }
        .write_header(&mut out, "nop", 0, 0, 2);
        let s = String::from_utf8(out).unwrap();
        assert!(
            s.contains(
                "\n#                                          _-----=> irqs-off/BH-disabled\n"
            ),
            "{s}"
        );
        assert!(
            s.contains("\n#                                        |||| /     delay\n"),
            "{s}"
        );
    }
}
