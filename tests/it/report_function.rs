//! `tracectl report` of a function-tracer recording (`tests/data/tracecmd/function-v7.dat`,
//! made by trace-cmd in a qemu guest, `make-function.sh`), where trace-cmd's function
//! plugin indents callees under their callers. The byte-for-byte comparisons with
//! trace-cmd's reports are lines `function-v7` of `options.tsv`
//! (`tracecmd_options::report_options_match_trace_cmd_goldens_byte_for_byte`); these
//! tests check that the goldens show what each option does, so that a golden that shows
//! nothing would not pass unnoticed, and run the cases the goldens pin one by one.

use std::path::{Path, PathBuf};
use std::process::Command;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/tracecmd")
}

fn golden(mode: &str) -> String {
    std::fs::read_to_string(data().join(format!("results/function-v7/{mode}.txt"))).unwrap()
}

fn report(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(data())
        .arg("report")
        .args(args)
        .args(["-i", "function-v7.dat"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "report {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The indent of each function line's info (spaces after the 20-column name).
fn indents(text: &str) -> Vec<usize> {
    text.lines()
        .filter_map(|l| l.split_once(" function: ").map(|(_, info)| info))
        .map(|info| info.len() - info.trim_start().len() - 12)
        .collect()
}

#[test]
fn function_lines_indent_three_spaces_per_level_like_trace_cmd() {
    let want = golden("plain");
    let levels = indents(&want);
    assert!(levels.len() > 100, "{} function lines", levels.len());
    assert!(levels.iter().all(|i| i % 3 == 0), "{levels:?}");
    assert!(levels.iter().any(|&i| i >= 6), "no second level");
    assert_eq!(report(&[]), want);
}

#[test]
fn indent_off_and_trace_cmds_flip_of_an_option_without_value() {
    let off = golden("fn-indent0");
    assert!(indents(&off).iter().all(|&i| i == 0));
    // `-O indent` flips the default (on) for one file; named then unnamed flips back.
    assert_eq!(golden("fn-indent-flip"), off);
    assert_eq!(golden("fn-named-unnamed"), golden("plain"));
    assert_eq!(report(&["-O", "indent=0"]), off);
    assert_eq!(report(&["-O", "indent"]), off);
    assert_eq!(
        report(&["-O", "ftrace:indent=0", "-O", "indent"]),
        golden("plain")
    );
}

#[test]
fn parent_and_offset_follow_each_name() {
    let parent = golden("fn-parent");
    let lines: Vec<&str> = parent
        .lines()
        .filter(|l| l.contains(" function: "))
        .collect();
    assert!(lines.iter().all(|l| l.contains(" <-- ")));
    let offset = golden("fn-parent-offset");
    assert!(offset.contains("function:             getname+0x0  <-- __x64_sys_execve+0x18 \n"));
    assert_eq!(report(&["-O", "parent=1"]), parent);
    assert_eq!(
        report(&["-O", "ftrace:parent", "-O", "offset=true"]),
        offset
    );
}

/// trace-cmd keeps one stack per CPU number for the whole report: the instance `fn`
/// records `rw_verify_area` called from `vfs_read`, which only the top buffer records,
/// and still indents it; a second file goes on from the first file's stacks.
#[test]
fn buffers_and_files_share_the_stacks_and_cpus_do_not() {
    let plain = golden("plain");
    let instance: Vec<&str> = plain.lines().filter(|l| l.starts_with("fn:")).collect();
    assert!(
        instance
            .iter()
            .any(|l| l.ends_with("function:                   rw_verify_area")),
        "no instance line indented through the top buffer's stack"
    );
    // With one stack for both CPUs, CPU 1 would have replaced this line's callers on
    // CPU 0's stack, and it would not be indented.
    assert!(
        plain.contains("sh-101   [000]    15.945496: function:                      vfs_open\n")
    );
    let cpu1 = golden("fn-cpu1");
    assert!(indents(&cpu1).iter().any(|&i| i > 0));
    assert_eq!(report(&["--cpu", "1"]), cpu1);
    // Two files and `-O indent`, flipped twice: on.
    let two = golden("fn-two-files");
    assert!(indents(&two).iter().any(|&i| i > 0));
    assert_eq!(report(&["-O", "indent", "-i", "function-v7.dat"]), two);
}
