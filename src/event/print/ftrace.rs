//! The kernel's own printers for events it does not print with their `print fmt`: the
//! ftrace events (`print`, `bprint`, `bputs`, `function`, `raw_data`, the stack traces)
//! and the syscalls.

use super::eval::Evaluator;
use super::printf::{fmt_int, fmt_str, Seg};
use super::value::read_elem;
use super::EvalResult;
use crate::bytes::{push_dec as push_u64, push_hex};
use crate::event::format::until_nul;
use crate::event::pointer;
use crate::event::{PrintEnv, PrintStyle};

/// Apply a format to the binary argument buffer `trace_printk` stores (each integer at its
/// natural alignment, 8-byte ones at 4; strings inline and NUL-terminated; `%p`
/// extensions that dereference memory already rendered to strings).
pub(crate) fn bprintf(
    env: &PrintEnv,
    segs: &[Seg],
    args: &[u8],
    long: u8,
    out: &mut Vec<u8>,
) -> EvalResult<()> {
    let endian = env.endian;
    let mut pos = 0usize;
    let word = |pos: &mut usize, size: usize| -> EvalResult<u64> {
        let align = if size == 8 { 4 } else { size };
        *pos = pos.div_ceil(align) * align;
        let v = read_elem(args.get(*pos..).unwrap_or(&[]), 0, size, endian)
            .ok_or("bprint arguments end early")?;
        *pos += size;
        Ok(v)
    };
    let string = |pos: &mut usize| -> &[u8] {
        let rest = args.get(*pos..).unwrap_or(&[]);
        let s = until_nul(rest);
        *pos += (s.len() + 1).min(rest.len());
        s
    };
    for seg in segs {
        match seg {
            Seg::Lit(b) => crate::bytes::put(out, b),
            Seg::Conv(spec) => {
                let spec = spec.with_stars(|| Ok::<_, String>(word(&mut pos, 4)? as u32 as i32))?;
                match spec.conv {
                    b's' => {
                        let s = string(&mut pos);
                        fmt_str(out, s, &spec);
                    }
                    b'p' => {
                        let ext = spec.ext();
                        let deref = !ext.is_empty()
                            && !matches!(
                                ext[0],
                                b'S' | b's' | b'F' | b'f' | b'x' | b'K' | b'e' | b'B'
                            );
                        if deref {
                            // Already rendered by the kernel when the event was written.
                            let s = string(&mut pos);
                            crate::bytes::put(out, s);
                        } else {
                            let v = word(&mut pos, long as usize)?;
                            pointer::format(env, &spec, &pointer::PtrArg::Addr(v), long, out)?;
                        }
                    }
                    _ => {
                        let size = match spec.len {
                            0 => 4,
                            n => n as usize,
                        };
                        let size = if spec.conv == b'c' { 1 } else { size };
                        let v = word(&mut pos, size)?;
                        fmt_int(out, v, &spec, long);
                    }
                }
            }
        }
    }
    Ok(())
}

impl<'a, 'e> Evaluator<'a, 'e> {
    pub(super) fn ip_sym(&self, ip: u64, out: &mut Vec<u8>) {
        if ip == 0 {
            out.push(b'0');
            return;
        }
        let name = if self.env.style == PrintStyle::TraceCmd {
            pointer::tracecmd_function(self.env, ip).map(|(n, _)| n)
        } else {
            self.env.kallsyms.and_then(|k| k.lookup(ip)).map(|s| s.name)
        };
        match name {
            Some(n) => crate::bytes::put(out, n.as_bytes()),
            None => {
                crate::bytes::put(out, b"0x");
                let start = out.len();
                push_hex(out, ip, false);
                let n = out.len() - start;
                if n < 8 {
                    out.splice(start..start, std::iter::repeat(b'0').take(8 - n));
                }
            }
        }
    }

    pub(super) fn field_u64(&self, i: usize) -> EvalResult<u64> {
        let f = &self.schema.fields[i];
        f.read_u64(self.data, self.endian())
            .ok_or_else(|| format!("field `{}` lies outside the payload", f.name))
    }

    pub(super) fn kernel_stack(&self, caller: usize, out: &mut Vec<u8>) -> EvalResult<()> {
        let f = &self.schema.fields[caller];
        let long = self.schema.long_size;
        let words = self
            .data
            .get(f.offset..)
            .ok_or("caller outside the payload")?;
        let all_ones = if long == 4 { u32::MAX as u64 } else { u64::MAX };
        crate::bytes::put(out, b"<stack trace>");
        for w in words.chunks_exact(long) {
            let ip = read_elem(w, 0, long, self.endian()).unwrap_or(all_ones);
            if ip == all_ones {
                break;
            }
            crate::bytes::put(out, b"\n => ");
            // FTRACE_TRAMPOLINE_MARKER: INT_MAX stands for an ftrace trampoline.
            if ip == i32::MAX as u64 {
                crate::bytes::put(out, b"[FTRACE TRAMPOLINE]");
            } else {
                self.ip_sym(ip, out);
            }
        }
        Ok(())
    }

    pub(super) fn user_stack(&self, caller: usize, out: &mut Vec<u8>) -> EvalResult<()> {
        let f = &self.schema.fields[caller];
        let long = self.schema.long_size;
        let words = f
            .bytes(self.data, self.endian())
            .ok_or("caller outside the payload")?;
        crate::bytes::put(out, b"<user stack trace>");
        for w in words.chunks_exact(long) {
            let ip = read_elem(w, 0, long, self.endian()).unwrap_or(0);
            if ip == 0 {
                break;
            }
            crate::bytes::put(out, b"\n =>  <");
            let start = out.len();
            push_hex(out, ip, false);
            let n = out.len() - start;
            if n < 2 * long {
                out.splice(start..start, std::iter::repeat(b'0').take(2 * long - n));
            }
            out.push(b'>');
        }
        Ok(())
    }

    pub(super) fn sys_enter(
        &self,
        call: &str,
        args: &[usize],
        out: &mut Vec<u8>,
    ) -> EvalResult<()> {
        crate::bytes::put(out, call.as_bytes());
        out.push(b'(');
        for (n, &i) in args.iter().enumerate() {
            if n != 0 {
                crate::bytes::put(out, b", ");
            }
            crate::bytes::put(out, self.schema.fields[i].name.as_bytes());
            crate::bytes::put(out, b": ");
            let v = self.field_u64(i)?;
            if v < 10 {
                push_u64(out, v);
            } else {
                crate::bytes::put(out, b"0x");
                push_hex(out, v, false);
            }
        }
        out.push(b')');
        Ok(())
    }

    pub(super) fn ftrace_print(&self, ip: usize, buf: usize, out: &mut Vec<u8>) -> EvalResult<()> {
        self.ip_sym(self.field_u64(ip)?, out);
        crate::bytes::put(out, b": ");
        let b = self.schema.fields[buf]
            .str(self.data, self.endian())
            .ok_or("buf outside the payload")?;
        // The kernel's line ends with the buffer's own newline; the caller adds one.
        crate::bytes::put(out, b.strip_suffix(b"\n").unwrap_or(b));
        Ok(())
    }

    pub(super) fn ftrace_bputs(&self, ip: usize, str: usize, out: &mut Vec<u8>) -> EvalResult<()> {
        self.ip_sym(self.field_u64(ip)?, out);
        crate::bytes::put(out, b": ");
        let addr = self.field_u64(str)?;
        let s = self
            .env
            .printk
            .and_then(|p| p.get(addr))
            .ok_or_else(|| format!("bputs string {addr:#x} is not in printk_formats"))?;
        let s = s.as_bytes();
        crate::bytes::put(out, s.strip_suffix(b"\n").unwrap_or(s));
        Ok(())
    }

    pub(super) fn ftrace_function(
        &self,
        ip: usize,
        parent: usize,
        out: &mut Vec<u8>,
    ) -> EvalResult<()> {
        self.ip_sym(self.field_u64(ip)?, out);
        let parent = self.field_u64(parent)?;
        if parent != 0 {
            crate::bytes::put(out, b" <-");
            self.ip_sym(parent, out);
        }
        Ok(())
    }

    /// The kernel's `trace_func_repeats_print`: the function as `ftrace:function` prints
    /// it, then ` (repeats: %u, last_ts:` and the time of the last repeated call in the
    /// time column's format (` %5lu.%06lu` of a nanosecond clock, else ` %12llu`), `)`.
    pub(super) fn ftrace_func_repeats(
        &self,
        [ip, parent, count, top, bottom]: [usize; 5],
        out: &mut Vec<u8>,
    ) -> EvalResult<()> {
        self.ftrace_function(ip, parent, out)?;
        let count = self.field_u64(count)?;
        let delta = (self.field_u64(top)? << 32) | self.field_u64(bottom)?;
        crate::bytes::put(out, b" (repeats: ");
        push_u64(out, count);
        crate::bytes::put(out, b", last_ts: ");
        let last = self.ts.wrapping_sub(delta);
        if self.env.time_in_ns {
            let us = last.wrapping_add(500) / 1000;
            crate::bytes::push_dec_padded(out, us / 1_000_000, 5, b' ');
            out.push(b'.');
            crate::bytes::push_dec_padded(out, us % 1_000_000, 6, b'0');
        } else {
            crate::bytes::push_dec_padded(out, last, 12, b' ');
        }
        out.push(b')');
        Ok(())
    }

    pub(super) fn ftrace_bprint(
        &self,
        ip: usize,
        fmt: usize,
        buf: usize,
        out: &mut Vec<u8>,
    ) -> EvalResult<()> {
        self.ip_sym(self.field_u64(ip)?, out);
        crate::bytes::put(out, b": ");
        let addr = self.field_u64(fmt)?;
        let segs = self
            .env
            .printk
            .and_then(|p| p.format(addr, self.schema.long_size))
            .ok_or_else(|| format!("bprint format {addr:#x} is not in printk_formats"))??;
        let args = self.schema.fields[buf]
            .bytes(self.data, self.endian())
            .ok_or("buf outside the payload")?;
        let start = out.len();
        bprintf(self.env, &segs, args, self.long(), out)?;
        if out.len() > start && out.last() == Some(&b'\n') {
            out.pop();
        }
        Ok(())
    }
}
