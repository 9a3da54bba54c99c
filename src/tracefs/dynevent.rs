//! Dynamic events: kprobes, kretprobes, uprobes, uretprobes, eprobes and fprobes.

use std::fmt;

use super::{AppendMode, Tracefs, TracefsError};

/// The kind of a dynamic event, by its prefix letter in `dynamic_events`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeKind {
    /// `p:` on a kernel address.
    Kprobe,
    /// `r:` on a kernel function return.
    Kretprobe,
    /// `p:` on a user address (`PATH:OFFSET`).
    Uprobe,
    /// `r:` on a user function return.
    Uretprobe,
    /// `e:` on another event.
    Eprobe,
    /// `f:` function entry (`f…%return` for exit).
    Fprobe,
    /// `t:` on a tracepoint (tprobe).
    Tprobe,
    /// `s:` synthetic event.
    Synthetic,
}

impl ProbeKind {
    /// The file the kernel takes definitions of this kind in.
    pub fn file(&self) -> &'static str {
        match self {
            ProbeKind::Kprobe | ProbeKind::Kretprobe => "kprobe_events",
            ProbeKind::Uprobe | ProbeKind::Uretprobe => "uprobe_events",
            ProbeKind::Synthetic => "synthetic_events",
            ProbeKind::Eprobe | ProbeKind::Fprobe | ProbeKind::Tprobe => "dynamic_events",
        }
    }

    fn letter(&self) -> char {
        match self {
            ProbeKind::Kprobe | ProbeKind::Uprobe => 'p',
            ProbeKind::Kretprobe | ProbeKind::Uretprobe => 'r',
            ProbeKind::Eprobe => 'e',
            ProbeKind::Fprobe => 'f',
            ProbeKind::Tprobe => 't',
            ProbeKind::Synthetic => 's',
        }
    }
}

/// One dynamic event definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicEvent {
    /// The kind.
    pub kind: ProbeKind,
    /// The event group (`kprobes`, `uprobes`, `eprobes`, `fprobes`...); `None` lets the
    /// kernel choose.
    pub group: Option<String>,
    /// The event name.
    pub name: String,
    /// Maxactive for kretprobes (`r10:`).
    pub maxactive: Option<u32>,
    /// Where: `SYMBOL[+OFFS]`, `PATH:OFFSET`, `SYS.EVENT`...
    pub location: String,
    /// Fetch arguments, as written (`dfd=$arg1 comm=$comm`).
    pub args: Vec<String>,
}

impl fmt::Display for DynamicEvent {
    /// The definition line the kernel accepts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind.letter())?;
        if let Some(m) = self.maxactive {
            write!(f, "{m}")?;
        }
        f.write_str(":")?;
        if let Some(g) = &self.group {
            write!(f, "{g}/")?;
        }
        write!(f, "{} {}", self.name, self.location)?;
        for a in &self.args {
            write!(f, " {a}")?;
        }
        Ok(())
    }
}

impl DynamicEvent {
    /// Parse a line of `dynamic_events`, `kprobe_events` or `uprobe_events`. Which of
    /// kprobe/uprobe a `p:`/`r:` line is comes from its location (`/path:offset` is user).
    pub fn parse(line: &str) -> Option<DynamicEvent> {
        let line = line.trim();
        let mut words = line.split_whitespace();
        let head = words.next()?;
        let (prefix, ident) = head.split_once(':')?;
        let mut pc = prefix.chars();
        let letter = pc.next()?;
        let rest: String = pc.collect();
        let maxactive = if rest.is_empty() {
            None
        } else {
            Some(rest.parse().ok()?)
        };
        let (group, name) = match ident.split_once('/') {
            Some((g, n)) => (Some(g.to_string()), n.to_string()),
            None => (None, ident.to_string()),
        };
        let location = words.next().unwrap_or("").to_string();
        let user = location.starts_with('/');
        let kind = match (letter, user) {
            ('p', false) => ProbeKind::Kprobe,
            ('p', true) => ProbeKind::Uprobe,
            ('r', false) => ProbeKind::Kretprobe,
            ('r', true) => ProbeKind::Uretprobe,
            ('e', _) => ProbeKind::Eprobe,
            ('f', _) => ProbeKind::Fprobe,
            ('t', _) => ProbeKind::Tprobe,
            ('s', _) => ProbeKind::Synthetic,
            _ => return None,
        };
        Some(DynamicEvent {
            kind,
            group,
            name,
            maxactive,
            location,
            args: words.map(String::from).collect(),
        })
    }

    /// `-:GROUP/NAME`, the removal line.
    pub fn removal_text(&self) -> String {
        match &self.group {
            Some(g) => format!("-:{g}/{}", self.name),
            None => format!("-:{}", self.name),
        }
    }
}

impl Tracefs {
    /// Every dynamic event: `dynamic_events` when present, else `kprobe_events` and
    /// `uprobe_events`.
    pub fn dynamic_events(&self) -> Result<Vec<DynamicEvent>, TracefsError> {
        let files: &[&str] = if self.exists("dynamic_events") {
            &["dynamic_events"]
        } else {
            &["kprobe_events", "uprobe_events"]
        };
        let mut out = Vec::new();
        let mut any = false;
        for f in files {
            match self.read_string(f) {
                Ok(t) => {
                    any = true;
                    out.extend(
                        t.lines()
                            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
                            .filter_map(DynamicEvent::parse),
                    );
                }
                Err(TracefsError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if !any {
            return Err(TracefsError::NotSupported {
                path: self.path("dynamic_events"),
                feature: "dynamic events".into(),
            });
        }
        Ok(out)
    }

    fn probe_file(&self, kind: ProbeKind) -> Result<&'static str, TracefsError> {
        let f = kind.file();
        if self.exists(f) {
            return Ok(f);
        }
        if self.exists("dynamic_events") && kind != ProbeKind::Synthetic {
            return Ok("dynamic_events");
        }
        Err(TracefsError::NotSupported {
            path: self.path(f),
            feature: format!("{kind:?} events (no {f})"),
        })
    }

    /// Create a dynamic event (appended, so others stay).
    pub fn create_dynamic_event(&self, ev: &DynamicEvent) -> Result<(), TracefsError> {
        let f = self.probe_file(ev.kind)?;
        self.top()
            .write(f, format!("{ev}\n").as_bytes(), AppendMode::Append)
    }

    /// Remove one dynamic event (`-:GROUP/NAME`, appended: truncating would remove all).
    pub fn remove_dynamic_event(&self, ev: &DynamicEvent) -> Result<(), TracefsError> {
        let f = self.probe_file(ev.kind)?;
        self.top().write(
            f,
            format!("{}\n", ev.removal_text()).as_bytes(),
            AppendMode::Append,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let k = DynamicEvent::parse("p:kprobes/myprobe do_sys_open dfd=%ax").unwrap();
        assert_eq!(k.kind, ProbeKind::Kprobe);
        assert_eq!(k.group.as_deref(), Some("kprobes"));
        assert_eq!(k.to_string(), "p:kprobes/myprobe do_sys_open dfd=%ax");
        assert_eq!(k.removal_text(), "-:kprobes/myprobe");
        let r = DynamicEvent::parse("r10:kprobes/myretprobe do_sys_open $retval").unwrap();
        assert_eq!((r.kind, r.maxactive), (ProbeKind::Kretprobe, Some(10)));
        assert_eq!(r.to_string(), "r10:kprobes/myretprobe do_sys_open $retval");
        let u = DynamicEvent::parse("p:uprobes/bash_rl /bin/bash:0x4245c0").unwrap();
        assert_eq!(u.kind, ProbeKind::Uprobe);
        assert_eq!(
            DynamicEvent::parse("r:uprobes/x /bin/true:0x10")
                .unwrap()
                .kind,
            ProbeKind::Uretprobe
        );
        assert_eq!(
            DynamicEvent::parse("e:eprobes/sw sched.sched_switch")
                .unwrap()
                .kind,
            ProbeKind::Eprobe
        );
        assert_eq!(
            DynamicEvent::parse("f:fprobes/vfs_read_entry vfs_read")
                .unwrap()
                .kind,
            ProbeKind::Fprobe
        );
        assert!(DynamicEvent::parse("garbage").is_none());
    }
}
