//! The `__print_*` and `__get_*` helpers: flag and symbol tables, hex dumps, arrays,
//! bitmasks.

use super::compile::TABLE_REF;
use super::eval::Evaluator;
use super::printf::push_hex2;
use super::value::{read_elem, Value};
use super::EvalResult;
use crate::bytes::{push_dec as push_u64, push_hex};
use crate::endian::Endianness;
use crate::event::expr::Expr;
use crate::event::format::until_nul;
use crate::event::pointer;
use crate::event::PrintStyle;

pub(super) fn is_text_helper(name: &str) -> bool {
    matches!(
        name,
        "__print_flags"
            | "__print_flags_u64"
            | "__print_symbolic"
            | "__print_symbolic_u64"
            | "__print_hex"
            | "__print_hex_str"
            | "__print_array"
            | "__print_dynamic_array"
            | "__get_bitmask"
            | "__get_rel_bitmask"
            | "__get_cpumask"
            | "__get_rel_cpumask"
    )
}

/// `{0x1,0x2}` as the kernel's `trace_print_array_seq` writes it.
pub(crate) fn print_array(
    out: &mut Vec<u8>,
    b: &[u8],
    el: usize,
    count: usize,
    endian: Endianness,
) {
    out.push(b'{');
    for i in 0..count {
        if i.saturating_mul(el) >= b.len() {
            break;
        }
        if i != 0 {
            out.push(b',');
        }
        match read_elem(b, i, el, endian) {
            Some(v) => {
                crate::bytes::put(out, b"0x");
                push_hex(out, v, false);
            }
            None if matches!(el, 1 | 2 | 4 | 8) => break,
            None => {
                crate::bytes::put(out, b"BAD SIZE:");
                push_u64(out, el as u64);
                crate::bytes::put(out, b" 0x");
                push_hex(out, b.get(i * el).copied().unwrap_or(0) as u64, false);
            }
        }
    }
    out.push(b'}');
}

/// The names libtraceevent resolves in flag and symbol tables when the kernel left them
/// unexpanded (softirq vectors, hrtimer restart values); any other name is -1.
pub(super) fn tracecmd_flag_value(name: &str) -> u64 {
    const KNOWN: [(&str, u64); 12] = [
        ("HI_SOFTIRQ", 0),
        ("TIMER_SOFTIRQ", 1),
        ("NET_TX_SOFTIRQ", 2),
        ("NET_RX_SOFTIRQ", 3),
        ("BLOCK_SOFTIRQ", 4),
        ("IRQ_POLL_SOFTIRQ", 5),
        ("TASKLET_SOFTIRQ", 6),
        ("SCHED_SOFTIRQ", 7),
        ("HRTIMER_SOFTIRQ", 8),
        ("RCU_SOFTIRQ", 9),
        ("HRTIMER_NORESTART", 0),
        ("HRTIMER_RESTART", 1),
    ];
    KNOWN
        .iter()
        .find(|(n, _)| *n == name)
        .map_or(u64::MAX, |(_, v)| *v)
}

/// The label of a `{ value, "name" }` table entry.
pub(super) fn table_label(e: &Expr) -> EvalResult<&[u8]> {
    match e {
        Expr::List(items) if items.len() == 2 => match &items[1] {
            Expr::Str(s) => Ok(s),
            other => Err(format!("a table entry's name is not a string: {other:?}")),
        },
        _ => Err("a flag/symbol table entry is not `{ value, \"name\" }`".into()),
    }
}

/// What follows the entries a caller gives [`write_flags`] or [`write_symbol`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TableRest {
    /// Nothing: they are the whole table.
    End,
    /// Entries the caller could not read.
    Unread,
    /// Only entries without a name (the gfp table's closing `{ 0, NULL }`), which
    /// libtraceevent's loop passes over once no bit is left.
    Unnamed,
}

/// `__print_flags`'s text of `flags`: the name of each entry whose bits are all set, in
/// table order, each taking its bits out, then what is left in hex. Returns false,
/// having written nothing final, when the text is not settled by the entries given
/// (`rest` says what follows them).
///
/// The kernel (`lib` false) reads entries only while bits are left. libtraceevent
/// (`lib` true) takes an entry's bits only when its value is above zero, and a value it
/// cannot read (a name it does not know is -1) prints that entry's name once no bits
/// are left, with no delimiter, and ends the table: a zero state whose table is all
/// kernel names prints the first name. `quiet_from` is the index of the entry from which
/// no value is below zero (`usize::MAX`: not known): once no bit is left, libtraceevent's
/// loop prints nothing more from there on, so it ends.
pub(super) fn write_flags<'x>(
    out: &mut Vec<u8>,
    mut flags: u64,
    delim: &[u8],
    mut entries: impl Iterator<Item = EvalResult<(u64, &'x [u8])>>,
    rest: TableRest,
    quiet_from: usize,
    lib: bool,
) -> EvalResult<bool> {
    let mut first = true;
    let mut read = 0usize;
    while flags != 0 || lib {
        let entry = match lib && flags == 0 && read >= quiet_from {
            true => None,
            false => entries.next(),
        };
        let Some(entry) = entry else {
            if flags == 0 && rest == TableRest::Unread {
                // An unread entry might be one with an unknown value.
                return Ok(false);
            }
            break;
        };
        read += 1;
        let (mask, name) = match entry {
            Ok(e) => e,
            // Past the last bit, only an entry libtraceevent could print matters (the
            // gfp table's closing `{ 0, NULL }` is not one).
            Err(_) if lib && flags == 0 => continue,
            Err(e) => return Err(e),
        };
        if lib && (mask as i64) <= 0 {
            if flags == 0 && (mask as i64) < 0 {
                crate::bytes::put(out, name);
                return Ok(true);
            }
            continue;
        }
        if flags & mask != mask {
            continue;
        }
        flags &= !mask;
        if !first {
            crate::bytes::put(out, delim);
        }
        first = false;
        crate::bytes::put(out, name);
    }
    if flags != 0 {
        if rest != TableRest::End {
            return Ok(false);
        }
        if !first {
            crate::bytes::put(out, delim);
        }
        crate::bytes::put(out, b"0x");
        push_hex(out, flags, false);
    }
    Ok(true)
}

/// `__print_symbolic`'s text of `v`: the name of the first entry whose value (cut to
/// `mask`) is `v`, else `v` in hex. Returns false, having written nothing, when no entry
/// matched and `more` says entries the caller could not give follow.
pub(super) fn write_symbol<'x>(
    out: &mut Vec<u8>,
    v: u64,
    mask: u64,
    entries: impl Iterator<Item = EvalResult<(u64, &'x [u8])>>,
    more: bool,
) -> EvalResult<bool> {
    for entry in entries {
        let (value, name) = entry?;
        if value & mask == v {
            crate::bytes::put(out, name);
            return Ok(true);
        }
    }
    if more {
        return Ok(false);
    }
    crate::bytes::put(out, b"0x");
    push_hex(out, v, false);
    Ok(true)
}

/// Whether a table entry's name is a null pointer constant (`{ 0, NULL }`).
pub(super) fn null_label(e: &Expr) -> bool {
    let Expr::List(items) = e else {
        return false;
    };
    match items.get(1) {
        Some(Expr::Num(0)) => true,
        Some(Expr::Cast(ty, x)) => ty.pointer && matches!(**x, Expr::Num(0)),
        _ => false,
    }
}

/// The values of a table's entries, by entry (None: the entry does not evaluate).
type TableValues<'a> = std::borrow::Cow<'a, [Option<u64>]>;

impl<'a, 'e> Evaluator<'a, 'e> {
    /// Helpers whose value is text the kernel prints into its trace_seq scratch buffer.
    pub(super) fn text_helper(
        &self,
        name: &str,
        args: &'a [Expr],
        out: &mut Vec<u8>,
    ) -> EvalResult<()> {
        let endian = self.endian();
        match name {
            "__print_flags" | "__print_flags_u64" => {
                let flags = self.int(args.first().ok_or("__print_flags()")?)?
                    & self.table_mask(name == "__print_flags_u64");
                let delim = match args.get(1).ok_or("__print_flags delimiter")? {
                    Expr::Str(s) => until_nul(s),
                    e => match self.eval(e)? {
                        Value::Bytes(b, _) => until_nul(b),
                        _ => b"",
                    },
                };
                let (table, values) = self.table(&args[2..])?;
                write_flags(
                    out,
                    flags,
                    delim,
                    self.entries(table, &values),
                    TableRest::End,
                    usize::MAX,
                    self.env.style == PrintStyle::TraceCmd,
                )?;
                Ok(())
            }
            "__print_symbolic" | "__print_symbolic_u64" => {
                let mask = self.table_mask(name == "__print_symbolic_u64");
                let v = self.int(args.first().ok_or("__print_symbolic()")?)? & mask;
                let (table, values) = self.table(&args[1..])?;
                write_symbol(out, v, mask, self.entries(table, &values), false)?;
                Ok(())
            }
            "__print_hex" | "__print_hex_str" => {
                let b = self.ptr_bytes(args.first().ok_or("__print_hex()")?)?;
                let len = self.int(args.get(1).ok_or("__print_hex length")?)? as i32;
                let len = (len.max(0) as usize).min(b.len());
                let concat = name == "__print_hex_str";
                for (n, chunk) in b[..len].chunks(16).enumerate() {
                    if !concat && n != 0 {
                        out.push(b' ');
                    }
                    for (j, byte) in chunk.iter().enumerate() {
                        if !concat && j != 0 {
                            out.push(b' ');
                        }
                        push_hex2(out, *byte);
                    }
                }
                Ok(())
            }
            "__print_array" => {
                let b = self.ptr_bytes(args.first().ok_or("__print_array()")?)?;
                let count = self.int(args.get(1).ok_or("__print_array count")?)? as usize;
                let el = self.int(args.get(2).ok_or("__print_array size")?)? as usize;
                print_array(out, b, el, count, endian);
                Ok(())
            }
            "__print_dynamic_array" => {
                let f = self.dyn_field(args)?;
                let el = self.int(args.get(1).ok_or("__print_dynamic_array size")?)? as usize;
                let b = f.bytes(self.data, endian).ok_or("bad __data_loc")?;
                print_array(out, b, el, b.len() / el.max(1), endian);
                Ok(())
            }
            "__get_bitmask" | "__get_rel_bitmask" | "__get_cpumask" | "__get_rel_cpumask" => {
                let f = self.dyn_field(args)?;
                let b = f.bytes(self.data, endian).ok_or("bad __data_loc")?;
                pointer::bitmap(out, b, b.len() * 8, false, self.long() as usize, endian);
                Ok(())
            }
            _ => Err(format!("unknown function `{name}`")),
        }
    }

    /// The entries of a flag/symbol table and their values: a constant table's computed
    /// at compile time, another's evaluated now.
    ///
    /// An entry that does not evaluate is None: the caller reports its error only if the
    /// loop reaches it, as evaluating entry by entry would.
    pub(super) fn table(&self, entries: &'a [Expr]) -> EvalResult<(&'a [Expr], TableValues<'a>)> {
        if let [Expr::Call(name, id)] = entries {
            if name == TABLE_REF {
                let table = match id.as_slice() {
                    [Expr::Num(id)] => self.schema.program.tables.get(*id as usize),
                    _ => None,
                }
                .ok_or("a flag/symbol table reference the program does not hold")?;
                let style = (self.env.style == PrintStyle::TraceCmd) as usize;
                return Ok((
                    &table.entries,
                    std::borrow::Cow::Borrowed(&table.values[style]),
                ));
            }
        }
        let values = entries
            .iter()
            .map(|e| self.table_entry(e).ok().map(|(v, _)| v))
            .collect();
        Ok((entries, std::borrow::Cow::Owned(values)))
    }

    /// The bits a table value keeps: a `long`'s, or all 64 for the `_u64` helpers.
    #[inline]
    pub(super) fn table_mask(&self, wide: bool) -> u64 {
        if wide || self.long() != 4 {
            u64::MAX
        } else {
            u32::MAX as u64
        }
    }

    /// The (value, name) entries of a flag or symbol table, read one at a time up to its
    /// end in this style: a constant value (`values`) needs only its name, another entry
    /// is evaluated (and fails the record if it cannot be).
    pub(super) fn entries<'s>(
        &'s self,
        table: &'a [Expr],
        values: &'s [Option<u64>],
    ) -> impl Iterator<Item = EvalResult<(u64, &'a [u8])>> + 's {
        table
            .iter()
            .zip(values)
            .take_while(|(e, _)| !self.table_end(e))
            .map(|(e, v)| match v {
                Some(v) => Ok((*v, table_label(e)?)),
                None => self.table_entry(e),
            })
    }

    /// Whether `e` ends a flag or symbol table in this style: the kernel stops at the
    /// first entry whose name is NULL (`{ 0, NULL }` closes the gfp table).
    pub(super) fn table_end(&self, e: &Expr) -> bool {
        self.env.style == PrintStyle::Kernel && null_label(e)
    }

    pub(super) fn table_entry(&self, e: &'a Expr) -> EvalResult<(u64, &'a [u8])> {
        match e {
            Expr::List(items) if items.len() == 2 => {
                let v = match &items[0] {
                    // libtraceevent's table values: a few names it knows, else -1.
                    Expr::Ident(n) if self.env.style == PrintStyle::TraceCmd => {
                        tracecmd_flag_value(n)
                    }
                    Expr::Ident(n) => crate::event::constants::constant(n)
                        .ok_or_else(|| format!("unknown identifier `{n}`"))?,
                    x => self.int(x)?,
                };
                match &items[1] {
                    Expr::Str(s) => Ok((v, s)),
                    _ => Err("a table entry's name is not a string".into()),
                }
            }
            _ => Err("a flag/symbol table entry is not `{ value, \"name\" }`".into()),
        }
    }
}
