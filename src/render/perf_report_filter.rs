//! Which samples `perf report` (perf 6.1) takes, and which of its rows it hides: the
//! filters `-c/--comms`, `--pid`, `--tid`, `-d/--dsos`, `-S/--symbols`, `-C/--cpu`,
//! `--time` and `-U/--hide-unresolved`.
//!
//! perf drops a sample outside `--time`, off the `--cpu` list, or (with `-U`) without a
//! symbol before it counts it. The other filters keep the sample in the event's totals
//! and mark the row it makes, and the rows of its call chain, as filtered: those rows
//! are not printed, and with `--percentage relative` the shares are of what is left.

use crate::perf::machine::Location;
use crate::tracefs::parse_cpu_list;

/// perf's `MAX_NR_CPUS`: a `--cpu` list may name CPUs below this.
const MAX_NR_CPUS: u32 = 4096;

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
    /// `-C/--cpu`: the CPUs whose samples are taken.
    pub cpus: Option<Vec<u32>>,
    /// `--time start,stop` in nanoseconds; 0 for an open end.
    pub time: Option<(u64, u64)>,
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

    /// `-C/--cpu` as given: CPUs and ranges (`0,2-3`).
    pub fn set_cpus(&mut self, s: &str) -> Result<(), String> {
        let cpus = parse_cpu_list(s, MAX_NR_CPUS).map_err(|e| format!("-C/--cpu: {e}"))?;
        self.cpus = Some(cpus);
        Ok(())
    }

    /// `--time START,STOP` as given: seconds with up to nine decimals, either end left
    /// empty for an open one (perf's `perf_time__parse_str`).
    pub fn set_time(&mut self, s: &str) -> Result<(), String> {
        let bad = |why: &str| {
            format!(
                "--time '{s}': {why}; give START,STOP in seconds (e.g. 1269.5,1269.6; \
                 either may be left out)"
            )
        };
        if s.contains('%') || s.contains(' ') {
            return Err(bad(
                "only one START,STOP range in seconds is supported here",
            ));
        }
        let (start, stop) = s.split_once(',').unwrap_or((s, ""));
        let one = |t: &str| -> Result<u64, String> {
            if t.is_empty() {
                return Ok(0);
            }
            let (secs, frac) = t.split_once('.').unwrap_or((t, ""));
            let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
            if !digits(secs) || (t.contains('.') && !frac.is_empty() && !digits(frac)) {
                return Err(bad(&format!("'{t}' is no time")));
            }
            if frac.len() > 9 {
                return Err(bad(&format!("'{t}' has more than nine decimals")));
            }
            let secs: u64 = secs
                .parse()
                .map_err(|_| bad(&format!("'{t}' is too large")))?;
            let nsecs: u64 = if frac.is_empty() {
                0
            } else {
                format!("{frac:0<9}").parse().unwrap_or(0)
            };
            secs.checked_mul(1_000_000_000)
                .and_then(|n| n.checked_add(nsecs))
                .ok_or_else(|| bad(&format!("'{t}' is too large")))
        };
        let (start, stop) = (one(start)?, one(stop)?);
        if stop != 0 && stop < start {
            return Err(bad("STOP is before START"));
        }
        self.time = Some((start, stop));
        Ok(())
    }

    /// perf drops the sample before counting it: outside `--time` (a sample without a
    /// time is kept), or taken on a CPU off the `--cpu` list.
    pub fn drops(&self, time: u64, cpu: u32) -> bool {
        if let Some((start, stop)) = self.time {
            if time != 0 && ((start != 0 && time < start) || (stop != 0 && time > stop)) {
                return true;
            }
        }
        self.cpus.as_ref().is_some_and(|c| !c.contains(&cpu))
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
        f.set_time("1269.5,1269.6").unwrap();
        assert_eq!(f.time, Some((1_269_500_000_000, 1_269_600_000_000)));
        f.set_time(",10.000000001").unwrap();
        assert_eq!(f.time, Some((0, 10_000_000_001)));
        f.set_time("3.").unwrap();
        assert_eq!(f.time, Some((3_000_000_000, 0)));
        for bad in [
            "x",
            "1.5,1.4",
            "1.0000000001",
            "10%",
            "1,2 3,4",
            "-1",
            "1e3",
        ] {
            let e = f.set_time(bad).unwrap_err();
            assert!(e.contains(bad), "{e}");
        }
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
        f.set_time("2,3").unwrap();
        assert!(f.drops(1_999_999_999, 0));
        assert!(!f.drops(2_000_000_000, 0));
        assert!(!f.drops(3_000_000_000, 0));
        assert!(f.drops(3_000_000_001, 0));
        assert!(!f.drops(0, 0), "a sample without a time is kept");
        f.set_cpus("1-2").unwrap();
        assert!(f.drops(2_500_000_000, 0));
        assert!(!f.drops(2_500_000_000, 2));
        assert!(f.set_cpus("a").unwrap_err().contains("'a'"));
    }
}
