//! The feature sections of a perf.data file that hold lists (command line, CPU counts,
//! groups, sample times, CPU topology, build ids), read from a [`PerfData`].

use crate::endian::Endianness;

use super::abi::{feature, misc};
use super::error::PerfDataError;
use super::read::{read_string, until_nul, EventGroup, PerfData, Short};

impl PerfData {
    /// The CMDLINE feature: perf's argv.
    pub fn cmdline(&self) -> Result<Option<Vec<String>>, PerfDataError> {
        let Some(f) = self.feature(feature::CMDLINE) else {
            return Ok(None);
        };
        let what = "CMDLINE feature";
        let mut c = self.cur(f.offset, f.size);
        let n = c.u32().map_err(|s| self.short(what, s))?;
        let mut v = Vec::new();
        for _ in 0..n {
            let s = read_string(&mut c).map_err(|s| self.short(what, s))?;
            v.push(String::from_utf8_lossy(s).into_owned());
        }
        Ok(Some(v))
    }

    /// The NRCPUS feature: the CPUs available and online on the recorded machine.
    pub fn nr_cpus(&self) -> Result<Option<(u32, u32)>, PerfDataError> {
        let Some(f) = self.feature(feature::NRCPUS) else {
            return Ok(None);
        };
        let mut c = self.cur(f.offset, f.size);
        let sh = |s| self.short("NRCPUS feature", s);
        Ok(Some((c.u32().map_err(sh)?, c.u32().map_err(sh)?)))
    }

    /// The GROUP_DESC feature: each group of events as perf rebuilds it, its leader
    /// (an index into [`PerfData::attrs`]), its number of events, and its name (None
    /// for perf's `{anon_group}`). Empty without the feature; a description naming no
    /// event of the file is left out, and one that overlaps the group before it
    /// ends the list, as perf ignores what follows then.
    pub fn groups(&self) -> Result<Vec<EventGroup>, PerfDataError> {
        let Some(f) = self.feature(feature::GROUP_DESC) else {
            return Ok(Vec::new());
        };
        let what = "GROUP_DESC feature";
        let mut c = self.cur(f.offset, f.size);
        let n = c.u32().map_err(|s| self.short(what, s))?;
        let mut out: Vec<EventGroup> = Vec::new();
        for _ in 0..n {
            let name = read_string(&mut c).map_err(|s| self.short(what, s))?;
            let leader = c.u32().map_err(|s| self.short(what, s))? as usize;
            let members = c.u32().map_err(|s| self.short(what, s))? as usize;
            if leader >= self.attrs().len() || members == 0 {
                continue;
            }
            if out.last().is_some_and(|g| g.leader + g.members > leader) {
                break;
            }
            let name = String::from_utf8_lossy(name).into_owned();
            out.push(EventGroup {
                name: (name != "{anon_group}").then_some(name),
                leader,
                members: members.min(self.attrs().len() - leader),
            });
        }
        Ok(out)
    }

    /// The SAMPLE_TIME feature: the times of the first and last sample.
    pub fn sample_time(&self) -> Result<Option<(u64, u64)>, PerfDataError> {
        let Some(f) = self.feature(feature::SAMPLE_TIME) else {
            return Ok(None);
        };
        let mut c = self.cur(f.offset, f.size);
        let sh = |s| self.short("SAMPLE_TIME feature", s);
        Ok(Some((c.u64().map_err(sh)?, c.u64().map_err(sh)?)))
    }

    /// The socket of each CPU, by CPU number, from the CPU_TOPOLOGY feature (its core
    /// and socket ids follow the sibling lists, one pair per CPU NRCPUS counts as
    /// available). None when the file has no such ids: no CPU_TOPOLOGY or NRCPUS
    /// feature, or one written before perf stored the ids.
    pub fn cpu_sockets(&self) -> Result<Option<Vec<i32>>, PerfDataError> {
        let (Some(t), Some(n)) = (
            self.feature(feature::CPU_TOPOLOGY),
            self.feature(feature::NRCPUS),
        ) else {
            return Ok(None);
        };
        let nr_cpus = {
            let mut c = self.cur(n.offset, n.size);
            c.u32().map_err(|s| self.short("NRCPUS feature", s))?
        };
        let what = "CPU_TOPOLOGY feature";
        let mut c = self.cur(t.offset, t.size);
        // The core sibling lists, then the thread sibling lists.
        for _ in 0..2 {
            let lists = c.u32().map_err(|s| self.short(what, s))?;
            for _ in 0..lists {
                read_string(&mut c).map_err(|s| self.short(what, s))?;
            }
        }
        if c.pos >= c.data.len() {
            return Ok(None);
        }
        // Each id pair is 8 bytes: a count past the section is refused before any
        // allocation.
        if (c.data.len() - c.pos) as u64 / 8 < u64::from(nr_cpus) {
            return Err(self.corrupt(
                what,
                c.offset(),
                format!(
                    "{nr_cpus} CPUs (NRCPUS) need {} bytes of core and socket ids, {} left",
                    u64::from(nr_cpus) * 8,
                    c.data.len() - c.pos
                ),
            ));
        }
        let mut sockets = Vec::with_capacity(nr_cpus as usize);
        for _ in 0..nr_cpus {
            c.u32().map_err(|s| self.short(what, s))?; // core id
            sockets.push(c.u32().map_err(|s| self.short(what, s))? as i32);
        }
        Ok(Some(sockets))
    }

    /// The BUILD_ID feature: `(file name, build id)` of the files samples hit.
    pub fn build_ids(&self) -> Result<Vec<(String, Vec<u8>)>, PerfDataError> {
        let entries = self.build_id_entries()?;
        Ok(entries.into_iter().map(|e| (e.filename, e.id)).collect())
    }

    /// The BUILD_ID feature's entries in the order listed: each with its `misc` (the
    /// kernel's or user space's) and machine (`pid`, -1 for the host).
    pub fn build_id_entries(&self) -> Result<Vec<super::write::BuildIdEntry>, PerfDataError> {
        let Some(f) = self.feature(feature::BUILD_ID) else {
            return Ok(Vec::new());
        };
        let what = "BUILD_ID feature";
        let mut c = self.cur(f.offset, f.size);
        let mut v = Vec::new();
        while c.pos < c.data.len() {
            let at = c.offset();
            let start = c.pos;
            let sh = |s: Short| self.short(what, s);
            c.u32().map_err(sh)?;
            let hdr = c.u32().map_err(sh)?;
            let (misc_, size) = if self.endian() == Endianness::Big {
                ((hdr >> 16) as u16, hdr as u16)
            } else {
                (hdr as u16, (hdr >> 16) as u16)
            };
            if (size as usize) < 8 + 4 + 24 {
                return Err(self.corrupt(what, at, format!("entry size {size}")));
            }
            let pid = c.u32().map_err(sh)? as i32;
            let id = c.take(24).map_err(sh)?;
            let n = if misc_ & (1 << 15) != 0 {
                usize::from(id[20]).min(20)
            } else {
                20
            };
            let name = c.take(size as u64 - 36).map_err(sh)?;
            v.push(super::write::BuildIdEntry {
                misc: misc_ & misc::CPUMODE_MASK,
                pid,
                id: id[..n].to_vec(),
                filename: String::from_utf8_lossy(until_nul(name)).into_owned(),
            });
            debug_assert!(c.pos > start);
        }
        Ok(v)
    }
}
