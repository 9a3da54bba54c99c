//! Event triggers (`events/SYS/EVENT/trigger`) as a typed model.

use std::fmt;

use super::events::EventName;
use super::instance::Instance;
use super::{AppendMode, TracefsError};

/// What a trigger does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TriggerAction {
    /// `traceon`.
    TraceOn,
    /// `traceoff`.
    TraceOff,
    /// `snapshot`.
    Snapshot,
    /// `stacktrace`.
    Stacktrace,
    /// `enable_event:SYS:EVENT`.
    EnableEvent(EventName),
    /// `disable_event:SYS:EVENT`.
    DisableEvent(EventName),
    /// `hist:...`.
    Hist(Hist),
    /// Anything else, written as given (e.g. `onmatch` actions of synthetic events).
    Raw(String),
}

/// A hist trigger's parts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Hist {
    /// `keys=`.
    pub keys: Vec<String>,
    /// `vals=`.
    pub values: Vec<String>,
    /// `sort=`.
    pub sort: Vec<String>,
    /// `size=`.
    pub size: Option<u32>,
    /// `name=` (shared histograms).
    pub name: Option<String>,
    /// `:pause`, `:cont` or `:clear` appended to the trigger.
    pub command: Option<HistCommand>,
}

/// A command given to an existing hist trigger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HistCommand {
    /// `pause`.
    Pause,
    /// `cont` (continue).
    Continue,
    /// `clear`.
    Clear,
}

/// One trigger: action, optional `:count`, optional `if FILTER`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trigger {
    /// What to do.
    pub action: TriggerAction,
    /// How many times (`:N`); `None` for unlimited.
    pub count: Option<u64>,
    /// `if FILTER`.
    pub filter: Option<String>,
}

impl Trigger {
    /// A trigger without count or filter.
    pub fn new(action: TriggerAction) -> Trigger {
        Trigger {
            action,
            count: None,
            filter: None,
        }
    }

    /// With `:count`.
    pub fn count(mut self, n: u64) -> Trigger {
        self.count = Some(n);
        self
    }

    /// With `if FILTER`.
    pub fn when(mut self, filter: impl Into<String>) -> Trigger {
        self.filter = Some(filter.into());
        self
    }

    /// Parse a trigger as written or as the kernel lists it (`traceon:unlimited`,
    /// `enable_event:sched:sched_switch:count=3 if pid == 1`, `hist:keys=pid:vals=hitcount:sort=hitcount:size=2048 [active]`).
    /// Unknown forms come back as [`TriggerAction::Raw`].
    pub fn parse(text: &str) -> Trigger {
        let text = text.trim();
        let text = text
            .strip_suffix("[active]")
            .or_else(|| text.strip_suffix("[paused]"))
            .unwrap_or(text)
            .trim();
        let (head, filter) = match text.find(" if ") {
            Some(i) => (text[..i].trim(), Some(text[i + 4..].trim().to_string())),
            None => (text, None),
        };
        let parts: Vec<&str> = head.split(':').collect();
        let count_of = |s: &str| -> Option<Option<u64>> {
            let s = s.strip_prefix("count=").unwrap_or(s);
            if s == "unlimited" {
                Some(None)
            } else {
                s.parse().ok().map(Some)
            }
        };
        let simple = |a: TriggerAction, rest: &[&str]| -> Option<Trigger> {
            match rest {
                [] => Some(Trigger {
                    action: a,
                    count: None,
                    filter: filter.clone(),
                }),
                [c] => Some(Trigger {
                    action: a,
                    count: count_of(c)?,
                    filter: filter.clone(),
                }),
                _ => None,
            }
        };
        let parsed = match parts[0] {
            "traceon" => simple(TriggerAction::TraceOn, &parts[1..]),
            "traceoff" => simple(TriggerAction::TraceOff, &parts[1..]),
            "snapshot" => simple(TriggerAction::Snapshot, &parts[1..]),
            "stacktrace" => simple(TriggerAction::Stacktrace, &parts[1..]),
            "enable_event" | "disable_event" if parts.len() >= 3 => {
                let ev = EventName::new(parts[1], parts[2]);
                let a = if parts[0] == "enable_event" {
                    TriggerAction::EnableEvent(ev)
                } else {
                    TriggerAction::DisableEvent(ev)
                };
                simple(a, &parts[3..])
            }
            "hist" => parse_hist(&parts[1..]).map(|h| Trigger {
                action: TriggerAction::Hist(h),
                count: None,
                filter: filter.clone(),
            }),
            _ => None,
        };
        parsed.unwrap_or_else(|| Trigger {
            action: TriggerAction::Raw(text.to_string()),
            count: None,
            filter: None,
        })
    }
}

fn parse_hist(parts: &[&str]) -> Option<Hist> {
    let mut h = Hist::default();
    let list = |v: &str| v.split(',').map(String::from).collect::<Vec<_>>();
    for p in parts {
        match p.split_once('=') {
            Some(("keys" | "key", v)) => h.keys = list(v),
            Some(("vals" | "values", v)) => h.values = list(v),
            Some(("sort", v)) => h.sort = list(v),
            Some(("size", v)) => h.size = Some(v.parse().ok()?),
            Some(("name", v)) => h.name = Some(v.to_string()),
            None if *p == "pause" => h.command = Some(HistCommand::Pause),
            None if *p == "cont" || *p == "continue" => h.command = Some(HistCommand::Continue),
            None if *p == "clear" => h.command = Some(HistCommand::Clear),
            _ => return None,
        }
    }
    if h.keys.is_empty() {
        return None;
    }
    Some(h)
}

impl fmt::Display for Trigger {
    /// The text the kernel accepts in a `trigger` file.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.action {
            TriggerAction::TraceOn => f.write_str("traceon")?,
            TriggerAction::TraceOff => f.write_str("traceoff")?,
            TriggerAction::Snapshot => f.write_str("snapshot")?,
            TriggerAction::Stacktrace => f.write_str("stacktrace")?,
            TriggerAction::EnableEvent(e) => write!(f, "enable_event:{}:{}", e.system, e.name)?,
            TriggerAction::DisableEvent(e) => write!(f, "disable_event:{}:{}", e.system, e.name)?,
            TriggerAction::Hist(h) => {
                write!(f, "hist:keys={}", h.keys.join(","))?;
                if !h.values.is_empty() {
                    write!(f, ":vals={}", h.values.join(","))?;
                }
                if !h.sort.is_empty() {
                    write!(f, ":sort={}", h.sort.join(","))?;
                }
                if let Some(s) = h.size {
                    write!(f, ":size={s}")?;
                }
                if let Some(n) = &h.name {
                    write!(f, ":name={n}")?;
                }
                match h.command {
                    Some(HistCommand::Pause) => f.write_str(":pause")?,
                    Some(HistCommand::Continue) => f.write_str(":cont")?,
                    Some(HistCommand::Clear) => f.write_str(":clear")?,
                    None => {}
                }
            }
            TriggerAction::Raw(r) => return f.write_str(r),
        }
        if let Some(c) = self.count {
            write!(f, ":{c}")?;
        }
        if let Some(flt) = &self.filter {
            write!(f, " if {flt}")?;
        }
        Ok(())
    }
}

/// Parse a `trigger` file: skip the `# Available triggers` header.
pub fn parse_trigger_file(text: &str) -> Vec<Trigger> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(Trigger::parse)
        .collect()
}

/// The text that removes a listed trigger: `!` and the trigger without its count
/// (the kernel matches removals on the command and its event, not the remaining count).
pub fn removal_text(listed: &str) -> String {
    let t = listed.trim();
    let t = t
        .strip_suffix("[active]")
        .or_else(|| t.strip_suffix("[paused]"))
        .unwrap_or(t)
        .trim();
    if t.starts_with("hist:") {
        // The kernel finds a hist trigger to remove by its whole definition, filter included.
        return format!("!{t}");
    }
    let head = match t.find(" if ") {
        Some(i) => &t[..i],
        None => t,
    };
    let parts: Vec<&str> = head.split(':').collect();
    let keep = match parts[0] {
        "enable_event" | "disable_event" => parts.len().min(3),
        _ => 1,
    };
    format!("!{}", parts[..keep].join(":"))
}

/// The commands an event's `trigger` file offers, from the `# Available triggers:`
/// header the kernel shows while the event has no trigger (None when it has some).
fn available_trigger_commands(file_text: &str) -> Option<Vec<String>> {
    let mut lines = file_text.lines();
    lines.find(|l| l.trim() == "# Available triggers:")?;
    let list = lines.next()?.trim().strip_prefix('#')?;
    Some(list.split_whitespace().map(String::from).collect())
}

impl Instance {
    /// Check a trigger before writing it to event `e`, as the kernel would read it: the
    /// command is one this kernel offers (the `# Available triggers:` list of the
    /// event's `trigger` file, when it shows one), a count is a number, an
    /// `enable_event`/`disable_event` names an existing event, and `if` has a filter.
    /// Returns that filter, for the caller to check against the event's format.
    pub fn check_trigger(&self, e: &EventName, text: &str) -> Result<Option<String>, TracefsError> {
        let file = e.dir().join("trigger");
        let bad = |detail: String| TracefsError::BadValue {
            path: self.path(&file),
            detail,
        };
        let text = text.trim();
        let (head, filter) = match text.split_once(" if") {
            Some((h, f)) if f.is_empty() || f.starts_with(char::is_whitespace) => {
                let f = f.trim();
                if f.is_empty() {
                    return Err(bad(format!("{text:?}: `if` needs a filter after it")));
                }
                (h.trim(), Some(f.to_string()))
            }
            _ => (text, None),
        };
        // A removal (`!TRIGGER`) is the kernel's to match against what is set.
        if head.starts_with('!') {
            return Ok(filter);
        }
        let parts: Vec<&str> = head.split(':').collect();
        let command = parts[0];
        if let Some(offered) = self
            .read_string(&file)
            .ok()
            .and_then(|t| available_trigger_commands(&t))
        {
            if !offered.iter().any(|c| c == command) {
                return Err(bad(format!(
                    "no trigger {command:?} in this kernel; it offers: {}",
                    offered.join(" ")
                )));
            }
        }
        let count_at = match command {
            "traceon" | "traceoff" | "snapshot" | "stacktrace" => 1,
            "enable_event" | "disable_event" | "enable_hist" | "disable_hist" => {
                let [_, system, name, ..] = parts[..] else {
                    return Err(bad(format!(
                        "{text:?}: {command} needs SYSTEM:EVENT (e.g. {command}:sched:sched_wakeup)"
                    )));
                };
                let target = EventName::new(system, name);
                if !self.tracefs().exists(target.dir()) {
                    let known = self.tracefs().available_events().unwrap_or_default();
                    let names: Vec<String> = known.iter().map(|e| e.to_string()).collect();
                    return Err(TracefsError::UnknownEvent {
                        name: target.to_string(),
                        suggestions: super::suggest::closest(
                            &target.to_string(),
                            names.iter().map(String::as_str),
                            3,
                        ),
                    });
                }
                3
            }
            // hist and the rest: their syntax is the kernel's to judge.
            _ => return Ok(filter),
        };
        if let Some(count) = parts.get(count_at) {
            if count.is_empty() || !count.chars().all(|c| c.is_ascii_digit()) {
                return Err(bad(format!(
                    "{text:?}: the count after {command} must be a number, not {count:?}"
                )));
            }
        }
        Ok(filter)
    }

    /// The triggers of an event (its `trigger` file).
    pub fn triggers(&self, e: &EventName) -> Result<Vec<Trigger>, TracefsError> {
        Ok(parse_trigger_file(
            &self.read_string(e.dir().join("trigger"))?,
        ))
    }

    /// The raw lines of an event's `trigger` file, without the header.
    pub fn trigger_lines(&self, e: &EventName) -> Result<Vec<String>, TracefsError> {
        Ok(super::file::entry_lines(
            &self.read_string(e.dir().join("trigger"))?,
        ))
    }

    /// Add a trigger to an event (appended: the kernel adds, it never replaces).
    pub fn add_trigger(&self, e: &EventName, t: &Trigger) -> Result<(), TracefsError> {
        self.add_trigger_raw(e, &t.to_string())
    }

    /// Add a trigger written as text.
    pub fn add_trigger_raw(&self, e: &EventName, text: &str) -> Result<(), TracefsError> {
        self.write(e.dir().join("trigger"), text.as_bytes(), AppendMode::Append)
    }

    /// Remove a trigger (`!TRIGGER`, appended).
    pub fn remove_trigger(&self, e: &EventName, t: &Trigger) -> Result<(), TracefsError> {
        self.write(
            e.dir().join("trigger"),
            removal_text(&t.to_string()).as_bytes(),
            AppendMode::Append,
        )
    }

    /// Remove every trigger of an event; returns how many there were.
    ///
    /// Opening the file with O_TRUNC makes the kernel drop the hist triggers (in any
    /// order, whatever refers to what); each trigger still listed then gets its `!` line.
    pub fn clear_triggers(&self, e: &EventName) -> Result<usize, TracefsError> {
        let file = e.dir().join("trigger");
        let lines = self.trigger_lines(e)?;
        if lines.iter().any(|l| l.starts_with("hist")) {
            self.write(&file, b"", AppendMode::Truncate)?;
        }
        // Plain triggers first: an enable_hist/disable_hist may point at a hist trigger.
        let mut left = self.trigger_lines(e)?;
        left.sort_by_key(|l| l.starts_with("hist"));
        // Each `!` line opened like `echo '!traceoff' > trigger`: the kernel removes that
        // trigger (and any hist trigger, already gone here), and a copied tree keeps
        // exactly the last line written.
        for l in &left {
            self.write(&file, removal_text(l).as_bytes(), AppendMode::Truncate)?;
        }
        Ok(lines.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_forms() {
        assert_eq!(
            Trigger::new(TriggerAction::TraceOff).to_string(),
            "traceoff"
        );
        assert_eq!(
            Trigger::new(TriggerAction::TraceOn)
                .count(5)
                .when("prev_pid == 1")
                .to_string(),
            "traceon:5 if prev_pid == 1"
        );
        assert_eq!(
            Trigger::new(TriggerAction::EnableEvent(EventName::new(
                "irq",
                "softirq_entry"
            )))
            .count(2)
            .to_string(),
            "enable_event:irq:softirq_entry:2"
        );
        let h = Hist {
            keys: vec!["next_pid".into()],
            values: vec!["hitcount".into()],
            sort: vec!["hitcount.descending".into()],
            size: Some(4096),
            name: Some("sw".into()),
            command: None,
        };
        assert_eq!(
            Trigger::new(TriggerAction::Hist(h)).when("next_prio < 100").to_string(),
            "hist:keys=next_pid:vals=hitcount:sort=hitcount.descending:size=4096:name=sw if next_prio < 100"
        );
    }

    #[test]
    fn parse_listed() {
        let t = Trigger::parse("traceon:unlimited if prev_pid == 1");
        assert_eq!(
            t,
            Trigger::new(TriggerAction::TraceOn).when("prev_pid == 1")
        );
        let t = Trigger::parse("stacktrace:count=3");
        assert_eq!(t, Trigger::new(TriggerAction::Stacktrace).count(3));
        let t = Trigger::parse("disable_event:sched:sched_switch:unlimited");
        assert_eq!(
            t.action,
            TriggerAction::DisableEvent(EventName::new("sched", "sched_switch"))
        );
        let t = Trigger::parse("hist:keys=pid:vals=hitcount:sort=hitcount:size=2048 [active]");
        match t.action {
            TriggerAction::Hist(h) => {
                assert_eq!(h.keys, vec!["pid"]);
                assert_eq!(h.size, Some(2048));
            }
            a => panic!("{a:?}"),
        }
        assert!(matches!(
            Trigger::parse("onmax(x).save(y)").action,
            TriggerAction::Raw(_)
        ));
        let listed = "# Available triggers:\n# traceon traceoff stacktrace enable_event disable_event\ntraceoff:unlimited\n";
        assert_eq!(
            parse_trigger_file(listed),
            vec![Trigger::new(TriggerAction::TraceOff)]
        );
    }

    #[test]
    fn removal() {
        assert_eq!(removal_text("traceoff:unlimited"), "!traceoff");
        assert_eq!(removal_text("traceon:3 if pid == 1"), "!traceon");
        assert_eq!(
            removal_text("enable_event:irq:softirq_entry:unlimited"),
            "!enable_event:irq:softirq_entry"
        );
        assert_eq!(
            removal_text("hist:keys=pid:vals=hitcount:sort=hitcount:size=2048 [active]"),
            "!hist:keys=pid:vals=hitcount:sort=hitcount:size=2048"
        );
        assert_eq!(
            removal_text("hist:keys=pid:vals=hitcount:sort=hitcount:size=2048 if pid > 1 [paused]"),
            "!hist:keys=pid:vals=hitcount:sort=hitcount:size=2048 if pid > 1"
        );
    }
}
