//! Enum constants from the kernel's BTF (`/sys/kernel/btf/vmlinux`, or a tree's copy).
//!
//! Some `print fmt`s name enum constants the kernel never rewrote into numbers (no
//! `TRACE_DEFINE_ENUM`), e.g. writeback's `I_DIRTY_SYNC`: the kernel prints them with the
//! values compiled into it, which only BTF tells user space. The layout read here is the
//! kernel's `include/uapi/linux/btf.h`: a header, then `struct btf_type` records (12 bytes
//! each, followed by data whose size depends on the kind), then the string section.

use crate::endian::Endianness;

/// `btf_header.magic`, as read in the file's own byte order.
const BTF_MAGIC: u16 = 0xeb9f;
/// Size of `struct btf_type`: `name_off`, `info`, `size`/`type`.
const BTF_TYPE_LEN: usize = 12;

// `BTF_INFO_KIND(info)`: the kinds of `struct btf_type`.
const BTF_KIND_INT: u32 = 1;
const BTF_KIND_PTR: u32 = 2;
const BTF_KIND_ARRAY: u32 = 3;
const BTF_KIND_STRUCT: u32 = 4;
const BTF_KIND_UNION: u32 = 5;
const BTF_KIND_ENUM: u32 = 6;
const BTF_KIND_FWD: u32 = 7;
const BTF_KIND_TYPEDEF: u32 = 8;
const BTF_KIND_VOLATILE: u32 = 9;
const BTF_KIND_CONST: u32 = 10;
const BTF_KIND_RESTRICT: u32 = 11;
const BTF_KIND_FUNC: u32 = 12;
const BTF_KIND_FUNC_PROTO: u32 = 13;
const BTF_KIND_VAR: u32 = 14;
const BTF_KIND_DATASEC: u32 = 15;
const BTF_KIND_FLOAT: u32 = 16;
const BTF_KIND_DECL_TAG: u32 = 17;
const BTF_KIND_TYPE_TAG: u32 = 18;
const BTF_KIND_ENUM64: u32 = 19;

/// Bytes after a `struct btf_type` of `kind` with `vlen` members: `struct btf_enum`
/// (name, value) is 8, `struct btf_enum64` (name, lo32, hi32) 12, `struct btf_member`
/// and `struct btf_var_secinfo` 12, `struct btf_param` 8, `struct btf_array` 12, and the
/// one `u32` of INT, VAR and DECL_TAG. None for a kind this reader does not know.
fn extra_len(kind: u32, vlen: usize) -> Option<usize> {
    Some(match kind {
        BTF_KIND_INT | BTF_KIND_VAR | BTF_KIND_DECL_TAG => 4,
        BTF_KIND_ARRAY => 12,
        BTF_KIND_STRUCT | BTF_KIND_UNION | BTF_KIND_DATASEC | BTF_KIND_ENUM64 => vlen * 12,
        BTF_KIND_FUNC_PROTO | BTF_KIND_ENUM => vlen * 8,
        BTF_KIND_PTR | BTF_KIND_FWD | BTF_KIND_TYPEDEF | BTF_KIND_VOLATILE | BTF_KIND_CONST
        | BTF_KIND_RESTRICT | BTF_KIND_FUNC | BTF_KIND_FLOAT | BTF_KIND_TYPE_TAG => 0,
        _ => return None,
    })
}

/// Where a BTF blob's parts are: its byte order, the type records and the strings.
struct Layout<'a> {
    btf: &'a [u8],
    endian: Endianness,
    /// Offset of the first `struct btf_type`, and the end of the records.
    types: usize,
    end: usize,
    /// Offset and length of the string section.
    strings: usize,
    str_len: usize,
}

impl<'a> Layout<'a> {
    fn of(btf: &'a [u8]) -> Result<Layout<'a>, String> {
        let endian = match btf.get(0..2) {
            Some(m) if Endianness::Little.u16(m) == BTF_MAGIC => Endianness::Little,
            Some(m) if Endianness::Big.u16(m) == BTF_MAGIC => Endianness::Big,
            _ => return Err("not BTF data (bad magic)".into()),
        };
        let mut l = Layout {
            btf,
            endian,
            types: 0,
            end: 0,
            strings: 0,
            str_len: 0,
        };
        // struct btf_header: magic, version, flags, hdr_len, type_off, type_len,
        // str_off, str_len.
        let hdr_len = l.u32_at(4)? as usize;
        let (type_off, type_len) = (l.u32_at(8)? as usize, l.u32_at(12)? as usize);
        let (str_off, str_len) = (l.u32_at(16)? as usize, l.u32_at(20)? as usize);
        l.types = hdr_len.saturating_add(type_off);
        l.end = l.types.saturating_add(type_len);
        l.strings = hdr_len.saturating_add(str_off);
        l.str_len = str_len;
        Ok(l)
    }

    fn u32_at(&self, off: usize) -> Result<u32, String> {
        self.endian
            .u32_at(self.btf, off)
            .ok_or_else(|| format!("BTF truncated at offset {off}"))
    }

    /// The string at `off` in the string section.
    fn name(&self, off: u32) -> String {
        let start = self.strings.saturating_add(off as usize);
        let end = self
            .strings
            .saturating_add(self.str_len)
            .min(self.btf.len());
        let s = self.btf.get(start..end).unwrap_or(&[]);
        let n = s.iter().position(|&b| b == 0).unwrap_or(s.len());
        String::from_utf8_lossy(&s[..n]).into_owned()
    }

    /// Call `f(offset of the record, name_off, kind, vlen, info)` for each type record,
    /// in id order (the first is type 1), until it returns `Some`.
    fn walk<T>(
        &self,
        mut f: impl FnMut(usize, u32, u32, usize, u32) -> Result<Option<T>, String>,
    ) -> Result<Option<T>, String> {
        let mut pos = self.types;
        while pos + BTF_TYPE_LEN <= self.end {
            // info: vlen in bits 0-15, kind in bits 24-28, kind_flag in bit 31.
            let info = self.u32_at(pos + 4)?;
            let vlen = (info & 0xffff) as usize;
            let kind = (info >> 24) & 0x1f;
            if let Some(found) = f(pos, self.u32_at(pos)?, kind, vlen, info)? {
                return Ok(Some(found));
            }
            pos += BTF_TYPE_LEN
                + extra_len(kind, vlen)
                    .ok_or_else(|| format!("unknown BTF kind {kind} at offset {pos}"))?;
        }
        Ok(None)
    }
}

/// Every enumerator of every `BTF_KIND_ENUM`/`BTF_KIND_ENUM64` in `btf`, as
/// `(name, value)`.
pub fn enums(btf: &[u8]) -> Result<Vec<(String, i64)>, String> {
    let l = Layout::of(btf)?;
    let mut out = Vec::new();
    l.walk(|at, _, kind, vlen, info| {
        let pos = at + BTF_TYPE_LEN;
        // The kind_flag of an enum says its values are signed.
        let signed = info >> 31 == 1;
        match kind {
            BTF_KIND_ENUM => {
                for i in 0..vlen {
                    let at = pos + i * 8;
                    let raw = l.u32_at(at + 4)?;
                    let v = if signed {
                        i64::from(raw as i32)
                    } else {
                        i64::from(raw)
                    };
                    out.push((l.name(l.u32_at(at)?), v));
                }
            }
            BTF_KIND_ENUM64 => {
                for i in 0..vlen {
                    let at = pos + i * 12;
                    let v = (u64::from(l.u32_at(at + 8)?) << 32) | u64::from(l.u32_at(at + 4)?);
                    out.push((l.name(l.u32_at(at)?), v as i64));
                }
            }
            _ => {}
        }
        Ok(None::<()>)
    })?;
    Ok(out)
}

/// The name of type `id` in `btf` (type ids count the records from 1), `None` when there
/// is no such type.
pub fn type_name(btf: &[u8], id: u32) -> Result<Option<String>, String> {
    let l = Layout::of(btf)?;
    let mut n = 0u32;
    l.walk(|_, name_off, _, _, _| {
        n += 1;
        Ok((n == id).then(|| l.name(name_off)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BTF blob in `endian` with one `int`, one enum (`A = -1`, signed) and one enum64
    /// (`B = 1 << 40`).
    fn blob(endian: Endianness) -> Vec<u8> {
        let u32b = |v: u32| endian.u32_bytes(v);
        let strings = b"\0A\0B\0".to_vec();
        let mut types = Vec::new();
        let ty = |types: &mut Vec<u8>, info: u32, size: u32| {
            types.extend(u32b(0));
            types.extend(u32b(info));
            types.extend(u32b(size));
        };
        ty(&mut types, BTF_KIND_INT << 24, 4);
        types.extend(u32b(32));
        ty(&mut types, (1 << 31) | (BTF_KIND_ENUM << 24) | 1, 4);
        types.extend(u32b(1));
        types.extend(u32b(-1i32 as u32));
        ty(&mut types, (BTF_KIND_ENUM64 << 24) | 1, 8);
        types.extend(u32b(3));
        types.extend(u32b(0));
        types.extend(u32b(1 << 8));
        let mut b = Vec::new();
        b.extend(endian.u16_bytes(BTF_MAGIC));
        b.extend([1, 0]);
        b.extend(u32b(24));
        b.extend(u32b(0));
        b.extend(u32b(types.len() as u32));
        b.extend(u32b(types.len() as u32));
        b.extend(u32b(strings.len() as u32));
        b.extend(types);
        b.extend(strings);
        b
    }

    /// Type ids count the records from 1, over records of every length: the enums'
    /// members are skipped; a FUNC after a FUNC_PROTO with a parameter is found by name.
    #[test]
    fn type_names_by_id() {
        for endian in [Endianness::Little, Endianness::Big] {
            let mut b = blob(endian);
            // Append types 4, a FUNC_PROTO with one parameter, and 5, a FUNC of it named
            // by a string added at the end of the string section.
            let u32b = |v: u32| endian.u32_bytes(v);
            let hdr = 24;
            let type_len = endian.u32_at(&b, 12).unwrap() as usize;
            let str_len = endian.u32_at(&b, 20).unwrap() as usize;
            let strings = b.split_off(hdr + type_len);
            let mut more = Vec::new();
            more.extend(u32b(0));
            more.extend(u32b((BTF_KIND_FUNC_PROTO << 24) | 1));
            more.extend(u32b(1));
            more.extend(u32b(0));
            more.extend(u32b(1));
            more.extend(u32b(str_len as u32));
            more.extend(u32b(BTF_KIND_FUNC << 24));
            more.extend(u32b(4));
            b.extend(&more);
            b.extend(strings);
            b.extend(b"tctl_fn\0");
            let type_len = (type_len + more.len()) as u32;
            b[12..16].copy_from_slice(&u32b(type_len));
            b[16..20].copy_from_slice(&u32b(type_len));
            b[20..24].copy_from_slice(&u32b((str_len + 8) as u32));
            assert_eq!(type_name(&b, 1).unwrap().as_deref(), Some(""));
            assert_eq!(type_name(&b, 5).unwrap().as_deref(), Some("tctl_fn"));
            assert_eq!(type_name(&b, 6).unwrap(), None);
            assert_eq!(enums(&b).unwrap().len(), 2);
        }
    }

    #[test]
    fn reads_enum_and_enum64_in_both_byte_orders() {
        for endian in [Endianness::Little, Endianness::Big] {
            let want = vec![("A".to_string(), -1), ("B".to_string(), 1 << 40)];
            assert_eq!(enums(&blob(endian)).unwrap(), want, "{endian:?}");
        }
    }

    #[test]
    fn bad_input_is_an_error_that_says_where() {
        assert_eq!(enums(b"xx").unwrap_err(), "not BTF data (bad magic)");
        let b = blob(Endianness::Little);
        let e = enums(&b[..40]).unwrap_err();
        assert!(e.starts_with("BTF truncated at offset"), "{e}");
        let mut unknown = b.clone();
        unknown[24 + 7] = 31; // the first type's kind
        let e = enums(&unknown).unwrap_err();
        assert_eq!(e, "unknown BTF kind 31 at offset 24");
    }
}
