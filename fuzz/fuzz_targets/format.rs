//! Any text as an event `format` file: parse errors are fine, panics are not.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        for long in [4, 8] {
            let _ = tracectl::event::Schema::parse("fuzz", text, long);
        }
        let _ = tracectl::event::HeaderPage::parse(text);
    }
});
