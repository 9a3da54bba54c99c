//! Files our trace.dat writer makes in a test and `trace-cmd report` once read, pinned by
//! size and FNV-1a digest in a committed list (`tests/data/tracecmd/results/*.written`).
//! A written file that still matches its pin is the one trace-cmd was shown, so the
//! committed trace-cmd output for it still applies where trace-cmd is not installed.
//! `TRACECTL_UPDATE_WRITTEN=1` (with trace-cmd installed, which the tests then compare
//! with first) rewrites the lists.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// `tests/data/tracecmd/results/NAME`.
pub fn results(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tracecmd/results")
        .join(name)
}

/// Whether the pin lists are being remade.
pub fn updating() -> bool {
    std::env::var("TRACECTL_UPDATE_WRITTEN").as_deref() == Ok("1")
}

/// Whether `trace-cmd` runs here.
pub fn trace_cmd_installed() -> bool {
    Command::new("trace-cmd").arg("--help").output().is_ok()
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The pin line of a written file: `name size digest`.
pub fn pin_line(name: &str, bytes: &[u8]) -> String {
    format!("{name} {} {:016x}", bytes.len(), fnv1a(bytes))
}

/// A list of pins being checked (or, when updating, collected).
pub struct Pins {
    path: PathBuf,
    committed: String,
    lines: Vec<String>,
}

impl Pins {
    /// The list at `results/<list>`.
    pub fn open(list: &str) -> Pins {
        assert!(
            !updating() || trace_cmd_installed(),
            "TRACECTL_UPDATE_WRITTEN=1 needs trace-cmd to check the files"
        );
        let path = results(list);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        Pins {
            path,
            committed,
            lines: Vec::new(),
        }
    }

    /// None if `bytes` (the file `name`) is pinned, else why it fails.
    pub fn check(&mut self, name: &str, bytes: &[u8]) -> Option<String> {
        let line = pin_line(name, bytes);
        let pinned = self.committed.lines().any(|l| l == line);
        self.lines.push(line.clone());
        (!pinned && !updating()).then(|| {
            format!(
                "{name} is not the file trace-cmd was shown: `{line}` is not in {} (if the \
                 writer changed on purpose, remake the list with TRACECTL_UPDATE_WRITTEN=1 \
                 and trace-cmd installed)",
                self.path.display()
            )
        })
    }

    /// When updating, write the list (call after every check passed).
    pub fn finish(self, what: &str) {
        if updating() {
            let text = format!(
                "# {what}\n# name, size, FNV-1a of each; trace-cmd report read each.\n{}\n",
                self.lines.join("\n")
            );
            std::fs::write(&self.path, text).unwrap();
        }
    }
}

/// `trace-cmd report ARGS -i NAME` of the written `file` (run in its directory), as committed at
/// `results/<golden>`: remade when updating, compared with trace-cmd's output where it is
/// installed, and `file` pinned in `results/<list>` (described by `what`). Returns the
/// committed text.
pub fn trace_cmd_report(
    file: &Path,
    args: &[&str],
    golden: &str,
    list: &str,
    what: &str,
) -> String {
    let run = || {
        // In the file's directory: some modes print the name as given.
        let o = Command::new("trace-cmd")
            .current_dir(file.parent().unwrap())
            .arg("report")
            .args(args)
            .arg("-i")
            .arg(file.file_name().unwrap())
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "trace-cmd report {}: {}",
            file.display(),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let path = results(golden);
    if updating() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, run()).unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    if trace_cmd_installed() {
        assert!(
            run() == text,
            "trace-cmd reads {} differently from {}",
            file.display(),
            path.display()
        );
    }
    let mut pins = Pins::open(list);
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    if let Some(why) = pins.check(&name, &std::fs::read(file).unwrap()) {
        panic!("{why}");
    }
    pins.finish(what);
    text
}
