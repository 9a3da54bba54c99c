//! `name: field=value ...` text for events printed without their `print fmt`: what
//! `stream` writes when the tree has no `header_page` to size the print engine by.
//!
//! Values are those of the JSON sink ([`super::json::field_value`]): strings as
//! text, numbers (pointers too) in decimal, arrays as `[a,b]`.

use crate::endian::Endianness;
use crate::event::{EventFormatter, Field, FieldKind, Record, Registry, Schema};

/// Every event of a registry as `name: field=value` pairs; syscalls as the kernel prints
/// them.
#[derive(Debug, Clone, Copy)]
pub struct FieldPairs<'a> {
    /// The events' schemas.
    pub registry: &'a Registry,
    /// Byte order of the payloads.
    pub endian: Endianness,
}

impl EventFormatter for FieldPairs<'_> {
    fn write_event(&self, rec: &Record, out: &mut Vec<u8>) -> bool {
        let endian = self.endian;
        let Some(ev) = rec.event_id(endian).and_then(|id| self.registry.get(id)) else {
            let id = rec.event_id(endian).unwrap_or(0);
            out.extend_from_slice(format!("<unknown event id {id}>").as_bytes());
            return false;
        };
        if ev.system == "syscalls" && write_syscall(ev, rec.data, endian, out) {
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
            let scalar = match f.kind {
                FieldKind::Scalar | FieldKind::Pointer if f.signed => {
                    f.read_i64(rec.data, endian).map(|v| v.to_string())
                }
                FieldKind::Scalar | FieldKind::Pointer => {
                    f.read_u64(rec.data, endian).map(|v| v.to_string())
                }
                _ => None,
            };
            if let Some(text) = scalar {
                out.extend_from_slice(text.as_bytes());
                continue;
            }
            match super::json::field_value(f, rec.data, endian) {
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
fn write_syscall(ev: &Schema, data: &[u8], endian: Endianness, out: &mut Vec<u8>) -> bool {
    let read =
        |f: &Field| -> Option<u64> { Some(endian.uint_of(data.get(f.offset..f.offset + f.size)?)) };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_syscalls() {
        let mut reg = Registry::new(8, Endianness::Little);
        let common = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n";
        reg.add_format(
            "demo",
            &format!(
                "name: hello\nID: 42\nformat:\n{common}\
\tfield:char comm[4];\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:int value;\toffset:12;\tsize:4;\tsigned:1;\n\nprint fmt: \"%d\", REC->value\n"
            ),
        )
        .unwrap();
        reg.add_format(
            "syscalls",
            &format!(
                "name: sys_exit_read\nID: 43\nformat:\n{common}\
\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\nprint fmt: \"0x%lx\", REC->ret\n"
            ),
        )
        .unwrap();
        let text = |data: &[u8]| {
            let mut out = Vec::new();
            let rec = Record {
                cpu: 0,
                ts: 0,
                data,
            };
            FieldPairs {
                registry: &reg,
                endian: Endianness::Little,
            }
            .write_event(&rec, &mut out);
            String::from_utf8(out).unwrap()
        };
        let mut d = vec![42, 0, 0, 0, 0, 0, 0, 0, b'c', b'a', b't', 0];
        d.extend_from_slice(&(-3i32).to_le_bytes());
        assert_eq!(text(&d), "hello: comm=cat value=-3");
        let mut d = vec![43, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        d.extend_from_slice(&17u64.to_le_bytes());
        assert_eq!(text(&d), "sys_read -> 0x11");
        assert_eq!(text(&[9, 0]), "<unknown event id 9>");
    }
}
