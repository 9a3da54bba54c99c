//! The print-fmt engine on synthesized records: each helper, conversion and operator the
//! kernel's formats use, with the text the kernel's vsnprintf/trace_seq helpers produce.

use tracectl::endian::Endianness;
use tracectl::event::{Kallsyms, PrintEnv, PrintkFormats, Record, Registry, Schema};

/// A format with fields a (int), b (unsigned long), c (char[8]), s (__data_loc char[]),
/// arr (__data_loc u32[]), fixed (u8[6]), p (void *), sh (short).
fn schema(print_fmt: &str) -> Schema {
    let text = format!(
        "name: demo\nID: 900\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:int a;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield:unsigned long b;\toffset:16;\tsize:8;\tsigned:0;\n\
\tfield:char c[8];\toffset:24;\tsize:8;\tsigned:0;\n\
\tfield:__data_loc char[] s;\toffset:32;\tsize:4;\tsigned:0;\n\
\tfield:__data_loc u32[] arr;\toffset:36;\tsize:4;\tsigned:0;\n\
\tfield:u8 fixed[6];\toffset:40;\tsize:6;\tsigned:0;\n\
\tfield:short sh;\toffset:46;\tsize:2;\tsigned:1;\n\
\tfield:void * p;\toffset:48;\tsize:8;\tsigned:0;\n\n\
print fmt: {print_fmt}\n"
    );
    Schema::parse("demo", &text, 8).unwrap()
}

/// a=-5, b=0x1234, c="bash", s="hello", arr=[1,2,0xdeadbeef], fixed=00:1b:21:0a:0b:0c, sh=-2, p=0xffffffff81000110
fn record() -> Vec<u8> {
    let mut d = vec![0u8; 80];
    d[0..2].copy_from_slice(&900u16.to_le_bytes());
    d[8..12].copy_from_slice(&(-5i32).to_le_bytes());
    d[16..24].copy_from_slice(&0x1234u64.to_le_bytes());
    d[24..29].copy_from_slice(b"bash\0");
    d[32..36].copy_from_slice(&((6u32 << 16) | 56).to_le_bytes());
    d[36..40].copy_from_slice(&((12u32 << 16) | 62).to_le_bytes());
    d[40..46].copy_from_slice(&[0, 0x1b, 0x21, 0xa, 0xb, 0xc]);
    d[46..48].copy_from_slice(&(-2i16).to_le_bytes());
    d[48..56].copy_from_slice(&0xffffffff81000110u64.to_le_bytes());
    d[56..62].copy_from_slice(b"hello\0");
    d[62..66].copy_from_slice(&1u32.to_le_bytes());
    d[66..70].copy_from_slice(&2u32.to_le_bytes());
    d[70..74].copy_from_slice(&0xdeadbeefu32.to_le_bytes());
    d
}

fn kallsyms() -> Kallsyms {
    Kallsyms::parse("ffffffff81000100 T do_work\nffffffff81000180 t next_fn\nffffffffc0000000 t modfn\t[kvm]\nffffffffc0000040 t x\t[kvm]\n")
}

fn text(print_fmt: &str) -> String {
    let s = schema(print_fmt);
    let k = kallsyms();
    let env = PrintEnv {
        kallsyms: Some(&k),
        ..PrintEnv::default()
    };
    let d = record();
    let mut out = Vec::new();
    let ok = s.write_text(
        &Record {
            cpu: 0,
            ts: 0,
            data: &d,
        },
        &env,
        &mut out,
    );
    let t = String::from_utf8(out).unwrap();
    assert!(
        ok,
        "fell back for {print_fmt}: {t} ({:?})",
        s.print_fallback()
    );
    t
}

#[test]
fn integer_conversions() {
    assert_eq!(
        text(r#""%d %i %u %x %X %o", REC->a, REC->a, REC->a, REC->a, REC->b, REC->b"#),
        "-5 -5 4294967291 fffffffb 1234 11064"
    );
    assert_eq!(
        text(r#""%ld %lu %lx %llx %zu", REC->a, REC->b, REC->b, REC->b, REC->b"#),
        "-5 4660 1234 1234 4660"
    );
    assert_eq!(
        text(r#""%hhx %hd %hu", REC->b, REC->sh, REC->sh"#),
        "34 -2 65534"
    );
    assert_eq!(
        text(r#""[%5d] [%-5d] [%05d] [%+d] [% d]", REC->a, REC->a, REC->a, REC->b, REC->b"#),
        "[   -5] [-5   ] [-0005] [+4660] [ 4660]"
    );
    assert_eq!(
        text(r#""%#x %#o %#lx %#x %08x %.3d", REC->b, REC->b, REC->b, 0, REC->b, 7"#),
        "0x1234 011064 0x1234 0x0 00001234 007"
    );
    assert_eq!(
        text(r#""%#010x|%*d|%-*d|", REC->b, 4, 7, 3, 7"#),
        "0x00001234|   7|7  |"
    );
    assert_eq!(text(r#""%c%c", 'o', 107"#), "ok");
    // Casts before plain conversions, as C converts them.
    assert_eq!(
        text(
            r#""%lu %lx %u %d", (unsigned long) REC->a, (unsigned long)REC->sh, (unsigned int) REC->sh, (short) REC->b"#
        ),
        "18446744073709551611 fffffffffffffffe 4294967294 4660"
    );
    // Flag letters from `field & constant ? "x" : "y"`: a negative int is sign-extended
    // to a 64-bit constant's width.
    assert_eq!(
        text(
            r#""%s%s%s%s%s", REC->a & 0x1u ? "M" : "-", REC->a & 0x2u ? "a" : "-", REC->a & 0x100000000UL ? "h" : "-", REC->sh & 0x4 ? "x" : "-", REC->b & 0x1 ? "o" : "e""#
        ),
        "Mahxe"
    );
}

#[test]
fn strings() {
    assert_eq!(
        text(r#""%s|%-6s|%6s|%.2s|%.*s", REC->c, REC->c, __get_str(s), REC->c, 3, __get_str(s)"#),
        "bash|bash  | hello|ba|hel"
    );
    assert_eq!(text(r#""%s", (REC->a < 0) ? "neg" : "pos""#), "neg");
    assert_eq!(text(r#""%s", __get_str(s)"#), "hello");
    // %s of a NULL pointer
    assert_eq!(text(r#""%s", (char *)0"#), "(null)");
}

#[test]
fn expressions() {
    assert_eq!(
        text(r#""%d %d %d %d", REC->a * 2 + 1, REC->a / 2, REC->a % 3, -REC->a"#),
        "-9 -2 -2 5"
    );
    assert_eq!(
        text(r#""%lx %lx %d %d", REC->b >> 4, REC->b << 4 | 1, REC->b & 0xf0, ~0"#),
        "123 12341 48 -1"
    );
    assert_eq!(
        text(r#""%d %d %d %d", REC->a < 0 && REC->b, REC->a > 0 || 0, !REC->a, REC->a == -5"#),
        "1 0 0 1"
    );
    assert_eq!(
        text(r#""%u %d", (unsigned int)REC->a, (unsigned char)REC->a"#),
        "4294967291 251"
    );
    assert_eq!(text(r#""%d %d", sizeof(u64), sizeof(unsigned int)"#), "8 4");
    // unsigned comparison after the usual arithmetic conversions
    assert_eq!(text(r#""%d", REC->a < (unsigned int)1"#), "0");
    assert_eq!(text(r#""%d %d", REC->c[0], REC->fixed[1]"#), "98 27");
    assert_eq!(text(r#""%d", __builtin_expect(REC->a, 0)"#), "-5");
    assert_eq!(
        text(r#""%d", ({ int __x = (REC->a); int __y = (3); ((__x) < (__y) ? (__x) : (__y)); })"#),
        "-5"
    );
}

#[test]
fn flags_and_symbols() {
    let f = r#"{ 0x1000, "A" }, { 0x0200, "B" }, { 0x0030, "C" }, { 0x4, "D" }"#;
    assert_eq!(
        text(&format!(r#""%s", __print_flags(REC->b, "|", {f})"#)),
        "A|B|C|D"
    );
    assert_eq!(
        text(&format!(r#""%s", __print_flags(0x1239, "|", {f})"#)),
        "A|B|C|0x9"
    );
    assert_eq!(
        text(&format!(r#""%s", __print_flags(0x1200, "|", {f})"#)),
        "A|B"
    );
    assert_eq!(
        text(&format!(r#""[%s]", __print_flags(0, "|", {f})"#)),
        "[]"
    );
    assert_eq!(
        text(&format!(r#""%s", __print_flags(0x8, "|", {f})"#)),
        "0x8"
    );
    assert_eq!(
        text(
            r#""%s %s", __print_symbolic(REC->a, { -5, "MINUS_FIVE" }, { 1, "ONE" }), __print_symbolic(7, { 1, "ONE" })"#
        ),
        "MINUS_FIVE 0x7"
    );
    assert_eq!(
        text(r#""%s", __print_flags_u64(REC->b, ",", { 0x1000, "A" })"#),
        "A,0x234"
    );
    assert_eq!(
        text(r#""%s", __print_symbolic_u64(REC->b, { 0x1234, "X" })"#),
        "X"
    );
}

#[test]
fn tables_behind_a_zero_test_and_a_null_end() {
    let f = r#"{ 0x1000, "A" }, { 0x0200, "B" }, { 0x0030, "C" }, { 0, (void *)0 }"#;
    // The kernel stops at the entry with a NULL name and prints what is left in hex; the
    // same from a field and from a constant.
    assert_eq!(
        text(&format!(r#""%s", __print_flags(REC->b, "|", {f})"#)),
        "A|B|C|0x4"
    );
    assert_eq!(
        text(&format!(r#""%s", __print_flags(0x1234, "|", {f})"#)),
        "A|B|C|0x4"
    );
    assert_eq!(
        text(
            r#""%s", __print_symbolic(REC->b, { 1, "ONE" }, { 0, (void *)0 }, { 0x1234, "AFTER_END" })"#
        ),
        "0x1234"
    );
    // `(flags) ? __print_flags(flags, ...) : "none"` (gfp_flags): a zero field prints the
    // other branch, a non-zero one the table.
    assert_eq!(
        text(&format!(
            r#""%s %s", (REC->common_flags) ? __print_flags(REC->common_flags, "|", {f}) : "none", (REC->b) ? __print_flags(REC->b, "|", {f}) : "none""#
        )),
        "none A|B|C|0x4"
    );
}

#[test]
fn field_operations() {
    // MAJOR/MINOR of a dev_t, shifts of signed and unsigned fields, casts around them.
    assert_eq!(
        text(
            r#""%d,%d %d %u %x %d %lu", ((unsigned int) ((REC->b) >> 8)), ((unsigned int) ((REC->b) & ((1U << 8) - 1))), REC->a >> 1, REC->a - 1, (unsigned char)(REC->a & 0xff), REC->sh + 1, REC->b * 3"#
        ),
        "18,52 -3 4294967290 fb -1 13980"
    );
    // Casts and constant operations chained on one field (filemap's page offsets).
    assert_eq!(
        text(
            r#""%lld-%lld %d %lx", ((long long)REC->b) << 12, ((((long long)REC->a + 1) << 12) - 1), (unsigned char)(REC->sh) + 1, ((unsigned long)REC->a >> 4) & 0xff"#
        ),
        "19087360--16385 255 ff"
    );
}

#[test]
fn arrays_and_hex() {
    assert_eq!(
        text(
            r#""%s", __print_array(__get_dynamic_array(arr), __get_dynamic_array_len(arr) / 4, 4)"#
        ),
        "{0x1,0x2,0xdeadbeef}"
    );
    assert_eq!(
        text(r#""%s", __print_array(REC->fixed, 3, 1)"#),
        "{0x0,0x1b,0x21}"
    );
    assert_eq!(
        text(r#""%s", __print_hex(REC->fixed, 6)"#),
        "00 1b 21 0a 0b 0c"
    );
    assert_eq!(
        text(r#""%s", __print_hex_str(REC->fixed, 6)"#),
        "001b210a0b0c"
    );
    assert_eq!(text(r#""%d", __get_dynamic_array_len(arr)"#), "12");
    assert_eq!(
        text(r#""%s", __print_dynamic_array(arr, 4)"#),
        "{0x1,0x2,0xdeadbeef}"
    );
    assert_eq!(
        text(r#""%*ph|%*phD", 3, REC->fixed, 2, REC->fixed"#),
        "00 1b 21|00-1b"
    );
    assert_eq!(
        text(r#""%pM %pm", REC->fixed, REC->fixed"#),
        "00:1b:21:0a:0b:0c 001b210a0b0c"
    );
    // bitmask of 12 bytes: 0x1, 0x2 and 0xdeadbeef in 32-bit chunks, most significant first
    assert_eq!(
        text(r#""%s", __get_bitmask(arr)"#),
        "deadbeef,00000002,00000001"
    );
}

#[test]
fn pointers_and_symbols() {
    assert_eq!(
        text(r#""%p %p", REC->p, (void *)0"#),
        "ffffffff81000110 0000000000000000"
    );
    assert_eq!(
        text(r#""%pS|%ps|%pB", REC->p, REC->p, REC->p"#),
        "do_work+0x10/0x80|do_work|do_work+0x10/0x80"
    );
    assert_eq!(
        text(r#""%pS %ps", (void *)0xffffffffc0000004, (void *)0xffffffffc0000004"#),
        "modfn+0x4/0x40 [kvm] modfn [kvm]"
    );
    assert_eq!(text(r#""%pS", (void *)0x10"#), "0x10");
}

#[test]
fn expressions_of_fields() {
    // a = -5 (int), b = 0x1234 (unsigned long), sh = -2 (short)
    assert_eq!(
        text(
            r#""%d %d %lu", REC->a != -1 ? REC->a * 2 : 0, REC->a == -5 && REC->sh < 0, REC->b >> 4"#
        ),
        "-10 1 291"
    );
    // `?:` picking strings, padded and not; a condition on a constant alone
    assert_eq!(
        text(
            r#""%s|%-6s|%s", REC->a < 0 ? "neg" : "pos", REC->b > 0x1000 ? "big" : "small", 1 ? "yes" : "no""#
        ),
        "neg|big   |yes"
    );
    // kernel-style pointer arithmetic: vmemmap_base + b * sizeof(struct page), as %p
    assert_eq!(
        text(
            r#""page=%p", REC->b != -1UL ? (((struct page *)vmemmap_base) + (REC->b)) : ((void *)0)"#
        ),
        format!("page={:016x}", 0xffff_ea00_0000_0000u64 + 0x1234 * 64)
    );
    // `__builtin_expect` gives its first argument; unsigned comparison of a negative int
    assert_eq!(
        text(
            r#""%lx", __builtin_expect(!!((unsigned long)REC->a >= (unsigned long)-4095), 0) ? 0 : REC->b"#
        ),
        "0"
    );
    // flags over an expression of a field, behind a test of that same expression
    assert_eq!(
        text(
            r#""%s", (REC->b & 0x30) ? __print_flags(REC->b & 0x30, "|", { 0x10, "A" }, { 0x20, "B" }) : "none""#
        ),
        "A|B"
    );
    assert_eq!(
        text(r#""%s", (REC->b & 0x1) ? __print_flags(REC->b & 0x1, "|", { 0x1, "A" }) : "none""#),
        "none"
    );
}

#[test]
fn kernel_string_pointers() {
    // `%s` of a `const char *` field: the constant string at that address, from
    // printk_formats; `(null)` for 0.
    let s = schema(r#""%s|%s", REC->p, REC->b - 0x1234"#);
    let p = PrintkFormats::parse("0xffffffff81000110 : \"mas_store_prealloc\"\n");
    let env = PrintEnv {
        printk: Some(&p),
        ..PrintEnv::default()
    };
    let d = record();
    let mut out = Vec::new();
    assert!(s.write_text(
        &Record {
            cpu: 0,
            ts: 0,
            data: &d
        },
        &env,
        &mut out
    ));
    assert_eq!(String::from_utf8(out).unwrap(), "mas_store_prealloc|(null)");
}

#[test]
fn symbol_text_is_kept_per_table_and_form() {
    // The same address through two tables naming it differently, in every form, twice
    // over: what one table or form printed is never reused for another.
    let s = schema(r#""%pS|%ps|%pB|%pS", REC->p, REC->p, REC->p, REC->p"#);
    let d = record();
    let rec = Record {
        cpu: 0,
        ts: 0,
        data: &d,
    };
    let a = kallsyms();
    let b = Kallsyms::parse("ffffffff81000000 T other\nffffffff81000200 T after\n");
    let line = |k: &Kallsyms| {
        let env = PrintEnv {
            kallsyms: Some(k),
            ..PrintEnv::default()
        };
        let mut out = Vec::new();
        assert!(s.write_text(&rec, &env, &mut out));
        String::from_utf8(out).unwrap()
    };
    for _ in 0..2 {
        assert_eq!(
            line(&a),
            "do_work+0x10/0x80|do_work|do_work+0x10/0x80|do_work+0x10/0x80"
        );
        assert_eq!(
            line(&b),
            "other+0x110/0x200|other|other+0x110/0x200|other+0x110/0x200"
        );
    }
}

#[test]
fn unknown_constructs_fall_back_to_fields() {
    let s = schema(r#""%d", some_function(REC->a)"#);
    assert!(s.print_fallback().unwrap().contains("some_function"));
    let d = record();
    let mut out = Vec::new();
    let env = PrintEnv::default();
    assert!(!s.write_text(
        &Record {
            cpu: 0,
            ts: 0,
            data: &d
        },
        &env,
        &mut out
    ));
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "a=-5 b=4660 c=bash s=hello arr={0x1,0x2,0xdeadbeef} fixed={0x0,0x1b,0x21,0xa,0xb,0xc} sh=-2 p=0xffffffff81000110"
    );
    assert_eq!(s.fallback_count(), 1);
    // A runtime failure (a truncated payload) falls back too, never panics.
    let mut out = Vec::new();
    let s = schema(r#""%s", __get_str(s)"#);
    assert!(!s.write_text(
        &Record {
            cpu: 0,
            ts: 0,
            data: &d[..40]
        },
        &env,
        &mut out
    ));
    assert!(s.print_fallback().is_some());
}

#[test]
fn never_panics_on_garbage() {
    let fmts = [
        r#""%d"#,
        r#""%"#,
        r#""%d %d", REC->a"#,
        r#""%s", REC->"#,
        r#""%d", (("#,
        r#""%d", 1 ? : 2"#,
        r#""%d", REC->a / 0"#,
        r#""%pI4", REC->a"#,
        r#""%d", REC->c[100]"#,
        r#""%s", __print_flags(REC->a)"#,
        "",
        r#""%llllllld", 1"#,
        r#""%*.*ph", -1, -1, REC->fixed"#,
        r#""%s", __print_array(REC->fixed, 1000000, 3)"#,
    ];
    let d = record();
    for f in fmts {
        if let Ok(s) = std::panic::catch_unwind(|| schema(f)) {
            let mut out = Vec::new();
            s.write_text(
                &Record {
                    cpu: 0,
                    ts: 0,
                    data: &d,
                },
                &PrintEnv::default(),
                &mut out,
            );
            s.write_text(
                &Record {
                    cpu: 0,
                    ts: 0,
                    data: &d[..3],
                },
                &PrintEnv::default(),
                &mut out,
            );
        } else {
            panic!("schema parse panicked on {f}");
        }
    }
}

#[test]
fn trace_printk_events() {
    let mut reg = Registry::new(8, Endianness::Little);
    let common = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";
    reg.add_format("ftrace", &format!("name: print\nID: 5\nformat:\n{common}\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:char buf[];\toffset:16;\tsize:0;\tsigned:0;\n\nprint fmt: \"%ps: %s\", (void *)REC->ip, REC->buf\n")).unwrap();
    reg.add_format("ftrace", &format!("name: bprint\nID: 6\nformat:\n{common}\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:const char * fmt;\toffset:16;\tsize:8;\tsigned:0;\n\tfield:u32 buf[];\toffset:24;\tsize:0;\tsigned:0;\n\nprint fmt: \"%ps: %s\", (void *)REC->ip, REC->fmt\n")).unwrap();
    reg.add_format("ftrace", &format!("name: bputs\nID: 15\nformat:\n{common}\tfield:unsigned long ip;\toffset:8;\tsize:8;\tsigned:0;\n\tfield:const char * str;\toffset:16;\tsize:8;\tsigned:0;\n\nprint fmt: \"%ps: %s\", (void *)REC->ip, REC->str\n")).unwrap();
    let k = kallsyms();
    let p = PrintkFormats::parse("0xffffffff82000000 : \"x=%d name=%s big=%llx c=%c\\n\"\n0xffffffff82000100 : \"just a string\\n\"\n");
    let env = PrintEnv {
        kallsyms: Some(&k),
        printk: Some(&p),
        ..PrintEnv::default()
    };
    let show = |data: &[u8]| {
        let mut out = Vec::new();
        assert!(reg.write_event(
            &Record {
                cpu: 0,
                ts: 0,
                data
            },
            &env,
            &mut out
        ));
        String::from_utf8(out).unwrap()
    };
    // print: `<ip symbol>: <buf>` without the event name; the buffer's newline is the line's.
    let mut d = vec![5u8, 0, 0, 0, 0, 0, 0, 0];
    d.extend_from_slice(&0xffffffff81000110u64.to_le_bytes());
    d.extend_from_slice(b"hello marker\n\0\0\0");
    assert_eq!(show(&d), "do_work: hello marker");
    // bprint: int (aligned 4), string inline, u64 aligned 4, char (1 byte)
    let mut d = vec![6u8, 0, 0, 0, 0, 0, 0, 0];
    d.extend_from_slice(&0xffffffff81000180u64.to_le_bytes());
    d.extend_from_slice(&0xffffffff82000000u64.to_le_bytes());
    d.extend_from_slice(&(-7i32).to_le_bytes());
    d.extend_from_slice(b"abc\0\0\0\0\0");
    d.extend_from_slice(&0x1122334455u64.to_le_bytes());
    d.push(b'z');
    d.extend_from_slice(&[0, 0, 0]);
    // "abc\0" ends at 4+4=8 -> the u64 at 8 (aligned 4)
    let mut fixed = d[..24].to_vec();
    fixed.extend_from_slice(&(-7i32).to_le_bytes());
    fixed.extend_from_slice(b"abc\0");
    fixed.extend_from_slice(&0x1122334455u64.to_le_bytes());
    fixed.push(b'z');
    assert_eq!(show(&fixed), "next_fn: x=-7 name=abc big=1122334455 c=z");
    // bputs: the string comes from printk_formats
    let mut d = vec![15u8, 0, 0, 0, 0, 0, 0, 0];
    d.extend_from_slice(&0xffffffff81000110u64.to_le_bytes());
    d.extend_from_slice(&0xffffffff82000100u64.to_le_bytes());
    assert_eq!(show(&d), "do_work: just a string");
}

#[test]
fn huge_widths_and_counts_stay_bounded() {
    let s = schema(r#""%999999999d|%s", 1, __print_array(REC->fixed, 1000000000, 3)"#);
    let d = record();
    let mut out = Vec::new();
    s.write_text(
        &Record {
            cpu: 0,
            ts: 0,
            data: &d,
        },
        &PrintEnv::default(),
        &mut out,
    );
    assert!(out.len() < 10_000, "{} bytes", out.len());
}

#[test]
fn big_endian_and_32_bit_kernels() {
    let text = "name: demo\nID: 901\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:long v;\toffset:4;\tsize:4;\tsigned:1;\n\
\tfield:void * p;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:__data_loc char[] s;\toffset:12;\tsize:4;\tsigned:0;\n\n\
print fmt: \"v=%ld lx=%lx p=%p s=%s\", REC->v, REC->v, REC->p, __get_str(s)\n";
    let s = Schema::parse("demo", text, 4).unwrap();
    let mut d = vec![0u8; 24];
    d[0..2].copy_from_slice(&901u16.to_be_bytes());
    d[4..8].copy_from_slice(&(-2i32).to_be_bytes());
    d[8..12].copy_from_slice(&0xc0101234u32.to_be_bytes());
    d[12..16].copy_from_slice(&((3u32 << 16) | 16).to_be_bytes());
    d[16..19].copy_from_slice(b"ok\0");
    let env = PrintEnv {
        endian: Endianness::Big,
        long_size: 4,
        ..PrintEnv::default()
    };
    let rec = Record {
        cpu: 0,
        ts: 0,
        data: &d,
    };
    assert_eq!(rec.event_id(Endianness::Big), Some(901));
    let mut out = Vec::new();
    assert!(s.write_text(&rec, &env, &mut out));
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "v=-2 lx=fffffffe p=c0101234 s=ok"
    );
}

#[test]
fn jiffies_need_hz() {
    let s = schema(r#""%u ms", jiffies_to_msecs(REC->b)"#);
    let d = record();
    let rec = Record {
        cpu: 0,
        ts: 0,
        data: &d,
    };
    let mut out = Vec::new();
    assert!(
        !s.write_text(&rec, &PrintEnv::default(), &mut out),
        "without HZ the value is unknown"
    );
    out.clear();
    assert!(s.write_text(
        &rec,
        &PrintEnv {
            hz: Some(250),
            ..PrintEnv::default()
        },
        &mut out
    ));
    assert_eq!(String::from_utf8(out).unwrap(), "18640 ms");
}

#[test]
fn ftrace_stacks_and_raw_data() {
    let common = "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";
    let stack_fmt = "print fmt: \"\\t=> %ps\\n\", (void *)REC->caller[0]\n";
    let mut reg = Registry::new(8, Endianness::Little);
    reg.add_format("ftrace", &format!("name: kernel_stack\nID: 4\nformat:\n{common}\tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n\n{stack_fmt}")).unwrap();
    reg.add_format("ftrace", &format!("name: user_stack\nID: 12\nformat:\n{common}\tfield:unsigned int tgid;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n\n{stack_fmt}")).unwrap();
    reg.add_format("ftrace", &format!("name: raw_data\nID: 16\nformat:\n{common}\tfield:unsigned int id;\toffset:8;\tsize:4;\tsigned:0;\n\tfield:char buf[];\toffset:12;\tsize:0;\tsigned:0;\n\nprint fmt: \"id:%04x %08x\", REC->id, (int)REC->buf[0]\n")).unwrap();
    let k = kallsyms();
    let env = PrintEnv {
        kallsyms: Some(&k),
        ..PrintEnv::default()
    };
    let show = |data: &[u8]| {
        let mut out = Vec::new();
        assert!(reg.write_event(
            &Record {
                cpu: 0,
                ts: 0,
                data
            },
            &env,
            &mut out
        ));
        String::from_utf8(out).unwrap()
    };
    // kernel_stack: the record holds 3 addresses, the last one all ones ends the list early.
    let mut d = vec![4u8, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0];
    for a in [0xffffffff81000110u64, 0xffffffff81000184, u64::MAX] {
        d.extend_from_slice(&a.to_le_bytes());
    }
    assert_eq!(show(&d), "<stack trace>\n => do_work\n => next_fn");
    // user_stack: addresses until the first zero, as 16 hex digits.
    let mut d = vec![12u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    for a in [0x7f8f17271aa7u64, 0x5561c80059ee, 0, 0, 0, 0, 0, 0] {
        d.extend_from_slice(&a.to_le_bytes());
    }
    assert_eq!(
        show(&d),
        "<user stack trace>\n =>  <00007f8f17271aa7>\n =>  <00005561c80059ee>"
    );
    // raw_data: every byte after the id, the record's padding included.
    let mut d = vec![16u8, 0, 0, 0, 0, 0, 0, 0, 0x34, 0x12, 0, 0];
    d.extend_from_slice(&[1, 2, 3, 0]);
    assert_eq!(show(&d), "# 1234 buf: 01 02 03 00");
}

/// Shifts, masks and casts of one field (`MAJOR(dev)`, `MINOR(dev)`, page offsets), which
/// the plan reduces to one shift, one mask and one left shift: they print what the
/// evaluator prints, on random payloads, in both styles, for the shapes that reduce and
/// those that must not (signed fields, casts that would turn a value negative, steps
/// after a left shift, shift counts of 64 and more).
#[test]
fn shifts_and_masks_of_one_field_print_as_the_evaluator() {
    let args = [
        "((unsigned int) ((REC->dev) >> 20))",
        "((unsigned int) ((REC->dev) & ((1U << 20) - 1)))",
        "REC->idx << 12",
        "(REC->dev >> 4) & 0xff",
        "(unsigned char)(REC->dev >> 3)",
        "(char)(REC->dev >> 1)",
        "(signed char)(REC->dev & 0x7f)",
        "(int)(REC->dev)",
        "(int)(REC->dev >> 1)",
        "REC->w >> 3",
        "REC->w << 20",
        "(REC->c << 28) << 4",
        "(REC->dev << 1) >> 1",
        "REC->i >> 3",
        "REC->sc & 0x7f",
        "REC->idx >> 64",
        "(REC->idx >> 40) >> 40",
        "(REC->dev >> 31) >> 1",
        "REC->dev & -1",
        "REC->w & -2",
        "(unsigned long)REC->dev << 40",
        "(unsigned short)(REC->idx >> 8)",
        "(long)(REC->idx >> 1) << 1",
        "(short)(REC->w & 0x7fff)",
        "REC->idx & 0xffffffffffffffffULL",
        "(long long)(REC->idx & 0x7fffffffffffffffULL) >> 3",
        "(REC->c & 0xf0) >> 4 << 0",
    ];
    let convs = ["%d", "%u", "%x", "%llu", "%lld", "%lx"];
    let mut fmt = String::from("\"");
    let mut list = String::new();
    for (i, a) in args.iter().enumerate() {
        fmt.push_str(convs[i % convs.len()]);
        fmt.push(' ');
        list.push_str(", ");
        list.push_str(a);
    }
    fmt.push('"');
    let text = format!(
        "name: bits\nID: 901\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:dev_t dev;\toffset:8;\tsize:4;\tsigned:0;\n\
\tfield:unsigned short w;\toffset:12;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char c;\toffset:14;\tsize:1;\tsigned:0;\n\
\tfield:signed char sc;\toffset:15;\tsize:1;\tsigned:1;\n\
\tfield:int i;\toffset:16;\tsize:4;\tsigned:1;\n\
\tfield:unsigned long idx;\toffset:24;\tsize:8;\tsigned:0;\n\n\
print fmt: {fmt}{list}\n"
    );
    let s = Schema::parse("demo", &text, 8).unwrap();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed >> 12;
        seed ^= seed << 25;
        seed ^= seed >> 27;
        seed.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let (mut planned, mut general) = (Vec::new(), Vec::new());
    for n in 0..3000 {
        let mut d: Vec<u8> = (0..32).map(|_| next() as u8).collect();
        d[0..2].copy_from_slice(&901u16.to_le_bytes());
        // Edge values as well: all bits set, none, the sign bits alone.
        let fill = [0x00u8, 0xff, 0x80, 0x7f][n % 4];
        if n % 3 == 0 {
            for b in &mut d[8..32] {
                *b = fill;
            }
        }
        let rec = Record {
            cpu: 0,
            ts: 0,
            data: &d,
        };
        for style in [
            tracectl::event::PrintStyle::Kernel,
            tracectl::event::PrintStyle::TraceCmd,
        ] {
            let env = PrintEnv {
                style,
                ..PrintEnv::default()
            };
            planned.clear();
            general.clear();
            let a = s.write_text(&rec, &env, &mut planned);
            let b = s.write_text_unplanned(&rec, &env, &mut general);
            assert!(a, "fell back ({:?})", s.print_fallback());
            assert_eq!(
                (a, String::from_utf8_lossy(&planned)),
                (b, String::from_utf8_lossy(&general)),
                "({style:?}) planned and evaluated differ on {d:02x?}"
            );
        }
    }
    // MAJOR and MINOR of the kernel's dev_t (20 minor bits): 8:3 is MKDEV(8, 3).
    let mut d = vec![0u8; 32];
    d[0..2].copy_from_slice(&901u16.to_le_bytes());
    d[8..12].copy_from_slice(&((8u32 << 20) | 3).to_le_bytes());
    d[24..32].copy_from_slice(&5u64.to_le_bytes());
    let mut out = Vec::new();
    s.write_text(
        &Record {
            cpu: 0,
            ts: 0,
            data: &d,
        },
        &PrintEnv::default(),
        &mut out,
    );
    assert!(
        String::from_utf8_lossy(&out).starts_with("8 3 5000 "),
        "{}",
        String::from_utf8_lossy(&out)
    );
}
