//! trace.dat options: ids, raw payloads and the decoded values readers need.

use crate::endian::Endianness;

/// Option (and v7 section) ids, as trace-cmd numbers them.
pub mod opt {
    /// End of options (v7: payload is the next options section's offset).
    pub const DONE: u16 = 0;
    /// Offset of timestamps from wall-clock time, ASCII hex microseconds (`record --date`).
    pub const DATE: u16 = 1;
    /// `per_cpu/cpuN/stats` text, one option per CPU.
    pub const CPUSTAT: u16 = 2;
    /// A trace buffer (instance).
    pub const BUFFER: u16 = 3;
    /// `trace_clock` contents.
    pub const TRACECLOCK: u16 = 4;
    /// `uname -a`-like string.
    pub const UNAME: u16 = 5;
    /// An event hook (`record -H`).
    pub const HOOK: u16 = 6;
    /// ASCII number added to every timestamp.
    pub const OFFSET: u16 = 7;
    /// u32 CPU count.
    pub const CPUCOUNT: u16 = 8;
    /// Version of the recording program.
    pub const VERSION: u16 = 9;
    /// Memory maps of traced processes.
    pub const PROCMAPS: u16 = 10;
    /// u64 trace id.
    pub const TRACEID: u16 = 11;
    /// Host/guest time synchronisation.
    pub const TIME_SHIFT: u16 = 12;
    /// A guest traced together with this host.
    pub const GUEST: u16 = 13;
    /// u32 mult, u32 shift, u64 offset: TSC to nanoseconds.
    pub const TSC2NSEC: u16 = 14;
    /// Strings section (v7).
    pub const STRINGS: u16 = 15;
    /// header_page + header_event section (v7).
    pub const HEADER_INFO: u16 = 16;
    /// ftrace formats section (v7).
    pub const FTRACE_EVENTS: u16 = 17;
    /// Event formats section (v7).
    pub const EVENT_FORMATS: u16 = 18;
    /// kallsyms section (v7).
    pub const KALLSYMS: u16 = 19;
    /// printk formats section (v7).
    pub const PRINTK: u16 = 20;
    /// saved_cmdlines section (v7).
    pub const CMDLINES: u16 = 21;
    /// A latency (text) buffer (v7).
    pub const BUFFER_TEXT: u16 = 22;
    /// BTF of the traced kernel.
    pub const BTF_FILE: u16 = 23;
    /// `last_boot_info` of a persistent ring buffer.
    pub const LAST_BOOT_INFO: u16 = 24;
    /// `/proc/modules` of the traced kernel.
    pub const MODULES_FILE: u16 = 25;

    /// The name `trace-cmd dump` uses for an option id.
    pub fn name(id: u16) -> &'static str {
        match id {
            DONE => "DONE",
            DATE => "DATE",
            CPUSTAT => "CPUSTAT",
            BUFFER => "BUFFER",
            TRACECLOCK => "TRACECLOCK",
            UNAME => "UNAME",
            HOOK => "HOOK",
            OFFSET => "OFFSET",
            CPUCOUNT => "CPUCOUNT",
            VERSION => "VERSION",
            PROCMAPS => "PROCMAPS",
            TRACEID => "TRACEID",
            TIME_SHIFT => "TIME_SHIFT",
            GUEST => "GUEST",
            TSC2NSEC => "TSC2NSEC",
            STRINGS => "STRINGS",
            HEADER_INFO => "HEADERS",
            FTRACE_EVENTS => "FTRACE_EVENTS",
            EVENT_FORMATS => "EVENT_FORMATS",
            KALLSYMS => "KALLSYMS",
            PRINTK => "PRINTK",
            CMDLINES => "CMDLINES",
            BUFFER_TEXT => "BUFFER_TEXT",
            BTF_FILE => "BTF_FILE",
            LAST_BOOT_INFO => "LAST_BOOT_INFO",
            MODULES_FILE => "MODULES_FILE",
            _ => "UNKNOWN",
        }
    }
}

/// One option as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatOption {
    /// Option id (see [`opt`]).
    pub id: u16,
    /// Raw payload, in file byte order.
    pub data: Vec<u8>,
    /// File offset of the option's id.
    pub offset: u64,
}

/// All options of a file, raw, with the common ones decoded.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Every option in file order (DONE excluded).
    pub all: Vec<DatOption>,
    /// DATE in nanoseconds.
    pub date_offset_ns: Option<i64>,
    /// OFFSET in trace-clock units.
    pub ts_offset: Option<i64>,
    /// TRACECLOCK text (`[local] global ...`).
    pub trace_clock: Option<String>,
    /// UNAME text.
    pub uname: Option<String>,
    /// VERSION text.
    pub version: Option<String>,
    /// CPUSTAT texts in file order.
    pub cpustats: Vec<String>,
    /// CPUCOUNT.
    pub cpu_count: Option<u32>,
    /// TRACEID.
    pub trace_id: Option<u64>,
    /// TSC2NSEC `(mult, shift, offset)`.
    pub tsc2nsec: Option<(u32, u32, u64)>,
    /// TIME_SHIFT: a guest's clock offsets against its host.
    pub time_shift: Option<std::sync::Arc<TimeShift>>,
    /// PROCMAPS text.
    pub procmaps: Option<String>,
    /// HOOK texts.
    pub hooks: Vec<String>,
    /// LAST_BOOT_INFO texts.
    pub last_boot_info: Vec<String>,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b)
        .trim_end_matches('\0')
        .to_string()
}

/// `strtoll(s, NULL, 0)`: decimal, `0x` hex or leading-0 octal, optional sign.
pub(crate) fn parse_c_int(s: &str) -> Option<i64> {
    let s = s.trim().trim_end_matches('\0').trim();
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).ok()? as i64
    } else if s.len() > 1 && s.starts_with('0') {
        i64::from_str_radix(&s[1..], 8).ok()?
    } else {
        s.parse::<i64>().ok()?
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

impl Options {
    /// Add one option; returns a warning for unknown or malformed ones (they are kept raw).
    pub(crate) fn add(&mut self, o: DatOption, endian: Endianness) -> Option<String> {
        let d = &o.data;
        let mut warn = None;
        match o.id {
            opt::DATE => match parse_c_int(&text(d)) {
                Some(us) => {
                    self.date_offset_ns = Some(
                        self.date_offset_ns
                            .unwrap_or(0)
                            .wrapping_add(us.wrapping_mul(1000)),
                    )
                }
                None => {
                    warn = Some(format!(
                        "DATE option {:?} at offset {} is not a number; ignored",
                        text(d),
                        o.offset
                    ))
                }
            },
            opt::OFFSET => match parse_c_int(&text(d)) {
                Some(v) => self.ts_offset = Some(self.ts_offset.unwrap_or(0).wrapping_add(v)),
                None => {
                    warn = Some(format!(
                        "OFFSET option {:?} at offset {} is not a number; ignored",
                        text(d),
                        o.offset
                    ))
                }
            },
            opt::CPUSTAT => self.cpustats.push(text(d)),
            opt::TRACECLOCK => self.trace_clock = Some(text(d)),
            opt::UNAME => self.uname = Some(text(d)),
            opt::VERSION => self.version = Some(text(d)),
            opt::HOOK => self.hooks.push(text(d)),
            opt::PROCMAPS => self.procmaps = Some(text(d)),
            opt::LAST_BOOT_INFO => self.last_boot_info.push(text(d)),
            opt::CPUCOUNT if d.len() >= 4 => self.cpu_count = Some(endian.u32(d)),
            opt::TRACEID if d.len() >= 8 => self.trace_id = Some(endian.u64(d)),
            opt::TSC2NSEC if d.len() >= 16 => {
                self.tsc2nsec = Some((endian.u32(d), endian.u32(&d[4..]), endian.u64(&d[8..])))
            }
            opt::TIME_SHIFT if d.len() >= 16 => match TimeShift::parse(d, endian) {
                Some(t) => self.time_shift = Some(std::sync::Arc::new(t)),
                None => {
                    warn = Some(format!(
                        "TIME_SHIFT option at offset {} is truncated ({} bytes); timestamps are not shifted",
                        o.offset,
                        d.len()
                    ))
                }
            },
            opt::CPUCOUNT | opt::TRACEID | opt::TSC2NSEC => {
                warn = Some(format!(
                    "{} option at offset {} has only {} bytes; ignored",
                    opt::name(o.id),
                    o.offset,
                    d.len()
                ))
            }
            id if id <= opt::MODULES_FILE => {}
            id => {
                warn = Some(format!(
                    "unknown option {id} ({} bytes) at offset {}; skipped",
                    d.len(),
                    o.offset
                ))
            }
        }
        self.all.push(o);
        warn
    }

    /// Options with this id.
    pub fn get(&self, id: u16) -> impl Iterator<Item = &DatOption> {
        self.all.iter().filter(move |o| o.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endian::Endianness;

    #[test]
    fn c_ints() {
        assert_eq!(parse_c_int("0x10"), Some(16));
        assert_eq!(parse_c_int("-0x10\0"), Some(-16));
        assert_eq!(parse_c_int("42"), Some(42));
        assert_eq!(parse_c_int("010"), Some(8));
        assert_eq!(parse_c_int("zz"), None);
    }

    #[test]
    fn unknown_option_warns_and_is_kept() {
        let mut o = Options::default();
        let w = o.add(
            DatOption {
                id: 99,
                data: vec![1, 2, 3],
                offset: 7,
            },
            Endianness::Little,
        );
        assert!(w.unwrap().contains("unknown option 99"));
        assert_eq!(o.all.len(), 1);
    }

    #[test]
    fn date_is_microseconds() {
        let mut o = Options::default();
        o.add(
            DatOption {
                id: opt::DATE,
                data: b"0x3e8\0".to_vec(),
                offset: 0,
            },
            Endianness::Little,
        );
        assert_eq!(o.date_offset_ns, Some(1_000_000));
    }
}

/// One clock offset sample of a guest CPU: at host-side `time`, guest time plus `offset`
/// (after scaling by `scaling >> fraction`) is host time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShiftSample {
    /// When the offset was measured.
    pub time: i64,
    /// Nanoseconds to add.
    pub offset: i64,
    /// Multiplier of the guest timestamp.
    pub scaling: i64,
    /// Right shift after scaling.
    pub fraction: i64,
}

/// The TIME_SHIFT option: per-CPU offset samples of a guest trace against its host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeShift {
    /// The host trace this guest trace belongs to.
    pub peer_trace_id: u64,
    /// Protocol flags; bit 0: interpolate between samples.
    pub flags: u32,
    /// Samples per CPU, sorted by time, one per distinct time.
    pub cpus: Vec<Vec<ShiftSample>>,
}

impl TimeShift {
    /// Layout: trace id (8), flags (4), CPU count (4), then per CPU a sample count (4)
    /// and that many times, offsets and scalings (8 each), then optionally per CPU that
    /// many fraction bits (8 each). None when the data is short.
    pub fn parse(d: &[u8], endian: Endianness) -> Option<TimeShift> {
        let pos = std::cell::Cell::new(0usize);
        let take = |n: usize| -> Option<u64> {
            let at = pos.get();
            let b = d.get(at..at.checked_add(n)?)?;
            pos.set(at + n);
            Some(if n == 4 {
                u64::from(endian.u32(b))
            } else {
                endian.u64(b)
            })
        };
        let peer_trace_id = take(8)?;
        let flags = take(4)? as u32;
        let ncpu = take(4)? as usize;
        let mut cpus = Vec::with_capacity(ncpu.min(4096));
        for _ in 0..ncpu {
            let n = take(4)? as usize;
            if n > d.len() / 24 + 1 {
                return None;
            }
            let mut s = vec![
                ShiftSample {
                    time: 0,
                    offset: 0,
                    scaling: 0,
                    fraction: 0
                };
                n
            ];
            for x in s.iter_mut() {
                x.time = take(8)? as i64;
            }
            for x in s.iter_mut() {
                x.offset = take(8)? as i64;
            }
            for x in s.iter_mut() {
                x.scaling = take(8)? as i64;
            }
            cpus.push(s);
        }
        if pos.get() < d.len() {
            for s in cpus.iter_mut() {
                for x in s.iter_mut() {
                    x.fraction = take(8)? as i64;
                }
            }
        }
        for s in cpus.iter_mut() {
            s.sort_by_key(|x| x.time);
            s.dedup_by_key(|x| x.time);
        }
        Some(TimeShift {
            peer_trace_id,
            flags,
            cpus,
        })
    }

    /// The host time of guest timestamp `ts` recorded on `cpu`, as trace-cmd computes it:
    /// one sample adds its offset; otherwise the two samples around `ts` (the first or
    /// last two outside the range) give the offset, interpolated when flag bit 0 is set,
    /// and the timestamp is scaled first.
    pub fn apply(&self, ts: u64, cpu: u32) -> u64 {
        let Some(s) = self.cpus.get(cpu as usize) else {
            return ts;
        };
        let n = s.len();
        match n {
            0 => return ts,
            1 => return ts.wrapping_add(s[0].offset as u64),
            _ => {}
        }
        let (lo, hi) = if ts <= s[0].time as u64 {
            (0, 1)
        } else if ts >= s[n - 1].time as u64 {
            (n - 2, n - 1)
        } else {
            // The last sample at or below ts; ts lies strictly inside the range here (the
            // clamp only matters for times that are negative as signed numbers).
            let i = s
                .partition_point(|x| x.time as u64 <= ts)
                .saturating_sub(1)
                .min(n - 2);
            (i, i + 1)
        };
        let (min, max) = (&s[lo], &s[hi]);
        let cor = if self.flags & 1 != 0 {
            let delta = max.time.wrapping_sub(min.time);
            let off = (ts as i64)
                .wrapping_sub(min.time)
                .wrapping_mul(max.offset.wrapping_sub(min.offset));
            if delta == 0 {
                min.offset
            } else {
                min.offset
                    .wrapping_add(off.wrapping_add(delta / 2).wrapping_div(delta))
            }
        } else {
            min.offset
        };
        let scaled = ts.wrapping_mul(min.scaling as u64) >> (min.fraction as u64).min(63);
        scaled.wrapping_add(cor as u64)
    }
}

#[cfg(test)]
mod time_shift_tests {
    use super::{ShiftSample, TimeShift};
    use crate::endian::Endianness;

    fn shift(flags: u32, samples: &[(i64, i64)]) -> TimeShift {
        TimeShift {
            peer_trace_id: 0,
            flags,
            cpus: vec![samples
                .iter()
                .map(|&(time, offset)| ShiftSample {
                    time,
                    offset,
                    scaling: 1,
                    fraction: 0,
                })
                .collect()],
        }
    }

    #[test]
    fn odd_samples_never_panic() {
        let t = shift(1, &[(-5, 10), (-1, 20), (3, 30)]);
        for ts in [0, 1, 2, 3, 4, u64::MAX, u64::MAX - 3] {
            let _ = t.apply(ts, 0);
        }
        assert_eq!(t.apply(7, 9), 7, "a CPU without samples is left alone");
        assert_eq!(shift(0, &[]).apply(7, 0), 7);
        assert!(TimeShift::parse(&[0; 15], Endianness::Little).is_none());
        let mut huge = vec![0u8; 16];
        huge[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(
            TimeShift::parse(&huge, Endianness::Little).is_none(),
            "CPU count past the data"
        );
    }
}
