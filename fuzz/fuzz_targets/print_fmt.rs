//! A format file (its `print fmt` included) and a payload, split at the first NUL:
//! compiling and evaluating must never panic, whatever the expression and the bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracectl::event::{PrintEnv, PrintStyle, Record, Registry};

fuzz_target!(|data: &[u8]| {
    let Some(split) = data.iter().position(|&b| b == 0) else { return };
    let (text, payload) = (&data[..split], &data[split + 1..]);
    let Ok(text) = std::str::from_utf8(text) else { return };
    let mut reg = Registry::new(8, false);
    let Ok(id) = reg.add_format("fuzz", text) else { return };
    let mut buf = payload.to_vec();
    if buf.len() >= 2 {
        buf[..2].copy_from_slice(&id.to_le_bytes());
    }
    let rec = Record { cpu: 0, ts: 0, data: &buf };
    for style in [PrintStyle::Kernel, PrintStyle::TraceCmd] {
        let env = PrintEnv { kallsyms: None, printk: None, big_endian: false, long_size: 8, hz: Some(250), style };
        let mut out = Vec::new();
        let _ = reg.write_event(&rec, &env, &mut out);
    }
});
