//! Every `--json` output validates against `docs/json.schema.json`, and the trace text is
//! read back typed (numbers as numbers, pointers and big integers as hex strings).
//!
//! The checker below covers the part of JSON Schema (2020-12) the schema uses and fails
//! on any other keyword, so the schema cannot lean on something it does not check.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::support::tree::{bin, repo, Tree};
use super::support::{live, skips};

pub(crate) fn schema() -> Value {
    let text = std::fs::read_to_string(repo().join("docs/json.schema.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Why `v` does not match `s` (None when it does).
fn check(root: &Value, s: &Value, v: &Value, at: &str) -> Option<String> {
    let obj = s.as_object().expect("schema nodes are objects");
    for (k, want) in obj {
        let bad = match k.as_str() {
            "$schema" | "$id" | "title" | "description" | "$defs" => None,
            "$ref" => {
                let name = want.as_str().unwrap().strip_prefix("#/$defs/").unwrap();
                let target = &root["$defs"][name];
                assert!(target.is_object(), "no $defs/{name}");
                check(root, target, v, at)
            }
            "type" => {
                let types: Vec<&str> = match want {
                    Value::String(t) => vec![t],
                    Value::Array(a) => a.iter().map(|t| t.as_str().unwrap()).collect(),
                    _ => panic!("type {want}"),
                };
                let ok = types.iter().any(|t| match *t {
                    "object" => v.is_object(),
                    "array" => v.is_array(),
                    "string" => v.is_string(),
                    "integer" => v.is_i64() || v.is_u64(),
                    "number" => v.is_number(),
                    "boolean" => v.is_boolean(),
                    "null" => v.is_null(),
                    t => panic!("type {t}"),
                });
                (!ok).then(|| format!("{at}: {v} is not {types:?}"))
            }
            "minimum" => v
                .as_f64()
                .filter(|n| v.is_number() && *n < want.as_f64().unwrap())
                .map(|_| format!("{at}: {v} below {want}")),
            "maximum" => v
                .as_f64()
                .filter(|n| {
                    // Compare exactly: 2^53 + 1 must fail.
                    let max = want.as_u64().unwrap();
                    v.as_u64().map_or(*n > max as f64, |u| u > max)
                })
                .map(|_| format!("{at}: {v} above {want}")),
            "pattern" => v.as_str().and_then(|t| {
                let re = regex::Regex::new(want.as_str().unwrap()).unwrap();
                (!re.is_match(t)).then(|| format!("{at}: {t:?} does not match {want}"))
            }),
            "required" => v.as_object().and_then(|o| {
                want.as_array()
                    .unwrap()
                    .iter()
                    .find(|r| !o.contains_key(r.as_str().unwrap()))
                    .map(|r| format!("{at}: no {r}"))
            }),
            "minProperties" => v
                .as_object()
                .filter(|o| (o.len() as u64) < want.as_u64().unwrap())
                .map(|_| format!("{at}: too few keys")),
            "properties" => v.as_object().and_then(|o| {
                o.iter().find_map(|(key, x)| {
                    want.get(key)
                        .and_then(|ps| check(root, ps, x, &format!("{at}.{key}")))
                })
            }),
            "additionalProperties" => v.as_object().and_then(|o| {
                let props = obj.get("properties");
                o.iter()
                    .filter(|(key, _)| props.and_then(|p| p.get(key.as_str())).is_none())
                    .find_map(|(key, x)| match want {
                        Value::Bool(false) => Some(format!("{at}: unexpected key {key}")),
                        Value::Bool(true) => None,
                        s => check(root, s, x, &format!("{at}.{key}")),
                    })
            }),
            "items" => v.as_array().and_then(|a| {
                a.iter()
                    .enumerate()
                    .find_map(|(i, x)| check(root, want, x, &format!("{at}[{i}]")))
            }),
            "anyOf" => {
                let errs: Vec<String> = want
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter_map(|s| check(root, s, v, at))
                    .collect();
                (errs.len() == want.as_array().unwrap().len())
                    .then(|| format!("{at}: none of anyOf: {}", errs.join(" | ")))
            }
            k => panic!("the checker does not know the keyword {k}"),
        };
        if bad.is_some() {
            return bad;
        }
    }
    None
}

/// Panic with the reason when `text` (one JSON document) does not validate.
fn validate(root: &Value, what: &str, text: &str) -> Value {
    let v: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {text}"));
    if let Some(why) = check(root, root, &v, "$") {
        panic!("{what}: {why}\n{}", &text[..text.len().min(2000)]);
    }
    v
}

/// Validate each line of a JSON-lines output; returns them.
pub(crate) fn validate_lines(root: &Value, what: &str, text: &str) -> Vec<Value> {
    text.lines().map(|l| validate(root, what, l)).collect()
}

#[test]
fn the_checker_rejects_what_the_schema_forbids() {
    let root = schema();
    let bad = [
        r#"{"ts":1,"cpu":0,"pid":"10461","comm":"a","event":"e"}"#,
        r#"{"ts":1,"cpu":0,"pid":1,"comm":"a","event":"e","fields":{"x":9007199254740993}}"#,
        r#"{"ts":1,"cpu":0,"pid":1,"comm":"a","event":"e","fields":{"x":1.5}}"#,
        r#"{"ts":1,"cpu":0,"pid":1,"comm":"a","event":"e","extra":1}"#,
        r#"{"ts":"0xZZ","cpu":0,"pid":1,"comm":"a","event":"e"}"#,
        r#"{"ts":1,"cpu":0,"pid":1,"comm":"a"}"#,
        r#"{"file":"buffer_size_kb","value":1.5}"#,
        r#"[{"instance":null,"events":[],"filters":{},"triggers":{},"cpu_stats":{"cpu0":{"entries":[1]}}}]"#,
        r#"{"total":"1","parsed":1,"failed":[],"field_pairs":[]}"#,
        r#"{}"#,
    ];
    for b in bad {
        let v: Value = serde_json::from_str(b).unwrap();
        assert!(check(&root, &root, &v, "$").is_some(), "accepted: {b}");
    }
    let good = [
        r#"{"ts":1,"cpu":0,"pid":1,"comm":"a","event":"e","fields":{"x":9007199254740992,"p":"0xffffffff81000000","s":"R+","a":[1,2]}}"#,
        r#"{"lost":null,"cpu":1,"ts":"0x20000000000001"}"#,
        r#"{"text":"  1)   0.500 us    |  foo();"}"#,
    ];
    for g in good {
        validate(&root, "good", g);
    }
}

/// Run tracectl against a tree and return stdout (asserting success).
fn ok(t: &Tree, args: &[&str]) -> String {
    t.ok(args)
}

#[test]
fn json_outputs_of_fixture_trees_validate() {
    let root = schema();
    let trees = std::fs::read_dir(repo().join("tracefs-fixtures")).unwrap();
    let mut names: Vec<String> = trees
        .filter_map(|e| e.ok())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(names.len() > 3);
    for name in &names {
        let t = Tree::new(name);
        let what = |c: &str| format!("{name}: {c}");
        validate_lines(&root, &what("show --json"), &ok(&t, &["show", "--json"]));
        validate(
            &root,
            &what("show --buffer_size --json"),
            &ok(&t, &["show", "--buffer_size", "--json"]),
        );
        validate(&root, &what("stat --json"), &ok(&t, &["stat", "--json"]));
        let o = t.run(&["check-events", "--json"]);
        validate(
            &root,
            &what("check-events --json"),
            &String::from_utf8_lossy(&o.stdout),
        );
        validate_lines(
            &root,
            &what("stream --style json"),
            &ok(&t, &["stream", "--style", "json"]),
        );
        for args in [
            &["list", "--json"][..],
            &["list", "-t", "-C", "-o", "--json"],
            &["list", "-s", "--json"],
            &["list", "-e", "sched", "-F", "-l", "-R", "--json"],
            &["list", "-P", "--json"],
        ] {
            validate(&root, &what(&args.join(" ")), &ok(&t, args));
        }
        if t.root.join("instances").is_dir() {
            validate(&root, &what("list -B"), &ok(&t, &["list", "-B", "--json"]));
        }
        validate(&root, &what("reset --json"), &ok(&t, &["reset", "--json"]));
    }
}

#[test]
fn show_json_reads_the_text_back_typed() {
    let root = schema();
    let t = Tree::new("linux-6.18-all");
    let o = t.run(&["show", "--json"]);
    assert!(o.status.success());
    let lines = validate_lines(&root, "show --json", &String::from_utf8_lossy(&o.stdout));
    let mut switches = 0;
    for v in &lines {
        // Every event of this tree has a print fmt that reads back: no raw bodies.
        assert!(v.get("body").is_none(), "raw body: {v}");
        if v["event"] == "sched_switch" {
            switches += 1;
            let f = &v["fields"];
            assert!(f["prev_pid"].is_i64() && f["next_prio"].is_i64(), "{v}");
            let state = f["prev_state"].as_str().unwrap();
            assert!(!state.contains("==>"), "{v}");
            assert_eq!(v["system"], "sched");
        }
        if v["event"] == "sys_enter_openat" {
            assert!(v["fields"]["dfd"].is_u64(), "{v}");
            assert!(v["fields"]["filename"].as_str().unwrap().starts_with("0x"));
        }
    }
    assert!(switches > 0);
    // trace_pipe and the snapshot read the same way.
    let trace = t.read("trace");
    t.write("trace_pipe", &trace);
    t.write("snapshot", &trace);
    for args in [&["show", "-p", "--json"][..], &["snapshot", "--json"]] {
        let again = validate_lines(&root, &args.join(" "), &ok(&t, args));
        assert_eq!(&again, &lines, "{args:?}");
    }
    // The raw bodies are counted on stderr, and only when there are some.
    assert!(!String::from_utf8_lossy(&o.stderr).contains("raw body"));
    let v = validate(
        &root,
        "show --buffer_size",
        &ok(&t, &["show", "--buffer_size", "--json"]),
    );
    assert!(v["value"].is_u64(), "{v}");
    let v = validate(&root, "stat", &ok(&t, &["stat", "--json"]));
    assert!(v[0]["buffer_size_kb"].is_u64(), "{v}");
    assert!(v[0]["cpu_stats"]["cpu0"]["entries"].is_u64(), "{v}");
}

fn dats() -> Vec<std::path::PathBuf> {
    let dir = repo().join("tests/data/tracecmd");
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "dat"))
        .collect();
    v.sort();
    v
}

fn tracectl(args: &[&str], file: &Path) -> std::process::Output {
    Command::new(bin())
        .args(args)
        .arg("-i")
        .arg(file)
        .env_remove("TRACECTL_TRACEFS")
        .output()
        .unwrap()
}

#[test]
fn report_json_validates_and_text_only_options_refuse_it() {
    let root = schema();
    let files = dats();
    assert!(!files.is_empty());
    for f in &files {
        let o = tracectl(&["report", "--json"], f);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let lines = validate_lines(
            &root,
            &format!("report --json {}", f.display()),
            &String::from_utf8_lossy(&o.stdout),
        );
        assert!(!lines.is_empty());
        for opt in ["-E", "--stat", "--first-event", "--last-event", "--cpus"] {
            let o = tracectl(&["report", "--json", opt], f);
            assert!(!o.status.success(), "report --json {opt} succeeded");
            assert!(o.stdout.is_empty());
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(err.contains(opt) && err.contains("--json"), "{err}");
        }
    }
}

/// A private instance removed when dropped.
struct Instance(std::path::PathBuf);

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = std::fs::write(self.0.join("events/enable"), "0");
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn json_outputs_validate_live() {
    if !live::ready() {
        return;
    }
    let root = schema();
    let name = format!("tracectl-json-schema-{}", std::process::id());
    let dir = Path::new(live::TRACEFS).join("instances").join(&name);
    std::fs::create_dir(&dir).unwrap();
    let _guard = Instance(dir.clone());
    for e in ["sched/sched_switch", "sched/sched_wakeup", "irq", "timer"] {
        std::fs::write(dir.join("events").join(e).join("enable"), "1").unwrap();
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::fs::write(dir.join("tracing_on"), "0").unwrap();
    let run = |args: &[&str]| {
        let o = Command::new(bin())
            .args(args)
            .env_remove("TRACECTL_TRACEFS")
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let lines = validate_lines(&root, "live show", &run(&["show", "-B", &name, "--json"]));
    let switch = lines
        .iter()
        .find(|v| v["event"] == "sched_switch")
        .expect("a sched_switch in 300 ms");
    assert!(switch["fields"]["prev_pid"].is_i64(), "{switch}");
    assert!(
        !switch["fields"]["prev_state"]
            .as_str()
            .unwrap()
            .contains("==>"),
        "{switch}"
    );
    for v in &lines {
        assert!(v.get("body").is_none(), "raw body: {v}");
    }
    validate(&root, "live stat", &run(&["stat", "-B", &name, "--json"]));
    validate(
        &root,
        "live show --buffer_size",
        &run(&["show", "-B", &name, "--buffer_size", "--json"]),
    );
    validate(
        &root,
        "live check-events",
        &run(&["check-events", "--json"]),
    );
    validate(
        &root,
        "live list",
        &run(&["list", "-t", "-C", "-o", "--json"]),
    );
    // perf stat -j: perf's own lines, on stderr as perf prints them, whole or split.
    let o = Command::new(bin())
        .args(["perf", "stat", "-j", "-e", "task-clock", "true"])
        .output()
        .unwrap();
    if o.status.success() {
        let me = std::process::id().to_string();
        for split in [
            &["-A"][..],
            &["--per-socket"],
            &["--per-die"],
            &["--per-core"],
            &["--per-node"],
        ]
        .into_iter()
        .map(|s| [s, &["-a"]].concat())
        .chain([vec!["--per-thread", "-p", &me]])
        .chain([vec![]])
        {
            let o = Command::new(bin())
                .args(["perf", "stat", "-j", "-e", "task-clock,cs"])
                .args(&split)
                .args(["--", "sleep", "0.01"])
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&o.stderr);
            let lines: Vec<&str> = err.lines().filter(|l| l.starts_with('{')).collect();
            assert!(o.status.success() && !lines.is_empty(), "{split:?}: {err}");
            for l in lines {
                validate(&root, &format!("perf stat -j {split:?}"), l);
            }
        }
    } else {
        skips::skip(format!(
            "perf stat cannot count here: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
}
