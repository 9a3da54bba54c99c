//! The header block of `perf script --header` and `perf report --header` (perf 6.1's
//! `perf_header__fprintf_info`): the file's sizes, then each feature section present, in
//! feature order, then the features missing. Without `-I/--show-info` the topology
//! sections (CPU, NUMA, cache, memory, hybrid) are only named.

use std::io::Write as _;
use std::time::SystemTime;

use crate::perf::clockid::clockid_name;
use crate::perf::cpu_list::parse_perf_cpu_list;
use crate::perf::data::abi::{feature, read_format, sample};
use crate::perf::data::{Attr, EventDesc, PerfData, PerfDataError, PmuCaps};

/// The whole block perf prints before its output: `# ========`, the header info,
/// `# ========` and `#`. `mtime` is the file's modification time (perf's "captured on");
/// `full` is `-I/--show-info`.
pub fn write_header_block(
    file: &PerfData,
    mtime: SystemTime,
    full: bool,
    out: &mut Vec<u8>,
) -> Result<(), PerfDataError> {
    out.extend_from_slice(b"# ========\n");
    write_header_info(file, mtime, full, out)?;
    out.extend_from_slice(b"# ========\n#\n");
    Ok(())
}

/// The header info lines alone.
pub fn write_header_info(
    file: &PerfData,
    mtime: SystemTime,
    full: bool,
    out: &mut Vec<u8>,
) -> Result<(), PerfDataError> {
    let captured: chrono::DateTime<chrono::Local> = mtime.into();
    let _ = writeln!(
        out,
        "# captured on    : {}",
        captured.format("%a %b %e %H:%M:%S %Y")
    );
    out.extend_from_slice(b"# header version : 1\n");
    let _ = writeln!(out, "# data offset    : {}", file.data_offset());
    let _ = writeln!(out, "# data size      : {}", file.data_size());
    let _ = writeln!(
        out,
        "# feat offset    : {}",
        file.data_offset() + file.data_size()
    );
    for f in file.features() {
        if f.id >= feature::LAST {
            continue;
        }
        let full_only = matches!(
            f.id,
            feature::CPU_TOPOLOGY
                | feature::NUMA_TOPOLOGY
                | feature::CACHE
                | feature::MEM_TOPOLOGY
                | feature::HYBRID_TOPOLOGY
        );
        if full_only && !full {
            let _ = writeln!(
                out,
                "# {} info available, use -I to display",
                feature::NAMES[f.id as usize]
            );
            continue;
        }
        write_feature(file, f.id, out)?;
    }
    out.extend_from_slice(b"# missing features: ");
    for id in 1..feature::LAST {
        if file.feature(id).is_none() {
            let _ = write!(out, "{} ", feature::NAMES[id as usize]);
        }
    }
    out.push(b'\n');
    Ok(())
}

fn string_line(
    file: &PerfData,
    id: u32,
    label: &str,
    out: &mut Vec<u8>,
) -> Result<(), PerfDataError> {
    let s = file.feature_string(id)?.unwrap_or_default();
    let _ = writeln!(out, "# {label} : {s}");
    Ok(())
}

fn write_feature(file: &PerfData, id: u32, out: &mut Vec<u8>) -> Result<(), PerfDataError> {
    match id {
        feature::HOSTNAME => string_line(file, id, "hostname", out)?,
        feature::OSRELEASE => string_line(file, id, "os release", out)?,
        feature::VERSION => string_line(file, id, "perf version", out)?,
        feature::ARCH => string_line(file, id, "arch", out)?,
        feature::CPUDESC => string_line(file, id, "cpudesc", out)?,
        feature::CPUID => string_line(file, id, "cpuid", out)?,
        feature::NRCPUS => {
            let (avail, online) = file.nr_cpus()?.unwrap_or_default();
            let _ = writeln!(out, "# nrcpus online : {online}\n# nrcpus avail : {avail}");
        }
        feature::TOTAL_MEM => {
            let m = file.total_mem()?.unwrap_or_default();
            let _ = writeln!(out, "# total memory : {m} kB");
        }
        feature::CMDLINE => {
            out.extend_from_slice(b"# cmdline : ");
            for a in file.cmdline()?.unwrap_or_default() {
                // perf escapes single quotes as \'.
                let _ = write!(out, "{} ", a.replace('\'', "\\'"));
            }
            out.push(b'\n');
        }
        feature::EVENT_DESC => match file.event_desc() {
            Ok(Some(events)) => {
                for e in &events {
                    write_event_desc(e, out);
                }
            }
            _ => out.extend_from_slice(b"# event desc: not available or unable to read\n"),
        },
        feature::CPU_TOPOLOGY => write_cpu_topology(file, out)?,
        feature::NUMA_TOPOLOGY => {
            for n in file.numa_topology()?.unwrap_or_default() {
                let _ = writeln!(
                    out,
                    "# node{} meminfo  : total = {} kB, free = {} kB",
                    n.node, n.mem_total, n.mem_free
                );
                let cpus = parse_perf_cpu_list(&n.cpus).unwrap_or_default();
                let _ = writeln!(out, "# node{} cpu list : {}", n.node, ranges(&cpus));
            }
        }
        feature::BRANCH_STACK => out.extend_from_slice(b"# contains samples with branch stack\n"),
        feature::PMU_MAPPINGS => {
            let maps = file.pmu_mappings()?.unwrap_or_default();
            if maps.is_empty() {
                out.extend_from_slice(b"# pmu mappings: not available\n");
            } else {
                let mut sep = "# pmu mappings: ";
                for (t, name) in &maps {
                    let _ = write!(out, "{sep}{name} = {t}");
                    sep = ", ";
                }
                out.push(b'\n');
            }
        }
        feature::GROUP_DESC => write_groups(file, out)?,
        feature::AUXTRACE => {
            out.extend_from_slice(b"# contains AUX area data (e.g. instruction trace)\n")
        }
        feature::STAT => out.extend_from_slice(b"# contains stat data\n"),
        feature::CACHE => {
            out.extend_from_slice(b"# CPU cache info:\n");
            for c in file.caches()?.unwrap_or_default() {
                let _ = writeln!(
                    out,
                    "#  L{} {:<15} {:>8} [{}]",
                    c.level, c.type_, c.size, c.map
                );
            }
        }
        feature::SAMPLE_TIME => {
            let (first, last) = file.sample_time()?.unwrap_or_default();
            let usec = |t: u64| format!("{}.{:06}", t / 1_000_000_000, t % 1_000_000_000 / 1000);
            let _ = writeln!(out, "# time of first sample : {}", usec(first));
            let _ = writeln!(out, "# time of last sample : {}", usec(last));
            let d = last.wrapping_sub(first) as f64 / 1e6;
            let _ = writeln!(out, "# sample duration : {d:10.3} ms");
        }
        feature::MEM_TOPOLOGY => {
            if let Some(m) = file.mem_topology()? {
                let _ = writeln!(
                    out,
                    "# memory nodes (nr {}, block size {:#x}):",
                    m.nodes.len(),
                    m.block_size
                );
                for n in &m.nodes {
                    let set: Vec<u32> = (0..n.nbits)
                        .filter(|&b| n.blocks[(b / 64) as usize] >> (b % 64) & 1 == 1)
                        .map(|b| b as u32)
                        .collect();
                    let size = m.block_size.wrapping_mul(set.len() as u64);
                    let _ = writeln!(
                        out,
                        "#  {:>3} [{}]: {}",
                        n.node,
                        unit_number(size),
                        ranges(&set)
                    );
                }
            }
        }
        feature::CLOCKID => {
            let res = file.clockid_res_ns()?.unwrap_or_default();
            let _ = writeln!(out, "# clockid frequency: {} MHz", res.wrapping_mul(1000));
        }
        feature::DIR_FORMAT => {
            let v = file.dir_format()?.unwrap_or_default();
            let _ = writeln!(out, "# directory data version : {v}");
        }
        feature::BPF_PROG_INFO => {
            for p in file.bpf_progs()?.unwrap_or_default() {
                write_bpf_prog(file, &p, out)?;
            }
        }
        feature::BPF_BTF => {
            for id in file.bpf_btf_ids()?.unwrap_or_default() {
                let _ = writeln!(out, "# btf info of id {id}");
            }
        }
        feature::COMPRESSED => {
            if let Some(c) = file.compressed()? {
                let _ = writeln!(
                    out,
                    "# compressed : {}, level = {}, ratio = {}",
                    if c.type_ == 1 { "Zstd" } else { "Unknown" },
                    c.level as i32,
                    c.ratio as i32
                );
            }
        }
        feature::CPU_PMU_CAPS => {
            if let Some(c) = file.cpu_pmu_caps()? {
                write_pmu_caps(&c, out);
            }
        }
        feature::CLOCK_DATA => {
            if let Some(c) = file.clock_data()? {
                let secs = (c.tod_ns / 1_000_000_000) as i64;
                let usec = c.tod_ns % 1_000_000_000 / 1000;
                let tstr = match chrono::DateTime::from_timestamp(secs, 0) {
                    Some(t) => format!(
                        "{}.{usec:06}",
                        t.with_timezone(&chrono::Local).format("%F %T")
                    ),
                    None => "<error>".into(),
                };
                let name = clockid_name(c.clockid as i32);
                let _ = writeln!(out, "# clockid: {name} ({})", c.clockid);
                let _ = writeln!(
                    out,
                    "# reference time: {tstr} = {secs}.{usec:06} (TOD) = {}.{:09} ({name})",
                    c.clockid_ns / 1_000_000_000,
                    c.clockid_ns % 1_000_000_000
                );
            }
        }
        feature::HYBRID_TOPOLOGY => {
            out.extend_from_slice(b"# hybrid cpu system:\n");
            for (pmu, cpus) in file.hybrid_topology()?.unwrap_or_default() {
                let _ = writeln!(out, "# {pmu} cpu list : {cpus}");
            }
        }
        feature::PMU_CAPS => {
            for c in file.pmu_caps()?.unwrap_or_default() {
                write_pmu_caps(&c, out);
            }
        }
        // TRACING_DATA and BUILD_ID print nothing.
        _ => {}
    }
    Ok(())
}

fn write_pmu_caps(c: &PmuCaps, out: &mut Vec<u8>) {
    if c.caps.is_empty() {
        let _ = writeln!(out, "# {} pmu capabilities: not available", c.pmu);
    } else {
        let _ = writeln!(out, "# {} pmu capabilities: {}", c.pmu, c.caps.join(", "));
    }
}

fn write_cpu_topology(file: &PerfData, out: &mut Vec<u8>) -> Result<(), PerfDataError> {
    let Some(t) = file.cpu_topology()? else {
        return Ok(());
    };
    for s in &t.cores {
        let _ = writeln!(out, "# sibling sockets : {s}");
    }
    for s in &t.dies {
        let _ = writeln!(out, "# sibling dies    : {s}");
    }
    for s in &t.threads {
        let _ = writeln!(out, "# sibling threads : {s}");
    }
    let dies = !t.dies.is_empty();
    if t.ids.is_empty() {
        if dies {
            out.extend_from_slice(
                b"# Core ID, Die ID and Socket ID information is not available\n",
            );
        } else {
            out.extend_from_slice(b"# Core ID and Socket ID information is not available\n");
        }
        return Ok(());
    }
    for (i, (core, socket)) in t.ids.iter().enumerate() {
        if dies {
            let die = t.die_ids.get(i).copied().unwrap_or_default();
            let _ = writeln!(
                out,
                "# CPU {i}: Core ID {core}, Die ID {die}, Socket ID {socket}"
            );
        } else {
            let _ = writeln!(out, "# CPU {i}: Core ID {core}, Socket ID {socket}");
        }
    }
    Ok(())
}

/// `# group: NAME{leader,member,...}`, with the names EVENT_DESC gives.
fn write_groups(file: &PerfData, out: &mut Vec<u8>) -> Result<(), PerfDataError> {
    let names: Vec<String> = file
        .attrs()
        .iter()
        .map(|a| a.name.clone().unwrap_or_default())
        .collect();
    for g in file.group_desc()?.unwrap_or_default() {
        if g.nr_members < 2 {
            continue;
        }
        let lead = g.leader_idx as usize;
        let end = lead.saturating_add(g.nr_members as usize);
        let (Some(members), true) = (names.get(lead..end), end <= names.len()) else {
            continue;
        };
        let group = if g.name == "{anon_group}" {
            ""
        } else {
            &g.name
        };
        let _ = writeln!(out, "# group: {group}{{{}}}", members.join(","));
    }
    Ok(())
}

/// `# bpf_prog_info ID: NAME addr 0x... size N` for a program of one function, else the
/// id and a `# \tname: ...` line per function (perf 6.1's `print_bpf_prog_info`); a
/// function's name is `bpf_prog_`, its tag in hex, and `_` with its BTF function name
/// (when the file stores the program's BTF), else the program's own name for a lone
/// function, else `F`.
fn write_bpf_prog(
    file: &PerfData,
    p: &crate::perf::data::BpfProg,
    out: &mut Vec<u8>,
) -> Result<(), PerfDataError> {
    if !p.consistent {
        return Ok(());
    }
    let btf = match p.btf_id {
        0 => None,
        id => file.bpf_btf(id)?,
    };
    let lone = p.functions.len() == 1;
    let name = |i: usize, _: &crate::perf::data::BpfFunction| -> Result<String, PerfDataError> {
        p.function_name(i, btf).map_err(|e| {
            PerfDataError::new(
                file.path(),
                "BPF_BTF feature",
                file.feature(feature::BPF_BTF).map_or(0, |f| f.offset),
                crate::perf::data::PerfDataErrorKind::Corrupt(format!(
                    "BTF of program {}: {e}",
                    p.id
                )),
            )
        })
    };
    if lone {
        let f = &p.functions[0];
        let _ = writeln!(
            out,
            "# bpf_prog_info {}: {} addr {:#x} size {}",
            p.id,
            name(0, f)?,
            f.addr,
            f.len
        );
        return Ok(());
    }
    let _ = writeln!(out, "# bpf_prog_info {}:", p.id);
    for (i, f) in p.functions.iter().enumerate() {
        let _ = writeln!(
            out,
            "# \tname: {} addr {:#x} size {}",
            name(i, f)?,
            f.addr,
            f.len
        );
    }
    Ok(())
}

/// `# event : name = ..., , id = { ... }, type = ...` (perf_event_attr__fprintf: the
/// fields that are not zero, in the struct's order).
fn write_event_desc(e: &EventDesc, out: &mut Vec<u8>) {
    let _ = write!(out, "# event : name = {}, ", e.name);
    if !e.ids.is_empty() {
        out.extend_from_slice(b", id = {");
        for (i, id) in e.ids.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            let _ = write!(out, " {id}");
        }
        out.extend_from_slice(b" }");
    }
    for (name, value) in attr_fields(&e.attr) {
        let _ = write!(out, ", {name} = {value}");
    }
    out.push(b'\n');
}

/// The attr's non-zero fields as perf 6.1 names and formats them.
pub fn attr_fields(a: &Attr) -> Vec<(&'static str, String)> {
    let mut v: Vec<(&'static str, String)> = Vec::new();
    let num = |v: &mut Vec<(&'static str, String)>, name: &'static str, x: u64| {
        if x != 0 {
            v.push((name, x.to_string()));
        }
    };
    num(&mut v, "type", u64::from(a.type_));
    num(&mut v, "size", u64::from(a.size));
    if a.config != 0 {
        v.push(("config", format!("{:#x}", a.config)));
    }
    num(&mut v, "{ sample_period, sample_freq }", a.sample_period);
    if a.sample_type != 0 {
        v.push(("sample_type", bits(a.sample_type, SAMPLE_BITS)));
    }
    if a.read_format != 0 {
        v.push(("read_format", bits(a.read_format, READ_FORMAT_BITS)));
    }
    for (i, name) in FLAG_NAMES.iter().enumerate() {
        let bit = i as u64 + if i > PRECISE_IP { 1 } else { 0 };
        let x = if i == PRECISE_IP {
            a.flags >> 15 & 3
        } else {
            a.flags >> bit & 1
        };
        num(&mut v, name, x);
    }
    num(
        &mut v,
        "{ wakeup_events, wakeup_watermark }",
        u64::from(a.wakeup_events),
    );
    num(&mut v, "bp_type", u64::from(a.bp_type));
    if a.config1 != 0 {
        v.push(("{ bp_addr, config1 }", format!("{:#x}", a.config1)));
    }
    if a.config2 != 0 {
        v.push(("{ bp_len, config2 }", format!("{:#x}", a.config2)));
    }
    if a.branch_sample_type != 0 {
        v.push((
            "branch_sample_type",
            bits(a.branch_sample_type, BRANCH_BITS),
        ));
    }
    if a.sample_regs_user != 0 {
        v.push(("sample_regs_user", format!("{:#x}", a.sample_regs_user)));
    }
    num(&mut v, "sample_stack_user", u64::from(a.sample_stack_user));
    if a.clockid != 0 {
        v.push(("clockid", a.clockid.to_string()));
    }
    if a.sample_regs_intr != 0 {
        v.push(("sample_regs_intr", format!("{:#x}", a.sample_regs_intr)));
    }
    num(&mut v, "aux_watermark", u64::from(a.aux_watermark));
    num(&mut v, "sample_max_stack", u64::from(a.sample_max_stack));
    num(&mut v, "aux_sample_size", u64::from(a.aux_sample_size));
    num(&mut v, "sig_data", a.sig_data);
    v
}

/// Index of `precise_ip` (two bits, 15 and 16) in [`FLAG_NAMES`]; the flags before it
/// are bits 0..15, those after it bits 17 on.
const PRECISE_IP: usize = 15;

const FLAG_NAMES: [&str; 37] = [
    "disabled",
    "inherit",
    "pinned",
    "exclusive",
    "exclude_user",
    "exclude_kernel",
    "exclude_hv",
    "exclude_idle",
    "mmap",
    "comm",
    "freq",
    "inherit_stat",
    "enable_on_exec",
    "task",
    "watermark",
    "precise_ip",
    "mmap_data",
    "sample_id_all",
    "exclude_host",
    "exclude_guest",
    "exclude_callchain_kernel",
    "exclude_callchain_user",
    "mmap2",
    "comm_exec",
    "use_clockid",
    "context_switch",
    "write_backward",
    "namespaces",
    "ksymbol",
    "bpf_event",
    "aux_output",
    "cgroup",
    "text_poke",
    "build_id",
    "inherit_thread",
    "remove_on_exec",
    "sigtrap",
];

const SAMPLE_BITS: &[(u64, &str)] = &[
    (sample::IP, "IP"),
    (sample::TID, "TID"),
    (sample::TIME, "TIME"),
    (sample::ADDR, "ADDR"),
    (sample::READ, "READ"),
    (sample::CALLCHAIN, "CALLCHAIN"),
    (sample::ID, "ID"),
    (sample::CPU, "CPU"),
    (sample::PERIOD, "PERIOD"),
    (sample::STREAM_ID, "STREAM_ID"),
    (sample::RAW, "RAW"),
    (sample::BRANCH_STACK, "BRANCH_STACK"),
    (sample::REGS_USER, "REGS_USER"),
    (sample::STACK_USER, "STACK_USER"),
    (sample::IDENTIFIER, "IDENTIFIER"),
    (sample::REGS_INTR, "REGS_INTR"),
    (sample::DATA_SRC, "DATA_SRC"),
    (sample::WEIGHT, "WEIGHT"),
    (sample::PHYS_ADDR, "PHYS_ADDR"),
    (sample::AUX, "AUX"),
    (sample::CGROUP, "CGROUP"),
    (sample::DATA_PAGE_SIZE, "DATA_PAGE_SIZE"),
    (sample::CODE_PAGE_SIZE, "CODE_PAGE_SIZE"),
    (sample::WEIGHT_STRUCT, "WEIGHT_STRUCT"),
];

const READ_FORMAT_BITS: &[(u64, &str)] = &[
    (read_format::TOTAL_TIME_ENABLED, "TOTAL_TIME_ENABLED"),
    (read_format::TOTAL_TIME_RUNNING, "TOTAL_TIME_RUNNING"),
    (read_format::ID, "ID"),
    (read_format::GROUP, "GROUP"),
    (read_format::LOST, "LOST"),
];

const BRANCH_BITS: &[(u64, &str)] = &[
    (1 << 0, "USER"),
    (1 << 1, "KERNEL"),
    (1 << 2, "HV"),
    (1 << 3, "ANY"),
    (1 << 4, "ANY_CALL"),
    (1 << 5, "ANY_RETURN"),
    (1 << 6, "IND_CALL"),
    (1 << 7, "ABORT_TX"),
    (1 << 8, "IN_TX"),
    (1 << 9, "NO_TX"),
    (1 << 10, "COND"),
    (1 << 11, "CALL_STACK"),
    (1 << 12, "IND_JUMP"),
    (1 << 13, "CALL"),
    (1 << 14, "NO_FLAGS"),
    (1 << 15, "NO_CYCLES"),
    (1 << 16, "TYPE_SAVE"),
    (1 << 17, "HW_INDEX"),
];

/// The names of the bits set, joined by `|` (bits without a name are left out).
fn bits(value: u64, names: &[(u64, &str)]) -> String {
    names
        .iter()
        .filter(|(b, _)| value & b != 0)
        .map(|(_, n)| *n)
        .collect::<Vec<_>>()
        .join("|")
}

/// A sorted list of numbers as ranges: `0-23,32-199` (a negative number, such as a
/// CPU map's -1 for any CPU, starts no range).
pub(crate) fn ranges<T: Copy + Into<i64> + std::fmt::Display>(v: &[T]) -> String {
    let n = |k: usize| -> i64 { v[k].into() };
    let mut s = String::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && n(j + 1) == n(j) + 1 && n(i) >= 0 {
            j += 1;
        }
        if !s.is_empty() {
            s.push(',');
        }
        if j > i {
            s.push_str(&format!("{}-{}", v[i], v[j]));
        } else {
            s.push_str(&v[i].to_string());
        }
        i = j + 1;
    }
    s
}

/// A byte count in perf's unit form (`24G`): divided by 1024 while the quotient is over 1.
fn unit_number(mut n: u64) -> String {
    let units = ['B', 'K', 'M', 'G'];
    let mut i = 0;
    while n / 1024 > 1 && i < 3 {
        n /= 1024;
        i += 1;
    }
    format!("{n}{}", units[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_and_units_read_as_perf_prints_them() {
        assert_eq!(ranges(&[0, 1, 2, 5, 7, 8]), "0-2,5,7-8");
        assert_eq!(ranges::<u32>(&[]), "");
        assert_eq!(ranges(&[-1i64, 0, 1]), "-1,0-1");
        assert_eq!(unit_number(24 << 30), "24G");
        assert_eq!(unit_number(1024), "1024B");
        assert_eq!(unit_number(3 << 40), "3072G");
    }
}
