//! A format file (its `print fmt` included) and a payload, split at the first NUL:
//! compiling and evaluating must never panic, whatever the expression and the bytes, and
//! the plan made at compile time must print what the general evaluator prints.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracectl::endian::Endianness;
use tracectl::event::{Kallsyms, PrintEnv, PrintStyle, Record, Registry};

fuzz_target!(|data: &[u8]| {
    let Some(split) = data.iter().position(|&b| b == 0) else { return };
    let (text, payload) = (&data[..split], &data[split + 1..]);
    let Ok(text) = std::str::from_utf8(text) else { return };
    let mut reg = Registry::new(8, Endianness::Little);
    let Ok(id) = reg.add_format("fuzz", text) else { return };
    let mut buf = payload.to_vec();
    if buf.len() >= 2 {
        buf[..2].copy_from_slice(&id.to_le_bytes());
    }
    let rec = Record { cpu: 0, ts: 0, data: &buf };
    let ksyms = Kallsyms::parse(
        "ffffffff81000000 T start\nffffffff81000100 T do_work\nffffffffc0000000 t modfn\t[kvm]\n",
    );
    for kallsyms in [None, Some(&ksyms)] {
        for style in [PrintStyle::Kernel, PrintStyle::TraceCmd] {
            let env = PrintEnv {
                kallsyms,
                printk: None,
                functions: None,
                endian: Endianness::Little,
                long_size: 8,
                hz: Some(250),
                style,
            };
            let mut out = Vec::new();
            let _ = reg.write_event(&rec, &env, &mut out);
            if let Some(s) = reg.get(id) {
                let (mut planned, mut general) = (Vec::new(), Vec::new());
                let a = s.write_text(&rec, &env, &mut planned);
                let b = s.write_text_unplanned(&rec, &env, &mut general);
                assert_eq!((a, planned), (b, general), "plan and evaluator differ");
            }
        }
    }
});
