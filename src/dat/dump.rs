//! `trace-cmd dump`'s views of a trace.dat's metadata sections, printed the way
//! trace-cmd 3.1.6 prints them (section headers of v7 files included).

use std::io::{self, Write};

use super::error::DatError;
use super::options::opt;
use super::reader::DatFile;

/// Which sections to print; the fields are trace-cmd dump's options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DumpSelect {
    /// `--head-page`.
    pub head_page: bool,
    /// `--head-event`.
    pub head_event: bool,
    /// `--ftrace-events`.
    pub ftrace_events: bool,
    /// `--systems`: each event system with its number of events.
    pub systems: bool,
    /// `--events`: the event format files.
    pub events: bool,
    /// `--kallsyms`.
    pub kallsyms: bool,
    /// `--printk`.
    pub printk: bool,
    /// `--cmd-lines`.
    pub cmd_lines: bool,
}

/// A dump failure: the file could not be read, or the output could not be written.
#[derive(Debug)]
pub enum DumpError {
    /// Reading the trace.dat failed.
    Dat(DatError),
    /// Writing the output failed.
    Io(io::Error),
}

impl std::fmt::Display for DumpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DumpError::Dat(e) => write!(f, "{e}"),
            DumpError::Io(e) => write!(f, "cannot write the dump: {e}"),
        }
    }
}

impl std::error::Error for DumpError {}

impl From<DatError> for DumpError {
    fn from(e: DatError) -> Self {
        DumpError::Dat(e)
    }
}

impl From<io::Error> for DumpError {
    fn from(e: io::Error) -> Self {
        DumpError::Io(e)
    }
}

/// The description trace-cmd stores for the section an option points at.
fn section_name(id: u16) -> &'static str {
    match id {
        opt::HEADER_INFO => "headers",
        opt::FTRACE_EVENTS => "ftrace events",
        opt::EVENT_FORMATS => "events format",
        opt::KALLSYMS => "kallsyms",
        opt::PRINTK => "printk",
        opt::CMDLINES => "command lines",
        _ => "",
    }
}

/// Print a v7 file's `[Section ...]` line for the section option `id` points at.
fn section_line(dat: &DatFile, id: u16, out: &mut dyn Write) -> Result<(), DumpError> {
    if dat.header().version < 7 {
        return Ok(());
    }
    let endian = dat.endian();
    let Some(o) = dat.options().get(id).next() else {
        return Ok(());
    };
    if o.data.len() < 8 {
        return Ok(());
    }
    let offset = endian.u64(&o.data[..8]);
    let (sid, flags, size) = dat.section_header(offset)?;
    writeln!(
        out,
        "\t[Section {sid} @ {offset}: \"{}\", flags 0x{flags:x}, {size} bytes]",
        section_name(sid)
    )?;
    Ok(())
}

/// Print the selected sections of `dat` to `out` as `trace-cmd dump` does.
pub fn dump(dat: &DatFile, sel: &DumpSelect, out: &mut dyn Write) -> Result<(), DumpError> {
    if sel.head_page {
        section_line(dat, opt::HEADER_INFO, out)?;
        let t = dat.header_page();
        writeln!(out, "\t[Header page, {} bytes]", t.len())?;
        writeln!(out, "{t}")?;
    }
    if sel.head_event {
        section_line(dat, opt::HEADER_INFO, out)?;
        let t = dat.header_event();
        writeln!(out, "\t[Header event, {} bytes]", t.len())?;
        writeln!(out, "{t}")?;
    }
    if sel.ftrace_events {
        section_line(dat, opt::FTRACE_EVENTS, out)?;
        let f = dat.ftrace_formats();
        writeln!(out, "\t[Ftrace format, {} events]", f.len())?;
        for t in f {
            writeln!(out, "{t}")?;
        }
    }
    if sel.systems || sel.events {
        section_line(dat, opt::EVENT_FORMATS, out)?;
        let mut systems: Vec<(&str, Vec<&str>)> = Vec::new();
        for (sys, text) in dat.event_formats() {
            match systems.last_mut() {
                Some((s, v)) if *s == sys.as_str() => v.push(text),
                _ => systems.push((sys, vec![text])),
            }
        }
        writeln!(out, "\t[Events format, {} systems]", systems.len())?;
        for (sys, texts) in &systems {
            if sel.systems {
                writeln!(out, "\t\t{sys} {} [system, events]", texts.len())?;
            }
            if sel.events {
                for t in texts {
                    writeln!(out, "{t}")?;
                }
            }
        }
    }
    if sel.kallsyms {
        section_line(dat, opt::KALLSYMS, out)?;
        let t = dat.kallsyms().map_err(DumpError::Dat)?;
        writeln!(out, "\t[Kallsyms, {} bytes]", t.len())?;
        writeln!(out, "{t}")?;
    }
    if sel.printk {
        section_line(dat, opt::PRINTK, out)?;
        let t = dat.printk_formats();
        writeln!(out, "\t[Trace printk, {} bytes]", t.len())?;
        writeln!(out, "{t}")?;
    }
    if sel.cmd_lines {
        section_line(dat, opt::CMDLINES, out)?;
        let t = dat.cmdlines();
        writeln!(out, "\t[Saved command lines, {} bytes]", t.len())?;
        writeln!(out, "{t}")?;
    }
    Ok(())
}
