//! Which samples `perf report` (perf 6.1) takes, and which of its rows it hides: the
//! filters `-c/--comms`, `--pid`, `--tid`, `-d/--dsos`, `-S/--symbols`, `-C/--cpu`,
//! `--time` and `-U/--hide-unresolved`.
//!
//! perf drops a sample outside `--time`, off the `--cpu` list, or (with `-U`) without a
//! symbol before it counts it. The other filters keep the sample in the event's totals
//! and mark the row it makes, and the rows of its call chain, as filtered: those rows
//! are not printed, and with `--percentage relative` the shares are of what is left.

use crate::perf::cpu_list::cpu_bitmap;
use crate::perf::machine::Location;
use crate::perf::time_ranges::TimeRanges;

/// The filters of one report.
#[derive(Debug, Clone, Default)]
pub struct SampleFilter {
    /// `-c/--comms`: the thread's comm when the sample was taken.
    pub comms: Option<Vec<String>>,
    /// `--pid`: the process.
    pub pids: Option<Vec<i32>>,
    /// `--tid`: the thread.
    pub tids: Option<Vec<i32>>,
    /// `-d/--dsos`: the object of the sampled address, by its file name or full path.
    pub dsos: Option<Vec<String>>,
    /// `-S/--symbols`: the symbol of the sampled address, by its name.
    pub symbols: Option<Vec<String>>,
    /// The entries of `-S/--symbols` that are hexadecimal numbers: sampled addresses
    /// (as mapped), which perf takes out of the names.
    pub addresses: Option<Vec<u64>>,
    /// `-C/--cpu`: whether each CPU's samples are taken.
    pub cpus: Option<Vec<bool>>,
    /// `--time`: the spans whose samples are taken.
    pub time: Option<TimeRanges>,
    /// `-U/--hide-unresolved`: samples and call chain entries without a symbol are left
    /// out.
    pub hide_unresolved: bool,
}

/// perf's strlist: the entries of `a,b,c` as they are; perf refuses an entry given
/// twice.
fn list(option: &str, s: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for e in s.split(',') {
        if out.iter().any(|o| o == e) {
            return Err(format!("{option} '{s}': '{e}' is given twice"));
        }
        out.push(e.to_string());
    }
    Ok(out)
}

/// An entry of `-S` that perf reads as an address (`strtoul(s, &end, 16)` reading
/// something, then nothing but spaces).
fn hex_address(e: &str) -> Option<u64> {
    let t = e.trim_start();
    let t = t.strip_prefix('+').unwrap_or(t);
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .filter(|r| r.starts_with(|c: char| c.is_ascii_hexdigit()))
        .unwrap_or(t);
    let end = t.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(t.len());
    if end == 0 || !t[end..].trim_end().is_empty() {
        return None;
    }
    u64::from_str_radix(&t[..end], 16).ok()
}

impl SampleFilter {
    /// `-c/--comms` as given.
    pub fn set_comms(&mut self, s: &str) -> Result<(), String> {
        self.comms = Some(list("-c/--comms", s)?);
        Ok(())
    }

    /// `-d/--dsos` as given.
    pub fn set_dsos(&mut self, s: &str) -> Result<(), String> {
        self.dsos = Some(list("-d/--dsos", s)?);
        Ok(())
    }

    /// `-S/--symbols` as given: names, and hexadecimal numbers for addresses.
    pub fn set_symbols(&mut self, s: &str) -> Result<(), String> {
        let (mut names, mut addresses) = (Vec::new(), Vec::new());
        for e in list("-S/--symbols", s)? {
            match hex_address(&e) {
                Some(a) => addresses.push(a),
                None => names.push(e),
            }
        }
        self.symbols = Some(names);
        self.addresses = (!addresses.is_empty()).then_some(addresses);
        Ok(())
    }

    /// `--pid` or `--tid` (named by `option`) as given: numbers.
    pub fn parse_ids(option: &str, s: &str) -> Result<Vec<i32>, String> {
        list(option, s)?
            .iter()
            .map(|e| {
                e.parse::<i32>().map_err(|_| {
                    format!("{option} '{s}': '{e}' is no number; give ids such as 1234,1235")
                })
            })
            .collect()
    }

    /// `-C/--cpu` as given, read as perf reads CPU lists (`0,2-3`), for a file recorded
    /// on `nr_cpus` CPUs.
    pub fn set_cpus(&mut self, s: &str, nr_cpus: u32) -> Result<(), String> {
        let cpus = cpu_bitmap(s, nr_cpus).map_err(|e| format!("-C/--cpu: {e}"))?;
        self.cpus = Some(cpus);
        Ok(())
    }

    /// `--time` as given: `START,STOP` in seconds, either end left empty for an open
    /// one, several spans separated by spaces, or percentages of the time between the
    /// file's first and last sample (`first_last`), read as perf reads them
    /// ([`TimeRanges`]).
    pub fn set_time(&mut self, s: &str, first_last: Option<(u64, u64)>) -> Result<(), String> {
        let t = TimeRanges::parse(s, first_last, false).map_err(|e| format!("--time: {e}"))?;
        self.time = Some(t);
        Ok(())
    }

    /// perf drops the sample before counting it: outside `--time` (a sample without a
    /// time is kept), or taken on a CPU off the `--cpu` list.
    pub fn drops(&self, time: u64, cpu: u32) -> bool {
        if self.time.as_ref().is_some_and(|t| t.skips(time)) {
            return true;
        }
        self.cpus
            .as_ref()
            .is_some_and(|c| !c.get(cpu as usize).copied().unwrap_or(false))
    }

    /// Whether the sample's thread is filtered out (`thread__is_filtered`): by its comm
    /// at the sample's time, its process or itself.
    pub fn thread_filtered(&self, comm: &str, pid: i32, tid: i32) -> bool {
        self.comms
            .as_ref()
            .is_some_and(|l| !l.iter().any(|c| c == comm))
            || self.pids.as_ref().is_some_and(|l| !l.contains(&pid))
            || self.tids.as_ref().is_some_and(|l| !l.contains(&tid))
    }

    /// Whether the sampled address is filtered out by `-d` or `-S` (perf's
    /// `machine__resolve`): its object by file name or path (an unmapped address has
    /// none), its symbol by name, or a mapped address by its value.
    pub fn location_filtered(&self, loc: &Location) -> bool {
        if let Some(dsos) = &self.dsos {
            let hit = loc.dso.is_some_and(|d| {
                let short = if d.starts_with('[') {
                    d
                } else {
                    d.rsplit('/').next().unwrap_or(d)
                };
                dsos.iter().any(|e| e == short || e == d)
            });
            if !hit {
                return true;
            }
        }
        if let Some(symbols) = &self.symbols {
            let named = loc
                .sym
                .is_some_and(|(name, _)| symbols.iter().any(|e| e == name));
            let at = loc.addr.wrapping_add(loc.unmap_delta);
            let hit = named
                || (loc.dso.is_some() && self.addresses.as_ref().is_some_and(|a| a.contains(&at)));
            if !hit {
                return true;
            }
        }
        false
    }

    /// The line perf prints above the table for a list of one entry (whose column it
    /// then leaves out): `# comm: NAME`, `# dso: NAME` or `# symbol: NAME`.
    pub fn single(&self, what: Elided) -> Option<&str> {
        let l = match what {
            Elided::Comm => &self.comms,
            Elided::Dso => &self.dsos,
            Elided::Symbol => &self.symbols,
        };
        match l.as_deref() {
            Some([one]) => Some(one.as_str()),
            _ => None,
        }
    }
}

/// A column perf leaves out when its filter names one value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elided {
    /// `comm`, by `-c`.
    Comm,
    /// `dso`, by `-d`.
    Dso,
    /// `sym`, by `-S`.
    Symbol,
}

impl Elided {
    /// perf's name of the list in the line above the table.
    pub fn name(self) -> &'static str {
        match self {
            Elided::Comm => "comm",
            Elided::Dso => "dso",
            Elided::Symbol => "symbol",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_ranges_as_perf_reads_them() {
        let mut f = SampleFilter::default();
        f.set_time("1269.5,1269.6", None).unwrap();
        assert!(f.drops(1_269_499_999_999, 0));
        assert!(!f.drops(1_269_600_000_000, 0));
        f.set_time(",10.000000001", None).unwrap();
        assert!(!f.drops(1, 0));
        assert!(f.drops(10_000_000_002, 0));
        for bad in ["x", "1.0000000001", "1e3", "1,2,3"] {
            let e = f.set_time(bad, None).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
        assert!(f.set_time("10%", None).unwrap_err().contains("10%"));
        f.set_time("0%-10%,90%-100%", Some((1_000, 2_000))).unwrap();
        assert!(!f.drops(1_050, 0));
        assert!(f.drops(1_500, 0));
        assert!(!f.drops(1_950, 0));
    }

    #[test]
    fn symbols_that_read_as_hexadecimal_are_addresses() {
        let mut f = SampleFilter::default();
        assert!(f.set_symbols("main,main").unwrap_err().contains("'main'"));
        f.set_symbols("main,0x5573f37de279,dead,do_syscall_64")
            .unwrap();
        assert_eq!(f.symbols, Some(vec!["main".into(), "do_syscall_64".into()]));
        assert_eq!(f.addresses, Some(vec![0x5573f37de279, 0xdead]));
        assert_eq!(f.single(Elided::Symbol), None);
        f.set_symbols("hot,0x10").unwrap();
        assert_eq!(f.single(Elided::Symbol), Some("hot"));
    }

    #[test]
    fn drops_outside_the_range_and_off_the_cpus() {
        let mut f = SampleFilter::default();
        f.set_time("2,3", None).unwrap();
        assert!(f.drops(1_999_999_999, 0));
        assert!(!f.drops(2_000_000_000, 0));
        assert!(!f.drops(3_000_000_000, 0));
        assert!(f.drops(3_000_000_001, 0));
        assert!(!f.drops(0, 0), "a sample without a time is kept");
        f.set_cpus("1-2", 4).unwrap();
        assert!(f.drops(2_500_000_000, 0));
        assert!(!f.drops(2_500_000_000, 2));
        assert!(f.drops(2_500_000_000, 7), "a CPU the file does not have");
        assert!(f.set_cpus("a", 4).unwrap_err().contains("'a'"));
        assert!(f.set_cpus("9", 4).is_err(), "a CPU beyond the file's");
    }
}
