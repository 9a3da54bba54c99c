//! CPU lists, `0,2-4`: as the kernel prints them (`/sys/devices/system/cpu/online`,
//! `host/cpu_online` in a fixture tree) and as `report --cpu` takes them.

use std::fmt;

/// Most CPUs a CPU list may name when nothing smaller is known (the kernel's largest
/// `NR_CPUS` is 8192).
pub const MAX_CPUS: u32 = 1 << 16;

/// A CPU list that does not parse, or names a CPU past the last one there is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CpuListError {
    /// Not numbers and ranges.
    Syntax {
        /// The list as given.
        list: String,
    },
    /// A CPU at or past `limit`.
    Beyond {
        /// The list as given.
        list: String,
        /// The first CPU named past the limit.
        cpu: u64,
        /// The number of CPUs there are.
        limit: u32,
    },
}

impl fmt::Display for CpuListError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CpuListError::Syntax { list } => write!(
                f,
                "bad CPU list '{list}': expected numbers and ranges like 0,2-3"
            ),
            CpuListError::Beyond { list, cpu, limit } => write!(
                f,
                "CPU list '{list}' names CPU {cpu}, but there are only {limit} CPUs (0-{})",
                limit.saturating_sub(1)
            ),
        }
    }
}

impl std::error::Error for CpuListError {}

/// The `(first, last)` ranges of a list such as `0,2-4`.
fn ranges(list: &str) -> Result<Vec<(u64, u64)>, CpuListError> {
    let syntax = || CpuListError::Syntax {
        list: list.to_string(),
    };
    let number = |s: &str| s.trim().parse::<u64>().map_err(|_| syntax());
    let mut out = Vec::new();
    for part in list
        .trim()
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => {
                let n = number(part)?;
                (n, n)
            }
        };
        if first > last {
            return Err(syntax());
        }
        out.push((first, last));
    }
    Ok(out)
}

/// The CPUs of a list such as `0,2-4`, sorted and without repeats; every CPU must be
/// below `limit`, which is checked before a range is expanded.
pub fn parse_cpu_list(list: &str, limit: u32) -> Result<Vec<u32>, CpuListError> {
    let ranges = ranges(list)?;
    if let Some(&(first, _)) = ranges.iter().find(|r| r.1 >= u64::from(limit)) {
        return Err(CpuListError::Beyond {
            list: list.to_string(),
            cpu: first.max(u64::from(limit)),
            limit,
        });
    }
    Ok(expand(&ranges, limit))
}

/// The CPUs below `count` that a list names: a selection (`report --cpu`), where CPUs
/// past the last one select nothing, as trace-cmd reads it. Only a list that does not
/// parse is an error.
pub fn cpus_in_list(list: &str, count: u32) -> Result<Vec<u32>, CpuListError> {
    Ok(expand(&ranges(list)?, count))
}

/// The CPUs of `ranges` below `count`, sorted, without repeats.
fn expand(ranges: &[(u64, u64)], count: u32) -> Vec<u32> {
    let mut cpus = Vec::new();
    for &(first, last) in ranges {
        let end = last.saturating_add(1).min(u64::from(count));
        if first < end {
            cpus.extend(first as u32..end as u32);
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// Number of CPUs in a list such as `0-3,6`; None when it does not parse or names more
/// than [`MAX_CPUS`].
pub fn count_cpu_list(list: &str) -> Option<usize> {
    parse_cpu_list(list, MAX_CPUS).ok().map(|v| v.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(parse_cpu_list("0,2-4", 8), Ok(vec![0, 2, 3, 4]));
        assert_eq!(parse_cpu_list(" 3, 1-2,2 ", 8), Ok(vec![1, 2, 3]));
        assert_eq!(parse_cpu_list("", 8), Ok(vec![]));
        assert_eq!(count_cpu_list("0-1\n"), Some(2));
        assert_eq!(count_cpu_list("0-3,6,8-9"), Some(7));
        assert_eq!(count_cpu_list("x"), None);
        assert!(matches!(
            parse_cpu_list("3-1", 8),
            Err(CpuListError::Syntax { .. })
        ));
        assert!(matches!(
            parse_cpu_list("a", 8),
            Err(CpuListError::Syntax { .. })
        ));
        assert!(matches!(
            parse_cpu_list("-1", 8),
            Err(CpuListError::Syntax { .. })
        ));
    }

    #[test]
    fn a_huge_range_is_refused_before_it_is_expanded() {
        let e = parse_cpu_list("0-4294967295", 4).unwrap_err();
        assert_eq!(
            e.to_string(),
            "CPU list '0-4294967295' names CPU 4, but there are only 4 CPUs (0-3)"
        );
        let e = parse_cpu_list("1,99999999999999999", 4).unwrap_err();
        assert!(matches!(
            e,
            CpuListError::Beyond {
                cpu: 99999999999999999,
                ..
            }
        ));
        assert_eq!(count_cpu_list("0-18446744073709551615"), None);
        // As a selection, CPUs past the last one select nothing.
        assert_eq!(cpus_in_list("0-4294967295", 4), Ok(vec![0, 1, 2, 3]));
        assert_eq!(cpus_in_list("1,3-18446744073709551615", 3), Ok(vec![1]));
        assert_eq!(cpus_in_list("2,7", 3), Ok(vec![2]));
        assert_eq!(cpus_in_list("5", 3), Ok(vec![]));
        assert_eq!(cpus_in_list("0", 0), Ok(vec![]));
        assert_eq!(count_cpu_list("0-4294967295"), None);
    }
}
