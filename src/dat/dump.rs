//! `trace-cmd dump`: a trace.dat's metadata, printed the way trace-cmd 3.1.6 prints it.
//!
//! trace-cmd walks the file front to back and prints as it goes, so the order is the
//! file's: a v6 file in its fixed order, a v7 file as its strings, its section table,
//! its chain of options sections, then the sections the options point at, last option
//! first. Each selected option turns on every line trace-cmd tags with it (a line can
//! carry several tags: the summary line of a section shows with `--summary` and with its
//! own option). What trace-cmd's printing does to the text is kept too: stored text is
//! printed in pieces of at most 1023 bytes, each up to its first NUL, and no line is
//! longer than 1023 bytes.

use std::fmt;
use std::io::{self, Write};

use super::error::DatError;
use super::input::{FileCur, Input, SliceCur};
use super::options::{opt, DatOption};
use super::reader::{BufferData, DatFile};
use super::tracing_data::{read_event_systems, read_ftrace_formats, read_headers};

/// Which parts to print; the fields are trace-cmd dump's options.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DumpSelect {
    /// `--summary`: the file's layout, one line per part (what an empty selection prints).
    pub summary: bool,
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
    /// `--options`: every option with its payload.
    pub options: bool,
    /// `--flyrecord`: where each CPU's data is (v7: each buffer's section and option).
    pub flyrecord: bool,
    /// `--clock`: the stored trace_clock text.
    pub clock: bool,
    /// `--strings`: the v7 strings section (section descriptions) with offsets.
    pub strings: bool,
    /// `--sections`: the v7 section table.
    pub sections: bool,
}

impl DumpSelect {
    /// `--all`: everything.
    pub fn all() -> DumpSelect {
        DumpSelect {
            summary: true,
            head_page: true,
            head_event: true,
            ftrace_events: true,
            systems: true,
            events: true,
            kallsyms: true,
            printk: true,
            cmd_lines: true,
            options: true,
            flyrecord: true,
            clock: true,
            strings: true,
            sections: true,
        }
    }

    fn bits(&self) -> u32 {
        [
            (self.summary, tag::SUMMARY),
            (self.head_page, tag::HEAD_PAGE),
            (self.head_event, tag::HEAD_EVENT),
            (self.ftrace_events, tag::FTRACE_FORMAT),
            (self.systems, tag::EVENT_SYSTEMS),
            (self.events, tag::EVENT_FORMAT),
            (self.kallsyms, tag::KALLSYMS),
            (self.printk, tag::TRACE_PRINTK),
            (self.cmd_lines, tag::CMDLINES),
            (self.options, tag::OPTIONS),
            (self.flyrecord, tag::FLYRECORD),
            (self.clock, tag::CLOCK),
            (self.sections, tag::SECTIONS),
            (self.strings, tag::STRINGS),
        ]
        .iter()
        .filter(|(on, _)| *on)
        .fold(0, |acc, (_, bit)| acc | bit)
    }
}

/// The tags trace-cmd puts on each printed line; a line prints when one of its tags is
/// selected.
mod tag {
    pub const SUMMARY: u32 = 1 << 0;
    pub const HEAD_PAGE: u32 = 1 << 1;
    pub const HEAD_EVENT: u32 = 1 << 2;
    pub const FTRACE_FORMAT: u32 = 1 << 3;
    pub const EVENT_SYSTEMS: u32 = 1 << 4;
    pub const EVENT_FORMAT: u32 = 1 << 5;
    pub const KALLSYMS: u32 = 1 << 6;
    pub const TRACE_PRINTK: u32 = 1 << 7;
    pub const CMDLINES: u32 = 1 << 8;
    pub const OPTIONS: u32 = 1 << 9;
    pub const FLYRECORD: u32 = 1 << 10;
    pub const CLOCK: u32 = 1 << 11;
    pub const SECTIONS: u32 = 1 << 12;
    pub const STRINGS: u32 = 1 << 13;
}

/// The first option id trace-cmd 3.1.6 does not know as a section.
const SECTION_ID_MAX: u16 = 23;

/// A dump failure: the file could not be read, or the output could not be written.
#[derive(Debug)]
#[non_exhaustive]
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

impl std::error::Error for DumpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DumpError::Dat(e) => Some(e),
            DumpError::Io(e) => Some(e),
        }
    }
}

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

/// trace-cmd formats each line into a 1024-byte buffer.
const LINE_MAX: usize = 1023;

/// Writes the lines whose tags are selected.
struct Printer<'o> {
    out: &'o mut dyn Write,
    bits: u32,
}

impl Printer<'_> {
    fn on(&self, tags: u32) -> bool {
        tags & self.bits != 0
    }

    fn line(&mut self, tags: u32, args: fmt::Arguments<'_>) -> io::Result<()> {
        if !self.on(tags) {
            return Ok(());
        }
        let s = args.to_string();
        let b = s.as_bytes();
        self.out.write_all(&b[..b.len().min(LINE_MAX)])
    }

    /// Stored text: in pieces of 1023 bytes, each up to its first NUL, then a newline.
    fn text(&mut self, tags: u32, text: &[u8]) -> io::Result<()> {
        if !self.on(tags) {
            return Ok(());
        }
        for piece in text.chunks(LINE_MAX) {
            let end = piece.iter().position(|&c| c == 0).unwrap_or(piece.len());
            self.out.write_all(&piece[..end])?;
        }
        self.out.write_all(b"\n")
    }
}

macro_rules! say {
    ($p:expr, $tags:expr, $($fmt:tt)*) => {
        $p.line($tags, format_args!($($fmt)*))?
    };
}

/// The text up to its first NUL, as C's `%s` prints it.
fn c_str(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// A v7 section header: `(id, flags, description string offset, stored body size)`.
fn section_header(dat: &DatFile, offset: u64) -> Result<(u16, u16, i32, u64), DatError> {
    let h = dat.source().read_at(offset, 16, "section header")?;
    let e = dat.endian();
    Ok((
        e.u16(&h[0..2]),
        e.u16(&h[2..4]),
        e.u32(&h[4..8]) as i32,
        e.u64(&h[8..16]),
    ))
}

/// The section descriptions of a v7 file: its STRINGS sections, concatenated.
struct Strings(Vec<u8>);

impl Strings {
    fn get(&self, offset: i32) -> String {
        match usize::try_from(offset) {
            Ok(o) if o < self.0.len() => c_str(&self.0[o..]),
            _ => "Unknown".to_string(),
        }
    }
}

/// Calls `f` with the offset and header of each v7 section, first to last.
fn walk_sections(
    dat: &DatFile,
    mut f: impl FnMut(u64, (u16, u16, i32, u64)) -> Result<(), DumpError>,
) -> Result<(), DumpError> {
    let len = dat.source().len;
    let mut at = dat.metadata_start();
    // Like trace-cmd, the walk ends where no section id can be read.
    while len.saturating_sub(at) >= 2 {
        let h = section_header(dat, at)?;
        f(at, h)?;
        at = at.saturating_add(16).saturating_add(h.3);
    }
    Ok(())
}

/// Print the selected parts of `dat` to `out` as `trace-cmd dump` does; `name` is the
/// file name as the user gave it (trace-cmd prints it in the summary). An empty
/// selection prints nothing and only checks that the file reads to its end (`-v`).
pub fn dump(
    dat: &DatFile,
    name: &str,
    sel: &DumpSelect,
    out: &mut dyn Write,
) -> Result<(), DumpError> {
    let mut p = Printer {
        out,
        bits: sel.bits(),
    };
    let h = dat.header();
    say!(p, tag::SUMMARY, "\n Tracing meta data in file {name}:\n");
    say!(p, tag::SUMMARY, "\t[Initial format]\n");
    say!(p, tag::SUMMARY, "\t\t{}\t[Version]\n", h.version);
    let big = h.endian == crate::endian::Endianness::Big;
    say!(
        p,
        tag::SUMMARY,
        "\t\t{}\t[{} endian]\n",
        big as u8,
        if big { "Big" } else { "Little" }
    );
    say!(
        p,
        tag::SUMMARY,
        "\t\t{}\t[Bytes in a long]\n",
        h.file_long_size
    );
    say!(
        p,
        tag::SUMMARY,
        "\t\t{}\t[Page size, bytes]\n",
        h.page_size as i32
    );
    if h.version >= 7 {
        say!(
            p,
            tag::SUMMARY,
            "\t\t{}\t[Compression algorithm]\n",
            h.compression.name()
        );
        say!(
            p,
            tag::SUMMARY,
            "\t\t{}\t[Compression version]\n",
            h.compression_version
        );
        dump_v7(dat, &mut p)
    } else {
        dump_v6(dat, &mut p)
    }
}

fn dump_v6(dat: &DatFile, p: &mut Printer<'_>) -> Result<(), DumpError> {
    let mut cur = FileCur {
        src: dat.source(),
        pos: dat.metadata_start(),
        section: "header_page".into(),
    };
    print_tracing_data(p, &mut cur, TracingPart::All)?;
    say!(
        p,
        tag::SUMMARY,
        "\t{} [CPUs with tracing data]\n",
        dat.nr_cpus()
    );
    let mut list = Vec::new();
    let mut has_clock = false;
    for o in &dat.options().all {
        print_option(dat, p, o, None, &mut list, &mut has_clock)?;
    }
    say!(
        p,
        tag::SUMMARY | tag::OPTIONS,
        "\t[{} options]\n",
        dat.options().all.len()
    );
    match dat.buffers().first().map(|b| &b.data) {
        Some(BufferData::Latency { .. }) => {
            say!(p, tag::SUMMARY, "\t[Latency tracing data]\n");
        }
        Some(BufferData::Flyrecord(cpus)) => {
            say!(
                p,
                tag::SUMMARY | tag::FLYRECORD,
                "\t[Flyrecord tracing data]\n"
            );
            // `%10.lld`: a zero prints as blanks.
            let num = |v: u64| match v as i64 {
                0 => " ".repeat(10),
                v => format!("{v:>10}"),
            };
            for (i, c) in cpus.iter().enumerate() {
                say!(
                    p,
                    tag::FLYRECORD,
                    "\t {} {}\t[offset, size of cpu {i}]\n",
                    num(c.offset),
                    num(c.size)
                );
            }
            say!(p, tag::SUMMARY | tag::CLOCK, "\t[Tracing clock]\n");
            if !has_clock {
                say!(
                    p,
                    tag::SUMMARY | tag::CLOCK,
                    "\t\t No tracing clock saved in the file\n"
                );
            } else if let Some(clock) = dat.v6_clock_text() {
                say!(
                    p,
                    tag::SUMMARY | tag::CLOCK,
                    "\t\t{}\n",
                    c_str(clock.as_bytes())
                );
            }
        }
        None => {}
    }
    Ok(())
}

fn dump_v7(dat: &DatFile, p: &mut Printer<'_>) -> Result<(), DumpError> {
    let mut strings = Strings(Vec::new());
    walk_sections(dat, |at, (id, _, _, _)| {
        if id != opt::STRINGS {
            return Ok(());
        }
        let (_, body, _) = dat.section_body(at, "strings")?;
        say!(p, tag::STRINGS, "\t[String @ offset]\n");
        let mut i = 0;
        while i < body.len() {
            let s = c_str(&body[i..]);
            say!(p, tag::STRINGS, "\t\t\"{s}\" @ {}\n", strings.0.len() + i);
            i += s.len() + 1;
        }
        strings.0.extend_from_slice(&body);
        Ok(())
    })?;

    let mut count = 0;
    walk_sections(dat, |at, (id, flags, desc, size)| {
        count += 1;
        let desc = strings.get(desc);
        if id >= SECTION_ID_MAX {
            say!(p, tag::SECTIONS, "Unknown section id {id}: {desc}");
        }
        if flags & 1 == 0 {
            say!(
                p,
                tag::SECTIONS,
                "\t[Section {id:2} @ {at:<16}\t\"{desc}\", flags 0x{flags:X}, {size} bytes]\n"
            );
        } else if id == opt::BUFFER || id == opt::BUFFER_TEXT {
            say!(
                p,
                tag::SECTIONS,
                "\t[Section {id:2} @ {at:<16}\t\"{desc}\", flags 0x{flags:X}, {size} compressed bytes]\n"
            );
        } else {
            let b = dat.source().read_at(at + 16, 8, "section sizes")?;
            let e = dat.endian();
            say!(
                p,
                tag::SECTIONS,
                "\t[Section {id:2} @ {at:<16}\t\"{desc}\", flags 0x{flags:X}, {} compressed, {} uncompressed]\n",
                e.u32(&b[0..4]) as i32,
                e.u32(&b[4..8]) as i32
            );
        }
        Ok(())
    })?;

    // The sections the options point at, in the order they are met.
    let mut list: Vec<(u16, u64)> = Vec::new();
    let mut has_clock = false;
    let mut options = 0;
    let all = &dat.options().all;
    for (n, s) in dat.options_sections().iter().enumerate() {
        if n > 0 {
            say!(p, tag::OPTIONS, "\n\n");
        }
        section_line(dat, p, &strings, tag::OPTIONS, s.offset)?;
        for o in &all[s.options.clone()] {
            print_option(dat, p, o, Some(&strings), &mut list, &mut has_clock)?;
            options += 1;
        }
        if let Some(done) = &s.done {
            options += 1;
            say!(
                p,
                tag::OPTIONS,
                "\t\t[Option DONE, {} bytes]\n",
                done.data.len()
            );
            if done.data.len() >= 8 {
                say!(p, tag::OPTIONS, "{}\n", dat.endian().u64(&done.data) as i64);
            }
        }
    }
    say!(p, tag::SUMMARY | tag::OPTIONS, "\t[{options} options]\n");

    for &(id, offset) in list.iter().rev() {
        let tags = match id {
            opt::HEADER_INFO => tag::HEAD_PAGE | tag::HEAD_EVENT,
            opt::FTRACE_EVENTS => tag::FTRACE_FORMAT,
            opt::EVENT_FORMATS => tag::EVENT_SYSTEMS | tag::EVENT_FORMAT,
            opt::KALLSYMS => tag::KALLSYMS,
            opt::PRINTK => tag::TRACE_PRINTK,
            _ => tag::CMDLINES,
        };
        section_line(dat, p, &strings, tags, offset)?;
        let what = section_name(id);
        let (_, body, base) = dat.section_body(offset, what)?;
        let mut cur = dat.body_cursor(&body, base, what);
        let part = match id {
            opt::HEADER_INFO => TracingPart::Headers,
            opt::FTRACE_EVENTS => TracingPart::Ftrace,
            opt::EVENT_FORMATS => TracingPart::Events,
            opt::KALLSYMS => TracingPart::Kallsyms,
            opt::PRINTK => TracingPart::Printk,
            _ => TracingPart::Cmdlines,
        };
        print_tracing_data(p, &mut cur, part)?;
    }
    say!(p, tag::SUMMARY | tag::SECTIONS, "\t[{count} sections]\n");
    Ok(())
}

/// What trace-cmd calls the section an option points at, in its errors.
fn section_name(id: u16) -> &'static str {
    match id {
        opt::HEADER_INFO => "headers",
        opt::FTRACE_EVENTS => "ftrace events",
        opt::EVENT_FORMATS => "events format",
        opt::KALLSYMS => "kallsyms",
        opt::PRINTK => "printk",
        _ => "command lines",
    }
}

/// `[Section ...]` for the section at `offset`, as printed before its contents.
fn section_line(
    dat: &DatFile,
    p: &mut Printer<'_>,
    strings: &Strings,
    tags: u32,
    offset: u64,
) -> Result<(), DumpError> {
    let (id, flags, desc, size) = section_header(dat, offset)?;
    say!(
        p,
        tags,
        "\t[Section {id} @ {offset}: \"{}\", flags 0x{flags:X}, {} bytes]\n",
        strings.get(desc),
        size as i64
    );
    Ok(())
}

/// Which part of the tracing data a cursor holds: a v6 file has them all in a row, a
/// v7 section one of them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TracingPart {
    All,
    Headers,
    Ftrace,
    Events,
    Kallsyms,
    Printk,
    Cmdlines,
}

fn print_tracing_data(
    p: &mut Printer<'_>,
    cur: &mut dyn Input,
    part: TracingPart,
) -> Result<(), DumpError> {
    use TracingPart::*;
    let wants = |x: TracingPart| part == All || part == x;
    if wants(Headers) {
        let (page, event) = read_headers(cur)?;
        say!(
            p,
            tag::SUMMARY | tag::HEAD_PAGE,
            "\t[Header page, {} bytes]\n",
            page.len()
        );
        p.text(tag::HEAD_PAGE, page.as_bytes())?;
        say!(
            p,
            tag::SUMMARY | tag::HEAD_EVENT,
            "\t[Header event, {} bytes]\n",
            event.len()
        );
        p.text(tag::HEAD_EVENT, event.as_bytes())?;
    }
    if wants(Ftrace) {
        cur.set_section("ftrace formats");
        let formats = read_ftrace_formats(cur)?;
        say!(
            p,
            tag::SUMMARY | tag::FTRACE_FORMAT,
            "\t[Ftrace format, {} events]\n",
            formats.len()
        );
        for f in &formats {
            p.text(tag::FTRACE_FORMAT, f.as_bytes())?;
        }
    }
    if wants(Events) {
        cur.set_section("event formats");
        let systems = read_event_systems(cur)?;
        say!(
            p,
            tag::SUMMARY | tag::EVENT_FORMAT | tag::EVENT_SYSTEMS,
            "\t[Events format, {} systems]\n",
            systems.len()
        );
        for (sys, formats) in &systems {
            say!(
                p,
                tag::EVENT_SYSTEMS,
                "\t\t{sys} {} [system, events]\n",
                formats.len()
            );
            for f in formats {
                p.text(tag::EVENT_FORMAT, f.as_bytes())?;
            }
        }
    }
    // Kallsyms and printk formats: a 32-bit size, then the text.
    for (part, section, tag, title) in [
        (Kallsyms, "kallsyms", tag::KALLSYMS, "Kallsyms"),
        (Printk, "printk formats", tag::TRACE_PRINTK, "Trace printk"),
    ] {
        if !wants(part) {
            continue;
        }
        cur.set_section(section);
        let n = cur.u32()? as u64;
        let t = cur.take_len(n)?;
        say!(p, tag::SUMMARY | tag, "\t[{title}, {} bytes]\n", n as i32);
        p.text(tag, &t)?;
    }
    if wants(Cmdlines) {
        cur.set_section("cmdlines");
        let n = cur.u64()?;
        let t = cur.take_len(n)?;
        say!(
            p,
            tag::SUMMARY | tag::CMDLINES,
            "\t[Saved command lines, {} bytes]\n",
            n as i32
        );
        p.text(tag::CMDLINES, &t)?;
    }
    Ok(())
}

/// One option as trace-cmd prints it. `strings` is `Some` for a v7 file; section
/// options add `(id, offset)` to `list`.
fn print_option(
    dat: &DatFile,
    p: &mut Printer<'_>,
    o: &DatOption,
    strings: Option<&Strings>,
    list: &mut Vec<(u16, u64)>,
    has_clock: &mut bool,
) -> Result<(), DumpError> {
    let size = o.data.len();
    let e = dat.endian();
    let mut cur = dat.body_cursor(&o.data, o.offset, &format!("{} option", opt::name(o.id)));
    let string_option = |p: &mut Printer<'_>, name: &str| -> io::Result<()> {
        p.line(
            tag::OPTIONS,
            format_args!("\t\t[Option {name}, {size} bytes]\n"),
        )?;
        if size > 0 {
            p.text(tag::OPTIONS, &o.data)?;
        }
        Ok(())
    };
    match o.id {
        opt::DATE => string_option(p, "DATE")?,
        opt::CPUSTAT => string_option(p, "CPUSTAT")?,
        opt::UNAME => string_option(p, "UNAME")?,
        opt::HOOK => string_option(p, "HOOK")?,
        opt::OFFSET => string_option(p, "OFFSET")?,
        opt::VERSION => string_option(p, "VERSION")?,
        opt::PROCMAPS => string_option(p, "PROCMAPS")?,
        opt::BUFFER | opt::BUFFER_TEXT => {
            if size < 8 {
                return Err(cur
                    .corrupt(format!("broken buffer option with size {size}"))
                    .into());
            }
            let offset = cur.u64()?;
            let name = cur.cstr()?;
            let Some(strings) = strings else {
                say!(
                    p,
                    tag::OPTIONS | tag::FLYRECORD,
                    "\t\t[Option BUFFER, {size} bytes]\n"
                );
                say!(
                    p,
                    tag::OPTIONS | tag::FLYRECORD,
                    "{} [offset]\n",
                    offset as i64
                );
                say!(p, tag::OPTIONS | tag::FLYRECORD, "\"{name}\" [name]\n");
                return Ok(());
            };
            section_line(dat, p, strings, tag::FLYRECORD, offset)?;
            say!(
                p,
                tag::OPTIONS | tag::FLYRECORD,
                "\t\t[Option BUFFER, {size} bytes]\n"
            );
            say!(
                p,
                tag::OPTIONS | tag::FLYRECORD,
                "{} [offset]\n",
                offset as i64
            );
            say!(p, tag::OPTIONS | tag::FLYRECORD, "\"{name}\" [name]\n");
            let clock = cur.cstr()?;
            say!(p, tag::OPTIONS | tag::FLYRECORD, "\"{clock}\" [clock]\n");
            if o.id == opt::BUFFER {
                let page_size = cur.u32()? as i32;
                say!(
                    p,
                    tag::OPTIONS | tag::FLYRECORD,
                    "{page_size} [Page size, bytes]\n"
                );
                let cpus = cur.u32()? as i32;
                say!(p, tag::OPTIONS | tag::FLYRECORD, "{cpus} [CPUs]:\n");
                let mut total: u64 = 0;
                for _ in 0..cpus.max(0) {
                    let id = cur.u32()? as i32;
                    let offset = cur.u64()? as i64;
                    let size = cur.u64()?;
                    total = total.wrapping_add(size);
                    say!(
                        p,
                        tag::OPTIONS | tag::FLYRECORD,
                        "   {id} {offset}\t{}\t[id, data offset and size]\n",
                        size as i64
                    );
                }
                say!(
                    p,
                    tag::SUMMARY,
                    "\t[buffer \"{name}\", \"{clock}\" clock, {page_size} page size, {cpus} cpus, {} bytes flyrecord data]\n",
                    total as i64
                );
            } else {
                say!(
                    p,
                    tag::SUMMARY,
                    "\t[buffer \"{name}\", \"{clock}\" clock, latency data]\n"
                );
            }
        }
        opt::TRACECLOCK => {
            say!(p, tag::OPTIONS, "\t\t[Option TRACECLOCK, {size} bytes]\n");
            p.text(tag::OPTIONS | tag::CLOCK, &o.data)?;
            *has_clock = true;
        }
        opt::CPUCOUNT => {
            say!(p, tag::OPTIONS, "\t\t[Option CPUCOUNT, {size} bytes]\n");
            let v = match size {
                1 => cur.take(1)?[0] as i8 as i32,
                2 => cur.u16()? as i16 as i32,
                4 => cur.u32()? as i32,
                8 => cur.u64()? as i32,
                _ => return Err(cur.corrupt(format!("CPUCOUNT of {size} bytes")).into()),
            };
            say!(p, tag::OPTIONS, "{v}\n");
        }
        opt::TRACEID => {
            say!(p, tag::OPTIONS, "\t\t[Option TRACEID, {size} bytes]\n");
            let v = match size {
                4 => cur.u32()? as u64,
                8 => cur.u64()?,
                _ => return Err(cur.corrupt(format!("TRACEID of {size} bytes")).into()),
            };
            say!(p, tag::OPTIONS, "0x{v:X}\n");
        }
        opt::TIME_SHIFT => print_time_shift(p, &mut cur, size)?,
        opt::GUEST => print_guest(p, &o.data, e)?,
        opt::TSC2NSEC => {
            say!(p, tag::OPTIONS, "\n\t\t[Option TSC2NSEC, {size} bytes]\n");
            let mult = cur.u32()? as i32;
            let shift = cur.u32()? as i32;
            let offset = cur.u64()?;
            say!(
                p,
                tag::OPTIONS,
                "{mult} {shift} {offset} [multiplier, shift, offset]\n"
            );
        }
        opt::HEADER_INFO
        | opt::FTRACE_EVENTS
        | opt::EVENT_FORMATS
        | opt::KALLSYMS
        | opt::PRINTK
        | opt::CMDLINES => {
            let name = match o.id {
                opt::HEADER_INFO => "HEADERS",
                opt::FTRACE_EVENTS => "FTRACE EVENTS",
                opt::EVENT_FORMATS => "EVENT FORMATS",
                opt::KALLSYMS => "KALLSYMS",
                opt::PRINTK => "PRINTK",
                _ => "CMDLINES",
            };
            let offset = cur.u64()?;
            list.push((o.id, offset));
            say!(
                p,
                tag::OPTIONS,
                "\t\t[Option {name}, {size} bytes] @ {}\n",
                offset as i64
            );
        }
        id => {
            say!(
                p,
                tag::OPTIONS,
                " {id} {size}\t[Unknown option, size - skipping]\n"
            );
        }
    }
    Ok(())
}

/// TIME_SHIFT: a peer's id, flags and, per CPU, its clock offset samples.
fn print_time_shift(
    p: &mut Printer<'_>,
    cur: &mut SliceCur<'_>,
    size: usize,
) -> Result<(), DumpError> {
    if size < 12 {
        return Err(cur
            .corrupt(format!(
                "TIME_SHIFT option of {size} bytes, at least 12 expected"
            ))
            .into());
    }
    say!(p, tag::OPTIONS, "\t\t[Option TimeShift, {size} bytes]\n");
    let trace_id = cur.u64()?;
    say!(p, tag::OPTIONS, "0x{trace_id:X} [peer's trace id]\n");
    let flags = cur.u32()?;
    say!(p, tag::OPTIONS, "0x{flags:X} [peer's protocol flags]\n");
    let cpus = cur.u32()?;
    say!(p, tag::OPTIONS, "0x{cpus:X} [peer's CPU count]\n");
    // (times, offsets, scalings, fractions) per CPU; `None` once the option runs out.
    type Samples = (Vec<u64>, Vec<i64>, Vec<i64>, Vec<u64>);
    let mut per_cpu: Vec<Samples> = Vec::new();
    let mut broken = false;
    let read = |cur: &mut SliceCur<'_>, n: u32| -> Result<Option<Vec<u64>>, DatError> {
        let mut v = Vec::new();
        for _ in 0..n {
            if cur.remaining() < 8 {
                return Ok(None);
            }
            v.push(cur.u64()?);
        }
        Ok(Some(v))
    };
    'cpus: for j in 0..cpus {
        if cur.remaining() < 4 {
            broken = true;
            break;
        }
        let count = cur.u32()?;
        say!(p, tag::OPTIONS, "{count} [samples count for CPU {j}]\n");
        let mut parts = Vec::new();
        for _ in 0..3 {
            match read(cur, count)? {
                Some(v) => parts.push(v),
                None => {
                    broken = true;
                    break 'cpus;
                }
            }
        }
        let scalings = parts.pop().unwrap_or_default();
        let offsets = parts.pop().unwrap_or_default();
        let times = parts.pop().unwrap_or_default();
        per_cpu.push((
            times,
            offsets.into_iter().map(|v| v as i64).collect(),
            scalings.into_iter().map(|v| v as i64).collect(),
            vec![0; count as usize],
        ));
    }
    if !broken && cur.remaining() > 0 {
        'frac: for cpu in per_cpu.iter_mut() {
            for f in cpu.3.iter_mut() {
                if cur.remaining() < 8 {
                    broken = true;
                    break 'frac;
                }
                *f = cur.u64()?;
            }
        }
    }
    if !broken {
        for (times, offsets, scalings, fracs) in &per_cpu {
            for i in 0..times.len() {
                say!(
                    p,
                    tag::OPTIONS,
                    "\t{} {} {} {}[offset * scaling >> fraction @ time]\n",
                    offsets[i],
                    scalings[i],
                    fracs[i],
                    times[i]
                );
            }
        }
    } else {
        say!(p, tag::OPTIONS, "Broken time shift option\n");
    }
    Ok(())
}

/// GUEST: a guest's name, trace id and which host task runs each of its CPUs.
fn print_guest(
    p: &mut Printer<'_>,
    data: &[u8],
    e: crate::endian::Endianness,
) -> Result<(), DumpError> {
    say!(
        p,
        tag::OPTIONS,
        "\t\t[Option GUEST, {} bytes]\n",
        data.len()
    );
    let name = c_str(data);
    say!(p, tag::OPTIONS, "{name} [Guest name]\n");
    let mut at = (name.len() + 1).min(data.len());
    let Some(trace_id) = e.u64_at(data, at) else {
        return Ok(());
    };
    at += 8;
    say!(p, tag::OPTIONS, "0x{trace_id:X} [trace id]\n");
    let Some(cpus) = e.u32_at(data, at) else {
        return Ok(());
    };
    at += 4;
    say!(p, tag::OPTIONS, "{} [Guest CPUs]\n", cpus as i32);
    for _ in 0..(cpus as i32).max(0) {
        let (Some(cpu), Some(pid)) = (e.u32_at(data, at), e.u32_at(data, at + 4)) else {
            break;
        };
        at += 8;
        say!(
            p,
            tag::OPTIONS,
            "  {} {} [guest cpu, host pid]\n",
            cpu as i32,
            pid as i32
        );
    }
    Ok(())
}
