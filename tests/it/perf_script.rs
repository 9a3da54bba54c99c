//! `tracectl perf script` prints what Debian's `perf script` (perf 6.1) printed for the
//! perf.data files under tests/data/perf (see its README for how each was made); the
//! expected texts under tests/data/perf/results were written by perf itself.

use std::path::{Path, PathBuf};
use std::process::Command;

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf")
}

fn tracectl(args: &[&str]) -> (String, String, bool) {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir())
        .args(args)
        .output()
        .unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.success(),
    )
}

/// Compare line for line and report the first difference readably.
fn same_lines(got: &str, want: &str, what: &str) {
    crate::support::perf::assert_same_lines(got, want, what);
    assert_eq!(got, want, "{what}: whole text");
}

fn check(data: &str, extra: &[&str], result: &str) {
    check_with_kallsyms(data, "kallsyms", extra, result);
}

fn check_with_kallsyms(data: &str, kallsyms: &str, extra: &[&str], result: &str) {
    let mut args = vec![
        "perf",
        "script",
        "-i",
        data,
        "--symfs",
        "symfs",
        "--kallsyms",
        kallsyms,
    ];
    args.extend_from_slice(extra);
    let (out, err, ok) = tracectl(&args);
    assert!(ok, "tracectl {args:?} failed: {err}");
    let want = std::fs::read_to_string(dir().join("results").join(result)).unwrap();
    same_lines(&out, &want, result);
}

#[test]
fn perf_script_tracepoints_sched() {
    check("tp-sched.data", &[], "tp-sched.script");
}

#[test]
fn perf_script_tracepoints_mixed_print_fmts() {
    check("tp-mixed.data", &[], "tp-mixed.script");
}

#[test]
fn perf_script_tracepoint_with_call_chains() {
    check("tp-callchain.data", &[], "tp-callchain.script");
}

#[test]
fn perf_script_cpu_clock_call_chains() {
    check("cc-spin.data", &[], "cc-spin.script");
}

#[test]
fn perf_script_task_clock_fixed_period_call_chains() {
    check("tc-spin.data", &[], "tc-spin.script");
}

#[test]
fn perf_script_cpu_clock_without_call_chains() {
    check("cc-nocg.data", &[], "cc-nocg.script");
}

/// syms.c's regions, where perf 6.1 gives a sizeless label its end before choosing
/// among symbols at one address (a global label over a local function), passes over a
/// `SyS` alias, ignores a hidden label and finds a label inside a function only when its
/// tree lookup meets the label before the function.
#[test]
fn perf_script_symbol_choice_labels_aliases_and_sizes() {
    check("syms.data", &[], "syms.script");
    check(
        "syms.data",
        &["-F", "ip,sym,symoff,dso"],
        "syms.F-ip-sym-symoff-dso.script",
    );
}

/// rsyms.c's libraries as perf 6.1 loads them: `.symtab` and then `.dynsym` into one
/// table (a function only `.dynsym` names is found); a `.dynsym` entry naming a section
/// the file lacks stops the loading, so the first lookup in that library is unknown,
/// its `.dynsym` aliases stay beside the chosen `.symtab` one and the tree lookup names
/// one of them; a `.plt` whose `sh_entsize` is 0 gets no usable `name@plt` symbols,
/// while a usual one does.
#[test]
fn perf_script_symbol_tables_loaded_as_perf_loads_them() {
    check("rsyms.data", &[], "rsyms.script");
}

/// kallsyms with aliases (`kallsyms-alias`): of several symbols at one address perf
/// names the last one listed, whatever its type, and it passes over `$` symbols (ARM
/// mapping symbols) even inside a function.
#[test]
fn perf_script_kallsyms_aliases_and_dollar_symbols() {
    check_with_kallsyms(
        "tp-callchain.data",
        "kallsyms-alias",
        &[],
        "tp-callchain.kallsyms-alias.script",
    );
}

#[test]
fn perf_script_fields_selected() {
    check(
        "cc-spin.data",
        &["-F", "comm,tid,time,event,ip,sym,dso"],
        "cc-spin.F-comm-tid-time-event-ip-sym-dso.script",
    );
    check(
        "tp-sched.data",
        &["-F", "comm,pid,tid,cpu,time,event,trace"],
        "tp-sched.F-comm-pid-tid-cpu-time-event-trace.script",
    );
}

#[test]
fn perf_script_field_the_samples_lack_is_refused() {
    let (_, err, ok) = tracectl(&["perf", "script", "-i", "cc-spin.data", "-F", "comm,cpu"]);
    assert!(!ok);
    assert!(
        err.contains("Samples for 'cpu-clock:ppp' event do not have CPU attribute set"),
        "{err}"
    );
}

#[test]
fn perf_script_corrupt_file_names_the_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.data");
    let orig = std::fs::read(dir().join("tp-sched.data")).unwrap();
    std::fs::write(&bad, &orig[..orig.len() / 2]).unwrap();
    let (_, err, ok) = tracectl(&["perf", "script", "-i", bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.contains("bad.data") && err.contains("at offset"),
        "{err}"
    );
}

/// `--call-graph dwarf`: each sample's user frames are unwound from its registers and
/// stack copy with the binary's .eh_frame; the first frame is the sampled address, the
/// callers their return address less one. libc is not under symfs, so the chain ends
/// at the first libc frame, unresolved, as in perf.
#[test]
fn perf_script_dwarf_call_chains_unwound_from_the_stack_copy() {
    check("dwarf-calls.data", &[], "dwarf-calls.script");
}

/// `--call-graph dwarf` through frames whose call frame information needs more than
/// rip, rsp and rbp (realign.c's `drap`: the CFA in r10, then an expression over rbp),
/// and through a recursion deeper than the 4096-byte stack copy: the return address
/// past the copy lies in the `[stack]` mapping, which perf reads as 0, so the chain
/// ends with perf's `ffffffffffffffff [unknown]` frame.
#[test]
fn perf_script_dwarf_realigned_stacks_and_chains_past_the_stack_copy() {
    check("realign-dwarf.data", &[], "realign-dwarf.script");
}

/// The file offset of the `size` word of the first sample's user stack in
/// dwarf-calls.data (sample_type IP|TID|TIME|ADDR|CALLCHAIN|REGS_USER|STACK_USER|
/// DATA_SRC, as `perf evlist -v` prints it: no PERIOD, the period is fixed).
fn first_user_stack_size_offset(file: &[u8]) -> usize {
    let u64_at = |o: usize| u64::from_le_bytes(file[o..o + 8].try_into().unwrap());
    let (data_off, data_size) = (u64_at(40) as usize, u64_at(48) as usize);
    let mut at = data_off;
    while at < data_off + data_size {
        let type_ = u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
        let size = u16::from_le_bytes(file[at + 6..at + 8].try_into().unwrap()) as usize;
        if type_ == 9 {
            // ip, pid/tid, time, addr; then the chain; then the registers.
            let mut o = at + 8 + 4 * 8;
            o += 8 + 8 * u64_at(o) as usize;
            let abi = u64_at(o);
            o += 8;
            if abi != 0 {
                o += 8 * 0xff0fffu64.count_ones() as usize;
            }
            assert_ne!(u64_at(o), 0, "the first sample has a stack copy");
            return o;
        }
        at += size;
    }
    panic!("no sample in dwarf-calls.data");
}

/// A sample whose user stack claims more bytes than its record holds: an error naming
/// the file, the field and the offset where the bytes are missing, and no output.
#[test]
fn perf_script_user_stack_larger_than_its_sample_names_the_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.data");
    let mut file = std::fs::read(dir().join("dwarf-calls.data")).unwrap();
    let at = first_user_stack_size_offset(&file);
    file[at..at + 8].copy_from_slice(&0x7fff_ffffu64.to_le_bytes());
    std::fs::write(&bad, &file).unwrap();
    let (out, err, ok) = tracectl(&[
        "perf",
        "script",
        "-i",
        bad.to_str().unwrap(),
        "--symfs",
        "symfs",
    ]);
    assert!(!ok, "refused: {out}");
    let want = format!(
        "bad.data: SAMPLE user stack at offset {}: needs 2147483647 bytes",
        at + 8
    );
    assert!(err.contains(&want), "{err}\nwanted: {want}");
}

/// A sample whose user stack says more bytes were copied (`dyn_size`) than it holds:
/// an error naming the field and its offset.
#[test]
fn perf_script_user_stack_copied_size_above_its_size_names_the_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.data");
    let mut file = std::fs::read(dir().join("dwarf-calls.data")).unwrap();
    let at = first_user_stack_size_offset(&file);
    let size = u64::from_le_bytes(file[at..at + 8].try_into().unwrap()) as usize;
    let dyn_at = at + 8 + size;
    file[dyn_at..dyn_at + 8].copy_from_slice(&(size as u64 + 8).to_le_bytes());
    std::fs::write(&bad, &file).unwrap();
    let (_, err, ok) = tracectl(&["perf", "script", "-i", bad.to_str().unwrap()]);
    assert!(!ok);
    let want = format!(
        "bad.data: SAMPLE user stack at offset {dyn_at}: dyn_size {} is more than the {size} bytes",
        size + 8
    );
    assert!(err.contains(&want), "{err}\nwanted: {want}");
}

/// `--folded` on dwarf chains: the stacks perf's `perf script` printed for the file,
/// root first, counted (an unresolved frame is named after its file, as
/// stackcollapse-perf names it).
#[test]
fn perf_script_folded_dwarf_chains_are_perfs_stacks() {
    check_folded("dwarf-calls.data", "dwarf-calls.script");
}

/// `--folded` with inlined functions: each is a frame of its own, as
/// stackcollapse-perf makes of perf's `mix+0x44 (inlined)` lines.
#[test]
fn perf_script_folded_stacks_have_inlined_frames() {
    check_folded("inl-dwarf.data", "inl-dwarf.script");
}

/// Compare `--folded` of `data` with the stacks of perf's `results/script`.
fn check_folded(data: &str, script: &str) {
    let script = std::fs::read_to_string(dir().join("results").join(script)).unwrap();
    let mut want: std::collections::BTreeMap<String, u32> = Default::default();
    for block in script.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let mut lines = block.lines();
        let comm = lines.next().unwrap().split_whitespace().next().unwrap();
        let frames: Vec<String> = lines
            .map(|l| {
                let mut it = l.split_whitespace().skip(1);
                let sym = it.next().unwrap();
                let dso = it.next().unwrap().trim_matches(|c| c == '(' || c == ')');
                match sym {
                    "[unknown]" => format!("[{}]", dso.rsplit('/').next().unwrap()),
                    s => s.split("+0x").next().unwrap().to_string(),
                }
            })
            .collect();
        let mut stack = vec![comm.to_string()];
        stack.extend(frames.into_iter().rev());
        *want.entry(stack.join(";")).or_default() += 1;
    }
    let want: Vec<String> = want.iter().map(|(s, n)| format!("{s} {n}")).collect();
    let (out, err, ok) = tracectl(&[
        "perf",
        "script",
        "-i",
        data,
        "--symfs",
        "symfs",
        "--kallsyms",
        "kallsyms",
        "--folded",
    ]);
    assert!(ok, "{err}");
    let mut got: Vec<&str> = out.lines().collect();
    got.sort_unstable();
    assert_eq!(got, want);
}

/// Call chains unwound from the stack copy list the functions inlined at each address,
/// from the binary's DWARF, innermost first (`mix+0x44 (inlined)`), at the offset
/// into the symbol they were inlined into, as perf 6.1 does.
#[test]
fn perf_script_dwarf_call_chains_list_inlined_functions() {
    check("inl-dwarf.data", &[], "inl-dwarf.script");
}

/// `--no-inline` shows each unwound address once, in the function its code is in;
/// `--inline` is the default.
#[test]
fn perf_script_no_inline_lists_no_inlined_functions() {
    check(
        "inl-dwarf.data",
        &["--no-inline"],
        "inl-dwarf.no-inline.script",
    );
    check("inl-dwarf.data", &["--inline"], "inl-dwarf.script");
    check(
        "inl-dwarf.data",
        &["--no-inline", "--inline"],
        "inl-dwarf.script",
    );
}

/// `--no-demangle` shows C++ names as the file stores them.
#[test]
fn perf_script_no_demangle_shows_stored_names() {
    check(
        "longsym-t.data",
        &["--no-demangle"],
        "longsym-t.no-demangle.script",
    );
}

/// perf 6.1 lists no inlined function in a chain the kernel walked by frame pointers,
/// though the binary's DWARF has them.
#[test]
fn perf_script_frame_pointer_chains_list_no_inlined_functions() {
    check("inl-fp.data", &[], "inl-fp.script");
}

/// `-F +field` and `-F -field` add to or take from perf's default fields of each event
/// type; a default field the samples lack is left out, as without -F; a tracepoint
/// with call chains then shows no chain (perf adds it only to untouched defaults).
#[test]
fn perf_script_fields_added_and_removed() {
    for (data, fields) in [
        ("cc-spin.data", "+pid"),
        ("cc-spin.data", "-period,+pid,-dso"),
        ("cc-spin.data", "-symoff"),
        ("cc-spin.data", "-ip"),
        ("tp-sched.data", "-cpu,-time"),
        ("tp-sched.data", "+period"),
        ("tp-callchain.data", "-cpu"),
        ("tp-callchain.data", "+ip"),
    ] {
        let stem = data.trim_end_matches(".data");
        check(data, &["-F", fields], &format!("{stem}.F={fields}.script"));
    }
}

/// `sym` without `ip` among the fields: perf 6.1 accepts it (the samples have
/// addresses) and prints no symbol.
#[test]
fn perf_script_sym_without_ip_prints_no_symbol() {
    check(
        "cc-spin.data",
        &["-F", "comm,sym"],
        "cc-spin.F=comm,sym.script",
    );
}

/// Fields added or removed cannot be mixed with fields that replace the defaults; a
/// field added that the samples lack is an error naming it.
#[test]
fn perf_script_fields_mixed_or_missing_are_refused() {
    for fields in ["+ip,sym", "comm,-sym"] {
        let (out, err, ok) = tracectl(&["perf", "script", "-i", "cc-spin.data", "-F", fields]);
        assert!(!ok && out.is_empty(), "{fields}: {out}");
        assert!(err.contains("cannot mix"), "{fields}: {err}");
    }
    let (out, err, ok) = tracectl(&["perf", "script", "-i", "cc-spin.data", "-F", "+cpu"]);
    assert!(!ok && out.is_empty(), "{out}");
    assert!(err.contains("do not have CPU attribute set"), "{err}");
}

/// `-F TYPE:fields` sets the fields of that event type only; the others keep perf's
/// defaults, and a type given no fields (`sw:`) shows no events.
#[test]
fn perf_script_fields_for_one_event_type() {
    for (data, fields) in [
        ("cc-spin.data", "sw:comm,tid,ip,sym"),
        ("cc-spin.data", "trace:comm,cpu"),
        ("cc-spin.data", "sw:+pid,-period"),
        ("cc-spin.data", "sw:"),
        ("tp-sched.data", "sw:comm"),
        ("tp-sched.data", "trace:comm,cpu,trace"),
    ] {
        let stem = data.trim_end_matches(".data");
        check(data, &["-F", fields], &format!("{stem}.F={fields}.script"));
    }
}

/// An unknown type, `trace` for a type without it, and an empty `-F` are refused
/// with what to give instead, as perf refuses them.
#[test]
fn perf_script_bad_field_types_are_refused() {
    for (fields, says) in [
        ("bogus:comm", "unknown event type 'bogus'"),
        ("sw:trace", "'trace' not valid for software events"),
        ("hw:+trace", "'trace' not valid for hardware events"),
        ("", "-F is empty"),
    ] {
        let (out, err, ok) = tracectl(&["perf", "script", "-i", "cc-spin.data", "-F", fields]);
        assert!(!ok && out.is_empty(), "{fields}: {out}");
        assert!(err.contains(says), "{fields}: {err}");
    }
}

/// `-F` given twice: each in turn, a list replacing what was chosen before for its
/// types, a change changing it; the `-cpu` after `sw:comm` changes the tracepoint's
/// defaults too, which then, chosen by -F, show no chain (as in perf).
#[test]
fn perf_script_fields_given_twice() {
    check(
        "cc-spin.data",
        &["-F", "comm,tid,ip,sym", "-F", "+symoff,-tid"],
        "cc-spin.F=comm,tid,ip,sym.F=+symoff,-tid.script",
    );
    check(
        "tp-callchain.data",
        &["-F", "sw:comm", "-F", "-cpu"],
        "tp-callchain.F=sw:comm.F=-cpu.script",
    );
}

/// A flag or option given twice is taken as perf takes it: a flag again changes nothing,
/// an option's last value wins (`-s cpu -s pid` sorts by pid), instead of an error.
#[test]
fn perf_options_given_twice_as_perf_takes_them() {
    let (once, _, ok) = tracectl(&["perf", "script", "-i", "cc-spin.data", "--ns"]);
    assert!(ok && !once.is_empty());
    let (twice, err, ok) = tracectl(&["perf", "script", "-i", "cc-spin.data", "--ns", "--ns"]);
    assert!(ok, "{err}");
    same_lines(&twice, &once, "--ns --ns");
    let (last, _, ok) = tracectl(&[
        "perf",
        "report",
        "--stdio",
        "-i",
        "cc-spin.data",
        "-s",
        "pid",
    ]);
    assert!(ok && last.contains("Pid:Command"), "{last}");
    let (both, err, ok) = tracectl(&[
        "perf",
        "report",
        "--stdio",
        "--stdio",
        "-i",
        "cc-spin.data",
        "-s",
        "cpu",
        "-s",
        "pid",
    ]);
    assert!(ok, "{err}");
    same_lines(&both, &last, "-s cpu -s pid");
}

/// `-D`: every record with its offset, size, bytes and perf's decode, each sample's
/// call chain entries and the thread and file it was found in, before its line.
#[test]
fn perf_script_dump_raw_trace_is_perfs() {
    check("inl-fp.data", &["-D"], "inl-fp.D.script");
}

/// `perf report -D`: the dump (user registers and stack copy sizes of dwarf samples),
/// then the counts of each record type and event.
#[test]
fn perf_report_dump_raw_trace_is_perfs() {
    let args = [
        "perf",
        "report",
        "-D",
        "-i",
        "dwarf-calls.data",
        "--symfs",
        "symfs",
        "--kallsyms",
        "kallsyms",
    ];
    let (out, err, ok) = tracectl(&args);
    assert!(ok, "tracectl {args:?} failed: {err}");
    let want = std::fs::read_to_string(dir().join("results/dwarf-calls.D.report")).unwrap();
    same_lines(&out, &want, "dwarf-calls.D.report");
}

/// `-D` of a file cut short: the records before the cut are dumped, then an error
/// naming the file and the offset, no panic.
#[test]
fn perf_dump_raw_trace_of_a_cut_file_names_the_offset() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.data");
    let orig = std::fs::read(dir().join("inl-fp.data")).unwrap();
    std::fs::write(&bad, &orig[..orig.len() / 2]).unwrap();
    for verb in ["script", "report"] {
        let (_, err, ok) = tracectl(&["perf", verb, "-D", "-i", bad.to_str().unwrap()]);
        assert!(!ok, "{verb}");
        assert!(
            err.contains("bad.data") && err.contains("offset") && !err.contains("panick"),
            "{verb}: {err}"
        );
    }
}
