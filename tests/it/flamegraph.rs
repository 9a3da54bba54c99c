//! `tracectl flamegraph` draws folded stacks as an SVG whose frames, checked by parsing
//! the SVG, have the counts, widths, places and titles of the input.

use std::path::Path;
use std::process::Command;

struct Frame {
    name: String,
    count: u64,
    x: f64,
    y: f64,
    width: f64,
}

fn frames(svg: &str) -> Vec<Frame> {
    let doc = roxmltree::Document::parse(svg).expect("the SVG is well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert!(
        root.descendants().any(|n| n.has_tag_name("script")),
        "the zoom and search script is embedded"
    );
    root.descendants()
        .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some("frame"))
        .map(|g| {
            let title = g
                .children()
                .find(|c| c.has_tag_name("title"))
                .and_then(|t| t.text())
                .unwrap()
                .to_string();
            let rect = g.children().find(|c| c.has_tag_name("rect")).unwrap();
            let (name, rest) = title.rsplit_once(" (").unwrap();
            let count: u64 = rest.split(' ').next().unwrap().parse().unwrap();
            let f = |a| rect.attribute(a).unwrap().parse::<f64>().unwrap();
            Frame {
                name: name.to_string(),
                count,
                x: f("x"),
                y: f("y"),
                width: f("width"),
            }
        })
        .collect()
}

fn flamegraph(args: &[&str], cwd: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(cwd)
        .arg("flamegraph")
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn flamegraph_frames_match_the_folded_counts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("in.folded"),
        "a;b;c 3\na;b 2\na;d 5\ne 1\nx<&>;y 1\n",
    )
    .unwrap();
    let svg = flamegraph(&["in.folded", "--title", "T<1>"], dir.path());
    let fr = frames(&svg);
    let get = |n: &str| {
        fr.iter()
            .find(|f| f.name == n)
            .unwrap_or_else(|| panic!("frame {n}"))
    };
    let total = 12.0;
    let scale = (1200.0 - 20.0) / total;
    for (name, count) in [
        ("all", 12),
        ("a", 10),
        ("b", 5),
        ("c", 3),
        ("d", 5),
        ("e", 1),
        ("x<&>", 1),
        ("y", 1),
    ] {
        let f = get(name);
        assert_eq!(f.count, count, "{name}");
        assert!(
            (f.width - count as f64 * scale).abs() < 0.11,
            "{name} width {}",
            f.width
        );
    }
    assert_eq!(fr.len(), 8, "one frame per distinct stack prefix");
    // Titles carry the share of all samples.
    assert!(
        svg.contains("<title>a (10 samples, 83.33%)</title>"),
        "{svg}"
    );
    assert!(svg.contains("<title>x&lt;&amp;&gt; (1 samples, 8.33%)</title>"));
    // Callers below callees, children left to right in name order from the parent's x.
    let (all, a, b, c, d, e) = (get("all"), get("a"), get("b"), get("c"), get("d"), get("e"));
    assert!(a.y < all.y && b.y < a.y && c.y < b.y);
    assert_eq!(d.y, b.y);
    assert!((a.x - all.x).abs() < 0.11 && (b.x - a.x).abs() < 0.11 && (c.x - b.x).abs() < 0.11);
    assert!((d.x - (b.x + b.width)).abs() < 0.11);
    assert!((e.x - (a.x + a.width)).abs() < 0.11);
}

#[test]
fn flamegraph_of_a_perf_data_puts_the_hot_function_on_top_of_its_caller() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf");
    let svg = flamegraph(
        &["cc-spin.data", "--symfs", "symfs", "--kallsyms", "kallsyms"],
        &data,
    );
    let fr = frames(&svg);
    let all = fr.iter().find(|f| f.name == "all").unwrap();
    assert_eq!(all.count, 171);
    let hot = fr.iter().find(|f| f.name == "hot_function").unwrap();
    let main = fr.iter().find(|f| f.name == "main").unwrap();
    assert!(
        hot.count * 10 >= all.count * 9,
        "hot_function holds most samples"
    );
    assert!(
        hot.y < main.y,
        "hot_function is drawn above main, its caller"
    );
    assert!(hot.x >= main.x && hot.x + hot.width <= main.x + main.width + 0.11);
}

#[test]
fn flamegraph_refuses_malformed_folded_lines() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.folded"), "a;b 3\na;b three\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
        .current_dir(dir.path())
        .args(["flamegraph", "bad.folded"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("line 2") && err.contains("three"), "{err}");
}

/// Collapse perf's own `perf script` text the way stackcollapse-perf does: the comm,
/// then the frames outermost first, offsets dropped, an unknown symbol named after its
/// file.
fn collapse_perf_text(text: &str) -> String {
    let mut counts = std::collections::BTreeMap::<String, u64>::new();
    for block in text.split("\n\n").filter(|b| !b.trim().is_empty()) {
        let mut lines = block.lines();
        let head = lines.next().unwrap();
        let comm = head.split_whitespace().next().unwrap();
        let mut frames: Vec<String> = lines
            .map(|l| {
                let l = l.trim();
                let rest = l.split_once(' ').unwrap().1;
                let (sym, dso) = rest.rsplit_once(" (").unwrap();
                let dso = dso.trim_end_matches(')');
                let sym = match sym.rsplit_once("+0x") {
                    Some((s, _)) => s,
                    None => sym,
                };
                if sym == "[unknown]" && dso != "[unknown]" {
                    format!(
                        "[{}]",
                        dso.rsplit('/')
                            .next()
                            .unwrap()
                            .trim_matches(|c| c == '[' || c == ']')
                    )
                } else {
                    sym.to_string()
                }
            })
            .collect();
        frames.reverse();
        let key = std::iter::once(comm.to_string())
            .chain(frames)
            .collect::<Vec<_>>()
            .join(";");
        *counts.entry(key).or_default() += 1;
    }
    counts.iter().map(|(k, v)| format!("{k} {v}\n")).collect()
}

#[test]
fn perf_script_folded_matches_perfs_stacks() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/perf");
    for name in ["cc-spin", "tc-spin"] {
        let out = Command::new(env!("CARGO_BIN_EXE_tracectl"))
            .current_dir(&data)
            .args([
                "perf",
                "script",
                "-i",
                &format!("{name}.data"),
                "--symfs",
                "symfs",
            ])
            .args(["--kallsyms", "kallsyms", "--folded"])
            .output()
            .unwrap();
        assert!(out.status.success());
        let perf = std::fs::read_to_string(data.join(format!("results/{name}.script"))).unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            collapse_perf_text(&perf),
            "{name}"
        );
    }
}
