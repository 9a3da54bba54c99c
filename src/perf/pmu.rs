//! Events named through a PMU's sysfs directory, as perf spells them:
//! `PMU/TERM[=VALUE],.../` (`msr/tsc/`, `msr/event=0x0/`, `software/config=0/`).
//!
//! A PMU lives under `/sys/bus/event_source/devices/PMU`: `type` is the
//! `perf_event_attr.type` to open it with, `format/TERM` says which bits of `config`,
//! `config1` or `config2` a term's value goes to (`config:0-7,32-35`), and
//! `events/ALIAS` holds the terms an event name stands for (`event=0x00`).

use std::fmt;
use std::path::{Path, PathBuf};

/// Where the kernel lists its PMUs.
pub const SYSFS_PMUS: &str = "/sys/bus/event_source/devices";

/// The terms perf accepts on any PMU besides its format terms.
const PERF_TERMS: &[&str] = &[
    "config",
    "config1",
    "config2",
    "name",
    "period",
    "percore",
    "metric-id",
];

/// An event of a PMU: what to open, and the name perf prints for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmuEvent {
    /// The PMU's directory name (`msr`).
    pub pmu: String,
    /// `perf_event_attr.type`, from the PMU's `type` file.
    pub type_: u32,
    /// `perf_event_attr.config`.
    pub config: u64,
    /// `perf_event_attr.config1`.
    pub config1: u64,
    /// `perf_event_attr.config2`.
    pub config2: u64,
    /// The `name=` term, which perf prints instead of the event text.
    pub name: Option<String>,
}

/// Why a PMU event cannot be opened as written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PmuError {
    /// No directory of that name under the PMU list.
    NoPmu {
        /// The PMU name typed.
        pmu: String,
    },
    /// A term that is neither perf's nor the PMU's format's nor one of its events.
    UnknownTerm {
        /// The PMU name.
        pmu: String,
        /// The term typed.
        term: String,
        /// The terms the PMU takes.
        valid: Vec<String>,
    },
    /// A value that is not a number, or does not fit its bits.
    BadValue {
        /// The term.
        term: String,
        /// The value typed.
        value: String,
    },
    /// A sysfs file of the PMU that could not be read or understood.
    Sysfs {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        what: String,
    },
}

impl fmt::Display for PmuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PmuError::NoPmu { pmu } => write!(
                f,
                "cannot find PMU '{pmu}' under {SYSFS_PMUS} (see `tracectl perf list pmu`)"
            ),
            PmuError::UnknownTerm { pmu, term, valid } => write!(
                f,
                "unknown term '{term}' for pmu '{pmu}'; valid terms: {}",
                valid.join(",")
            ),
            PmuError::BadValue { term, value } => {
                write!(
                    f,
                    "term '{term}': '{value}' is not a number that fits the term's bits"
                )
            }
            PmuError::Sysfs { path, what } => write!(f, "{}: {what}", path.display()),
        }
    }
}

impl std::error::Error for PmuError {}

/// Which attr word a format term fills, and the bit ranges (inclusive) its value is
/// spread over, low bits first.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Format {
    word: usize,
    ranges: Vec<(u32, u32)>,
}

/// Parse a `format/TERM` file's text: `config:0-63`, `config1:0`, `config:0-7,32-35`.
fn parse_format(text: &str) -> Option<Format> {
    let (word, bits) = text.trim().split_once(':')?;
    let word = match word {
        "config" => 0,
        "config1" => 1,
        "config2" => 2,
        _ => return None,
    };
    let mut ranges = Vec::new();
    for r in bits.split(',') {
        let (lo, hi) = match r.split_once('-') {
            Some((l, h)) => (l.parse().ok()?, h.parse().ok()?),
            None => {
                let b = r.parse().ok()?;
                (b, b)
            }
        };
        if lo > hi || hi > 63 {
            return None;
        }
        ranges.push((lo, hi));
    }
    Some(Format { word, ranges })
}

/// `value` spread over `f`'s bit ranges; None when it has bits left over.
fn place(f: &Format, mut value: u64) -> Option<u64> {
    let mut out = 0u64;
    for &(lo, hi) in &f.ranges {
        let width = hi - lo + 1;
        let mask = if width == 64 {
            u64::MAX
        } else {
            (1u64 << width) - 1
        };
        out |= (value & mask) << lo;
        value = if width == 64 { 0 } else { value >> width };
    }
    (value == 0).then_some(out)
}

/// A term's number as perf reads it: decimal, or hexadecimal after `0x`.
fn number(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

fn read(path: &Path) -> Result<String, PmuError> {
    std::fs::read_to_string(path).map_err(|e| PmuError::Sysfs {
        path: path.to_path_buf(),
        what: e.to_string(),
    })
}

/// The names of the files of a PMU's subdirectory (`format`, `events`), sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The events the PMUs under `root` name (`events/NAME`, without the `.unit`,
/// `.scale` and other property files), as `(pmu, event)` in name order, for `perf list`.
pub fn named_events(root: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for pmu in names(root) {
        for ev in names(&root.join(&pmu).join("events")) {
            if !ev.contains('.') {
                out.push((pmu.clone(), ev));
            }
        }
    }
    out
}

/// Resolve `pmu/terms/` (the text between the slashes given as `terms`) against the PMU
/// directories under `root` ([`SYSFS_PMUS`] on a live system).
pub fn resolve(root: &Path, pmu: &str, terms: &str) -> Result<PmuEvent, PmuError> {
    if pmu.is_empty() || pmu.contains(['/', '.']) {
        return Err(PmuError::NoPmu {
            pmu: pmu.to_string(),
        });
    }
    let dir = root.join(pmu);
    if !dir.is_dir() {
        return Err(PmuError::NoPmu {
            pmu: pmu.to_string(),
        });
    }
    let type_path = dir.join("type");
    let type_ = read(&type_path)?
        .trim()
        .parse()
        .map_err(|_| PmuError::Sysfs {
            path: type_path.clone(),
            what: "not a number".to_string(),
        })?;
    let formats = names(&dir.join("format"));
    let mut ev = PmuEvent {
        pmu: pmu.to_string(),
        type_,
        config: 0,
        config1: 0,
        config2: 0,
        name: None,
    };
    let mut words = [0u64; 3];
    apply_terms(&dir, &formats, terms, &mut words, &mut ev, 0)?;
    [ev.config, ev.config1, ev.config2] = words;
    Ok(ev)
}

/// Apply a comma list of terms; an event alias's own terms are applied in its place
/// (`depth` stops an alias that names itself).
fn apply_terms(
    dir: &Path,
    formats: &[String],
    terms: &str,
    words: &mut [u64; 3],
    ev: &mut PmuEvent,
    depth: u32,
) -> Result<(), PmuError> {
    for term in terms.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        let (key, value) = match term.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (term, None),
        };
        let bad = || PmuError::BadValue {
            term: key.to_string(),
            value: value.unwrap_or("").to_string(),
        };
        match key {
            "name" | "metric-id" => {
                let v = value.filter(|v| !v.is_empty()).ok_or_else(bad)?;
                if key == "name" {
                    ev.name = Some(v.to_string());
                }
                continue;
            }
            "config" | "config1" | "config2" => {
                let v = value.and_then(number).ok_or_else(bad)?;
                words[match key {
                    "config" => 0,
                    "config1" => 1,
                    _ => 2,
                }] = v;
                continue;
            }
            "period" | "percore" => {
                value.map_or(Some(1), number).ok_or_else(bad)?;
                continue;
            }
            _ => {}
        }
        if formats.iter().any(|f| f == key) {
            let path = dir.join("format").join(key);
            let f = parse_format(&read(&path)?).ok_or_else(|| PmuError::Sysfs {
                path: path.clone(),
                what: "not a format perf understands (WORD:BITS)".to_string(),
            })?;
            let v = value.map_or(Some(1), number).ok_or_else(bad)?;
            let placed = place(&f, v).ok_or_else(bad)?;
            words[f.word] |= placed;
            continue;
        }
        let alias = dir.join("events").join(key);
        if value.is_none() && depth < 4 && alias.is_file() && !key.contains(['/', '.']) {
            let text = read(&alias)?;
            apply_terms(dir, formats, text.trim(), words, ev, depth + 1)?;
            continue;
        }
        let mut valid: Vec<String> = formats.to_vec();
        valid.extend(PERF_TERMS.iter().map(|s| s.to_string()));
        return Err(PmuError::UnknownTerm {
            pmu: ev.pmu.clone(),
            term: key.to_string(),
            valid,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pmu_tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("cpu");
        std::fs::create_dir_all(p.join("format")).unwrap();
        std::fs::create_dir_all(p.join("events")).unwrap();
        std::fs::write(p.join("type"), "4\n").unwrap();
        std::fs::write(p.join("format/event"), "config:0-7\n").unwrap();
        std::fs::write(p.join("format/umask"), "config:8-15\n").unwrap();
        std::fs::write(p.join("format/edge"), "config:18\n").unwrap();
        std::fs::write(p.join("format/split"), "config1:0-3,8-11\n").unwrap();
        std::fs::write(p.join("events/loads"), "event=0xd0,umask=0x81\n").unwrap();
        d
    }

    #[test]
    fn terms_fill_the_format_bits() {
        let d = pmu_tree();
        let e = resolve(d.path(), "cpu", "event=0x3c,umask=1,edge").unwrap();
        assert_eq!((e.type_, e.config), (4, 0x3c | 1 << 8 | 1 << 18));
        let e = resolve(d.path(), "cpu", "split=0xab").unwrap();
        assert_eq!(e.config1, 0xb | 0xa << 8);
        let e = resolve(d.path(), "cpu", "loads,name=ld").unwrap();
        assert_eq!((e.config, e.name.as_deref()), (0x81d0, Some("ld")));
        let e = resolve(d.path(), "cpu", "config=0x1234,config2=7").unwrap();
        assert_eq!((e.config, e.config2), (0x1234, 7));
    }

    #[test]
    fn bad_terms_are_named() {
        let d = pmu_tree();
        let err = resolve(d.path(), "cpu", "bogus").unwrap_err();
        assert!(
            err.to_string()
                .contains("unknown term 'bogus' for pmu 'cpu'"),
            "{err}"
        );
        assert!(matches!(
            resolve(d.path(), "cpu", "event=0x100"),
            Err(PmuError::BadValue { .. })
        ));
        assert!(matches!(
            resolve(d.path(), "cpu", "umask=zz"),
            Err(PmuError::BadValue { .. })
        ));
        assert!(matches!(
            resolve(d.path(), "nopmu", "x"),
            Err(PmuError::NoPmu { .. })
        ));
        assert!(matches!(
            resolve(d.path(), "..", "x"),
            Err(PmuError::NoPmu { .. })
        ));
    }
}
