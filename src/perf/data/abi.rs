//! perf.data's on-disk constants, shared by its writer and readers.

/// The file magic (`PERFILE2`), read as a little-endian u64 on a little-endian host.
pub const MAGIC: &[u8; 8] = b"PERFILE2";
/// `sizeof(struct perf_file_header)`: magic, size, attr_size, the attrs, data and
/// event_types sections, and the 256-bit feature bitmap.
pub const FILE_HEADER_SIZE: u64 = 104;
/// Strings in the features are padded to this (perf's NAME_ALIGN).
pub const NAME_ALIGN: usize = 64;

/// `perf_event_header.type` values.
pub mod record {
    /// PERF_RECORD_MMAP
    pub const MMAP: u32 = 1;
    /// PERF_RECORD_LOST
    pub const LOST: u32 = 2;
    /// PERF_RECORD_COMM
    pub const COMM: u32 = 3;
    /// PERF_RECORD_EXIT
    pub const EXIT: u32 = 4;
    /// PERF_RECORD_FORK
    pub const FORK: u32 = 7;
    /// PERF_RECORD_SAMPLE
    pub const SAMPLE: u32 = 9;
    /// PERF_RECORD_MMAP2
    pub const MMAP2: u32 = 10;
    /// PERF_RECORD_LOST_SAMPLES
    pub const LOST_SAMPLES: u32 = 13;
    /// PERF_RECORD_FINISHED_ROUND (perf's own: events before it may be sorted and flushed)
    pub const FINISHED_ROUND: u32 = 68;
}

/// `perf_event_header.misc` bits.
pub mod misc {
    /// PERF_RECORD_MISC_KERNEL
    pub const KERNEL: u16 = 1;
    /// PERF_RECORD_MISC_USER
    pub const USER: u16 = 2;
    /// PERF_RECORD_MISC_COMM_EXEC
    pub const COMM_EXEC: u16 = 1 << 13;
    /// PERF_RECORD_MISC_BUILD_ID_SIZE: a build-id entry stores its id's length.
    pub const BUILD_ID_SIZE: u16 = 1 << 15;
}

/// `perf_event_attr.sample_type` bits.
pub mod sample {
    /// PERF_SAMPLE_IP
    pub const IP: u64 = 1 << 0;
    /// PERF_SAMPLE_TID
    pub const TID: u64 = 1 << 1;
    /// PERF_SAMPLE_TIME
    pub const TIME: u64 = 1 << 2;
    /// PERF_SAMPLE_ADDR
    pub const ADDR: u64 = 1 << 3;
    /// PERF_SAMPLE_READ
    pub const READ: u64 = 1 << 4;
    /// PERF_SAMPLE_CALLCHAIN
    pub const CALLCHAIN: u64 = 1 << 5;
    /// PERF_SAMPLE_ID
    pub const ID: u64 = 1 << 6;
    /// PERF_SAMPLE_CPU
    pub const CPU: u64 = 1 << 7;
    /// PERF_SAMPLE_PERIOD
    pub const PERIOD: u64 = 1 << 8;
    /// PERF_SAMPLE_STREAM_ID
    pub const STREAM_ID: u64 = 1 << 9;
    /// PERF_SAMPLE_RAW
    pub const RAW: u64 = 1 << 10;
    /// PERF_SAMPLE_IDENTIFIER
    pub const IDENTIFIER: u64 = 1 << 16;

    /// Bytes of the `sample_id` trailer non-sample records carry with `sample_id_all`.
    pub fn id_trailer_size(sample_type: u64) -> usize {
        [TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER]
            .iter()
            .filter(|&&b| sample_type & b != 0)
            .count()
            * 8
    }
}

/// `perf_event_attr.read_format` bits.
pub mod read_format {
    /// PERF_FORMAT_ID
    pub const ID: u64 = 1 << 2;
    /// PERF_FORMAT_LOST
    pub const LOST: u64 = 1 << 4;
}

/// Feature section ids (bits of the header's feature bitmap).
pub mod feature {
    /// HEADER_TRACING_DATA
    pub const TRACING_DATA: u32 = 1;
    /// HEADER_BUILD_ID
    pub const BUILD_ID: u32 = 2;
    /// HEADER_HOSTNAME
    pub const HOSTNAME: u32 = 3;
    /// HEADER_OSRELEASE
    pub const OSRELEASE: u32 = 4;
    /// HEADER_VERSION
    pub const VERSION: u32 = 5;
    /// HEADER_ARCH
    pub const ARCH: u32 = 6;
    /// HEADER_NRCPUS
    pub const NRCPUS: u32 = 7;
    /// HEADER_CPUDESC
    pub const CPUDESC: u32 = 8;
    /// HEADER_CPUID
    pub const CPUID: u32 = 9;
    /// HEADER_TOTAL_MEM
    pub const TOTAL_MEM: u32 = 10;
    /// HEADER_CMDLINE
    pub const CMDLINE: u32 = 11;
    /// HEADER_EVENT_DESC
    pub const EVENT_DESC: u32 = 12;
    /// HEADER_CPU_TOPOLOGY
    pub const CPU_TOPOLOGY: u32 = 13;
    /// HEADER_GROUP_DESC
    pub const GROUP_DESC: u32 = 17;
    /// HEADER_SAMPLE_TIME
    pub const SAMPLE_TIME: u32 = 21;
}
