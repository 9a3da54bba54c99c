//! Where perf 6.1 finds the symbols of a stripped program (`dso__load`'s table of
//! places): a program (tests/data/perf/stripped.c) built with a build id, stripped,
//! recorded by perf, and its symbols put where perf looks: `tracectl perf script` and
//! `tracectl perf report` print what perf prints. Skips without root, perf or cc.
//! Nothing is put in /root/.debug or /usr/lib/debug: the places are under a private
//! `--symfs` or `--buildid-dir`, and HOME is the test's own.

use std::path::Path;

use crate::support::perf::{assert_same_lines, cc_missing, run, run_with_env, skip_reason};

fn perf_and_cc() -> bool {
    match skip_reason().or_else(|| cc_missing().map(str::to_string)) {
        Some(why) => {
            crate::support::skips::skip(why);
            false
        }
        None => true,
    }
}

/// Builds tests/data/perf/stripped.c as `d/out` (with `-g`, a build id and `VARIANT`).
fn build(d: &Path, out: &str, variant: u32) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/stripped.c");
    let variant = format!("-DVARIANT={variant}");
    run(
        "cc",
        &[
            "-O1",
            "-g",
            "-fno-omit-frame-pointer",
            "-Wl,--build-id=sha1",
            &variant,
            "-o",
            out,
            src.to_str().unwrap(),
        ],
        d,
    );
}

/// The build id of the ELF file `d/file`, in hex, as `readelf -n` prints it.
fn build_id(d: &Path, file: &str) -> String {
    let notes = run("readelf", &["-n", file], d);
    notes
        .lines()
        .find_map(|l| l.trim().strip_prefix("Build ID: "))
        .unwrap_or_else(|| panic!("{file} has a build id: {notes}"))
        .to_string()
}

/// `perf script` and `perf report` (with and without call chains, and by source line:
/// perf asks addr2line in the file it read the symbols from) on `data` in `d` with
/// `extra` options (perf's own options before the command, `--buildid-dir`, in
/// `global`), and ours, line for line; true when perf named the program's functions
/// (it found the symbols).
fn same_as_perf(d: &Path, data: &str, global: &[&str], extra: &[&str], what: &str) -> bool {
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let home = [("HOME", d)];
    let runs: [&[&str]; 4] = [
        &["script", "-i", data],
        &["report", "-i", data, "--stdio", "--sort", "dso,sym"],
        &[
            "report",
            "-i",
            data,
            "--stdio",
            "--no-children",
            "-g",
            "caller",
        ],
        &[
            "report",
            "-i",
            data,
            "--stdio",
            "--sort",
            "dso,srcline",
            "-g",
            "none",
        ],
    ];
    let mut named = false;
    for args in runs {
        let args = [args, extra].concat();
        let perf = run_with_env("perf", &[global, &args].concat(), d, &home);
        named |= perf.contains("local_hot") && perf.contains("global_hot");
        let ours = [&["perf"][..], &args, global].concat();
        let ours = run_with_env(tracectl, &ours, d, &home);
        assert_same_lines(&ours, &perf, &format!("{what}: perf {args:?}"));
    }
    named
}

/// The stripped program `d/prog` (built from variant 1), recorded into `d/prog.data`
/// with call chains; its unstripped build is `d/full`, its debug file `d/prog.debug`.
fn record_stripped(d: &Path) {
    build(d, "full", 1);
    run("objcopy", &["--only-keep-debug", "full", "prog.debug"], d);
    run("objcopy", &["--strip-all", "full", "prog"], d);
    let home = [("HOME", d)];
    let record = [
        "record",
        "-q",
        "-N",
        "-g",
        "-e",
        "cpu-clock",
        "-o",
        "prog.data",
        "--",
        "./prog",
    ];
    run_with_env("perf", &record, d, &home);
}

/// A file of the test directory and the path it is copied to.
type Placed<'a> = (&'a str, String);

/// Copies `d/from` to `d/to`, making its directories.
fn put(d: &Path, from: &str, to: &str) {
    let to = d.join(to);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(d.join(from), to).unwrap();
}

/// Under `--symfs`: the unstripped build at the program's path; the stripped program
/// there with its debug file at `/usr/lib/debug/PATH.debug`, at `/usr/lib/debug/PATH`,
/// at `/usr/lib/debug/.build-id/XX/REST.debug` or at `DIR/.debug/NAME`; a debug file
/// of another build (another build id) found first is passed over for the right one
/// found later; and with only files of another build, perf names nothing.
#[test]
fn perf_symbols_live_symfs_places_match_perf() {
    if !perf_and_cc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    record_stripped(d);
    build(d, "other", 2);
    run("objcopy", &["--only-keep-debug", "other", "other.debug"], d);
    let path = d.join("prog").to_str().unwrap().to_string();
    let id = build_id(d, "prog");
    let (head, rest) = id.split_at(2);
    let cases: Vec<(&str, Vec<Placed>, bool)> = vec![
        ("unstripped", vec![("full", path.clone())], true),
        (
            "fedora",
            vec![
                ("prog", path.clone()),
                ("prog.debug", format!("usr/lib/debug{path}.debug")),
            ],
            true,
        ),
        (
            "ubuntu",
            vec![
                ("prog", path.clone()),
                ("prog.debug", format!("usr/lib/debug{path}")),
            ],
            true,
        ),
        (
            "build-id",
            vec![
                ("prog", path.clone()),
                (
                    "prog.debug",
                    format!("usr/lib/debug/.build-id/{head}/{rest}.debug"),
                ),
            ],
            true,
        ),
        (
            "openembedded",
            vec![
                ("prog", path.clone()),
                ("prog.debug", path.replace("/prog", "/.debug/prog")),
            ],
            true,
        ),
        (
            "mismatch first",
            vec![
                ("prog", path.clone()),
                ("other.debug", format!("usr/lib/debug{path}.debug")),
                (
                    "prog.debug",
                    format!("usr/lib/debug/.build-id/{head}/{rest}.debug"),
                ),
            ],
            true,
        ),
        (
            "only another build",
            vec![
                ("other", path.clone()),
                ("other.debug", format!("usr/lib/debug{path}")),
            ],
            false,
        ),
    ];
    for (i, (what, files, named)) in cases.into_iter().enumerate() {
        let symfs = format!("symfs{i}");
        for (from, to) in &files {
            put(d, from, &format!("{symfs}/{}", to.trim_start_matches('/')));
        }
        let found = same_as_perf(d, "prog.data", &[], &["--symfs", &symfs], what);
        assert_eq!(found, named, "{what}: perf named the program's functions");
    }
}

/// The stripped program's `.gnu_debuglink` names its debug file, which perf looks for
/// as named (from the working directory), next to the program and in its `.debug`
/// directory; in a private build-id cache (`--buildid-dir`), perf's copy of the
/// debug file (`.build-id/XX/REST/debug`) and a copy of the program kept at the link
/// itself (the cache's old layout) name the functions too.
#[test]
fn perf_symbols_live_debug_link_and_build_id_cache_match_perf() {
    if !perf_and_cc() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    build(d, "full", 1);
    run("objcopy", &["--only-keep-debug", "full", "prog.dbg"], d);
    run(
        "objcopy",
        &[
            "--strip-all",
            "--add-gnu-debuglink=prog.dbg",
            "full",
            "prog",
        ],
        d,
    );
    std::fs::rename(d.join("prog.dbg"), d.join("kept.dbg")).unwrap();
    std::fs::create_dir(d.join("bin")).unwrap();
    std::fs::rename(d.join("prog"), d.join("bin/prog")).unwrap();
    let home = [("HOME", d)];
    let record = [
        "record",
        "-q",
        "-N",
        "-g",
        "-e",
        "cpu-clock",
        "-o",
        "prog.data",
        "--",
        "bin/prog",
    ];
    run_with_env("perf", &record, d, &home);
    let id = build_id(d, "bin/prog");
    let (head, rest) = id.split_at(2);
    // The debug file in the working directory, next to the program, in its .debug.
    for at in ["prog.dbg", "bin/prog.dbg", "bin/.debug/prog.dbg"] {
        put(d, "kept.dbg", at);
        assert!(
            same_as_perf(d, "prog.data", &[], &[], at),
            "perf named them from {at}"
        );
        std::fs::remove_file(d.join(at)).unwrap();
    }
    assert!(
        !same_as_perf(d, "prog.data", &[], &[], "no debug file"),
        "perf named nothing without the debug file"
    );
    let cache = d.join("cache");
    let cache_arg = ["--buildid-dir", cache.to_str().unwrap()];
    put(
        d,
        "kept.dbg",
        &format!("cache/.build-id/{head}/{rest}/debug"),
    );
    assert!(same_as_perf(
        d,
        "prog.data",
        &cache_arg,
        &[],
        "cached debug file"
    ));
    std::fs::remove_dir_all(&cache).unwrap();
    put(d, "full", &format!("cache/.build-id/{head}/{rest}"));
    assert!(same_as_perf(
        d,
        "prog.data",
        &cache_arg,
        &[],
        "old-style cache"
    ));
}

/// Two processes of a program that spends its time in libc's `strcmp`, and `dd`
/// writing byte by byte, recorded with call chains: perf reads libc's symbols from
/// its detached debug file (`/usr/lib/debug/.build-id/XX/REST.debug`, Debian's
/// libc6-dbg) and asks addr2line there, so `--sort srcline` names libc's lines
/// (`strcmp-avx2.S:LINE`), and the call-chain entries it cannot place
/// (`symbol+OFFSET`); ours print the same. Skips without libc's debug file.
#[test]
fn perf_symbols_live_srcline_of_libc_from_its_debug_file_matches_perf() {
    if !perf_and_cc() {
        return;
    }
    let libc = Path::new("/lib/x86_64-linux-gnu/libc.so.6");
    let Some(id) = std::fs::read(libc).ok().and_then(|b| {
        use object::Object;
        let f = object::File::parse(&*b).ok()?;
        f.build_id()
            .ok()
            .flatten()
            .map(|id| id.iter().map(|b| format!("{b:02x}")).collect::<String>())
    }) else {
        crate::support::skips::skip("no libc.so.6 with a build id");
        return;
    };
    let debug = format!("/usr/lib/debug/.build-id/{}/{}.debug", &id[..2], &id[2..]);
    if !Path::new(&debug).is_file() {
        crate::support::skips::skip("no detached debug file of libc (libc6-dbg)");
        return;
    }
    let tracectl = env!("CARGO_BIN_EXE_tracectl");
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("cmp.c"),
        "#include <string.h>\n#include <stdlib.h>\nvolatile int sink;\n\
         int main(void) { char *a = malloc(4096), *b = malloc(4096);\n\
         memset(a, 'x', 4095); a[4095] = 0; memcpy(b, a, 4096); b[4094] = 'y';\n\
         for (int i = 0; i < 200000; i++) sink += strcmp(a, b); return 0; }\n",
    )
    .unwrap();
    run("cc", &["-O1", "-o", "cmp", "cmp.c"], d);
    let home = [("HOME", d)];
    let record = [
        "record",
        "-q",
        "-N",
        "-g",
        "-e",
        "cpu-clock",
        "-o",
        "mp.data",
        "--",
        "sh",
        "-c",
        "./cmp & dd if=/dev/zero of=/dev/null bs=1 count=200000 2>/dev/null & ./cmp; wait",
    ];
    run_with_env("perf", &record, d, &home);
    for extra in [&["-g", "none"][..], &[], &["--no-children"]] {
        let args = [
            &["report", "-i", "mp.data", "--stdio", "--sort", "srcline"][..],
            extra,
        ]
        .concat();
        let perf = run_with_env("perf", &args, d, &home);
        assert!(
            perf.lines()
                .any(|l| l.contains("strcmp") && l.contains(".S:")),
            "perf named libc's lines: {perf}"
        );
        let ours = run_with_env(tracectl, &[&["perf"][..], &args].concat(), d, &home);
        assert_same_lines(&ours, &perf, &format!("perf {args:?}"));
    }
}
