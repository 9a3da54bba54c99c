//! Time spans as perf 6.1 reads `--time` (its `perf_time__parse_for_ranges_reltime`):
//! `start,stop` in seconds with up to nine decimals, either side empty for open;
//! several spans separated by blanks (`1.1,1.2 1.5,1.6`); or percentages of the time
//! between the file's first and last sample (`10%/2`: the second tenth; `0%-10%,30%-40%`;
//! `25%`: the first quarter).

/// One span of time, in nanoseconds; 0 leaves that side open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeSpan {
    /// First time kept (0: from the start).
    pub start: u64,
    /// Last time kept (0: to the end).
    pub end: u64,
}

/// Why a time string is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TimeRangeError {
    /// Not a time string perf reads (perf: `Invalid time string`).
    Invalid(String),
    /// Percentages (or `--reltime`) on a file without the first and last sample
    /// times (no SAMPLE_TIME feature).
    NoSampleTimes(String),
}

impl std::fmt::Display for TimeRangeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TimeRangeError::Invalid(s) => write!(
                f,
                "invalid time string '{s}': give start,stop in seconds (either side may be \
                 empty), several separated by spaces, or percentages such as 10%/2, \
                 0%-10% or 25%"
            ),
            TimeRangeError::NoSampleTimes(s) => write!(
                f,
                "time string '{s}': the file records no first and last sample time (no \
                 SAMPLE_TIME feature), which percentages and --reltime count from"
            ),
        }
    }
}

impl std::error::Error for TimeRangeError {}

/// Spans to keep, as given to `--time`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimeRanges {
    spans: Vec<TimeSpan>,
}

impl TimeRanges {
    /// Parse `s`; `first_last` are the file's first and last sample times (SAMPLE_TIME
    /// feature), which percentages need, and `reltime` makes the times relative to the
    /// first sample.
    pub fn parse(
        s: &str,
        first_last: Option<(u64, u64)>,
        reltime: bool,
    ) -> Result<TimeRanges, TimeRangeError> {
        let invalid = || TimeRangeError::Invalid(s.to_string());
        let percent = s.contains('%');
        let (first, last) = match first_last {
            Some(fl) if fl != (0, 0) => fl,
            _ if percent || reltime => return Err(TimeRangeError::NoSampleTimes(s.into())),
            _ => (0, 0),
        };
        let mut spans = if percent {
            percent_spans(s, first, last).ok_or_else(invalid)?
        } else {
            absolute_spans(s).ok_or_else(invalid)?
        };
        if reltime {
            for t in &mut spans {
                t.start += first;
                t.end += first;
            }
        }
        Ok(TimeRanges { spans })
    }

    /// The spans.
    pub fn spans(&self) -> &[TimeSpan] {
        &self.spans
    }

    /// Whether a record at `time` is left out (perf's `perf_time__ranges_skip_sample`):
    /// one at time 0 never is; one span keeps what is inside it, open sides
    /// included; several keep what is inside any of them.
    pub fn skips(&self, time: u64) -> bool {
        if time == 0 || self.spans.is_empty() {
            return false;
        }
        if let [t] = self.spans[..] {
            return (t.start != 0 && time < t.start) || (t.end != 0 && time > t.end);
        }
        !self
            .spans
            .iter()
            .any(|t| time >= t.start && (time <= t.end || t.end == 0))
    }
}

/// C's `strtoul(s, &end, 10)`: leading blanks and a sign, then digits; the value and
/// the rest. None when a number overflows (perf would wrap; no time is that late).
fn strtoul10(s: &str) -> Option<(u64, &str)> {
    let t = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let n = t.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return Some((0, s));
    }
    let v: u64 = t[..n].parse().ok()?;
    Some((if neg { v.wrapping_neg() } else { v }, &t[n..]))
}

/// perf's `parse_nsec_time`: `SECS[.FRACTION]`, at most nine fraction digits.
fn parse_nsec_time(s: &str) -> Option<u64> {
    let (secs, rest) = strtoul10(s)?;
    let nsec = match rest.strip_prefix('.') {
        Some(frac) => {
            if frac.len() > 9 {
                return None;
            }
            let padded = format!("{frac:0<9}");
            let (v, rest) = strtoul10(&padded)?;
            if !rest.is_empty() {
                return None;
            }
            v
        }
        None if rest.is_empty() => 0,
        None => return None,
    };
    secs.checked_mul(1_000_000_000)?.checked_add(nsec)
}

/// perf's `perf_time__parse_str`: `start,stop`, either empty.
fn parse_span(s: &str) -> Option<TimeSpan> {
    let (a, b) = match s.split_once(',') {
        Some((a, b)) => (a, Some(b)),
        None => (s, None),
    };
    let mut t = TimeSpan::default();
    if !a.is_empty() {
        t.start = parse_nsec_time(a)?;
    }
    if let Some(b) = b.filter(|b| !b.is_empty()) {
        t.end = parse_nsec_time(b)?;
    }
    (t.end == 0 || t.end >= t.start).then_some(t)
}

/// perf's `perf_time__parse_strs`: one `start,stop` per comma, the spans separated by
/// blanks, in order and not overlapping.
fn absolute_spans(s: &str) -> Option<Vec<TimeSpan>> {
    let num = s.matches(',').count();
    if num == 0 {
        return None;
    }
    let b = s.as_bytes();
    let mut spans = Vec::with_capacity(num);
    let mut arg = 0;
    for _ in 0..num - 1 {
        // After the span's comma and any blanks, its stop runs to the next blank.
        let comma = arg + s[arg..].find(',')?;
        let mut p = comma + 1;
        while p < b.len() && b[p].is_ascii_whitespace() {
            p += 1;
        }
        while p < b.len() && !b[p].is_ascii_whitespace() {
            if b[p] == b',' {
                return None;
            }
            p += 1;
        }
        spans.push(parse_span(&s[arg..p])?);
        arg = (p + 1).min(s.len());
    }
    spans.push(parse_span(&s[arg..])?);
    if spans.windows(2).any(|w| w[0].end >= w[1].start) {
        return None;
    }
    Some(spans)
}

/// perf's `parse_percent`: the number before the first `%` (what follows it is not
/// read); nothing before it is 0.
fn parse_percent(s: &str) -> Option<f64> {
    let at = s.find('%')?;
    let num = s[..at].trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let v: f64 = if num.is_empty() {
        0.0
    } else {
        num.parse().ok()?
    };
    Some(v / 100.0)
}

/// perf's `set_percent_time`: the span between two fractions of the file's time.
fn percent_span(from: f64, to: f64, start: u64, end: u64) -> Option<TimeSpan> {
    if !(0.0..=1.0).contains(&from) || !(0.0..=1.0).contains(&to) {
        return None;
    }
    let total = end.wrapping_sub(start) as f64;
    let mut t = TimeSpan {
        start: (start as f64 + (from * total).round()) as u64,
        end: (start as f64 + (to * total).round()) as u64,
    };
    if t.end > t.start && t.end != end {
        t.end -= 1;
    }
    Some(t)
}

/// perf's `perf_time__percent_parse_str`: `P%/N` items, or `P%-Q%` items, separated by
/// commas; or one `P%`.
fn percent_spans(s: &str, start: u64, end: u64) -> Option<Vec<TimeSpan>> {
    let slash = |item: &str| {
        let (p, n) = item.split_once('/')?;
        let pcnt = parse_percent(p)?;
        let n = strtol10_all(n)?;
        if pcnt <= 0.0 {
            return None;
        }
        percent_span(pcnt * (n - 1) as f64, pcnt * n as f64, start, end)
    };
    let dash = |item: &str| {
        let (a, b) = item.split_once('-')?;
        percent_span(parse_percent(a)?, parse_percent(b)?, start, end)
    };
    let items = |f: &dyn Fn(&str) -> Option<TimeSpan>| {
        let mut items: Vec<&str> = s.split(',').collect();
        // A comma at the end ends the list, as perf reads it.
        if s.ends_with(',') {
            items.pop();
        }
        items.into_iter().map(f).collect::<Option<Vec<_>>>()
    };
    if s.contains('/') {
        return items(&slash);
    }
    if s.contains('-') {
        return items(&dash);
    }
    // One `P%`, its first `%` the last character: the first such slice.
    if s.find('%') != Some(s.len() - 1) {
        return None;
    }
    Some(vec![slash(&format!("{s}/1"))?])
}

/// C's `strtol(s, &end, 10)` that must consume all of `s` (an empty `s` is 0).
fn strtol10_all(s: &str) -> Option<i64> {
    let (v, rest) = strtoul10(s)?;
    rest.is_empty().then_some(v as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn absolute_spans_as_perf_reads_them() {
        let p = |s: &str| TimeRanges::parse(s, None, false).map(|r| r.spans);
        assert_eq!(
            p("596,597").unwrap(),
            [TimeSpan {
                start: 596 * S,
                end: 597 * S
            }]
        );
        assert_eq!(
            p("596.5,").unwrap(),
            [TimeSpan {
                start: 596 * S + S / 2,
                end: 0
            }]
        );
        assert_eq!(
            p(",596").unwrap(),
            [TimeSpan {
                start: 0,
                end: 596 * S
            }]
        );
        assert_eq!(p("596.1,596.2 597.0,597.1").unwrap().len(), 2);
        assert_eq!(p("596.123456789,").unwrap()[0].start, 596 * S + 123_456_789);
        for bad in [
            "x",
            "596,595",
            "596",
            "",
            "596.1,596.2,597.0,597.1",
            "1.0123456789,",
        ] {
            assert_eq!(p(bad), Err(TimeRangeError::Invalid(bad.into())), "{bad}");
        }
    }

    #[test]
    fn percentages_of_the_time_between_first_and_last_sample() {
        let fl = Some((1000, 2000));
        let p = |s: &str| TimeRanges::parse(s, fl, false).map(|r| r.spans);
        assert_eq!(
            p("10%/2").unwrap(),
            [TimeSpan {
                start: 1100,
                end: 1199
            }]
        );
        assert_eq!(
            p("0%-10%").unwrap(),
            [TimeSpan {
                start: 1000,
                end: 1099
            }]
        );
        assert_eq!(
            p("50%").unwrap(),
            [TimeSpan {
                start: 1000,
                end: 1499
            }]
        );
        assert_eq!(p("10%/1,10%/3").unwrap().len(), 2);
        assert_eq!(
            p("90%-100%").unwrap(),
            [TimeSpan {
                start: 1900,
                end: 2000
            }]
        );
        assert!(p("10%/x").is_err());
        assert!(p("110%").is_err());
        assert_eq!(
            TimeRanges::parse("10%", None, false),
            Err(TimeRangeError::NoSampleTimes("10%".into()))
        );
    }

    #[test]
    fn skips_outside_the_spans() {
        let r = TimeRanges::parse("1,2", None, false).unwrap();
        assert!(r.skips(S / 2));
        assert!(!r.skips(S));
        assert!(!r.skips(2 * S));
        assert!(r.skips(2 * S + 1));
        assert!(!r.skips(0));
    }
}
