//! Live oracle: in a private instance, trace a small workload with many event systems,
//! then compare the engine's text for every raw record with the kernel's `trace` line.

use crate::support::live;

use crate::support::event_oracle;

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use tracectl::event::Kallsyms;
use tracectl::tracefs::{AppendMode, Tracefs};

use crate::support::live::TRACEFS as LIVE;

/// Removes a uprobe this test created from the top-level `uprobe_events`.
struct UprobeGuard {
    events: PathBuf,
    name: String,
}

impl Drop for UprobeGuard {
    fn drop(&mut self) {
        let del = format!("-:uprobes/{}\n", self.name);
        let r = std::fs::OpenOptions::new()
            .append(true)
            .open(&self.events)
            .and_then(|mut f| {
                use std::io::Write;
                f.write_all(del.as_bytes())
            });
        if let Err(e) = r {
            eprintln!("could not remove uprobe {}: {e}", self.name);
        }
    }
}

/// Removes the instance (and with it every event enabled in it) on every exit path.
struct InstanceGuard {
    dir: PathBuf,
}

impl Drop for InstanceGuard {
    fn drop(&mut self) {
        let _ = std::fs::write(self.dir.join("tracing_on"), "0");
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            eprintln!("could not remove {}: {e}", self.dir.display());
        }
    }
}

/// The entry point of /usr/bin/true as a file offset (PIE text maps 1:1 on Debian).
fn uprobe_on_true(top: &Tracefs, name: &str) -> Option<UprobeGuard> {
    let elf = std::fs::read("/usr/bin/true").ok()?;
    if elf.get(..5)? != b"\x7fELF\x02" || elf[5] != 1 {
        return None;
    }
    let entry = u64::from_le_bytes(elf.get(24..32)?.try_into().ok()?);
    let def = format!("p:uprobes/{name} /usr/bin/true:{entry:#x} a=%di:x64 b=%si:u32 c=%sp:s16\n");
    match top.write("uprobe_events", def.as_bytes(), AppendMode::Append) {
        Ok(()) => Some(UprobeGuard {
            events: top.path("uprobe_events"),
            name: name.to_string(),
        }),
        Err(e) => {
            eprintln!("no uprobe: {e}");
            None
        }
    }
}

fn drain_raw(path: &Path) -> Vec<u8> {
    let mut f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(_) => return Vec::new(),
    };
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(_) => break,
        }
    }
    out
}

#[test]
fn live_events_print_like_the_kernel() {
    if !live::ready() {
        return;
    }
    let top = Tracefs::at(LIVE);
    // A uprobe on /usr/bin/true's entry (declared before the instance guard so that the
    // instance, which has it enabled, goes first).
    let up_name = format!("tracectl_event_{}", std::process::id());
    let _uprobe = uprobe_on_true(&top, &up_name);
    let name = format!("tracectl-event-{}", std::process::id());
    let dir = top.path(format!("instances/{name}"));
    std::fs::create_dir(&dir).expect("create instance");
    let _guard = InstanceGuard { dir: dir.clone() };
    let inst = Tracefs::at(&dir);
    inst.write("options/hash-ptr", b"0", AppendMode::Truncate)
        .unwrap();
    inst.write("buffer_size_kb", b"2048", AppendMode::Truncate)
        .unwrap();
    // A kernel and a user stack after every event: ftrace kernel_stack/user_stack records.
    inst.write("options/stacktrace", b"1", AppendMode::Truncate)
        .unwrap();
    inst.write("options/userstacktrace", b"1", AppendMode::Truncate)
        .unwrap();
    let systems = [
        "sched",
        "irq",
        "timer",
        "syscalls",
        "raw_syscalls",
        "kmem",
        "signal",
        "workqueue",
        "task",
        "rcu",
        "mmap_lock",
        "filemap",
        "ext4",
        "block",
        "writeback",
        "pagemap",
        "lock",
        "module",
        "net",
        "sock",
        "skb",
        "tcp",
        "vmscan",
        "compaction",
        "oom",
        "percpu",
        "cgroup",
        "ipi",
        "x86_fpu",
        "tlb",
        "msr",
        "exceptions",
        "maple_tree",
        "page_pool",
        "initcall",
    ];
    // ORACLE_ALL=1 enables every event of the kernel instead of the list above (on 6.18:
    // ~130k records, all identical to the kernel's text).
    let all = std::env::var("ORACLE_ALL").is_ok();
    if all {
        inst.write("events/enable", b"1", AppendMode::Truncate)
            .unwrap();
    }
    for s in systems.iter().filter(|_| !all) {
        if inst.exists(format!("events/{s}/enable")) {
            let _ = inst.write(format!("events/{s}/enable"), b"1", AppendMode::Truncate);
        }
    }
    inst.write(
        "trace_marker",
        b"tracectl event oracle",
        AppendMode::Truncate,
    )
    .ok();
    // trace_marker_raw: a 4-byte id, then bytes; the kernel prints the record's padding too.
    inst.write(
        "trace_marker_raw",
        &[0x34, 0x12, 0, 0, 1, 2, 3],
        AppendMode::Truncate,
    )
    .ok();
    inst.write(
        "trace_marker_raw",
        &[0x78, 0x56, 0, 0, 0xaa, 0xbb, 0xcc, 0xdd, 0xee],
        AppendMode::Truncate,
    )
    .ok();
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg("ls /proc >/dev/null; f=/tmp/tracectl-ev.$$; echo hello > $f; cat $f >/dev/null; rm $f; sleep 0.02; kill -0 $$")
        .status()
        .unwrap();
    assert!(status.success());
    if _uprobe.is_some() {
        let _ = inst.write(
            format!("events/uprobes/{up_name}/enable"),
            b"1",
            AppendMode::Truncate,
        );
        let _ = std::process::Command::new("/usr/bin/true").status();
    }
    // Loopback TCP over IPv4 and IPv6, for the net/sock/tcp/skb events' address formats.
    for addr in ["127.0.0.1:0", "[::1]:0"] {
        if let Ok(l) = std::net::TcpListener::bind(addr) {
            let a = l.local_addr().unwrap();
            if let Ok(mut c) = std::net::TcpStream::connect(a) {
                use std::io::Write;
                let (mut s, _) = l.accept().unwrap();
                let _ = c.write_all(b"ping");
                let mut b = [0u8; 4];
                let _ = s.read(&mut b);
            }
        }
    }
    inst.write("tracing_on", b"0", AppendMode::Truncate)
        .unwrap();
    let text = String::from_utf8_lossy(&inst.read("trace").unwrap()).into_owned();
    let mut raw = Vec::new();
    for cpu in 0..4096u32 {
        let p = inst.path(format!("per_cpu/cpu{cpu}"));
        if !p.exists() {
            break;
        }
        raw.push((cpu, drain_raw(&p.join("trace_pipe_raw"))));
    }
    let k = std::fs::read_to_string("/proc/kallsyms")
        .ok()
        .map(|t| Kallsyms::parse(&t));
    let report = event_oracle::check_tree(&top, k.as_ref(), &text, &raw);
    report.print("live");
    let (ok, bad) = report.total();
    assert_eq!(
        report.unpaired, 0,
        "live: records and kernel text lines without a partner (see above)"
    );
    assert!(
        ok + bad > 100,
        "only {} records paired; the workload or the reader failed",
        ok + bad
    );
    let rate = ok as f64 / (ok + bad) as f64;
    // Events this workload does not hit may still differ (check-events -v lists the
    // formats that print as field=value pairs); the ones it hits all matched on 6.18.
    assert!(
        rate >= 0.999,
        "{:.2}% of live records match the kernel's text",
        rate * 100.0
    );
}
