//! On-disk constants of perf.data (the kernel's `tools/perf/Documentation/perf.data-file-format.txt`
//! and `include/uapi/linux/perf_event.h`): shared by the reader and the writer.

/// `"PERFILE2"` as stored by a little-endian writer.
pub const MAGIC_LE: &[u8; 8] = b"PERFILE2";
/// The magic a writer puts first (files are written in this host's byte order).
pub const MAGIC: &[u8; 8] = MAGIC_LE;
/// Strings in the features are padded to this (perf's NAME_ALIGN).
pub const NAME_ALIGN: usize = 64;
/// `"PERFILE2"` as stored by a big-endian writer.
pub const MAGIC_BE: &[u8; 8] = b"2ELIFREP";
/// Size of `struct perf_file_header`.
pub const FILE_HEADER_SIZE: u64 = 104;
/// Size of the header of a file `perf record -o -` wrote (the magic and this size).
pub const PIPE_HEADER_SIZE: u64 = 16;
/// Size of `struct perf_event_header`.
pub const RECORD_HEADER_SIZE: usize = 8;

/// `PERF_TYPE_*` (`perf_event_attr.type`).
pub mod attr_type {
    /// Hardware counters.
    pub const HARDWARE: u32 = 0;
    /// Software counters (cpu-clock, task-clock, ...).
    pub const SOFTWARE: u32 = 1;
    /// Tracepoints; `config` is the tracefs event id.
    pub const TRACEPOINT: u32 = 2;
    /// Hardware cache events.
    pub const HW_CACHE: u32 = 3;
    /// Raw PMU events.
    pub const RAW: u32 = 4;
    /// Breakpoints.
    pub const BREAKPOINT: u32 = 5;
}

/// `PERF_SAMPLE_*` bits of `perf_event_attr.sample_type`.
pub mod sample {
    #![allow(missing_docs)]
    pub const IP: u64 = 1 << 0;
    pub const TID: u64 = 1 << 1;
    pub const TIME: u64 = 1 << 2;
    pub const ADDR: u64 = 1 << 3;
    pub const READ: u64 = 1 << 4;
    pub const CALLCHAIN: u64 = 1 << 5;
    pub const ID: u64 = 1 << 6;
    pub const CPU: u64 = 1 << 7;
    pub const PERIOD: u64 = 1 << 8;
    pub const STREAM_ID: u64 = 1 << 9;
    pub const RAW: u64 = 1 << 10;
    pub const BRANCH_STACK: u64 = 1 << 11;
    pub const REGS_USER: u64 = 1 << 12;
    pub const STACK_USER: u64 = 1 << 13;
    pub const WEIGHT: u64 = 1 << 14;
    pub const DATA_SRC: u64 = 1 << 15;
    pub const IDENTIFIER: u64 = 1 << 16;
    pub const TRANSACTION: u64 = 1 << 17;
    pub const REGS_INTR: u64 = 1 << 18;
    pub const PHYS_ADDR: u64 = 1 << 19;
    pub const AUX: u64 = 1 << 20;
    pub const CGROUP: u64 = 1 << 21;
    pub const DATA_PAGE_SIZE: u64 = 1 << 22;
    pub const CODE_PAGE_SIZE: u64 = 1 << 23;
    pub const WEIGHT_STRUCT: u64 = 1 << 24;

    /// Bytes of the `sample_id` trailer non-sample records carry with `sample_id_all`.
    pub fn id_trailer_size(sample_type: u64) -> usize {
        [TID, TIME, ID, STREAM_ID, CPU, IDENTIFIER]
            .iter()
            .filter(|&&b| sample_type & b != 0)
            .count()
            * 8
    }

    /// Where the event's id lies in that trailer, in bytes from its start: the last word
    /// with IDENTIFIER, after TID and TIME with ID alone, nowhere without either.
    pub fn id_trailer_offset(sample_type: u64) -> Option<usize> {
        if sample_type & IDENTIFIER != 0 {
            Some(id_trailer_size(sample_type) - 8)
        } else if sample_type & ID != 0 {
            Some(id_trailer_size(sample_type & (TID | TIME)))
        } else {
            None
        }
    }
}

/// `PERF_FORMAT_*` bits of `perf_event_attr.read_format`.
pub mod read_format {
    #![allow(missing_docs)]
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    pub const ID: u64 = 1 << 2;
    pub const GROUP: u64 = 1 << 3;
    pub const LOST: u64 = 1 << 4;
}

/// `PERF_SAMPLE_BRANCH_HW_INDEX` of `branch_sample_type`.
pub const BRANCH_HW_INDEX: u64 = 1 << 17;

/// Bits of the flags word of `perf_event_attr` (offset 40).
pub mod attr_flag {
    #![allow(missing_docs)]
    pub const DISABLED: u64 = 1 << 0;
    pub const INHERIT: u64 = 1 << 1;
    pub const EXCLUDE_KERNEL: u64 = 1 << 5;
    pub const MMAP: u64 = 1 << 8;
    pub const COMM: u64 = 1 << 9;
    pub const FREQ: u64 = 1 << 10;
    pub const SAMPLE_ID_ALL: u64 = 1 << 18;
    pub const INHERIT_STAT: u64 = 1 << 11;
    pub const ENABLE_ON_EXEC: u64 = 1 << 12;
    pub const USE_CLOCKID: u64 = 1 << 25;
}

/// `PERF_RECORD_*` record types; 64 and up are perf's own (user) records.
pub mod record {
    #![allow(missing_docs)]
    pub const MMAP: u32 = 1;
    pub const LOST: u32 = 2;
    pub const COMM: u32 = 3;
    pub const EXIT: u32 = 4;
    pub const THROTTLE: u32 = 5;
    pub const UNTHROTTLE: u32 = 6;
    pub const FORK: u32 = 7;
    pub const READ: u32 = 8;
    pub const SAMPLE: u32 = 9;
    pub const MMAP2: u32 = 10;
    pub const LOST_SAMPLES: u32 = 13;
    pub const SWITCH: u32 = 14;
    pub const SWITCH_CPU_WIDE: u32 = 15;
    /// PERF_RECORD_NAMESPACES: a task's namespaces (`perf record --namespaces`).
    pub const NAMESPACES: u32 = 16;
    pub const KSYMBOL: u32 = 17;
    /// PERF_RECORD_BPF_EVENT: a BPF program was loaded or unloaded.
    pub const BPF_EVENT: u32 = 18;
    /// PERF_RECORD_CGROUP: a cgroup's id and path (`perf record --all-cgroups`).
    pub const CGROUP: u32 = 19;
    /// The namespaces of a NAMESPACES record, in the order of the kernel's `*_NS_INDEX`
    /// (perf's `perf_ns__name`), each as named under `/proc/PID/ns/`.
    pub const NAMESPACE_NAMES: [&str; 7] = ["net", "uts", "ipc", "pid", "user", "mnt", "cgroup"];
    pub const HEADER_ATTR: u32 = 64;
    pub const HEADER_EVENT_TYPE: u32 = 65;
    pub const TRACING_DATA: u32 = 66;
    pub const BUILD_ID: u32 = 67;
    pub const FINISHED_ROUND: u32 = 68;
    /// PERF_RECORD_ID_INDEX: each counter id's ring, CPU and thread.
    pub const ID_INDEX: u32 = 69;
    /// PERF_RECORD_THREAD_MAP: the threads the counters were opened on.
    pub const THREAD_MAP: u32 = 73;
    /// PERF_RECORD_CPU_MAP: the CPUs the counters were opened on.
    pub const CPU_MAP: u32 = 74;
    /// PERF_RECORD_HEADER_FEATURE: a header feature's section, in a pipe.
    pub const HEADER_FEATURE: u32 = 80;
    pub const COMPRESSED: u32 = 81;
    pub const FINISHED_INIT: u32 = 82;
}

/// `PERF_RECORD_MISC_*` bits of the record header's `misc`.
pub mod misc {
    #![allow(missing_docs)]
    pub const CPUMODE_MASK: u16 = 7;
    pub const KERNEL: u16 = 1;
    pub const USER: u16 = 2;
    pub const HYPERVISOR: u16 = 3;
    pub const GUEST_KERNEL: u16 = 4;
    pub const GUEST_USER: u16 = 5;
    /// In a COMM record: the comm changed because of exec.
    pub const COMM_EXEC: u16 = 1 << 13;
    /// In a FORK record: written by perf for a task that ran before the recording
    /// (synthesized), not by the kernel.
    pub const FORK_EXEC: u16 = 1 << 13;
    /// In an MMAP record: the mapping is not executable (`mmap_data`).
    pub const MMAP_DATA: u16 = 1 << 13;
    /// In a SWITCH record: the task was switched out (else in).
    pub const SWITCH_OUT: u16 = 1 << 13;
    /// In a SWITCH record of a switch out: the task was preempted (still runnable).
    pub const SWITCH_OUT_PREEMPT: u16 = 1 << 14;
    /// In an MMAP2 record: a build id replaces the device numbers.
    pub const MMAP_BUILD_ID: u16 = 1 << 14;
    /// PERF_RECORD_MISC_BUILD_ID_SIZE: a build-id entry stores its id's length.
    pub const BUILD_ID_SIZE: u16 = 1 << 15;
}

/// `PERF_CONTEXT_*` markers inside a call chain (as u64).
pub mod context {
    #![allow(missing_docs)]
    pub const HV: u64 = -32i64 as u64;
    pub const KERNEL: u64 = -128i64 as u64;
    pub const USER: u64 = -512i64 as u64;
    pub const GUEST: u64 = -2048i64 as u64;
    pub const GUEST_KERNEL: u64 = -2176i64 as u64;
    pub const GUEST_USER: u64 = -2560i64 as u64;
    /// Values at or above this are markers, not addresses.
    pub const MAX: u64 = -4095i64 as u64;
}

/// `HEADER_*` feature ids (bits of the header's feature bitmap).
pub mod feature {
    #![allow(missing_docs)]
    pub const TRACING_DATA: u32 = 1;
    pub const BUILD_ID: u32 = 2;
    pub const HOSTNAME: u32 = 3;
    pub const OSRELEASE: u32 = 4;
    pub const VERSION: u32 = 5;
    pub const ARCH: u32 = 6;
    pub const NRCPUS: u32 = 7;
    pub const CPUDESC: u32 = 8;
    pub const CPUID: u32 = 9;
    pub const TOTAL_MEM: u32 = 10;
    pub const CMDLINE: u32 = 11;
    pub const EVENT_DESC: u32 = 12;
    pub const CPU_TOPOLOGY: u32 = 13;
    pub const NUMA_TOPOLOGY: u32 = 14;
    pub const BRANCH_STACK: u32 = 15;
    pub const PMU_MAPPINGS: u32 = 16;
    pub const GROUP_DESC: u32 = 17;
    pub const AUXTRACE: u32 = 18;
    pub const STAT: u32 = 19;
    pub const CACHE: u32 = 20;
    pub const SAMPLE_TIME: u32 = 21;
    pub const MEM_TOPOLOGY: u32 = 22;
    pub const CLOCKID: u32 = 23;
    pub const DIR_FORMAT: u32 = 24;
    pub const BPF_PROG_INFO: u32 = 25;
    pub const BPF_BTF: u32 = 26;
    pub const COMPRESSED: u32 = 27;
    pub const CPU_PMU_CAPS: u32 = 28;
    pub const CLOCK_DATA: u32 = 29;
    pub const HYBRID_TOPOLOGY: u32 = 30;
    pub const PMU_CAPS: u32 = 31;
    /// One past the last feature perf 6.1 knows (`HEADER_LAST_FEATURE`).
    pub const LAST: u32 = 32;
    /// perf's names of the features (`HEADER_` left off), by id; index 0 is unused.
    pub const NAMES: [&str; LAST as usize] = [
        "RESERVED",
        "TRACING_DATA",
        "BUILD_ID",
        "HOSTNAME",
        "OSRELEASE",
        "VERSION",
        "ARCH",
        "NRCPUS",
        "CPUDESC",
        "CPUID",
        "TOTAL_MEM",
        "CMDLINE",
        "EVENT_DESC",
        "CPU_TOPOLOGY",
        "NUMA_TOPOLOGY",
        "BRANCH_STACK",
        "PMU_MAPPINGS",
        "GROUP_DESC",
        "AUXTRACE",
        "STAT",
        "CACHE",
        "SAMPLE_TIME",
        "MEM_TOPOLOGY",
        "CLOCKID",
        "DIR_FORMAT",
        "BPF_PROG_INFO",
        "BPF_BTF",
        "COMPRESSED",
        "CPU_PMU_CAPS",
        "CLOCK_DATA",
        "HYBRID_TOPOLOGY",
        "PMU_CAPS",
    ];
    /// Number of bits in the header's feature bitmap.
    pub const BITS: u32 = 256;
}
