//! Any bytes as a sub-buffer page, in each layout: errors are fine, panics are not.
#![no_main]
use libfuzzer_sys::fuzz_target;
use tracectl::endian::Endianness;
use tracectl::event::HeaderPage;
use tracectl::ring::{PageLayout, SubBuffer};

const HEADER_64: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";
const HEADER_32: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
\tfield: local_t commit;\toffset:8;\tsize:4;\tsigned:1;\n\
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
\tfield: char data;\toffset:12;\tsize:4084;\tsigned:0;\n";

fuzz_target!(|data: &[u8]| {
    for header in [HEADER_64, HEADER_32] {
        let h = HeaderPage::parse(header).unwrap();
        for endian in [Endianness::Little, Endianness::Big] {
            for subbuf in [None, Some(data.len())] {
                let layout = PageLayout::new(&h, subbuf, endian);
                if let Ok(page) = SubBuffer::new(layout, data, 0, 0) {
                    for entry in page.take(100_000) {
                        if entry.is_err() {
                            break;
                        }
                    }
                }
            }
        }
    }
});
