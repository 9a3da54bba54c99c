//! `events/<system>/<event>/format` files: the event's name, id and typed fields.

use crate::endian::Endianness;
use std::fmt;

use super::print::Program;

/// How a field's bytes are laid out in the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// A plain integer (1, 2, 4 or 8 bytes), `bool`, `pid_t`, `dev_t`...
    Scalar,
    /// A pointer (`void *`, `const char *`): an integer of the kernel's long size.
    Pointer,
    /// A fixed `char name[N]` array, printed as a NUL-terminated string.
    CharArray {
        /// Number of chars (the field size).
        len: usize,
    },
    /// A fixed array of `len` elements of `elem_size` bytes.
    Array {
        /// Number of elements.
        len: usize,
        /// Size of one element.
        elem_size: usize,
    },
    /// `__data_loc T[] name`: a u32 whose low 16 bits are the payload offset of the data and
    /// whose high 16 bits are its length.
    DataLoc {
        /// Size of one element of the dynamic data (1 for strings).
        elem_size: usize,
    },
    /// `__rel_loc T[] name`: like `DataLoc`, but the offset counts from the end of the field.
    RelLoc {
        /// Size of one element of the dynamic data.
        elem_size: usize,
    },
    /// `T name[]` with size 0: the data runs from the field's offset to the payload's end
    /// (`ftrace:print`'s `buf`, `bprint`'s argument words).
    DynamicArray {
        /// Size of one element.
        elem_size: usize,
    },
}

/// One field of an event payload, from a `field:` line of its `format` file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Field name (`prev_comm`).
    pub name: String,
    /// The C type as the format spells it, without the name and array suffix
    /// (`char`, `unsigned long`, `__data_loc char[]`).
    pub type_name: String,
    /// Byte offset in the payload.
    pub offset: usize,
    /// Size in bytes (for `__data_loc`/`__rel_loc`, the 4-byte locator).
    pub size: usize,
    /// Whether the kernel declares it signed.
    pub signed: bool,
    /// Layout of the bytes.
    pub kind: FieldKind,
}

/// A `format` file that could not be parsed, or a field that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// `system:event` when known, else the system alone.
    pub event: String,
    /// What was wrong, naming the line or token.
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "events/{}/format: {}",
            self.event.replace(':', "/"),
            self.message
        )
    }
}

impl std::error::Error for FormatError {}

/// Where the text after a format's `print fmt:` starts: the line that begins with it (the
/// print fmt is last and may span lines).
pub(crate) fn print_fmt_start(format_text: &str) -> Option<usize> {
    const KEY: &str = "print fmt:";
    if format_text.starts_with(KEY) {
        return Some(KEY.len());
    }
    format_text.find("\nprint fmt:").map(|i| i + 1 + KEY.len())
}

/// An event's layout and its compiled `print fmt`, built once per event id.
#[derive(Debug, Clone)]
pub struct Schema {
    /// The event id (`ID:` line; the payload's `common_type`).
    pub id: u16,
    /// The system (the directory under `events/`).
    pub system: String,
    /// The event name (`name:` line).
    pub name: String,
    /// Every field, `common_*` first, in file order.
    pub fields: Vec<Field>,
    /// The text after `print fmt: `, as the kernel wrote it.
    pub print_fmt: String,
    /// The kernel's `sizeof(long)`, used for `long` casts and `%ld` conversions.
    pub long_size: usize,
    pub(crate) program: Program,
}

impl Schema {
    /// Parse a `format` file's text. `long_size` is the kernel's `sizeof(long)` (the
    /// `commit` size of `events/header_page`).
    ///
    /// A `print fmt` the engine cannot compile does not fail the parse: the schema then
    /// prints `field=value` pairs instead (see [`Schema::print_fallback`]).
    pub fn parse(system: &str, format_text: &str, long_size: usize) -> Result<Schema, FormatError> {
        let err = |event: &str, message: String| FormatError {
            event: if event.is_empty() {
                system.to_string()
            } else {
                format!("{system}:{event}")
            },
            message,
        };
        let mut name = None;
        let mut id = None;
        let mut fields = Vec::new();
        let mut print_fmt = None;
        // The print fmt is last and may span lines (a format string with a raw newline).
        let (head, fmt_rest) = match print_fmt_start(format_text) {
            Some(i) => (
                &format_text[..i - "print fmt:".len()],
                Some(&format_text[i..]),
            ),
            None => (format_text, None),
        };
        if let Some(rest) = fmt_rest {
            print_fmt = Some(rest.trim().to_string());
        }
        for (lineno, line) in head.lines().enumerate() {
            let ev = name.as_deref().unwrap_or("");
            let t = line.trim();
            if let Some(v) = line.strip_prefix("name:") {
                name = Some(v.trim().to_string());
            } else if let Some(v) = line.strip_prefix("ID:") {
                let v = v.trim();
                id = Some(v.parse::<u16>().map_err(|_| {
                    err(
                        ev,
                        format!("line {}: ID `{v}` is not a number 0..65535", lineno + 1),
                    )
                })?);
            } else if t.starts_with("field:") || t.starts_with("field ") {
                let f = parse_field_line(t, long_size)
                    .map_err(|m| err(ev, format!("line {}: {m}: `{t}`", lineno + 1)))?;
                fields.push(f);
            }
        }
        let name =
            name.ok_or_else(|| err("", "no `name:` line (is this a format file?)".into()))?;
        let id = id.ok_or_else(|| err(&name, "no `ID:` line".into()))?;
        let print_fmt = print_fmt.ok_or_else(|| err(&name, "no `print fmt:` line".into()))?;
        if long_size != 4 && long_size != 8 {
            return Err(err(
                &name,
                format!("long size {long_size}, expected 4 or 8"),
            ));
        }
        let mut schema = Schema {
            id,
            system: system.to_string(),
            name,
            fields,
            print_fmt,
            long_size,
            program: Program::default(),
        };
        schema.program = Program::compile(&schema);
        Ok(schema)
    }

    /// The `name:` and `ID:` of a format text, read from the lines before `format:`
    /// without parsing the rest: how a registry indexes formats it parses on first use.
    pub fn name_and_id(text: &str) -> (Option<&str>, Option<u16>) {
        let (mut name, mut id) = (None, None);
        for line in text.lines().take_while(|l| l.trim() != "format:") {
            if let Some(v) = line.strip_prefix("name:") {
                name = Some(v.trim());
            } else if let Some(v) = line.strip_prefix("ID:") {
                id = v.trim().parse::<u16>().ok();
            }
        }
        (name, id)
    }

    /// The field called `name`.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Index of the field called `name` in [`Schema::fields`].
    pub fn field_index(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// Why the `print fmt` could not be compiled, when the schema prints `field=value`
    /// pairs instead of the kernel's text.
    pub fn print_fallback(&self) -> Option<&str> {
        self.program.fallback_reason()
    }

    /// `system:name`.
    pub fn full_name(&self) -> String {
        format!("{}:{}", self.system, self.name)
    }
}

/// Size of a C base type as the kernel's formats name it; None when unknown.
pub(crate) fn c_type_size(ty: &str, long_size: usize) -> Option<usize> {
    let ty = ty.trim();
    if ty.ends_with('*') {
        return Some(long_size);
    }
    let words: Vec<&str> = ty
        .split_whitespace()
        .filter(|w| {
            !matches!(
                *w,
                "const" | "volatile" | "unsigned" | "signed" | "struct" | "enum" | "__user"
            )
        })
        .collect();
    let base = words.join(" ");
    Some(match base.as_str() {
        "" | "int" => 4, // bare `unsigned`
        "char" | "bool" | "_Bool" | "u8" | "s8" | "__u8" | "__s8" | "uint8_t" | "int8_t" => 1,
        "short" | "short int" | "u16" | "s16" | "__u16" | "__s16" | "__le16" | "__be16"
        | "uint16_t" | "int16_t" | "umode_t" => 2,
        "u32" | "s32" | "__u32" | "__s32" | "__le32" | "__be32" | "uint32_t" | "int32_t"
        | "pid_t" | "uid_t" | "gid_t" | "dev_t" | "gfp_t" | "fmode_t" | "blk_opf_t"
        | "blk_status_t" | "xfs_agnumber_t" | "xfs_agblock_t" | "xfs_extlen_t" | "__wsum"
        | "slab_flags_t" | "clockid_t" | "key_serial_t" | "ext4_lblk_t" | "xfs_nlink_t"
        | "xfs_dahash_t" => 4,
        "long long" | "long long int" | "u64" | "s64" | "__u64" | "__s64" | "__le64" | "__be64"
        | "uint64_t" | "int64_t" | "loff_t" | "sector_t" | "ktime_t" | "blkcnt_t" | "xfs_ino_t"
        | "xfs_fsblock_t" | "xfs_daddr_t" | "xfs_off_t" | "xfs_fileoff_t" | "xfs_rfsblock_t"
        | "xfs_filblks_t" | "xfs_fsize_t" | "xfs_lsn_t" | "ino_t" | "time64_t" | "phys_addr_t"
        | "dma_addr_t" | "resource_size_t" | "netdev_features_t" | "u128" => 8,
        "long" | "long int" | "size_t" | "ssize_t" | "unsigned long" | "ulong" | "off_t"
        | "pgoff_t" | "uintptr_t" | "intptr_t" | "time_t" | "clock_t" | "atomic_long_t" => {
            long_size
        }
        _ => return None,
    })
}

/// `field:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;`
fn parse_field_line(line: &str, long_size: usize) -> Result<Field, String> {
    let rest = line
        .strip_prefix("field:")
        .or_else(|| line.strip_prefix("field"))
        .ok_or("not a field line")?;
    let (decl, attrs) = rest.split_once(';').ok_or("no `;` after the declaration")?;
    let mut offset = None;
    let mut size = None;
    let mut signed = None;
    for attr in attrs.split(';') {
        let attr = attr.trim();
        let num = |v: &str| {
            v.trim()
                .parse::<usize>()
                .map_err(|_| format!("`{attr}` is not a number"))
        };
        if let Some(v) = attr.strip_prefix("offset:") {
            offset = Some(num(v)?);
        } else if let Some(v) = attr.strip_prefix("size:") {
            size = Some(num(v)?);
        } else if let Some(v) = attr.strip_prefix("signed:") {
            signed = Some(num(v)? != 0);
        }
    }
    let offset = offset.ok_or("no `offset:`")?;
    let size = size.ok_or("no `size:`")?;
    let signed = signed.unwrap_or(false);
    let decl = decl.trim();
    // Split `TYPE NAME[LEN]` — the name is the last identifier before an optional `[...]`.
    let (head, array) = match decl.find('[') {
        // `__data_loc char[] name`: the brackets belong to the type.
        Some(i) if decl.starts_with("__data_loc") || decl.starts_with("__rel_loc") => {
            let _ = i;
            (decl, None)
        }
        Some(i) => {
            let close = decl.rfind(']').ok_or("unclosed `[`")?;
            if close < i {
                return Err("unbalanced `[`".into());
            }
            (&decl[..i], Some(decl[i + 1..close].trim()))
        }
        None => (decl, None),
    };
    let head = head.trim_end();
    let name_start = head
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map(|(i, c)| i + c.len_utf8())
        .unwrap_or(0);
    let name = &head[name_start..];
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return Err("no field name".into());
    }
    let type_name = head[..name_start].trim().to_string();
    if type_name.is_empty() {
        return Err("no type before the field name".into());
    }
    let bad_size = |what: &str| Err(format!("{what} field with size {size}"));
    let kind = if let Some(t) = type_name
        .strip_prefix("__data_loc")
        .or_else(|| type_name.strip_prefix("__rel_loc"))
    {
        if size != 4 {
            return bad_size("__data_loc/__rel_loc");
        }
        let elem = t.trim().trim_end_matches("[]").trim();
        let elem_size = c_type_size(elem, long_size).unwrap_or(1);
        if type_name.starts_with("__data_loc") {
            FieldKind::DataLoc { elem_size }
        } else {
            FieldKind::RelLoc { elem_size }
        }
    } else if let Some(len) = array {
        let is_char = matches!(
            type_name.as_str(),
            "char" | "const char" | "unsigned char" | "signed char"
        );
        let elem_guess = c_type_size(&type_name, long_size);
        if len.is_empty() {
            FieldKind::DynamicArray {
                elem_size: elem_guess.unwrap_or(1).max(1),
            }
        } else if is_char && type_name != "unsigned char" {
            FieldKind::CharArray { len: size }
        } else {
            let n = len
                .parse::<usize>()
                .ok()
                .filter(|&n| n > 0 && size % n == 0);
            let elem_size = match (n, elem_guess) {
                (Some(n), _) => size / n,
                (None, Some(e)) if e > 0 && size % e == 0 => e,
                _ => 1,
            };
            FieldKind::Array {
                len: size.checked_div(elem_size).unwrap_or(0),
                elem_size,
            }
        }
    } else if type_name.ends_with('*') {
        FieldKind::Pointer
    } else {
        FieldKind::Scalar
    };
    Ok(Field {
        name: name.to_string(),
        type_name,
        offset,
        size,
        signed,
        kind,
    })
}

/// Where a field lies in the payload and how trace-cmd's filters and plugins treat it: a
/// copy of a [`Field`]'s location ([`Field::spec`]), small enough to keep per event in the
/// renderers' hot paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldSpec {
    /// Byte offset from the start of the payload (`common_type`).
    pub offset: usize,
    /// Size in bytes (for arrays, the whole array).
    pub size: usize,
    /// Whether the field's type is signed.
    pub signed: bool,
    /// What the field holds beyond a plain number.
    pub class: FieldClass,
}

/// The shape of a field as trace-cmd's filters and plugins see it (libtraceevent's field
/// flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldClass {
    /// A number that is not a pointer or a `long`.
    Number,
    /// A pointer or a `long` (filters compare it to strings as a function name).
    Long,
    /// A fixed `char` array holding a string.
    CharArray,
    /// `__data_loc char[]`: a u32 with length << 16 | offset from the payload start.
    DataLocString,
    /// `__rel_loc char[]`: like a data_loc, the offset counted from the end of the field.
    RelLocString,
    /// Any other array or dynamic array.
    Array,
}

impl Field {
    /// The field's [`FieldSpec`]; `long_size` is the kernel's `sizeof(long)` (a `long`
    /// of that size is classed with pointers, as libtraceevent does).
    pub fn spec(&self, long_size: usize) -> FieldSpec {
        let is_char = self.type_name.contains("char");
        let class = match self.kind {
            FieldKind::Pointer => FieldClass::Long,
            FieldKind::Scalar if self.type_name.contains("long") && self.size == long_size => {
                FieldClass::Long
            }
            FieldKind::Scalar => FieldClass::Number,
            FieldKind::CharArray { .. } => FieldClass::CharArray,
            FieldKind::DataLoc { .. } if is_char => FieldClass::DataLocString,
            FieldKind::RelLoc { .. } if is_char => FieldClass::RelLocString,
            _ => FieldClass::Array,
        };
        FieldSpec {
            offset: self.offset,
            size: self.size,
            signed: self.signed,
            class,
        }
    }

    fn raw(&self, data: &[u8], endian: Endianness, off: usize, size: usize) -> Option<u64> {
        endian.read_uint(data, off, size)
    }

    /// The field as an unsigned integer (zero-extended); None when the payload is too short
    /// or the field is not 1, 2, 4 or 8 bytes wide.
    pub fn read_u64(&self, data: &[u8], endian: Endianness) -> Option<u64> {
        self.raw(data, endian, self.offset, self.size)
    }

    /// The field as a signed integer (sign-extended from its size).
    pub fn read_i64(&self, data: &[u8], endian: Endianness) -> Option<i64> {
        let v = self.read_u64(data, endian)?;
        Some(sign_extend(v, self.size))
    }

    /// The field as an integer, sign- or zero-extended as the format declares.
    pub fn read_int(&self, data: &[u8], endian: Endianness) -> Option<u64> {
        if self.signed {
            self.read_i64(data, endian).map(|v| v as u64)
        } else {
            self.read_u64(data, endian)
        }
    }

    /// Element `i` of a fixed array field, as an unsigned integer.
    pub fn read_elem(&self, data: &[u8], endian: Endianness, i: usize) -> Option<u64> {
        match self.kind {
            FieldKind::Array { len, elem_size } if i < len => {
                self.raw(data, endian, self.offset + i * elem_size, elem_size)
            }
            FieldKind::CharArray { len } if i < len => data.get(self.offset + i).map(|&b| b as u64),
            _ => None,
        }
    }

    /// The bytes the field covers: the fixed bytes for scalars and arrays, the dynamic
    /// data for `__data_loc`/`__rel_loc` fields and `[]` arrays. None when the payload is
    /// too short or the locator points outside it.
    pub fn bytes<'a>(&self, data: &'a [u8], endian: Endianness) -> Option<&'a [u8]> {
        match self.kind {
            FieldKind::DataLoc { .. } | FieldKind::RelLoc { .. } => {
                let loc = self.read_u64(data, endian)? as u32;
                let mut off = (loc & 0xffff) as usize;
                let len = (loc >> 16) as usize;
                if matches!(self.kind, FieldKind::RelLoc { .. }) {
                    off += self.offset + self.size;
                }
                data.get(off..off.checked_add(len)?)
            }
            FieldKind::DynamicArray { .. } => data.get(self.offset..),
            _ => data.get(self.offset..self.offset.checked_add(self.size)?),
        }
    }

    /// The field as a C string: its bytes up to the first NUL (char arrays, `__data_loc
    /// char[]`, `char buf[]`).
    pub fn str<'a>(&self, data: &'a [u8], endian: Endianness) -> Option<&'a [u8]> {
        let b = self.bytes(data, endian)?;
        Some(until_nul(b))
    }

    /// Whether the field's value lives outside its fixed slot.
    pub fn is_dynamic(&self) -> bool {
        matches!(
            self.kind,
            FieldKind::DataLoc { .. } | FieldKind::RelLoc { .. } | FieldKind::DynamicArray { .. }
        )
    }
}

/// A field's value, typed as the format declares it (for JSON and filters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldValue<'a> {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer or a pointer.
    UInt(u64),
    /// A string (char arrays, `__data_loc char[]`), without its NUL.
    Str(&'a [u8]),
    /// The elements of an integer array, zero-extended.
    Array(Vec<u64>),
}

impl Field {
    /// The field's value; None when the payload is too short or a locator points outside
    /// it. Strings are the bytes up to the first NUL.
    pub fn value<'a>(&self, data: &'a [u8], endian: Endianness) -> Option<FieldValue<'a>> {
        let is_char = self.type_name.contains("char") && !self.type_name.contains("unsigned char");
        match self.kind {
            FieldKind::Scalar if self.signed => self.read_i64(data, endian).map(FieldValue::Int),
            FieldKind::Scalar | FieldKind::Pointer => {
                self.read_u64(data, endian).map(FieldValue::UInt)
            }
            FieldKind::CharArray { .. } => self.str(data, endian).map(FieldValue::Str),
            _ if is_char => self.str(data, endian).map(FieldValue::Str),
            FieldKind::Array { elem_size, .. }
            | FieldKind::DataLoc { elem_size }
            | FieldKind::RelLoc { elem_size }
            | FieldKind::DynamicArray { elem_size } => {
                let b = self.bytes(data, endian)?;
                let el = elem_size.max(1);
                Some(FieldValue::Array(
                    b.chunks_exact(el)
                        .filter_map(|c| self.raw(c, endian, 0, el).or(Some(c[0] as u64)))
                        .collect(),
                ))
            }
        }
    }
}

/// `b` up to its first NUL.
pub(crate) fn until_nul(b: &[u8]) -> &[u8] {
    // Most strings in records are a few bytes long (comms, names, `%p` extensions), for
    // which the vectorised search's set-up costs more than a plain loop.
    if b.len() <= 32 {
        let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        return &b[..n];
    }
    match memchr::memchr(0, b) {
        Some(i) => &b[..i],
        None => b,
    }
}

/// Sign-extend the low `size` bytes of `v`.
pub(crate) fn sign_extend(v: u64, size: usize) -> i64 {
    match size {
        1 => v as u8 as i8 as i64,
        2 => v as u16 as i16 as i64,
        4 => v as u32 as i32 as i64,
        _ => v as i64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
\tfield:__data_loc char[] name;\toffset:28;\tsize:4;\tsigned:0;\n\
\tfield:__rel_loc u32[] rel;\toffset:32;\tsize:4;\tsigned:0;\n\
\tfield:const char * fmt;\toffset:40;\tsize:8;\tsigned:0;\n\
\tfield:u32 buf[];\toffset:48;\tsize:0;\tsigned:0;\n\
\tfield:u64 arr[3];\toffset:48;\tsize:24;\tsigned:0;\n\
\tfield:__u8 saddr[sizeof(struct sockaddr_in6)];\toffset:48;\tsize:28;\tsigned:0;\n\
\n\
print fmt: \"prev_comm=%s\", REC->prev_comm\n";

    #[test]
    fn parses_fields_and_kinds() {
        let s = Schema::parse("sched", SWITCH, 8).unwrap();
        assert_eq!((s.id, s.name.as_str()), (372, "sched_switch"));
        assert_eq!(s.fields.len(), 12);
        let k = |n: &str| s.field(n).unwrap().kind;
        assert_eq!(k("prev_comm"), FieldKind::CharArray { len: 16 });
        assert_eq!(k("prev_pid"), FieldKind::Scalar);
        assert_eq!(k("name"), FieldKind::DataLoc { elem_size: 1 });
        assert_eq!(k("rel"), FieldKind::RelLoc { elem_size: 4 });
        assert_eq!(k("fmt"), FieldKind::Pointer);
        assert_eq!(k("buf"), FieldKind::DynamicArray { elem_size: 4 });
        assert_eq!(
            k("arr"),
            FieldKind::Array {
                len: 3,
                elem_size: 8
            }
        );
        assert_eq!(
            k("saddr"),
            FieldKind::Array {
                len: 28,
                elem_size: 1
            }
        );
        assert!(s.field("prev_pid").unwrap().signed);
        assert_eq!(s.field("fmt").unwrap().type_name, "const char *");
        assert_eq!(s.print_fmt, "\"prev_comm=%s\", REC->prev_comm");
    }

    #[test]
    fn reads_values_both_endiannesses() {
        let s = Schema::parse("sched", SWITCH, 8).unwrap();
        let mut le = vec![0u8; 80];
        le[8..13].copy_from_slice(b"bash\0");
        le[24..28].copy_from_slice(&(-5i32).to_le_bytes());
        // data_loc: offset 60, len 3 ("hi\0")
        le[28..32].copy_from_slice(&((3u32 << 16) | 60).to_le_bytes());
        le[60..63].copy_from_slice(b"hi\0");
        // rel_loc: relative to 36: offset 28 -> 64, len 4
        le[32..36].copy_from_slice(&((4u32 << 16) | 28).to_le_bytes());
        le[64..68].copy_from_slice(&7u32.to_le_bytes());
        let f = |n: &str| s.field(n).unwrap();
        assert_eq!(
            f("prev_comm").str(&le, Endianness::Little),
            Some(&b"bash"[..])
        );
        assert_eq!(f("prev_pid").read_i64(&le, Endianness::Little), Some(-5));
        assert_eq!(
            f("prev_pid").read_u64(&le, Endianness::Little),
            Some(0xffff_fffb)
        );
        assert_eq!(f("name").str(&le, Endianness::Little), Some(&b"hi"[..]));
        assert_eq!(
            f("rel").bytes(&le, Endianness::Little),
            Some(&7u32.to_le_bytes()[..])
        );
        let mut be = le.clone();
        be[24..28].copy_from_slice(&(-5i32).to_be_bytes());
        be[28..32].copy_from_slice(&((3u32 << 16) | 60).to_be_bytes());
        assert_eq!(f("prev_pid").read_i64(&be, Endianness::Big), Some(-5));
        assert_eq!(f("name").str(&be, Endianness::Big), Some(&b"hi"[..]));
        // A locator that points past the payload is None, never a panic.
        let mut bad = le.clone();
        bad[28..32].copy_from_slice(&((300u32 << 16) | 60).to_le_bytes());
        assert_eq!(f("name").bytes(&bad, Endianness::Little), None);
        assert_eq!(f("prev_pid").read_u64(&le[..10], Endianness::Little), None);
    }

    #[test]
    fn typed_values() {
        let s = Schema::parse("sched", SWITCH, 8).unwrap();
        let mut d = vec![0u8; 80];
        d[8..12].copy_from_slice(b"sh\0\0");
        d[24..28].copy_from_slice(&(-1i32).to_le_bytes());
        d[32..36].copy_from_slice(&((8u32 << 16) | 28).to_le_bytes());
        d[64..68].copy_from_slice(&5u32.to_le_bytes());
        d[68..72].copy_from_slice(&6u32.to_le_bytes());
        let v = |n: &str| s.field(n).unwrap().value(&d, Endianness::Little);
        assert_eq!(v("prev_comm"), Some(FieldValue::Str(b"sh")));
        assert_eq!(v("prev_pid"), Some(FieldValue::Int(-1)));
        assert_eq!(v("fmt"), Some(FieldValue::UInt(0)));
        assert_eq!(v("rel"), Some(FieldValue::Array(vec![5, 6])));
    }

    #[test]
    fn zero_length_data_loc() {
        let s = Schema::parse("sched", SWITCH, 8).unwrap();
        let mut d = vec![0u8; 80];
        d[28..32].copy_from_slice(&(80u32).to_le_bytes());
        assert_eq!(
            s.field("name").unwrap().str(&d, Endianness::Little),
            Some(&b""[..])
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let e = Schema::parse("x", "name: y\nformat:\nprint fmt: \"\"\n", 8).unwrap_err();
        assert!(e.to_string().contains("events/x/y/format: no `ID:`"), "{e}");
        let e = Schema::parse(
            "x",
            "name: y\nID: 9\n\tfield:int a;\toffset:zz;\tsize:4;\n",
            8,
        )
        .unwrap_err();
        assert!(e.to_string().contains("offset:zz"), "{e}");
        let e = Schema::parse(
            "x",
            "name: y\nID: 9\n\tfield:int é;\toffset:0;\tsize:4;\n",
            8,
        )
        .unwrap_err();
        assert!(e.to_string().contains("no field name"), "{e}");
        let e = Schema::parse("x", "name: y\nID: 70000\n", 8).unwrap_err();
        assert!(e.to_string().contains("70000"), "{e}");
    }
}
