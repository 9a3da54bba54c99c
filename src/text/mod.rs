//! The kernel's `trace` / `trace_pipe` text, parsed back into records.
//!
//! A line looks like
//! `          <idle>-0       [001] d.h2. 12345.678901: irq_handler_entry: irq=24 name=virtio0`
//! with an optional `(  tgid)` column after the pid (options/record-tgid) and no flags
//! column when options/irq-info is off.

use indexmap::IndexMap;

/// One parsed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceLine<'a> {
    /// The task's comm (may contain spaces and dashes).
    pub comm: &'a str,
    /// The pid.
    pub pid: u32,
    /// The tgid when the column is shown and known.
    pub tgid: Option<u32>,
    /// The CPU.
    pub cpu: u32,
    /// The latency flags column (`d.h2.`), when shown.
    pub flags: Option<&'a str>,
    /// The timestamp as printed (`12345.678901`).
    pub timestamp: &'a str,
    /// The event name.
    pub event: &'a str,
    /// The text after `event: `.
    pub body: &'a str,
}

impl<'a> TraceLine<'a> {
    /// The timestamp in nanoseconds (printed with µs or ns precision; a counter clock
    /// prints a plain number, returned as is).
    pub fn timestamp_ns(&self) -> Option<u64> {
        match self.timestamp.split_once('.') {
            Some((s, frac)) => {
                let secs: u64 = s.parse().ok()?;
                let mut f: String = frac.chars().take(9).collect();
                while f.len() < 9 {
                    f.push('0');
                }
                // None rather than a wrapped value when it does not fit in 64 bits.
                secs.checked_mul(1_000_000_000)?
                    .checked_add(f.parse::<u64>().ok()?)
            }
            None => self.timestamp.parse().ok(),
        }
    }

    /// `name=value` pairs of the body, when it is written in that form. A value runs to
    /// the space before the next `name=`, so values with spaces survive.
    pub fn fields(&self) -> IndexMap<&'a str, &'a str> {
        parse_fields(self.body)
    }
}

/// Parse one line; `None` for header (`#`) lines and anything not in the format.
///
/// Linear in the line's length: each candidate CPU column is checked by looking only at
/// the columns around it, never at the rest of the line.
pub fn parse_line(line: &str) -> Option<TraceLine<'_>> {
    let line = line.trim_end_matches(['\n', '\r']);
    let t = line.trim_start();
    if t.is_empty() || t.starts_with('#') {
        return None;
    }
    let lead = line.len() - t.len();
    // The CPU column `[NNN]` is the anchor: comm can hold anything, so take the first
    // ` [digits]` that is followed by a timestamp and an event name.
    let bytes = line.as_bytes();
    for open in memchr::memchr_iter(b'[', bytes) {
        scanned(0);
        if open == 0 || bytes[open - 1] != b' ' {
            continue;
        }
        let digits = scanned(
            bytes[open + 1..]
                .iter()
                .take_while(|b| b.is_ascii_digit())
                .count(),
        );
        let close = open + 1 + digits;
        if digits == 0 || bytes.get(close) != Some(&b']') {
            continue;
        }
        let Some(parsed) = parse_after_cpu(&line[close + 1..]) else {
            continue;
        };
        let Some(task) = parse_task(&line[lead.min(open)..open]) else {
            continue;
        };
        let (comm, pid, tgid) = task;
        let (flags, timestamp, event, body) = parsed;
        return Some(TraceLine {
            comm,
            pid,
            tgid,
            cpu: line[open + 1..close].parse().ok()?,
            flags,
            timestamp,
            event,
            body,
        });
    }
    None
}

#[cfg(test)]
thread_local! {
    // Counts the bytes the line parser examines, for the test that keeps it linear.
    static SCANNED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// `n` bytes were examined (one more for the look that stopped the scan).
#[inline(always)]
fn scanned(n: usize) -> usize {
    #[cfg(test)]
    SCANNED.with(|c| c.set(c.get() + n + 1));
    n
}

/// The length of the end of `s` made of characters that pass `keep`.
fn tail_len(s: &str, keep: impl Fn(char) -> bool) -> usize {
    let n = s
        .chars()
        .rev()
        .take_while(|&c| keep(c))
        .map(char::len_utf8)
        .sum();
    scanned(n)
}

/// `comm-pid` with an optional `(tgid)` column after it; `s` starts at the line's first
/// non-blank character. Read from the end, over the pid and tgid columns only.
fn parse_task(s: &str) -> Option<(&str, u32, Option<u32>)> {
    let s = &s[..s.len() - tail_len(s, char::is_whitespace)];
    let (task, tgid) = match s.strip_suffix(')') {
        Some(inner) => {
            // What a tgid column holds: digits, a sign, blanks, or dashes for none.
            let col = tail_len(inner, |c| {
                c.is_ascii_digit() || c == '-' || c == '+' || c.is_whitespace()
            });
            let open = inner.len() - col;
            let head = inner[..open].strip_suffix('(')?;
            let t = inner[open..].trim();
            scanned(t.len());
            let tgid = if t.bytes().all(|b| b == b'-') {
                None
            } else {
                Some(t.parse().ok()?)
            };
            (
                &head[..head.len() - tail_len(head, char::is_whitespace)],
                tgid,
            )
        }
        None => (s, None),
    };
    let digits = tail_len(task, |c| c.is_ascii_digit() || c == '+');
    let dash = task.len() - digits;
    let comm = task[..dash].strip_suffix('-')?;
    let pid = task[dash..].parse().ok()?;
    Some((comm.trim_start(), pid, tgid))
}

type AfterCpu<'a> = (Option<&'a str>, &'a str, &'a str, &'a str);

/// ` d.h2. 12345.678901: event: body` or ` 12345.678901: event: body`.
fn parse_after_cpu(s: &str) -> Option<AfterCpu<'_>> {
    let s = s.trim_start();
    let first_len = scanned(s.bytes().take_while(|&b| b != b' ').count());
    let first = &s[..first_len];
    if first_len == s.len() {
        return None;
    }
    let (flags, rest) = if is_timestamp(first.strip_suffix(':').unwrap_or("")) {
        (None, s)
    } else {
        (Some(first), s[first_len + 1..].trim_start())
    };
    // The timestamp runs to the first `: `; only digits and dots may come before it.
    let ts_len = scanned(
        rest.bytes()
            .take_while(|b| b.is_ascii_digit() || *b == b'.')
            .count(),
    );
    let (ts, rest) = (&rest[..ts_len], rest[ts_len..].strip_prefix(": ")?);
    if !is_timestamp(ts) {
        return None;
    }
    let rest = rest.trim_start();
    // `event: body` for most events; syscall events print `sys_write(fd: 1, ...)` and
    // `sys_write -> 0x1`, the function tracer `func <-parent`: the name is the leading
    // identifier and the body what follows it.
    let name_len = scanned(
        rest.bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'.')
            .count(),
    );
    if name_len == 0 {
        return None;
    }
    let (event, after) = rest.split_at(name_len);
    let body = match after.strip_prefix(':') {
        Some(b) => b.strip_prefix(' ').unwrap_or(b),
        None => after.trim_start(),
    };
    Some((flags, ts, event, body))
}

fn is_timestamp(s: &str) -> bool {
    !s.is_empty()
        && s.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && s.as_bytes()[0].is_ascii_digit()
}

/// `name=value` pairs of an event body; empty when the body does not start with one.
pub fn parse_fields(body: &str) -> IndexMap<&str, &str> {
    let mut out = IndexMap::new();
    let b = body.as_bytes();
    // Positions of every `name=` whose name starts the body or follows a space.
    let mut keys: Vec<(usize, usize)> = Vec::new(); // (start of name, index of '=')
    let mut i = 0;
    while i < b.len() {
        if i == 0 || b[i - 1] == b' ' {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'.') {
                j += 1;
            }
            if j > i && j < b.len() && b[j] == b'=' && (b[i].is_ascii_alphabetic() || b[i] == b'_')
            {
                keys.push((i, j));
                i = j + 1;
                continue;
            }
        }
        i += 1;
    }
    if keys.first().map(|k| k.0) != Some(0) {
        return out;
    }
    for (n, &(start, eq)) in keys.iter().enumerate() {
        let end = keys.get(n + 1).map(|k| k.0).unwrap_or(b.len());
        out.insert(&body[start..eq], body[eq + 1..end].trim_end());
    }
    out
}

/// A parsed line as JSON, in the record shape of `docs/json.schema.json`: the columns
/// (`ts` in nanoseconds, `timestamp` as printed), `system` when known, then `fields` (the
/// body read back through the event's `print fmt`) or, when it was not read back, the raw
/// `body`.
pub fn line_to_json(
    l: &TraceLine<'_>,
    system: Option<&str>,
    typed: Option<serde_json::Map<String, serde_json::Value>>,
) -> serde_json::Value {
    use crate::render::json::uint;
    let mut m = serde_json::Map::new();
    m.insert(
        "ts".into(),
        l.timestamp_ns().map_or(serde_json::Value::Null, uint),
    );
    m.insert("timestamp".into(), l.timestamp.into());
    m.insert("cpu".into(), l.cpu.into());
    m.insert("pid".into(), l.pid.into());
    m.insert("comm".into(), l.comm.into());
    if let Some(t) = l.tgid {
        m.insert("tgid".into(), t.into());
    }
    if let Some(f) = l.flags {
        m.insert("flags".into(), f.into());
    }
    if let Some(s) = system {
        m.insert("system".into(), s.into());
    }
    m.insert("event".into(), l.event.into());
    match typed {
        Some(f) => {
            m.insert("fields".into(), f.into());
        }
        None => {
            m.insert("body".into(), l.body.into());
        }
    }
    m.into()
}

/// Reads trace lines back into typed records with the events' schemas: each event's
/// `print fmt` inverted once ([`crate::event::TextPattern`]). Lines whose body cannot be
/// read back keep their raw body and are counted.
pub struct LineTyper {
    reg: Option<crate::event::Registry>,
    /// What a line names (event name; `sys_NAME(` and `sys_NAME->` for system calls)
    /// to (system, event) of its schema.
    names: std::collections::HashMap<String, (String, String)>,
    patterns: std::collections::HashMap<String, Option<crate::event::TextPattern>>,
    /// Lines whose body kept its raw text, per event name.
    pub raw: std::collections::BTreeMap<String, u64>,
}

impl LineTyper {
    /// A typer over these schemas (None: every body stays raw).
    pub fn new(reg: Option<crate::event::Registry>) -> LineTyper {
        let mut names = std::collections::HashMap::new();
        if let Some(r) = &reg {
            for (system, name, _) in r.events() {
                let shown = match (system, name.split_once('_')) {
                    ("syscalls", Some(("sys", rest))) => match rest.split_once('_') {
                        Some(("enter", call)) => format!("sys_{call}("),
                        Some(("exit", call)) => format!("sys_{call}->"),
                        _ => name.to_string(),
                    },
                    _ => name.to_string(),
                };
                names
                    .entry(shown)
                    .or_insert_with(|| (system.to_string(), name.to_string()));
            }
        }
        LineTyper {
            reg,
            names,
            patterns: Default::default(),
            raw: Default::default(),
        }
    }

    /// The line as JSON ([`line_to_json`]) with its fields typed when its event's format
    /// reads the body back; a system call is named by its event (`sys_enter_write`).
    pub fn to_json(&mut self, l: &TraceLine<'_>) -> serde_json::Value {
        let call = if l.body.starts_with('(') {
            Some(format!("{}(", l.event))
        } else if l.body.starts_with("->") {
            Some(format!("{}->", l.event))
        } else {
            None
        };
        let known = call
            .and_then(|c| self.names.get(&c))
            .or_else(|| self.names.get(l.event))
            .cloned();
        let typed = known.as_ref().and_then(|(system, name)| {
            let key = format!("{system}:{name}");
            let pattern = self.patterns.entry(key).or_insert_with(|| {
                let r = self.reg.as_ref()?;
                r.by_name(system, name).map(|s| s.text_pattern())
            });
            pattern.as_ref().and_then(|p| p.parse(l.body))
        });
        if typed.is_none() {
            *self.raw.entry(l.event.to_string()).or_default() += 1;
        }
        let mut v = line_to_json(l, known.as_ref().map(|k| k.0.as_str()), typed);
        if let Some((_, name)) = known {
            v["event"] = name.into();
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_line() {
        let l = parse_line("          <idle>-0       [001] d.h2. 12345.678901: irq_handler_entry: irq=24 name=virtio0-input.0").unwrap();
        assert_eq!((l.comm, l.pid, l.tgid, l.cpu), ("<idle>", 0, None, 1));
        assert_eq!(l.flags, Some("d.h2."));
        assert_eq!(l.timestamp, "12345.678901");
        assert_eq!(l.timestamp_ns(), Some(12_345_678_901_000));
        assert_eq!(l.event, "irq_handler_entry");
        let f = l.fields();
        assert_eq!(f["irq"], "24");
        assert_eq!(f["name"], "virtio0-input.0");
    }

    #[test]
    fn comm_with_spaces_dashes_and_tgid() {
        let l = parse_line(" kworker/u8:2-ev-1234    (   1200) [000] ..... 5.000001: sched_switch: prev_comm=a b prev_pid=1 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120").unwrap();
        assert_eq!(l.comm, "kworker/u8:2-ev");
        assert_eq!(l.pid, 1234);
        assert_eq!(l.tgid, Some(1200));
        let f = l.fields();
        assert_eq!(f["prev_comm"], "a b");
        assert_eq!(f["prev_state"], "S ==>");
        assert_eq!(f["next_comm"], "swapper/0");
        let l = parse_line("  bash-7  (-------) [003] 7.5: tracing_mark_write: hello").unwrap();
        assert_eq!((l.tgid, l.flags), (None, None));
        assert!(l.fields().is_empty());
        assert_eq!(l.body, "hello");
    }

    /// The bytes examined to parse `line`.
    fn work(line: &str) -> usize {
        SCANNED.with(|c| c.set(0));
        let _ = parse_line(line);
        SCANNED.with(|c| c.get())
    }

    #[test]
    fn parsing_is_linear_in_the_line_length() {
        // Lines with a candidate CPU column (or a near miss) every few bytes: a parser
        // that looks at the rest of the line for each one does quadratic work.
        let shapes: &[&str] = &[
            "[",
            "[[[[]",
            " [",
            " [0",
            " [0] ",
            " [0] x ",
            " [0] 1.0",
            " [0] 1.0: ",
            " [0] d... 1.0: e",
            "x [0] 1.0: e ",
            "a-1 (x) [0] 1.0: e ",
            "a-1 (5 [0] 1.0: e ",
            "-1 [0] 1.0: e-",
            "a-b [0] 1: e ",
            "   ",
            "é [1] ",
        ];
        for shape in shapes {
            let small = shape.repeat(10_000 / shape.len() + 1);
            let large = shape.repeat(80_000 / shape.len() + 1);
            let (a, b) = (work(&small), work(&large));
            // Eight times the bytes: at most eight times the work (plus slack), where a
            // quadratic parser does sixty-four times as much.
            assert!(
                b <= 10 * a.max(small.len()),
                "{shape:?}: {a} bytes examined for {}, {b} for {}",
                small.len(),
                large.len()
            );
            assert!(b <= 16 * large.len(), "{shape:?}: {b} for {}", large.len());
        }
    }

    #[test]
    fn a_megabyte_of_brackets_is_no_line() {
        let line = "[".repeat(1 << 20);
        assert!(parse_line(&line).is_none());
        assert!(work(&line) <= 4 << 20);
    }

    #[test]
    fn a_huge_timestamp_has_no_nanoseconds() {
        let l = parse_line("  a-1 [000] ..... 99999999999999.000001: e: x").unwrap();
        assert_eq!(l.timestamp_ns(), None);
        let l = parse_line("  a-1 [000] ..... 18446744073.709551615: e: x").unwrap();
        assert_eq!(l.timestamp_ns(), Some(u64::MAX));
        let l = parse_line("  a-1 [000] ..... 18446744073.709551616: e: x").unwrap();
        assert_eq!(l.timestamp_ns(), None);
    }

    #[test]
    fn headers_and_noise() {
        assert!(parse_line("# tracer: nop").is_none());
        assert!(parse_line("#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION").is_none());
        assert!(parse_line("").is_none());
        assert!(parse_line("CPU:1 [LOST 3 EVENTS]").is_none());
    }

    #[test]
    fn syscall_and_function_lines() {
        let l = parse_line("        tracectl-10474   [000] .....   626.243848: sys_write -> 0x1")
            .unwrap();
        assert_eq!((l.event, l.body), ("sys_write", "-> 0x1"));
        let l = parse_line("  cat-5 [001] ..... 1.000000: sys_openat(dfd: ffffff9c, filename: 7ffd, flags: 0, mode: 0)").unwrap();
        assert_eq!(
            (l.event, l.body),
            (
                "sys_openat",
                "(dfd: ffffff9c, filename: 7ffd, flags: 0, mode: 0)"
            )
        );
        let l = parse_line("  cat-5 [001] ..... 1.000000: do_sys_openat2 <-do_syscall_64").unwrap();
        assert_eq!((l.event, l.body), ("do_sys_openat2", "<-do_syscall_64"));
    }
}
