//! What the live perf tests share: when they can run (root and Debian's perf) and how they
//! run a command in a directory.

use std::path::Path;
use std::process::Command;

/// Why the live perf tests cannot run here; None when they can.
pub fn skip_reason() -> Option<String> {
    if !nix::unistd::Uid::effective().is_root() {
        return Some("needs root".into());
    }
    match Command::new("perf").arg("version").output() {
        Ok(o) if o.status.success() => None,
        _ => Some("perf is not installed".into()),
    }
}

/// The standard output of `cmd args` run in `cwd`; the test fails (with its standard
/// error) when the command does.
pub fn run(cmd: &str, args: &[&str], cwd: &Path) -> String {
    run_with_env(cmd, args, cwd, &[])
}

/// [`run`] with the variables `env` set (a HOME of the test's own, for perf's build-id
/// cache).
pub fn run_with_env(cmd: &str, args: &[&str], cwd: &Path, env: &[(&str, &Path)]) -> String {
    let out = Command::new(cmd)
        .current_dir(cwd)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{cmd} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `cmd args` in `d`: its standard output, the test failing when it fails or when it
/// warns (perf's readers warn on standard error of what they cannot read).
pub fn run_clean(cmd: &str, args: &[&str], d: &Path) -> String {
    let out = Command::new(cmd)
        .current_dir(d)
        .args(args)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{cmd} {args:?}: {err}");
    assert!(
        !err.to_lowercase().contains("warning"),
        "{cmd} {args:?} warned: {err}"
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Why a test that builds a C program cannot run here (no `cc`); None when it can.
pub fn cc_missing() -> Option<&'static str> {
    let ok = Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    (!ok).then_some("no C compiler (cc)")
}

/// A temporary directory for a live test that builds a C program and records it with
/// perf; None, with the reason printed as a skip, without root, perf or a C compiler.
pub fn cc_workdir() -> Option<tempfile::TempDir> {
    if let Some(why) = skip_reason().or_else(|| cc_missing().map(String::from)) {
        crate::support::skips::skip(why);
        return None;
    }
    Some(tempfile::tempdir().unwrap())
}

/// The path of tests/data/perf/`name`, as the argument of a command.
pub fn perf_fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/perf")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

/// tests/data/perf/spin.c built again as `dir/spin` with its hot function renamed
/// `renamed`: the file at the recorded path no longer has the recorded function.
pub fn rebuild_spin_renamed(dir: &Path, renamed: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf/spin.c");
    let src = std::fs::read_to_string(src).unwrap();
    std::fs::write(dir.join("spin2.c"), src.replace("hot_function", renamed)).unwrap();
    let cc = ["-O1", "-fno-omit-frame-pointer", "-o", "spin", "spin2.c"];
    run("cc", &cc, dir);
}

/// Builds tests/data/perf/NAME.c into `dir`/NAME with frame pointers (`-O1`), as the live
/// profiles of those programs want it.
pub fn build_fixture_program(name: &str, dir: &Path) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/perf")
        .join(format!("{name}.c"));
    run(
        "cc",
        &[
            "-O1",
            "-fno-omit-frame-pointer",
            "-o",
            name,
            src.to_str().unwrap(),
        ],
        dir,
    );
}

/// Assert that tracectl printed what perf printed, line for line (perf report's random
/// `# (Tip: ...)` line left out), naming the first line that differs.
pub fn assert_same_lines(ours: &str, perf: &str, what: &str) {
    let perf: Vec<&str> = perf.lines().filter(|l| !l.starts_with("# (Tip:")).collect();
    let ours: Vec<&str> = ours.lines().collect();
    for (i, (o, p)) in ours.iter().zip(&perf).enumerate() {
        assert_eq!(o, p, "{what}: line {} differs", i + 1);
    }
    assert_eq!(ours.len(), perf.len(), "{what}: line count");
}

/// A child process of a test, killed and reaped when the test ends, whatever the outcome.
pub struct Reaped(pub std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
