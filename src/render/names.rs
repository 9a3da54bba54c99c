//! Event names and field layouts by id, read from `events/<sys>/<ev>/format`.
//!
//! Only what the JSON sink and the fallback text need: names, offsets, sizes, signedness
//! and the kind of each field. The print-fmt engine lives in the event model.

use crate::endian::Endianness;
use std::collections::HashMap;

use crate::event::EventFormatter;
use crate::event::Record;
use crate::tracefs::Tracefs;

/// How a field's bytes are to be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldShape {
    /// An integer (1, 2, 4 or 8 bytes) or a pointer.
    Scalar,
    /// `char name[N]`: a NUL-terminated string in place.
    CharArray,
    /// `type name[N]` of `elem` bytes per element.
    Array {
        /// Bytes per element.
        elem: usize,
    },
    /// `__data_loc` (offset from the record start) or `__rel_loc` (from the field's end).
    Dynamic {
        /// `__rel_loc` rather than `__data_loc`.
        relative: bool,
        /// The elements are chars: a string.
        string: bool,
        /// Bytes per element.
        elem: usize,
    },
}

/// One field of a format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDesc {
    /// Field name.
    pub name: String,
    /// Byte offset in the payload.
    pub offset: usize,
    /// Byte size.
    pub size: usize,
    /// Signed integer.
    pub signed: bool,
    /// How to read it.
    pub shape: FieldShape,
}

/// One event's identity and fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventInfo {
    /// System (directory under `events/`).
    pub system: String,
    /// Event name.
    pub name: String,
    /// Fields in file order, `common_*` included.
    pub fields: Vec<FieldDesc>,
}

/// Events by id from a tracefs root or fixture tree.
#[derive(Debug, Clone, Default)]
pub struct EventNames {
    by_id: HashMap<u16, EventInfo>,
    /// Byte order of the payloads.
    pub endian: Endianness,
}

impl EventNames {
    /// Read every `events/<sys>/<ev>/format` under `t`; unreadable ones are skipped.
    pub fn from_tracefs(t: &Tracefs, endian: Endianness) -> EventNames {
        let mut n = EventNames {
            by_id: HashMap::new(),
            endian,
        };
        let Ok(systems) = std::fs::read_dir(t.path("events")) else {
            return n;
        };
        for sys in systems.filter_map(|e| e.ok()) {
            let Ok(events) = std::fs::read_dir(sys.path()) else {
                continue;
            };
            let sys_name = sys.file_name().to_string_lossy().into_owned();
            for ev in events.filter_map(|e| e.ok()) {
                let path = ev.path().join("format");
                if let Ok(bytes) = crate::tracefs::read_file(&path) {
                    n.add_format(&sys_name, &String::from_utf8_lossy(&bytes));
                }
            }
        }
        n
    }

    /// Add one format text; returns its id.
    pub fn add_format(&mut self, system: &str, text: &str) -> Option<u16> {
        let mut name = None;
        let mut id = None;
        let mut fields = Vec::new();
        for line in text.lines() {
            let t = line.trim();
            if let Some(v) = t.strip_prefix("name:") {
                name = Some(v.trim().to_string());
            } else if let Some(v) = t.strip_prefix("ID:") {
                id = v.trim().parse::<u16>().ok();
            } else if let Some(rest) = t.strip_prefix("field:") {
                if let Some(f) = parse_field(rest) {
                    fields.push(f);
                }
            }
        }
        let id = id?;
        self.by_id.insert(
            id,
            EventInfo {
                system: system.to_string(),
                name: name?,
                fields,
            },
        );
        Some(id)
    }

    /// The event with this id.
    pub fn get(&self, id: u16) -> Option<&EventInfo> {
        self.by_id.get(&id)
    }

    /// The event of a record.
    pub fn of(&self, rec: &Record) -> Option<&EventInfo> {
        self.get(rec.event_id(self.endian)?)
    }

    /// Offsets of the common fields as the format files declare them (defaults when no
    /// format lists them).
    pub fn common_fields(&self) -> super::CommonFields {
        let mut c = super::CommonFields::default();
        if let Some(ev) = self
            .by_id
            .values()
            .find(|e| e.fields.iter().any(|f| f.name == "common_pid"))
        {
            for f in &ev.fields {
                match f.name.as_str() {
                    "common_flags" => c.flags = f.offset,
                    "common_preempt_count" => c.preempt_count = f.offset,
                    "common_pid" => c.pid = f.offset,
                    _ => {}
                }
            }
        }
        c
    }

    /// Every known event with its id.
    pub fn iter(&self) -> impl Iterator<Item = (u16, &EventInfo)> {
        self.by_id.iter().map(|(id, e)| (*id, e))
    }

    /// Number of events known.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether no event is known.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

/// `unsigned long call_site;\toffset:8;\tsize:8;\tsigned:0;`
fn parse_field(rest: &str) -> Option<FieldDesc> {
    let (decl, attrs) = rest.split_once(';')?;
    let mut offset = None;
    let mut size: Option<usize> = None;
    let mut signed = false;
    for a in attrs.split(';') {
        let a = a.trim();
        if let Some(v) = a.strip_prefix("offset:") {
            offset = v.parse().ok();
        } else if let Some(v) = a.strip_prefix("size:") {
            size = v.parse().ok();
        } else if let Some(v) = a.strip_prefix("signed:") {
            signed = v.trim() == "1";
        }
    }
    let (offset, size) = (offset?, size?);
    let decl = decl.trim();
    let (ty, mut name) = match decl.rfind(|c: char| c.is_whitespace() || c == '*') {
        Some(i) => (decl[..i + 1].trim(), decl[i + 1..].to_string()),
        None => ("", decl.to_string()),
    };
    let is_char = {
        let base = ty
            .trim_start_matches("__data_loc")
            .trim_start_matches("__rel_loc")
            .trim()
            .trim_end_matches("[]")
            .trim();
        matches!(
            base,
            "char" | "const char" | "unsigned char" | "signed char"
        ) && !ty.contains('*')
    };
    let mut array_len: Option<usize> = None;
    if let Some(i) = name.find('[') {
        let inner = name[i + 1..].trim_end_matches(']');
        array_len = Some(inner.parse().unwrap_or(0));
        name.truncate(i);
    }
    let shape = if ty.starts_with("__data_loc") || ty.starts_with("__rel_loc") {
        let elem = elem_size(ty);
        FieldShape::Dynamic {
            relative: ty.starts_with("__rel_loc"),
            string: is_char,
            elem,
        }
    } else if let Some(n) = array_len {
        if is_char {
            FieldShape::CharArray
        } else {
            let elem = size.checked_div(n).unwrap_or_else(|| elem_size(ty));
            FieldShape::Array { elem: elem.max(1) }
        }
    } else {
        FieldShape::Scalar
    };
    Some(FieldDesc {
        name,
        offset,
        size,
        signed,
        shape,
    })
}

fn elem_size(ty: &str) -> usize {
    let t = ty
        .trim_start_matches("__data_loc")
        .trim_start_matches("__rel_loc")
        .trim();
    // `long` counts as 8 bytes: these descriptions come from 64-bit recordings.
    if t.contains('*') || t.contains("long") || t.contains("u64") || t.contains("s64") {
        8
    } else if t.contains("short") || t.contains("u16") || t.contains("s16") {
        2
    } else if t.contains("char") || t.contains("u8") || t.contains("s8") || t.contains("bool") {
        1
    } else {
        4
    }
}

impl EventFormatter for EventNames {
    /// `name: ` followed by `field=value` pairs (the print-fmt engine is not used here).
    fn write_event(&self, rec: &Record, out: &mut Vec<u8>) -> bool {
        let Some(ev) = self.of(rec) else {
            let id = rec.event_id(self.endian).unwrap_or(0);
            out.extend_from_slice(format!("<unknown event id {id}>").as_bytes());
            return false;
        };
        if ev.system == "syscalls" && write_syscall(ev, rec.data, self.endian, out) {
            return true;
        }
        out.extend_from_slice(ev.name.as_bytes());
        out.extend_from_slice(b": ");
        let mut first = true;
        for f in ev.fields.iter().filter(|f| !f.name.starts_with("common_")) {
            if !first {
                out.push(b' ');
            }
            first = false;
            out.extend_from_slice(f.name.as_bytes());
            out.push(b'=');
            let v = super::json::field_value(f, rec.data, self.endian);
            match v {
                serde_json::Value::String(s) => out.extend_from_slice(s.as_bytes()),
                other => out.extend_from_slice(other.to_string().as_bytes()),
            }
        }
        true
    }
}

/// The kernel prints `syscalls:sys_enter_*` / `sys_exit_*` with its own output functions,
/// not with their `print fmt`: `sys_write(fd: 1, buf: 0x55c0..., count: 6)` (arguments
/// below 10 in decimal, the rest in hex) and `sys_write -> 0x1`. Returns false when the
/// record does not look like a syscall event.
pub fn write_syscall(ev: &EventInfo, data: &[u8], endian: Endianness, out: &mut Vec<u8>) -> bool {
    let read = |f: &FieldDesc| -> Option<u64> {
        Some(endian.uint_of(data.get(f.offset..f.offset + f.size)?))
    };
    let args = ev
        .fields
        .iter()
        .filter(|f| !f.name.starts_with("common_") && f.name != "__syscall_nr");
    if let Some(call) = ev.name.strip_prefix("sys_enter_") {
        out.extend_from_slice(b"sys_");
        out.extend_from_slice(call.as_bytes());
        out.push(b'(');
        for (i, f) in args.enumerate() {
            let Some(v) = read(f) else { return false };
            if i > 0 {
                out.extend_from_slice(b", ");
            }
            out.extend_from_slice(f.name.as_bytes());
            out.extend_from_slice(b": ");
            if v < 10 {
                crate::bytes::push_dec(out, v);
            } else {
                out.extend_from_slice(format!("{v:#x}").as_bytes());
            }
        }
        out.push(b')');
        true
    } else if let Some(call) = ev.name.strip_prefix("sys_exit_") {
        let Some(ret) = ev.fields.iter().find(|f| f.name == "ret").and_then(read) else {
            return false;
        };
        out.extend_from_slice(format!("sys_{call} -> {ret:#x}").as_bytes());
        true
    } else {
        false
    }
}
