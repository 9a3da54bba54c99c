//! `tracectl completions`: the scripts complete subcommands and options in the real shell.

use std::process::Command;

fn script(shell: &str) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["completions", shell])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// What bash offers after `words`, with the cursor on the last word.
fn bash_complete(words: &[&str]) -> Option<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tracectl.bash");
    std::fs::write(&path, script("bash")).unwrap();
    let line = words.join(" ");
    let program = format!(
        "source {}; COMP_WORDS=({line}); COMP_CWORD={}; COMP_LINE='{line}'; COMP_POINT=${{#COMP_LINE}}; \
         _tracectl tracectl '{}' '{}'; printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        path.display(),
        words.len() - 1,
        words[words.len() - 1],
        words[words.len() - 2],
    );
    let o = Command::new("bash").args(["-c", &program]).output().ok()?;
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

#[test]
fn bash_completes_subcommands_and_options() {
    let Some(got) = bash_complete(&["tracectl", "rec"]) else {
        crate::support::skips::skip("no bash");
        return;
    };
    assert_eq!(got, ["record"]);
    let got = bash_complete(&["tracectl", "report", "--first"]).unwrap();
    assert_eq!(got, ["--first-event"]);
    let got = bash_complete(&["tracectl", "perf", "st"]).unwrap();
    assert_eq!(got, ["stat"]);
}

#[test]
fn zsh_and_fish_scripts_name_every_subcommand() {
    for shell in ["zsh", "fish"] {
        let s = script(shell);
        for sub in ["record", "report", "stream", "graph", "perf", "completions"] {
            assert!(s.contains(sub), "{shell} script lacks {sub}");
        }
    }
    let o = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .args(["completions", "tcsh"])
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("possible values: bash, zsh, fish"));
}
