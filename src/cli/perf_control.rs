//! `perf stat --control`: commands read from a descriptor or a FIFO while counting
//! (`enable`, `disable`, `enable NAME`, `disable NAME`, `ping`, `evlist`...), each
//! answered with perf's `ack\n\0` on the acknowledgement descriptor, as perf 6.1 answers.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::OpenOptionsExt;

use anyhow::{Context as _, Result};
use tracectl::perf::{EventSpec, StatSession};

/// The control descriptor and the acknowledgement one.
pub(super) struct Control {
    ctl: File,
    ack: Option<File>,
    /// Bytes read that do not end a command yet.
    pending: Vec<u8>,
}

/// perf's longest command: longer text is cut into commands of this many bytes.
const MAX_COMMAND: usize = 63;

impl Control {
    /// Open what `--control fd:CTL[,ACK]` or `--control fifo:CTL[,ACK]` names. The
    /// descriptors must be open (inherited); the FIFOs are opened for reading and
    /// writing, without blocking, as perf opens them.
    pub(super) fn open(spec: &str) -> Result<Control> {
        let bad = || {
            anyhow::anyhow!("--control {spec}: give fd:CTL-FD[,ACK-FD] or fifo:CTL-FIFO[,ACK-FIFO]")
        };
        let (kind, rest) = spec.split_once(':').ok_or_else(bad)?;
        let mut parts = rest.splitn(2, ',');
        let ctl = parts.next().filter(|s| !s.is_empty()).ok_or_else(bad)?;
        let ack = parts.next();
        let (ctl, ack) = match kind {
            "fd" => {
                // The descriptors are inherited: open what they refer to anew (through
                // /proc), so that reading never blocks.
                let fd = |s: &str, write: bool| -> Result<File> {
                    let n: u32 = s.parse().map_err(|_| bad())?;
                    std::fs::OpenOptions::new()
                        .read(!write)
                        .write(write)
                        .custom_flags(libc::O_NONBLOCK)
                        .open(format!("/proc/self/fd/{n}"))
                        .with_context(|| format!("--control {spec}: descriptor {n} is not open"))
                };
                (fd(ctl, false)?, ack.map(|a| fd(a, true)).transpose()?)
            }
            "fifo" => {
                let open = |p: &str| -> Result<File> {
                    std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .custom_flags(libc::O_NONBLOCK)
                        .open(p)
                        .with_context(|| format!("--control {spec}: cannot open '{p}'"))
                };
                (open(ctl)?, ack.map(open).transpose()?)
            }
            _ => return Err(bad()),
        };
        Ok(Control {
            ctl,
            ack,
            pending: Vec::new(),
        })
    }

    /// Read the commands that arrived and carry them out on `session`. Messages go to
    /// stderr, as perf prints them.
    pub(super) fn serve(&mut self, session: &StatSession, events: &[EventSpec]) -> Result<()> {
        let mut buf = [0u8; 256];
        loop {
            match self.ctl.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e).context("reading the --control descriptor"),
            }
        }
        loop {
            let end = self
                .pending
                .iter()
                .position(|&b| b == b'\n' || b == 0)
                .or((self.pending.len() >= MAX_COMMAND).then_some(MAX_COMMAND));
            let Some(end) = end else { break };
            let cmd = String::from_utf8_lossy(&self.pending[..end]).into_owned();
            let used = (end + 1).min(self.pending.len());
            self.pending.drain(..used);
            if self.run(&cmd, session, events)? {
                if let Some(ack) = self.ack.as_mut() {
                    if let Err(e) = ack.write_all(b"ack\n\0") {
                        eprintln!("failed to write to ctl_ack_fd: {e}");
                    }
                }
            }
        }
        Ok(())
    }

    /// Carry out one command; whether perf acknowledges it.
    fn run(&self, cmd: &str, session: &StatSession, events: &[EventSpec]) -> Result<bool> {
        // perf matches the command's first letters only.
        for (tag, enable) in [("enable", true), ("disable", false)] {
            let Some(rest) = cmd.strip_prefix(tag) else {
                continue;
            };
            let name = match rest.strip_prefix(' ') {
                Some(n) => Some(n),
                None if rest.is_empty() => None,
                None => {
                    eprintln!("failed: wrong command");
                    return Ok(true);
                }
            };
            let what = if enable { "enabled" } else { "disabled" };
            match name {
                None => {
                    if enable {
                        session.enable()
                    } else {
                        session.disable()
                    }
                    .with_context(|| format!("control command '{cmd}'"))?;
                    eprintln!("Events {what}");
                }
                Some(n) => match events.iter().position(|e| e.name == n) {
                    Some(i) => {
                        if enable {
                            session.enable_event(i)
                        } else {
                            session.disable_event(i)
                        }
                        .with_context(|| format!("control command '{cmd}'"))?;
                        eprintln!("Event {n} {what}");
                    }
                    None => eprintln!("failed: can't find '{n}' event"),
                },
            }
            return Ok(true);
        }
        if cmd.starts_with("snapshot") {
            // perf stat takes no snapshots and does not acknowledge the command.
            return Ok(false);
        }
        if let Some(rest) = cmd.strip_prefix("evlist") {
            match rest {
                "" => events.iter().for_each(|e| eprintln!("{}", e.name)),
                " -g" => eprint!("{}", groups_text(events)),
                " -F" => events
                    .iter()
                    .for_each(|e| eprintln!("{}: sample_period=0", e.name)),
                " -v" => eprint!("{}", attrs_text(session, events)),
                _ => eprintln!("failed: wrong command"),
            }
            return Ok(true);
        }
        // `stop` ends nothing in perf stat; `ping` only asks for the acknowledgement.
        Ok(cmd.starts_with("stop") || cmd.starts_with("ping"))
    }
}

/// `evlist -g`: one line per group leader or lone event, a group as `{a,b}`.
fn groups_text(events: &[EventSpec]) -> String {
    let mut out = String::new();
    for (i, e) in events.iter().enumerate() {
        if e.leader != i {
            continue;
        }
        let members: Vec<&str> = events
            .iter()
            .filter(|m| m.leader == i)
            .map(|m| m.name.as_str())
            .collect();
        if members.len() > 1 {
            out.push_str(&format!("{{{}}}\n", members.join(",")));
        } else {
            out.push_str(&format!("{}\n", e.name));
        }
    }
    out
}

/// `evlist -v`: each event's name and the fields of its attr that are not zero, as perf
/// writes them (`name: key: value, ...`).
fn attrs_text(session: &StatSession, events: &[EventSpec]) -> String {
    let mut out = String::new();
    for (i, e) in events.iter().enumerate() {
        let fields = session
            .attr(i)
            .map(|a| tracectl::render::perf_header::attr_fields(&a))
            .unwrap_or_default();
        let fields: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        out.push_str(&format!("{}: {}\n", e.name, fields.join(", ")));
    }
    out
}
