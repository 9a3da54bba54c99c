//! CPU lists as perf 6.1 reads them (`-C 0-2,5`, its `perf_cpu_map__new`), which are
//! not the kernel's (`crate::tracefs::parse_cpu_list`): numbers in C's notations (`0x1`,
//! `010`), parsing that stops quietly at the first item not starting with a digit
//! (`1,x` is CPU 1), a CPU named twice refused, and an empty list naming no CPU at all.

/// Why a CPU list is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CpuListError {
    /// Not a list perf reads (perf: `Invalid cpu_list`).
    Invalid(String),
    /// A CPU the recorded machine did not have (perf: `Requested CPU N too large`).
    TooLarge {
        /// The list given.
        list: String,
        /// The CPU.
        cpu: u32,
        /// The recorded machine's CPUs (NRCPUS feature, `nr_cpus_avail`).
        nr_cpus: u32,
    },
}

impl std::fmt::Display for CpuListError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CpuListError::Invalid(list) => write!(
                f,
                "invalid CPU list '{list}': give CPUs and ranges such as 0-2,5, each CPU once"
            ),
            CpuListError::TooLarge { list, cpu, nr_cpus } => write!(
                f,
                "CPU list '{list}': CPU {cpu} is not one of the {nr_cpus} CPUs the file was \
                 recorded on"
            ),
        }
    }
}

impl std::error::Error for CpuListError {}

/// C's `strtoul(s, &end, 0)`: leading blanks, a sign, then `0x` hex, `0` octal or
/// decimal digits; no digits give 0 and consume nothing. Returns the value (a negative
/// number wrapped, a too large one saturated, as C does) and the bytes consumed.
fn strtoul0(s: &[u8]) -> (u64, usize) {
    let mut i = 0;
    while i < s.len() && (s[i] == b' ' || (b'\t'..=b'\r').contains(&s[i])) {
        i += 1;
    }
    let mut neg = false;
    if i < s.len() && (s[i] == b'+' || s[i] == b'-') {
        neg = s[i] == b'-';
        i += 1;
    }
    let (radix, mut j) = if s[i..].starts_with(b"0x") || s[i..].starts_with(b"0X") {
        if s.get(i + 2).is_some_and(u8::is_ascii_hexdigit) {
            (16, i + 2)
        } else {
            (8, i)
        }
    } else if s.get(i) == Some(&b'0') {
        (8, i)
    } else {
        (10, i)
    };
    let start = j;
    let mut v: u64 = 0;
    let mut overflow = false;
    while let Some(d) = s.get(j).and_then(|&c| (c as char).to_digit(radix)) {
        match v
            .checked_mul(u64::from(radix))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(n) => v = n,
            None => overflow = true,
        }
        j += 1;
    }
    if j == start {
        return (0, 0);
    }
    if overflow {
        return (u64::MAX, j);
    }
    (if neg { v.wrapping_neg() } else { v }, j)
}

/// The CPUs of `list` as perf 6.1 reads `-C`, sorted; an empty list (perf's "dummy"
/// map) names none.
pub fn parse_perf_cpu_list(list: &str) -> Result<Vec<u32>, CpuListError> {
    const INT_MAX: u64 = i32::MAX as u64;
    let invalid = || CpuListError::Invalid(list.to_string());
    let b = list.as_bytes();
    let mut cpus: Vec<u32> = Vec::new();
    let mut at = 0;
    while b.get(at).is_some_and(u8::is_ascii_digit) {
        let (start, n) = strtoul0(&b[at..]);
        let mut p = at + n;
        if start >= INT_MAX || !matches!(b.get(p), None | Some(b',') | Some(b'-')) {
            return Err(invalid());
        }
        let end = if b.get(p) == Some(&b'-') {
            let (end, n) = strtoul0(&b[p + 1..]);
            p += 1 + n;
            if end >= INT_MAX || !matches!(b.get(p), None | Some(b',')) || end < start {
                return Err(invalid());
            }
            end
        } else {
            start
        };
        for cpu in start..=end {
            let cpu = cpu as u32;
            if cpus.contains(&cpu) {
                return Err(invalid());
            }
            cpus.push(cpu);
        }
        if p < b.len() {
            p += 1;
        }
        at = p;
    }
    if cpus.is_empty() && at < b.len() {
        return Err(invalid());
    }
    cpus.sort_unstable();
    Ok(cpus)
}

/// [`parse_perf_cpu_list`] for a file recorded on `nr_cpus` CPUs: a bitmap of the CPUs,
/// each below `nr_cpus`, as perf's `perf_session__cpu_bitmap` makes it.
pub fn cpu_bitmap(list: &str, nr_cpus: u32) -> Result<Vec<bool>, CpuListError> {
    let cpus = parse_perf_cpu_list(list)?;
    let mut map = vec![false; nr_cpus as usize];
    for cpu in cpus {
        match map.get_mut(cpu as usize) {
            Some(b) => *b = true,
            None => {
                return Err(CpuListError::TooLarge {
                    list: list.to_string(),
                    cpu,
                    nr_cpus,
                })
            }
        }
    }
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lists perf 6.1 was given here with `perf script -C` and the CPUs it showed
    /// (or its refusal).
    #[test]
    fn lists_read_as_perf_reads_them() {
        let ok = |l: &str| parse_perf_cpu_list(l).unwrap();
        assert_eq!(ok("0-1"), [0, 1]);
        assert_eq!(ok("1"), [1]);
        assert_eq!(ok("0-"), [0]);
        assert_eq!(ok("0x1"), [1]);
        assert_eq!(ok("01"), [1]);
        assert_eq!(ok("1,"), [1]);
        assert_eq!(ok("1,x"), [1]);
        assert_eq!(ok("1,,0"), [1]);
        assert_eq!(ok("0-,1"), [0, 1]);
        assert_eq!(ok("1-1"), [1]);
        assert!(ok("").is_empty());
        for bad in ["x", "0,0", " 1", "1x", "1-0", "-1"] {
            assert_eq!(
                parse_perf_cpu_list(bad),
                Err(CpuListError::Invalid(bad.into())),
                "{bad}"
            );
        }
        assert_eq!(
            cpu_bitmap("5", 2),
            Err(CpuListError::TooLarge {
                list: "5".into(),
                cpu: 5,
                nr_cpus: 2
            })
        );
        assert_eq!(cpu_bitmap("1", 2).unwrap(), [false, true]);
    }
}
