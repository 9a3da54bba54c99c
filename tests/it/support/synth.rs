//! Small trace.dat files made in a test: a 64-bit little-endian page header and one
//! `demo:tick` event (`n=%d`), written by the library's writer.

use std::io::Cursor;
use std::path::Path;

use tracectl::dat::{write_dat, BufferSource, Metadata, WriteOptions};

/// `events/header_page` of a 64-bit kernel with 4 KiB sub-buffers.
pub const HEADER_PAGE: &str = "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\
\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\
\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\
\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n";

/// The `tick` event: id 900, the common fields and `int n`.
pub const TICK_FORMAT: &str = "name: tick\nID: 900\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n\
\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:int n;\toffset:8;\tsize:4;\tsigned:1;\n\n\
print fmt: \"n=%d\", REC->n\n";

/// A v7 (zstd) file at `path` with only `tick`, the `cmdlines` and each CPU's pages.
pub fn write_tick_file(path: &Path, cmdlines: &str, cpus: Vec<(u32, Vec<u8>)>) {
    let meta = Metadata {
        header_page: HEADER_PAGE.into(),
        header_event: String::new(),
        ftrace_formats: vec![],
        event_formats: vec![("demo".into(), TICK_FORMAT.into())],
        kallsyms: String::new(),
        printk_formats: String::new(),
        cmdlines: cmdlines.into(),
    };
    let buffers = vec![BufferSource {
        name: String::new(),
        clock: "local".into(),
        page_size: 4096,
        cpus: cpus
            .into_iter()
            .map(|(cpu, pages)| (cpu, Box::new(Cursor::new(pages)) as Box<dyn std::io::Read>))
            .collect(),
    }];
    let wo = WriteOptions {
        endian: tracectl::endian::Endianness::Little,
        long_size: 8,
        ..WriteOptions::default()
    };
    write_dat(path, &wo, &meta, &[], buffers).unwrap();
}
