//! JSON lines: one object per record, every field typed.
//!
//! `{"ts":595863753400,"cpu":0,"pid":9643,"comm":"cc1","flags":"d.h2.","system":"sched",
//! "event":"sched_waking","fields":{"comm":"build-script-bu","pid":9298,...}}`; numbers as
//! numbers, strings as strings, arrays as arrays. A lost-events marker is
//! `{"lost":N,"cpu":C,"ts":T}` (`"lost":null` when the kernel did not count them).
//!
//! Integers whose magnitude exceeds 2^53 (what a JSON reader's double holds exactly) and
//! pointers are hex strings (`"0xffffffff81a3b2c0"`, `"-0x20000000000001"`); the schema
//! every `--json` output follows is `docs/json.schema.json`.

use crate::endian::Endianness;
use serde_json::{Map, Value};

use super::comm::Comms;
use super::kernel::{latency_chars, KernelStyle};
use crate::event::{Field, FieldKind, Kallsyms, Record, Schema};

fn read_uint(data: &[u8], off: usize, size: usize, endian: Endianness) -> Option<u64> {
    Some(endian.uint_of(data.get(off..off + size)?))
}

/// The largest integer magnitude printed as a JSON number: 2^53.
pub const MAX_EXACT: u64 = 1 << 53;

/// An unsigned integer as JSON: a number up to 2^53, else a `0x` hex string.
pub fn uint(v: u64) -> Value {
    if v <= MAX_EXACT {
        Value::from(v)
    } else {
        Value::from(format!("{v:#x}"))
    }
}

/// A signed integer as JSON: a number within ±2^53, else a (`-`)`0x` hex string.
pub fn int(v: i64) -> Value {
    if v.unsigned_abs() <= MAX_EXACT {
        Value::from(v)
    } else if v < 0 {
        Value::from(format!("-{:#x}", v.unsigned_abs()))
    } else {
        Value::from(format!("{v:#x}"))
    }
}

/// A pointer as JSON: always a `0x` hex string.
pub fn pointer(v: u64) -> Value {
    Value::from(format!("{v:#x}"))
}

/// A control file's text as JSON: an integer as a number ([`uint`], [`int`]), anything
/// else as its text without the trailing newline.
pub fn text_value(text: &str) -> Value {
    let t = text.trim_end();
    if let Ok(v) = t.parse::<u64>() {
        uint(v)
    } else if let Ok(v) = t.parse::<i64>() {
        int(v)
    } else {
        Value::from(t)
    }
}

fn signed_elem(v: u64, size: usize, signed: bool) -> Value {
    if signed && (1..8).contains(&size) {
        let shift = 64 - 8 * size as u32;
        int(((v << shift) as i64) >> shift)
    } else if signed {
        int(v as i64)
    } else {
        uint(v)
    }
}

fn is_char_type(type_name: &str) -> bool {
    let t = type_name
        .trim_start_matches("__data_loc")
        .trim_start_matches("__rel_loc")
        .trim();
    let t = t.trim_end_matches("[]").trim();
    matches!(t, "char" | "const char" | "signed char")
}

/// The typed value of one field of the event model's schema (`null` when the payload is
/// too short): integers as numbers ([`uint`], [`int`]), pointers as hex strings, char
/// arrays and `__data_loc char[]` as strings, other arrays as arrays of numbers.
pub fn field_value(f: &Field, data: &[u8], endian: Endianness) -> Value {
    let elems = |bytes: &[u8], elem: usize| -> Value {
        let e = elem.max(1);
        Value::Array(
            bytes
                .chunks_exact(e)
                .map(|c| match read_uint(c, 0, e, endian) {
                    Some(v) => signed_elem(v, e, f.signed),
                    None => Value::Null,
                })
                .collect(),
        )
    };
    match f.kind {
        FieldKind::Pointer => f.read_u64(data, endian).map_or(Value::Null, pointer),
        FieldKind::Scalar => {
            if f.signed {
                f.read_i64(data, endian).map_or(Value::Null, int)
            } else {
                f.read_u64(data, endian).map_or(Value::Null, uint)
            }
        }
        FieldKind::CharArray { .. } => f.str(data, endian).map_or(Value::Null, |b| {
            Value::from(String::from_utf8_lossy(b).into_owned())
        }),
        FieldKind::Array { elem_size, .. } => f
            .bytes(data, endian)
            .map_or(Value::Null, |b| elems(b, elem_size)),
        FieldKind::DataLoc { elem_size }
        | FieldKind::RelLoc { elem_size }
        | FieldKind::DynamicArray { elem_size } => {
            if is_char_type(&f.type_name) {
                f.str(data, endian).map_or(Value::Null, |b| {
                    Value::from(String::from_utf8_lossy(b).into_owned())
                })
            } else {
                f.bytes(data, endian)
                    .map_or(Value::Null, |b| elems(b, elem_size))
            }
        }
    }
}

/// The context every JSON line starts with: ts, cpu, pid, comm, (tgid,) flags.
fn context_object(rec: &Record, comms: &Comms, style: &KernelStyle) -> Map<String, Value> {
    let pid = style.pid(rec);
    let (flags, preempt) = style.flags(rec);
    let mut obj = Map::new();
    obj.insert("ts".into(), uint(rec.ts));
    obj.insert("cpu".into(), Value::from(rec.cpu));
    obj.insert("pid".into(), Value::from(pid));
    obj.insert("comm".into(), Value::from(comms.comm(pid)));
    if style.record_tgid {
        obj.insert("tgid".into(), Value::from(comms.tgid(pid)));
    }
    obj.insert(
        "flags".into(),
        Value::from(String::from_utf8_lossy(&latency_chars(flags, preempt)).into_owned()),
    );
    obj
}

/// Append one record as a JSON line, its fields typed from the event model's schema;
/// pointer fields that `kallsyms` resolves are named in `symbols` (`"name+0xoff"`).
pub fn write_record(
    out: &mut Vec<u8>,
    rec: &Record,
    comms: &Comms,
    schema: Option<&Schema>,
    style: &KernelStyle,
    kallsyms: Option<&Kallsyms>,
) {
    let mut obj = context_object(rec, comms, style);
    match schema {
        Some(s) => {
            obj.insert("system".into(), Value::from(s.system.as_str()));
            obj.insert("event".into(), Value::from(s.name.as_str()));
            let mut fields = Map::new();
            for f in s.fields.iter().filter(|f| !f.name.starts_with("common_")) {
                fields.insert(f.name.clone(), field_value(f, rec.data, style.endian));
            }
            obj.insert("fields".into(), Value::Object(fields));
            if let Some(k) = kallsyms {
                let mut syms = Map::new();
                for f in s.fields.iter().filter(|f| f.kind == FieldKind::Pointer) {
                    if let Some(sym) = f.read_u64(rec.data, style.endian).and_then(|a| {
                        let s = k.lookup(a)?;
                        Some(symbol_text(s.name, a - s.addr))
                    }) {
                        syms.insert(f.name.clone(), sym.into());
                    }
                }
                if !syms.is_empty() {
                    obj.insert("symbols".into(), Value::Object(syms));
                }
            }
        }
        None => {
            obj.insert(
                "event_id".into(),
                Value::from(rec.event_id(style.endian).unwrap_or(0)),
            );
        }
    }
    let _ = serde_json::to_writer(&mut *out, &Value::Object(obj));
    out.push(b'\n');
}

/// `name` or `name+0xoff`.
fn symbol_text(name: &str, off: u64) -> String {
    if off == 0 {
        name.to_string()
    } else {
        format!("{name}+{off:#x}")
    }
}

/// Append a lost-events marker.
pub fn write_lost(out: &mut Vec<u8>, cpu: u32, ts: u64, count: Option<u64>) {
    let v = serde_json::json!({ "lost": count.map(uint), "cpu": cpu, "ts": uint(ts) });
    let _ = serde_json::to_writer(&mut *out, &v);
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    const FORMAT: &str = "name: demo\nID: 7\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\tfield:char comm[8];\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:int delta;\toffset:16;\tsize:4;\tsigned:1;\n\
\tfield:__data_loc char[] name;\toffset:20;\tsize:4;\tsigned:0;\n\
\tfield:u16 ports[2];\toffset:24;\tsize:4;\tsigned:0;\n\
\tfield:__rel_loc u8[] blob;\toffset:28;\tsize:4;\tsigned:0;\n\
\nprint fmt: \"x\"\n";

    #[test]
    fn trailing_flexible_arrays_run_to_the_end_of_the_record() {
        let fmt = "name: print\nID: 5\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\
\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n\nprint fmt: \"%s\", REC->buf\n";
        let schema = Schema::parse("ftrace", fmt, 8).unwrap();
        let mut d = vec![0u8; 16];
        d.extend_from_slice(b"hello\n\0\0");
        assert_eq!(
            field_value(&schema.fields[2], &d, Endianness::Little),
            Value::from("hello\n")
        );
    }

    #[test]
    fn big_integers_and_pointers_are_hex_strings() {
        assert_eq!(uint(1 << 53), Value::from(1u64 << 53));
        assert_eq!(uint((1 << 53) + 1), Value::from("0x20000000000001"));
        assert_eq!(int(-(1 << 53)), Value::from(-(1i64 << 53)));
        assert_eq!(int(i64::MIN), Value::from("-0x8000000000000000"));
        assert_eq!(pointer(0), Value::from("0x0"));
    }

    #[test]
    fn every_field_typed() {
        let schema = Schema::parse("demo_sys", FORMAT, 8).unwrap();
        let mut d = vec![0u8; 40];
        d[0..2].copy_from_slice(&7u16.to_le_bytes());
        d[2] = 0x01;
        d[4..8].copy_from_slice(&42i32.to_le_bytes());
        d[8..11].copy_from_slice(b"cat");
        d[16..20].copy_from_slice(&(-5i32).to_le_bytes());
        d[20..24].copy_from_slice(&((4u32 << 16) | 32).to_le_bytes());
        d[24..26].copy_from_slice(&80u16.to_le_bytes());
        d[26..28].copy_from_slice(&443u16.to_le_bytes());
        // rel_loc: offset from the end of the field (32), 2 bytes.
        d[28..32].copy_from_slice(&((2u32 << 16) | 4).to_le_bytes());
        d[32..36].copy_from_slice(b"abc\0");
        d[36..38].copy_from_slice(&[9, 8]);
        let rec = Record {
            cpu: 1,
            ts: 1234,
            data: &d,
        };
        let comms = Comms::from_saved_cmdlines("42 cat\n");
        let style = KernelStyle {
            endian: Endianness::Little,
            ..KernelStyle::default()
        };
        let mut out = Vec::new();
        write_record(&mut out, &rec, &comms, Some(&schema), &style, None);
        let v: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"ts":1234,"cpu":1,"pid":42,"comm":"cat","flags":"d....","system":"demo_sys",
                "event":"demo","fields":{"comm":"cat","delta":-5,"name":"abc","ports":[80,443],"blob":[9,8]}})
        );
    }
}
