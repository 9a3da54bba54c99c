//! Decoding `PERF_RECORD_SAMPLE`: the fields an attr's `sample_type` selects, read in the
//! kernel's order (`perf_output_sample`), with a fast path for the common shapes.

use crate::endian::Endianness;

use super::abi::{self, misc, sample};
use super::error::PerfDataError;
use super::read::{PerfData, RawRecord, Short};

/// A decoded `PERF_RECORD_SAMPLE`: the fields its attr's `sample_type` selects (0 or
/// empty where absent).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sample<'a> {
    /// Index of the event in [`PerfData::attrs`].
    pub attr: usize,
    /// cpumode bits of the record (`misc & 7`).
    pub cpumode: u16,
    /// Instruction pointer.
    pub ip: u64,
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// Timestamp in nanoseconds.
    pub time: u64,
    /// `ADDR`.
    pub addr: u64,
    /// Sample id.
    pub id: u64,
    /// CPU.
    pub cpu: u32,
    /// Period (events since the last sample); the attr's period when not sampled.
    pub period: u64,
    /// Call chain: native-endian `u64`s as stored, markers included; see [`Sample::callchain`].
    pub callchain_raw: &'a [u8],
    /// The RAW payload (a tracepoint's ftrace record).
    pub raw: &'a [u8],
    /// `REGS_USER`: the user registers at the sample, as the attr's
    /// `sample_regs_user` selects them.
    pub user_regs: UserRegs<'a>,
    /// `STACK_USER`: the user stack from the stack pointer up, as much as the kernel
    /// could copy (its `dyn_size`; empty when none was taken).
    pub user_stack: &'a [u8],
    /// Where `STACK_USER`'s size word is, from the start of the record (0 without
    /// `STACK_USER`): what `perf -D` shows as the stack's offset.
    pub user_stack_offset: u32,
    /// The record's `misc` ([`abi::misc`]): the cpumode and the flags perf script's
    /// `-F misc` shows.
    pub misc: u16,
    /// `WEIGHT`, or the first word of `WEIGHT_STRUCT` (`var1_dw`).
    pub weight: u64,
    /// `WEIGHT_STRUCT`'s second word (`var2_w`): the instruction latency.
    pub ins_lat: u16,
    /// `DATA_SRC`: where the sampled memory access was served (`perf_mem_data_src`).
    pub data_src: u64,
    /// `REGS_INTR`: the registers when the event fired, as the attr's
    /// `sample_regs_intr` selects them.
    pub intr_regs: UserRegs<'a>,
    /// `PHYS_ADDR`: the physical address of `addr`.
    pub phys_addr: u64,
    /// `CGROUP`: the id of the task's cgroup (its directory's inode number on cgroup
    /// v2), which a CGROUP record names; 0 when not sampled.
    pub cgroup: u64,
    /// `DATA_PAGE_SIZE`: the size of the page `addr` is in (0: unknown).
    pub data_page_size: u64,
    /// `CODE_PAGE_SIZE`: the size of the page `ip` is in (0: unknown).
    pub code_page_size: u64,
    /// The file's byte order (for [`Sample::callchain`]).
    pub endian: Endianness,
    /// `READ`: the counter values as the attr's `read_format` lays them out (see
    /// [`PerfData::read_values`]).
    pub read: &'a [u8],
}

/// Registers of a sample: the user registers (`PERF_SAMPLE_REGS_USER`) or those at
/// the interrupt (`PERF_SAMPLE_REGS_INTR`).
#[derive(Debug, Clone, Copy, Default)]
pub struct UserRegs<'a> {
    /// `PERF_SAMPLE_REGS_ABI_*`: 0 when the sample has none (a kernel thread's), 2 for
    /// 64-bit.
    pub abi: u64,
    /// The attr's `sample_regs_user`: which `PERF_REG_*` registers `raw` holds, in
    /// bit order.
    pub mask: u64,
    /// The values, native-endian `u64`s as stored.
    pub raw: &'a [u8],
}

impl UserRegs<'_> {
    /// The value of register `PERF_REG_*` number `reg`, if the sample holds it.
    pub fn get(&self, reg: u32, endian: Endianness) -> Option<u64> {
        if self.abi == 0 || reg >= 64 || self.mask & (1 << reg) == 0 {
            return None;
        }
        let at = (self.mask & ((1u64 << reg) - 1)).count_ones() as usize * 8;
        self.raw.get(at..at + 8).map(|b| endian.u64(b))
    }
}

impl<'a> Sample<'a> {
    /// The call chain entries, `PERF_CONTEXT_*` markers included.
    pub fn callchain(&self) -> impl Iterator<Item = u64> + 'a {
        let endian = self.endian;
        self.callchain_raw
            .chunks_exact(8)
            .map(move |c| endian.u64(c))
    }
}

impl PerfData {
    /// Find a sample's attr from its id.
    fn sample_attr(&self, r: &RawRecord) -> Result<usize, PerfDataError> {
        if self.attrs.len() == 1 {
            return Ok(0);
        }
        let st = self.attrs[0].sample_type;
        let pos = if st & sample::IDENTIFIER != 0 {
            Some(0)
        } else if st & sample::ID != 0 {
            Some(
                [sample::IP, sample::TID, sample::TIME, sample::ADDR]
                    .iter()
                    .filter(|&&b| st & b != 0)
                    .count()
                    * 8,
            )
        } else {
            None
        };
        let Some(pos) = pos else {
            return Ok(0);
        };
        let mut c = self.body_cur(r);
        c.pos = pos.min(r.body.len());
        let id = c.u64().map_err(|s| self.short("sample id", s))?;
        self.find_id(id).ok_or_else(|| {
            self.corrupt(
                "SAMPLE record",
                r.offset,
                format!("sample id {id} belongs to no event of the file"),
            )
        })
    }

    /// Decode a `PERF_RECORD_SAMPLE` with its attr's `sample_type`.
    ///
    /// Inlined into the loop that calls it, so that the common shapes build their
    /// [`Sample`] where the caller keeps it: returned through calls, the struct was
    /// copied three times per sample, which cost as much as decoding it.
    #[inline(always)]
    pub fn sample<'a>(&'a self, r: &RawRecord<'a>) -> Result<Sample<'a>, PerfDataError> {
        self.with_sample(r, |s| *s)
    }

    /// `f` of the decoded sample, lent where it was decoded: a loop over millions of
    /// samples that only reads them saves [`PerfData::sample`]'s move of the struct into
    /// its `Result`.
    #[inline(always)]
    pub fn with_sample<'a, T>(
        &'a self,
        r: &RawRecord<'a>,
        f: impl FnOnce(&Sample<'a>) -> T,
    ) -> Result<T, PerfDataError> {
        let s = if self.endian.is_big() {
            self.simple_sample::<true>(r)
        } else {
            self.simple_sample::<false>(r)
        };
        match &s {
            Some(s) => Ok(f(s)),
            None => Ok(f(&self.any_sample(r)?)),
        }
    }

    /// [`PerfData::sample`] of the common shapes, tracepoint samples among them: the
    /// fixed words and at most RAW after them, in a file of one event or whose samples
    /// start with their IDENTIFIER. None for any other shape, and for a record that does
    /// not hold what its attr says, which [`PerfData::any_sample`] then reports. `BIG`
    /// is the file's byte order, decided once per sample instead of once per word.
    #[inline(always)]
    fn simple_sample<'a, const BIG: bool>(&'a self, r: &RawRecord<'a>) -> Option<Sample<'a>> {
        let body = r.body;
        let u64_of = |w: [u8; 8]| {
            if BIG {
                u64::from_be_bytes(w)
            } else {
                u64::from_le_bytes(w)
            }
        };
        let u32_of = |w: [u8; 4]| {
            if BIG {
                u32::from_be_bytes(w)
            } else {
                u32::from_le_bytes(w)
            }
        };
        let attr = if self.attrs.len() == 1 {
            0
        } else if self.attrs.first()?.sample_type & sample::IDENTIFIER != 0 {
            self.find_id(u64_of(body.first_chunk::<8>().copied()?))?
        } else {
            return None;
        };
        let l = self.layouts.get(attr)?;
        if !l.simple {
            return None;
        }
        let words = body.get(..l.fixed)?;
        let chunk = |at: u8| words.get(at as usize..).and_then(|w| w.first_chunk::<8>());
        let word = |at: u8| chunk(at).map(|w| u64_of(*w));
        let (pid, tid) = match chunk(l.tid) {
            Some(w) => {
                let (p, t) = w.split_at(4);
                (
                    u32_of(p.try_into().unwrap_or_default()) as i32,
                    u32_of(t.try_into().unwrap_or_default()) as i32,
                )
            }
            None => (0, 0),
        };
        let raw = if l.raw {
            let rest = body.get(l.fixed..)?;
            let (n, rest) = rest.split_first_chunk::<4>()?;
            rest.get(..u32_of(*n) as usize)?
        } else {
            &[]
        };
        Some(Sample {
            attr,
            cpumode: r.misc & misc::CPUMODE_MASK,
            ip: word(l.ip).unwrap_or(0),
            pid,
            tid,
            time: word(l.time).unwrap_or(0),
            addr: word(l.addr).unwrap_or(0),
            id: word(l.id).unwrap_or(0),
            cpu: chunk(l.cpu).map_or(0, |w| {
                u32_of(w.first_chunk::<4>().copied().unwrap_or_default())
            }),
            period: match word(l.period) {
                Some(p) => p,
                None => self.attrs[attr].sample_period,
            },
            callchain_raw: &[],
            raw,
            user_regs: UserRegs::default(),
            user_stack: &[],
            user_stack_offset: 0,
            misc: r.misc,
            weight: 0,
            ins_lat: 0,
            data_src: 0,
            intr_regs: UserRegs::default(),
            phys_addr: 0,
            cgroup: 0,
            data_page_size: 0,
            code_page_size: 0,
            endian: self.endian,
            read: &[],
        })
    }

    /// [`PerfData::sample`] of any shape, field by field.
    #[inline(never)]
    fn any_sample<'a>(&'a self, r: &RawRecord<'a>) -> Result<Sample<'a>, PerfDataError> {
        let attr = self.sample_attr(r)?;
        let a = &self.attrs[attr];
        let st = a.sample_type;
        let mut c = self.body_cur(r);
        let sh = |s: Short| self.short("SAMPLE record", s);
        let mut s = Sample {
            attr,
            cpumode: r.misc & misc::CPUMODE_MASK,
            misc: r.misc,
            endian: self.endian,
            ..Sample::default()
        };
        // The words before READ are one u64 each: when the record holds them all they
        // are read at the offsets the attr's layout gives, without a check per field (a
        // million tracepoint samples spend a good part of their decoding there);
        // otherwise field by field, to name the one cut.
        let l = &self.layouts[attr];
        if let Some(words) = r.body.get(..l.fixed) {
            let e = self.endian;
            let word = |at: u8| words.get(at as usize..at as usize + 8).map(|w| e.u64(w));
            if let Some(v) = word(l.id) {
                s.id = v;
            }
            if let Some(v) = word(l.ip) {
                s.ip = v;
            }
            if let Some(w) = words.get(l.tid as usize..l.tid as usize + 8) {
                s.pid = e.u32(&w[..4]) as i32;
                s.tid = e.u32(&w[4..]) as i32;
            }
            if let Some(v) = word(l.time) {
                s.time = v;
            }
            if let Some(v) = word(l.addr) {
                s.addr = v;
            }
            if let Some(w) = words.get(l.cpu as usize..l.cpu as usize + 8) {
                s.cpu = e.u32(&w[..4]);
            }
            s.period = word(l.period).unwrap_or(a.sample_period);
            c.pos = l.fixed;
        } else {
            if st & sample::IDENTIFIER != 0 {
                s.id = c.u64().map_err(sh)?;
            }
            if st & sample::IP != 0 {
                s.ip = c.u64().map_err(sh)?;
            }
            if st & sample::TID != 0 {
                s.pid = c.u32().map_err(sh)? as i32;
                s.tid = c.u32().map_err(sh)? as i32;
            }
            if st & sample::TIME != 0 {
                s.time = c.u64().map_err(sh)?;
            }
            if st & sample::ADDR != 0 {
                s.addr = c.u64().map_err(sh)?;
            }
            if st & sample::ID != 0 {
                s.id = c.u64().map_err(sh)?;
            }
            if st & sample::STREAM_ID != 0 {
                c.u64().map_err(sh)?;
            }
            if st & sample::CPU != 0 {
                s.cpu = c.u32().map_err(sh)?;
                c.u32().map_err(sh)?;
            }
            if st & sample::PERIOD != 0 {
                s.period = c.u64().map_err(sh)?;
            } else {
                // A fixed period (`-c`) is not stored per sample; perf shows the attr's.
                s.period = a.sample_period;
            }
        }
        if st & sample::READ != 0 {
            use abi::read_format as rf;
            let f = a.read_format;
            let start = c.pos;
            let per_value = 1 + u64::from(f & rf::ID != 0) + u64::from(f & rf::LOST != 0);
            let times = u64::from(f & rf::TOTAL_TIME_ENABLED != 0)
                + u64::from(f & rf::TOTAL_TIME_RUNNING != 0);
            if f & rf::GROUP != 0 {
                let at = c.offset();
                let nr = c.u64().map_err(sh)?;
                let words = nr
                    .checked_mul(per_value)
                    .and_then(|w| w.checked_add(times))
                    .and_then(|w| w.checked_mul(8))
                    .ok_or_else(|| {
                        self.corrupt("SAMPLE read values", at, format!("{nr} values"))
                    })?;
                c.take(words).map_err(sh)?;
            } else {
                c.take((per_value + times) * 8).map_err(sh)?;
            }
            s.read = &r.body[start..c.pos];
        }
        if st & sample::CALLCHAIN != 0 {
            let at = c.offset();
            let nr = c.u64().map_err(sh)?;
            let n = nr
                .checked_mul(8)
                .ok_or_else(|| self.corrupt("SAMPLE call chain", at, format!("{nr} entries")))?;
            s.callchain_raw = c.take(n).map_err(sh)?;
        }
        if st & sample::RAW != 0 {
            let n = c.u32().map_err(sh)?;
            s.raw = c.take(u64::from(n)).map_err(sh)?;
        }
        if st & sample::BRANCH_STACK != 0 {
            let at = c.offset();
            let nr = c.u64().map_err(sh)?;
            if a.branch_sample_type & abi::BRANCH_HW_INDEX != 0 {
                c.u64().map_err(sh)?;
            }
            // from, to, flags
            let n = nr
                .checked_mul(24)
                .ok_or_else(|| self.corrupt("SAMPLE branch stack", at, format!("{nr} entries")))?;
            c.take(n).map_err(sh)?;
        }
        if st & sample::REGS_USER != 0 {
            s.user_regs.abi = c.u64().map_err(sh)?;
            s.user_regs.mask = a.sample_regs_user;
            if s.user_regs.abi != 0 {
                let n = u64::from(a.sample_regs_user.count_ones()) * 8;
                s.user_regs.raw = c
                    .take(n)
                    .map_err(|e| self.short("SAMPLE user registers", e))?;
            }
        }
        if st & sample::STACK_USER != 0 {
            s.user_stack_offset = (c.offset() - r.offset) as u32;
            let size = c.u64().map_err(sh)?;
            if size != 0 {
                let data = c
                    .take(size)
                    .map_err(|e| self.short("SAMPLE user stack", e))?;
                let at = c.offset();
                let dyn_size = c.u64().map_err(|e| self.short("SAMPLE user stack", e))?;
                if dyn_size > size {
                    return Err(self.corrupt(
                        "SAMPLE user stack",
                        at,
                        format!(
                            "dyn_size {dyn_size} is more than the {size} bytes of the stack copy"
                        ),
                    ));
                }
                s.user_stack = &data[..dyn_size as usize];
            }
        }
        // The kernel's order after the user stack (`perf_output_sample`).
        if st & (sample::WEIGHT | sample::WEIGHT_STRUCT) != 0 {
            let w = c.u64().map_err(sh)?;
            if st & sample::WEIGHT != 0 {
                s.weight = w;
            } else {
                // `union perf_sample_weight`: var1_dw, var2_w, var3_w from the low end
                // of the word as read in the file's order.
                s.weight = w & 0xffff_ffff;
                s.ins_lat = (w >> 32) as u16;
            }
        }
        if st & sample::DATA_SRC != 0 {
            s.data_src = c.u64().map_err(sh)?;
        }
        if st & sample::TRANSACTION != 0 {
            c.u64().map_err(sh)?;
        }
        if st & sample::REGS_INTR != 0 {
            s.intr_regs.abi = c.u64().map_err(sh)?;
            s.intr_regs.mask = a.sample_regs_intr;
            if s.intr_regs.abi != 0 {
                let n = u64::from(a.sample_regs_intr.count_ones()) * 8;
                s.intr_regs.raw = c
                    .take(n)
                    .map_err(|e| self.short("SAMPLE interrupt registers", e))?;
            }
        }
        if st & sample::PHYS_ADDR != 0 {
            s.phys_addr = c.u64().map_err(sh)?;
        }
        if st & sample::CGROUP != 0 {
            s.cgroup = c.u64().map_err(sh)?;
        }
        if st & sample::DATA_PAGE_SIZE != 0 {
            s.data_page_size = c.u64().map_err(sh)?;
        }
        if st & sample::CODE_PAGE_SIZE != 0 {
            s.code_page_size = c.u64().map_err(sh)?;
        }
        Ok(s)
    }
}

/// Where the words before READ lie in an attr's samples: offsets into the body, or
/// [`SampleLayout::ABSENT`] (past any body's fixed part) for a word the attr does not
/// sample. Made once per attr from its `sample_type`.
#[derive(Debug, Clone, Copy)]
pub(super) struct SampleLayout {
    /// Bytes of the fixed words.
    fixed: usize,
    /// IDENTIFIER or ID (ID wins when both are sampled, as it comes later).
    id: u8,
    ip: u8,
    /// The pid and tid u32s.
    tid: u8,
    pub(super) time: u8,
    addr: u8,
    /// The cpu and reserved u32s.
    cpu: u8,
    period: u8,
    /// Whether nothing but RAW follows the fixed words.
    simple: bool,
    /// Whether RAW is sampled.
    raw: bool,
}

/// The `sample_type` bits of the words that come before READ in a sample, each a u64
/// (TID and CPU are two u32s).
const FIXED_WORDS: u64 = sample::IDENTIFIER
    | sample::IP
    | sample::TID
    | sample::TIME
    | sample::ADDR
    | sample::ID
    | sample::STREAM_ID
    | sample::CPU
    | sample::PERIOD;

impl SampleLayout {
    /// An offset no fixed part reaches (they are at most 9 words).
    const ABSENT: u8 = u8::MAX;

    pub(super) fn of(st: u64) -> SampleLayout {
        let mut l = SampleLayout {
            fixed: 0,
            id: Self::ABSENT,
            ip: Self::ABSENT,
            tid: Self::ABSENT,
            time: Self::ABSENT,
            addr: Self::ABSENT,
            cpu: Self::ABSENT,
            period: Self::ABSENT,
            simple: st & !(FIXED_WORDS | sample::RAW) == 0,
            raw: st & sample::RAW != 0,
        };
        let mut at = 0u8;
        let mut next = |bit: u64| {
            if st & bit == 0 {
                return None;
            }
            at += 8;
            Some(at - 8)
        };
        let identifier = next(sample::IDENTIFIER);
        l.ip = next(sample::IP).unwrap_or(l.ip);
        l.tid = next(sample::TID).unwrap_or(l.tid);
        l.time = next(sample::TIME).unwrap_or(l.time);
        l.addr = next(sample::ADDR).unwrap_or(l.addr);
        l.id = next(sample::ID).or(identifier).unwrap_or(l.id);
        next(sample::STREAM_ID);
        l.cpu = next(sample::CPU).unwrap_or(l.cpu);
        l.period = next(sample::PERIOD).unwrap_or(l.period);
        l.fixed = at as usize;
        l
    }
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::perf::data::abi::record;

    /// A file of two tracepoint events (ids 7 and 8) and the given sample bodies.
    fn file_of(bodies: &[Vec<u8>]) -> (tempfile::TempDir, PerfData) {
        use crate::perf::data::write::{AttrEntry, PerfDataWriter};
        let st = sample::IDENTIFIER
            | sample::IP
            | sample::TID
            | sample::TIME
            | sample::CPU
            | sample::PERIOD
            | sample::RAW;
        let attr = |config: u64| {
            let mut a = vec![0u8; 128];
            a[..4].copy_from_slice(&2u32.to_ne_bytes());
            a[4..8].copy_from_slice(&128u32.to_ne_bytes());
            a[8..16].copy_from_slice(&config.to_ne_bytes());
            a[16..24].copy_from_slice(&1u64.to_ne_bytes());
            a[24..32].copy_from_slice(&st.to_ne_bytes());
            a
        };
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("perf.data");
        let entry = |config, id| AttrEntry {
            attr: attr(config),
            ids: vec![id],
            name: format!("tp{config}"),
        };
        let mut w = PerfDataWriter::create(&p, vec![entry(300, 7), entry(301, 8)]).unwrap();
        for b in bodies {
            let mut h = [0u8; 8];
            h[..4].copy_from_slice(&record::SAMPLE.to_ne_bytes());
            h[6..].copy_from_slice(&(8 + b.len() as u16).to_ne_bytes());
            w.record(&[&h, b]).unwrap();
        }
        w.finish(&Default::default()).unwrap();
        let f = PerfData::open(&p).unwrap();
        (dir, f)
    }

    #[test]
    fn samples_decode_and_cut_ones_name_the_record() {
        let words = |id: u64, raw_len: u32| {
            let mut b = Vec::new();
            for w in [id, 0xffff_ffff_8100_0000, (12u64 << 32) | 11, 5_000_000_123] {
                b.extend_from_slice(&w.to_ne_bytes());
            }
            b.extend_from_slice(&3u64.to_ne_bytes()); // cpu 3, reserved 0
            b.extend_from_slice(&1u64.to_ne_bytes()); // period
            b.extend_from_slice(&raw_len.to_ne_bytes());
            b
        };
        let mut good = words(8, 4);
        good.extend_from_slice(&[1, 2, 3, 4]);
        let mut cut = words(7, 40);
        cut.extend_from_slice(&[1, 2, 3, 4]);
        let mut stranger = words(9, 4);
        stranger.extend_from_slice(&[1, 2, 3, 4]);
        let (_dir, f) = file_of(&[good, cut, stranger, vec![8, 0, 0]]);
        let recs: Vec<_> = f.records().map(|r| r.unwrap()).collect();
        let s = f.sample(&recs[0]).unwrap();
        assert_eq!(
            (s.attr, s.id, s.ip, s.pid, s.tid, s.time, s.cpu, s.period, s.raw),
            (
                1,
                8,
                0xffff_ffff_8100_0000,
                11,
                12,
                5_000_000_123,
                3,
                1,
                &[1u8, 2, 3, 4][..]
            )
        );
        let e = f.sample(&recs[1]).unwrap_err().to_string();
        assert!(
            e.contains("SAMPLE record") && e.contains("perf.data"),
            "{e}"
        );
        let e = f.sample(&recs[2]).unwrap_err().to_string();
        assert!(e.contains("sample id 9 belongs to no event"), "{e}");
        let e = f.sample(&recs[3]).unwrap_err().to_string();
        assert!(e.contains("sample id"), "{e}");
    }

    #[test]
    fn sample_layouts_follow_the_kernel_order() {
        // perf record's tracepoint samples: IDENTIFIER|IP|TID|TIME|CPU|PERIOD|RAW.
        let st = sample::IDENTIFIER
            | sample::IP
            | sample::TID
            | sample::TIME
            | sample::CPU
            | sample::PERIOD
            | sample::RAW;
        let l = SampleLayout::of(st);
        let got = (l.fixed, l.id, l.ip, l.tid, l.time, l.addr, l.cpu, l.period);
        let absent = SampleLayout::ABSENT;
        assert_eq!(got, (48, 0, 8, 16, 24, absent, 32, 40));
        // Every word: ID, which comes after ADDR, wins over IDENTIFIER.
        let l = SampleLayout::of(st | sample::ADDR | sample::ID | sample::STREAM_ID);
        let got = (l.fixed, l.id, l.ip, l.tid, l.time, l.addr, l.cpu, l.period);
        assert_eq!(got, (72, 40, 8, 16, 24, 32, 56, 64));
        // None of them.
        let l = SampleLayout::of(sample::RAW | sample::CALLCHAIN);
        assert_eq!(
            (l.fixed, l.id, l.time, l.period),
            (0, absent, absent, absent)
        );
    }
}
