//! The inverse of the `print fmt`: from the kernel's text of an event (what follows
//! `name: ` in the `trace` file) back to typed values, one per conversion, keyed by the
//! field the conversion prints.
//!
//! A pattern is made once per schema from its compiled format: the literal pieces, and
//! per conversion the field it prints and how its text reads back (a number in the
//! conversion's base, or text running to the next literal). Matching walks the text once,
//! left to right: linear in the body's length.

use serde_json::{Map, Value};

use super::compile::Kind;
use super::printf::{Seg, Spec};
use crate::event::expr::Expr;
use crate::event::format::{FieldKind, Schema};
use crate::event::PrintStyle;
use crate::render::json::{int, pointer, uint};

/// How a conversion's text reads back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Read {
    /// `%d`/`%i`: a signed decimal.
    Signed,
    /// `%u`, `%x`, `%o`: an unsigned number in this base.
    Unsigned(u32),
    /// `%x` of a pointer field or `%p` without extension: hex, printed as a pointer.
    Pointer,
    /// A syscall's return value: 64-bit hex read as a signed `long`.
    SignedHex,
    /// `%s`, `%c`, `%p` with an extension: text to the next literal.
    Text,
}

#[derive(Debug, Clone)]
enum Part {
    Lit(Vec<u8>),
    Conv { key: String, read: Read, spec: Spec },
}

/// A schema's `print fmt` made ready to read the kernel's text back
/// ([`Schema::text_pattern`]).
#[derive(Debug, Clone)]
pub struct TextPattern {
    parts: Result<Vec<Part>, String>,
}

impl TextPattern {
    /// Why this format cannot be read back (every body then falls back to its raw
    /// text), or None when it can.
    pub fn not_invertible(&self) -> Option<&str> {
        self.parts.as_ref().err().map(String::as_str)
    }

    /// The typed values of `body`, keyed by field (or by the label before a conversion
    /// of an expression; `argN`, N counting conversions from 0, when there is none); None when the body does not match
    /// the format.
    pub fn parse(&self, body: &str) -> Option<Map<String, Value>> {
        let parts = self.parts.as_ref().ok()?;
        let b = body.as_bytes();
        let mut pos = 0;
        let mut out = Map::new();
        for (i, part) in parts.iter().enumerate() {
            match part {
                Part::Lit(l) => {
                    if !b[pos..].starts_with(l) {
                        return None;
                    }
                    pos += l.len();
                }
                Part::Conv { key, read, spec } => {
                    let (v, end) = match read {
                        Read::Text => {
                            // The pattern has a literal after every text but the last.
                            let end = match parts.get(i + 1) {
                                Some(Part::Lit(l)) => pos + memchr::memmem::find(&b[pos..], l)?,
                                _ => b.len(),
                            };
                            let mut t = &body[pos..end];
                            if spec.width > 0 {
                                t = if spec.left {
                                    t.trim_end()
                                } else {
                                    t.trim_start()
                                };
                            }
                            (Value::from(t), end)
                        }
                        _ => read_number(b, pos, *read)?,
                    };
                    pos = end;
                    let mut k = key.clone();
                    let mut n = 2;
                    while out.contains_key(&k) {
                        k = format!("{key}_{n}");
                        n += 1;
                    }
                    out.insert(k, v);
                }
            }
        }
        (pos == b.len()).then_some(out)
    }
}

/// A number at `pos` (after width padding) and where it ends.
fn read_number(b: &[u8], mut pos: usize, read: Read) -> Option<(Value, usize)> {
    while b.get(pos) == Some(&b' ') {
        pos += 1;
    }
    let neg = match b.get(pos) {
        Some(b'-') => {
            pos += 1;
            true
        }
        Some(b'+') => {
            pos += 1;
            false
        }
        _ => false,
    };
    let base = match read {
        Read::Signed => 10,
        Read::SignedHex if neg => return None,
        Read::Unsigned(base) => base,
        _ => 16,
    };
    if base == 16
        && b[pos..].starts_with(b"0x")
        && b.get(pos + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        pos += 2;
    }
    let start = pos;
    while b.get(pos).is_some_and(|c| (*c as char).is_digit(base)) {
        pos += 1;
    }
    if pos == start {
        return None;
    }
    let text = std::str::from_utf8(&b[start..pos]).ok()?;
    let mag = u64::from_str_radix(text, base).ok()?;
    let v = match read {
        Read::Pointer if !neg => pointer(mag),
        Read::SignedHex => int(mag as i64),
        _ if neg => {
            let v = 0i64.checked_sub_unsigned(mag)?;
            int(v)
        }
        _ => uint(mag),
    };
    Some((v, pos))
}

/// The one field an expression reads, if it reads exactly one.
fn only_field(e: &Expr, found: &mut Option<usize>, many: &mut bool) {
    match e {
        Expr::Field(i) => match found {
            Some(j) if *j != *i => *many = true,
            _ => *found = Some(*i),
        },
        Expr::Unary(_, x) | Expr::Cast(_, x) | Expr::Member(x, _) => only_field(x, found, many),
        Expr::Binary(_, a, c) | Expr::Index(a, c) => {
            only_field(a, found, many);
            only_field(c, found, many);
        }
        Expr::Cond(a, c, d) => {
            only_field(a, found, many);
            only_field(c, found, many);
            only_field(d, found, many);
        }
        Expr::Call(_, args) | Expr::List(args) => {
            for a in args {
                only_field(a, found, many);
            }
        }
        Expr::Block(locals, v) => {
            for (_, _, x) in locals {
                only_field(x, found, many);
            }
            only_field(v, found, many);
        }
        _ => {}
    }
}

/// The field a conversion prints: the field itself through casts and `__get_str` (then
/// `true`: printed as it is), or the one field a flag or symbol table or a condition reads
/// (`false`: printed through the table or condition).
fn printed_field(e: &Expr) -> Option<(usize, bool)> {
    match e {
        Expr::Field(i) => Some((*i, true)),
        Expr::Cast(_, x) => printed_field(x),
        Expr::Call(name, args) if name.starts_with("__get_") && !name.ends_with("_len") => {
            printed_field(args.first()?)
        }
        Expr::Call(name, _) if name_is_table(name) => single_field(e).map(|i| (i, false)),
        Expr::Cond(..) => single_field(e).map(|i| (i, false)),
        _ => None,
    }
}

fn single_field(e: &Expr) -> Option<usize> {
    let (mut found, mut many) = (None, false);
    only_field(e, &mut found, &mut many);
    (!many).then_some(found).flatten()
}

fn name_is_table(n: &str) -> bool {
    n.starts_with("__print_flags") || n.starts_with("__print_symbolic")
}

/// The label a literal ends with (`name=`, `name: `, `name `), if any.
fn label(lit: &[u8]) -> Option<String> {
    let t = lit
        .strip_suffix(b"=")
        .or_else(|| lit.strip_suffix(b": "))
        .or_else(|| lit.strip_suffix(b":"))?;
    let n = t
        .iter()
        .rev()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    (n > 0).then(|| String::from_utf8_lossy(&t[t.len() - n..]).into_owned())
}

impl Schema {
    /// This schema's `print fmt` made ready to read the kernel's text of its records back
    /// into typed values (see [`TextPattern::parse`]).
    pub fn text_pattern(&self) -> TextPattern {
        TextPattern {
            parts: self.invert(),
        }
    }

    fn invert(&self) -> Result<Vec<Part>, String> {
        let (segs, args) = match self.program.kind_for(PrintStyle::Kernel) {
            Kind::Printf { segs, args, .. } => (segs, args),
            // `(fd: 1, buf: 0x7ffd..., count: 6)`: hex (below 10 no `0x`, which reads
            // the same) per argument.
            Kind::SyscallEnter { args, .. } => {
                let mut parts = Vec::new();
                let mut lit = b"(".to_vec();
                for (n, &i) in args.iter().enumerate() {
                    let f = &self.fields[i];
                    if n > 0 {
                        lit.extend_from_slice(b", ");
                    }
                    lit.extend_from_slice(f.name.as_bytes());
                    lit.extend_from_slice(b": ");
                    parts.push(Part::Lit(std::mem::take(&mut lit)));
                    let read = if f.kind == FieldKind::Pointer {
                        Read::Pointer
                    } else {
                        Read::Unsigned(16)
                    };
                    parts.push(Part::Conv {
                        key: f.name.clone(),
                        read,
                        spec: Spec::default(),
                    });
                }
                lit.push(b')');
                parts.push(Part::Lit(lit));
                return Ok(parts);
            }
            // `-> 0x1`: the return value as the kernel's 64-bit hex.
            Kind::SyscallExit { ret, .. } => {
                return Ok(vec![
                    Part::Lit(b"-> ".to_vec()),
                    Part::Conv {
                        key: self.fields[*ret].name.clone(),
                        read: Read::SignedHex,
                        spec: Spec::default(),
                    },
                ])
            }
            Kind::Fallback(why) => return Err(format!("print fmt not evaluated ({why})")),
            _ => return Err("printed by the kernel's own output function".into()),
        };
        let mut parts: Vec<Part> = Vec::new();
        let mut arg = 0;
        for seg in segs {
            let spec = match seg {
                Seg::Lit(l) => {
                    match parts.last_mut() {
                        Some(Part::Lit(prev)) => prev.extend_from_slice(l),
                        _ => parts.push(Part::Lit(l.clone())),
                    }
                    continue;
                }
                Seg::Conv(s) => *s,
            };
            // A `*` width or precision takes an argument first; the text reads back the
            // same (numbers skip their padding, text runs to the next literal).
            arg += usize::from(spec.width == -2) + usize::from(spec.prec == -2);
            let e = args.get(arg).ok_or("fewer arguments than conversions")?;
            arg += 1;
            let printed = printed_field(e);
            let field = printed.and_then(|(i, _)| self.fields.get(i));
            let direct = printed.is_some_and(|(_, d)| d);
            let read = match spec.conv {
                b'd' | b'i' => Read::Signed,
                b'u' => Read::Unsigned(10),
                b'o' => Read::Unsigned(8),
                b'x' | b'X' if field.is_some_and(|f| f.kind == FieldKind::Pointer) => Read::Pointer,
                b'x' | b'X' => Read::Unsigned(16),
                b'p' if spec.ext().is_empty() => Read::Pointer,
                b'p' | b's' | b'c' => Read::Text,
                c => return Err(format!("conversion %{}", c as char)),
            };
            // The field's name; the label before the conversion for an expression or
            // a second conversion of one field (`vec=%u [action=%s]`).
            let label = match parts.last() {
                Some(Part::Lit(l)) => label(l),
                _ => None,
            };
            let used = |k: &str| {
                parts
                    .iter()
                    .any(|p| matches!(p, Part::Conv { key, .. } if key == k))
            };
            // The field printed as it is, then the label of a table or condition over a
            // field (`page=%p` of `pfn != -1 ? pfn_to_page(pfn) : NULL`), then the
            // field, then the label.
            let key = match (field, label) {
                (Some(f), _) if matches!(parts.last(), Some(Part::Conv { .. })) => f.name.clone(),
                (Some(f), _) if direct && !used(&f.name) => f.name.clone(),
                (_, Some(l)) if !used(&l) => l,
                (Some(f), _) if !used(&f.name) => f.name.clone(),
                _ => format!("arg{}", arg - 1),
            };
            match parts.last() {
                // `%s%s` of one field (sched_switch's `prev_state=%s%s`): one text.
                Some(Part::Conv {
                    key: k,
                    read: Read::Text,
                    ..
                }) if read == Read::Text && *k == key => continue,
                // Text runs to the next literal: there must be one.
                Some(Part::Conv {
                    read: Read::Text, ..
                }) => return Err(format!("a conversion right after a string (at {key})")),
                // A number stops at its last digit: text may follow, a number may not.
                Some(Part::Conv { .. }) if read != Read::Text => {
                    return Err(format!("two numbers with no text between (at {key})"))
                }
                _ => {}
            }
            parts.push(Part::Conv { key, read, spec });
        }
        Ok(parts)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 1\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:int prev_prio;\toffset:28;\tsize:4;\tsigned:1;\n\
\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
\tfield:char next_comm[16];\toffset:40;\tsize:16;\tsigned:0;\n\
\tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
\tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n\n\
print fmt: \"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) - 1), \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000004, \"T\" }, { 0x00000008, \"t\" }, { 0x00000010, \"X\" }, { 0x00000020, \"Z\" }, { 0x00000040, \"P\" }, { 0x00000080, \"I\" }) : \"R\", REC->prev_state & (((0x00000000 | 0x00000001 | 0x00000002 | 0x00000004 | 0x00000008 | 0x00000010 | 0x00000020 | 0x00000040) + 1) << 1) ? \"+\" : \"\", REC->next_comm, REC->next_pid, REC->next_prio\n";

    fn schema(fields: &str, fmt: &str) -> Schema {
        let text = format!(
            "name: demo\nID: 9\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n{fields}\nprint fmt: {fmt}\n"
        );
        Schema::parse("demo", &text, 8).unwrap()
    }

    #[test]
    fn sched_switch_reads_back_typed() {
        let s = Schema::parse("sched", SWITCH, 8).unwrap();
        let p = s.text_pattern();
        assert_eq!(p.not_invertible(), None);
        let v = p
            .parse("prev_comm=a b prev_pid=10 prev_prio=120 prev_state=I ==> next_comm=swapper/0 next_pid=0 next_prio=-1")
            .unwrap();
        assert_eq!(
            Value::Object(v),
            serde_json::json!({"prev_comm":"a b","prev_pid":10,"prev_prio":120,"prev_state":"I",
                "next_comm":"swapper/0","next_pid":0,"next_prio":-1})
        );
        let v = p.parse("prev_comm=x prev_pid=1 prev_prio=1 prev_state=R+ ==> next_comm=y next_pid=2 next_prio=3").unwrap();
        assert_eq!(v["prev_state"], "R+");
        assert!(p.parse("prev_comm=x prev_pid=one").is_none());
    }

    #[test]
    fn hex_pointers_labels_and_big_numbers() {
        let s = schema(
            "\tfield:void * ptr;\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:unsigned int dev;\toffset:16;\tsize:4;\tsigned:0;\n\
\tfield:u64 big;\toffset:24;\tsize:8;\tsigned:0;\n",
            "\"ptr=%p dev=%d,%d big=%llu x=%x\", REC->ptr, ((unsigned int) ((REC->dev) >> 20)), ((unsigned int) ((REC->dev) & ((1U << 20) - 1))), REC->big, REC->dev",
        );
        let p = s.text_pattern();
        let v = p
            .parse("ptr=00000000deadbeef dev=8,1 big=18446744073709551615 x=ff")
            .unwrap();
        assert_eq!(
            Value::Object(v),
            serde_json::json!({"ptr":"0xdeadbeef","dev":8,"arg2":1,"big":"0xffffffffffffffff","x":255})
        );
    }

    #[test]
    fn a_condition_over_a_field_takes_its_label() {
        let s = schema(
            "\tfield:unsigned long pfn;\toffset:8;\tsize:8;\tsigned:0;\n",
            "\"page=%p pfn=0x%lx\", REC->pfn != -1UL ? (void *)(REC->pfn << 12) : ((void *)0), REC->pfn",
        );
        let v = s
            .text_pattern()
            .parse("page=00000000deadbeef pfn=0x1f")
            .unwrap();
        assert_eq!(
            Value::Object(v),
            serde_json::json!({"page":"0xdeadbeef","pfn":31})
        );
    }

    #[test]
    fn a_number_then_text() {
        let s = schema(
            "\tfield:unsigned int msr;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:u64 val;\toffset:16;\tsize:8;\tsigned:0;\n\
\tfield:int failed;\toffset:24;\tsize:4;\tsigned:1;\n",
            "\"%x, value %llx%s\", REC->msr, REC->val, REC->failed ? \" #GP\" : \"\"",
        );
        let p = s.text_pattern();
        let v = p.parse("6e0, value 164960e139e").unwrap();
        assert_eq!(
            Value::Object(v),
            serde_json::json!({"msr":0x6e0,"val":0x164960e139eu64,"failed":""})
        );
        assert_eq!(p.parse("6e0, value 1 #GP").unwrap()["failed"], " #GP");
    }

    #[test]
    fn syscalls_read_back() {
        let enter = "name: sys_enter_openat\nID: 5\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n\
\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n\n\
print fmt: \"dfd: 0x%08lx, filename: 0x%08lx\", ((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename))\n";
        let s = Schema::parse("syscalls", enter, 8).unwrap();
        let v = s
            .text_pattern()
            .parse("(dfd: ffffff9c, filename: 0x7ffd0010)")
            .unwrap();
        assert_eq!(
            Value::Object(v),
            serde_json::json!({"dfd":0xffffff9cu64,"filename":"0x7ffd0010"})
        );
        let exit = "name: sys_exit_openat\nID: 6\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n\
print fmt: \"0x%lx\", REC->ret\n";
        let s = Schema::parse("syscalls", exit, 8).unwrap();
        let p = s.text_pattern();
        assert_eq!(p.parse("-> 0x3").unwrap()["ret"], 3);
        assert_eq!(p.parse("-> 0xfffffffffffffffe").unwrap()["ret"], -2);
    }

    #[test]
    fn formats_that_cannot_be_read_back_say_why() {
        let s = schema(
            "\tfield:int a;\toffset:4;\tsize:4;\tsigned:1;\n\tfield:int b;\toffset:8;\tsize:4;\tsigned:1;\n",
            "\"%d%d\", REC->a, REC->b",
        );
        assert!(s
            .text_pattern()
            .not_invertible()
            .unwrap()
            .contains("two numbers"));
        let s = schema(
            "\tfield:int a;\toffset:4;\tsize:4;\tsigned:1;\n\tfield:char b[8];\toffset:8;\tsize:8;\tsigned:0;\n",
            "\"%*d %.*s!\", 3, REC->a, 2, REC->b",
        );
        let v = s.text_pattern().parse("  7 ab!").unwrap();
        assert_eq!(Value::Object(v), serde_json::json!({"a":7,"b":"ab"}));
        let s = schema(
            "\tfield:char a[4];\toffset:4;\tsize:4;\tsigned:0;\n\tfield:int b;\toffset:8;\tsize:4;\tsigned:1;\n",
            "\"%s%d\", REC->a, REC->b",
        );
        assert!(s
            .text_pattern()
            .not_invertible()
            .unwrap()
            .contains("after a string"));
    }

    #[test]
    fn reading_back_is_linear() {
        let s = schema(
            "\tfield:char a[4];\toffset:4;\tsize:4;\tsigned:0;\n\tfield:int b;\toffset:8;\tsize:4;\tsigned:1;\n",
            "\"a=%s b=%d\", REC->a, REC->b",
        );
        let p = s.text_pattern();
        // A megabyte of near misses: one pass, no backtracking.
        let body = format!("a={}", " b".repeat(1 << 19));
        let t = std::time::Instant::now();
        assert!(p.parse(&body).is_none());
        let body = format!("a={} b=1", "x".repeat(1 << 20));
        assert_eq!(p.parse(&body).unwrap()["b"], 1);
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
    }
}
