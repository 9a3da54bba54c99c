//! Flame graphs: Brendan Gregg's collapsed stacks (`root;...;leaf count`) drawn as a
//! self-contained SVG, with a title on every frame (shown on hover), click to zoom and
//! a search box, in a small embedded script.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A malformed line of folded input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoldedError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for FoldedError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "folded stacks line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for FoldedError {}

/// A frame and the stacks through it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Samples in this frame and its callees.
    pub total: u64,
    /// Callees by name (drawn in name order, as flamegraph.pl does).
    pub children: BTreeMap<String, Frame>,
}

/// Merge folded lines into a tree under an `all` root.
pub fn parse_folded(text: &str) -> Result<Frame, FoldedError> {
    let mut root = Frame::default();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        let (stack, count) = line.rsplit_once(' ').ok_or_else(|| FoldedError {
            line: i + 1,
            message: "expected `frame;frame;... COUNT`".into(),
        })?;
        let count: u64 = count.parse().map_err(|_| FoldedError {
            line: i + 1,
            message: format!("count {count:?} is not a number"),
        })?;
        root.total += count;
        let mut node = &mut root;
        for f in stack.split(';').filter(|f| !f.is_empty()) {
            node = node.children.entry(f.to_string()).or_default();
            node.total += count;
        }
    }
    Ok(root)
}

/// Layout settings.
#[derive(Debug, Clone)]
pub struct FlameOptions {
    /// Image width in pixels.
    pub width: f64,
    /// Height of a frame.
    pub frame_height: f64,
    /// Frames narrower than this (pixels) are left out.
    pub min_width: f64,
    /// Title at the top.
    pub title: String,
    /// What a count means (`samples`).
    pub count_name: String,
}

impl Default for FlameOptions {
    fn default() -> Self {
        FlameOptions {
            width: 1200.0,
            frame_height: 16.0,
            min_width: 0.1,
            title: "Flame Graph".into(),
            count_name: "samples".into(),
        }
    }
}

/// Left and right margins.
pub const XPAD: f64 = 10.0;
const TOP: f64 = 60.0;
const BOTTOM: f64 = 34.0;
const FONT: f64 = 12.0;

fn escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 => out.push(' '),
            c => out.push(c),
        }
    }
}

/// flamegraph.pl's "hot" palette, chosen from the name so that a function keeps its
/// colour across graphs.
fn colour(name: &str) -> (u8, u8, u8) {
    let mut h: u32 = 2166136261;
    for b in name.bytes() {
        h = (h ^ u32::from(b)).wrapping_mul(16777619);
    }
    let v1 = (h & 0xff) as f64 / 255.0;
    let v2 = (h >> 8 & 0xff) as f64 / 255.0;
    let v3 = (h >> 16 & 0xff) as f64 / 255.0;
    (
        (205.0 + 50.0 * v3) as u8,
        (230.0 * v1) as u8,
        (55.0 * v2) as u8,
    )
}

fn depth(f: &Frame) -> usize {
    f.children.values().map(|c| 1 + depth(c)).max().unwrap_or(0)
}

/// Draw the tree as an SVG document.
pub fn write_svg(root: &Frame, o: &FlameOptions) -> String {
    let levels = depth(root) + 1;
    let height = TOP + BOTTOM + levels as f64 * o.frame_height;
    let scale = if root.total == 0 {
        0.0
    } else {
        (o.width - 2.0 * XPAD) / root.total as f64
    };
    let mut s = String::with_capacity(4096);
    let _ = write!(
        s,
        r#"<?xml version="1.0" standalone="no"?>
<svg version="1.1" width="{w}" height="{height}" viewBox="0 0 {w} {height}" xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" data-total="{total}" data-xpad="{XPAD}">
<style type="text/css">
text {{ font-family: Verdana, sans-serif; font-size: {FONT}px; fill: rgb(0,0,0); }}
.frame text {{ pointer-events: none; }}
.frame:hover rect {{ stroke: black; stroke-width: 0.5; cursor: pointer; }}
.hide {{ display: none; }}
#search {{ cursor: pointer; opacity: 0.5; }}
</style>
<rect x="0" y="0" width="{w}" height="{height}" fill="rgb(248,248,248)"/>
<text id="title" x="{mid}" y="24" text-anchor="middle" style="font-size:17px">"#,
        w = o.width,
        total = root.total,
        mid = o.width / 2.0,
    );
    escape(&o.title, &mut s);
    let _ = write!(
        s,
        r#"</text>
<text id="details" x="{XPAD}" y="{dy}"> </text>
<text id="unzoom" x="{XPAD}" y="24" class="hide" style="cursor:pointer">Reset Zoom</text>
<text id="search" x="{sx}" y="24" text-anchor="end">Search</text>
<text id="matched" x="{sx}" y="{dy}" text-anchor="end"> </text>
<g id="frames">
"#,
        dy = height - 12.0,
        sx = o.width - XPAD,
    );
    let mut stack = vec![("all".to_string(), root, XPAD, 0usize)];
    while let Some((name, f, x, level)) = stack.pop() {
        let wpx = f.total as f64 * scale;
        if wpx < o.min_width {
            continue;
        }
        let y = height - BOTTOM - (level as f64 + 1.0) * o.frame_height;
        let pct = 100.0 * f.total as f64 / root.total.max(1) as f64;
        let (r, g, b) = colour(&name);
        s.push_str("<g class=\"frame\"><title>");
        escape(&name, &mut s);
        let _ = write!(
            s,
            " ({} {}, {:.2}%)</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{wpx:.1}\" height=\"{fh:.1}\" fill=\"rgb({r},{g},{b})\" rx=\"2\" ry=\"2\" data-count=\"{count}\"/><text x=\"{tx:.1}\" y=\"{ty:.1}\">",
            f.total,
            o.count_name,
            pct,
            fh = o.frame_height - 1.0,
            count = f.total,
            tx = x + 3.0,
            ty = y + o.frame_height - 4.5,
        );
        // As many characters as fit (about 7 pixels each), with `..` when cut.
        let fit = ((wpx - 6.0) / (FONT * 0.59)).floor().max(0.0) as usize;
        let chars: Vec<char> = name.chars().collect();
        if fit >= chars.len() {
            escape(&name, &mut s);
        } else if fit > 2 {
            let cut: String = chars[..fit - 2].iter().collect();
            escape(&cut, &mut s);
            s.push_str("..");
        }
        s.push_str("</text></g>\n");
        let mut cx = x;
        let mut kids = Vec::new();
        for (n, c) in &f.children {
            kids.push((n.clone(), c, cx, level + 1));
            cx += c.total as f64 * scale;
        }
        stack.extend(kids.into_iter().rev());
    }
    s.push_str("</g>\n<script type=\"text/ecmascript\"><![CDATA[\n");
    s.push_str(SCRIPT);
    s.push_str("]]></script>\n</svg>\n");
    s
}

/// Zoom (click a frame: it fills the width, frames outside it are hidden; click "Reset
/// Zoom" or press Escape to undo), search (click "Search" or Ctrl-F: a regular
/// expression; matching frames turn purple and the matched share is shown) and details
/// on hover.
const SCRIPT: &str = r#"var svg = document.documentElement, frames = document.getElementById("frames");
var details = document.getElementById("details").firstChild, unzoomBtn = document.getElementById("unzoom");
var searchBtn = document.getElementById("search"), matched = document.getElementById("matched");
var W = parseFloat(svg.getAttribute("width")), XPAD = parseFloat(svg.getAttribute("data-xpad"));
var total = parseFloat(svg.getAttribute("data-total"));
function each(f) { var g = frames.getElementsByTagName("g"); for (var i = 0; i < g.length; i++) f(g[i]); }
function rect(g) { return g.getElementsByTagName("rect")[0]; }
function label(g) { return g.getElementsByTagName("text")[0]; }
function title(g) { return g.getElementsByTagName("title")[0].textContent; }
function fname(g) { var t = title(g); return t.substring(0, t.lastIndexOf(" (")); }
function orig(g, a) { var r = rect(g), k = "data-o" + a; if (!r.hasAttribute(k)) r.setAttribute(k, r.getAttribute(a)); return parseFloat(r.getAttribute(k)); }
function fit(g) {
  var r = rect(g), t = label(g), w = parseFloat(r.getAttribute("width")), n = fname(g);
  t.setAttribute("x", parseFloat(r.getAttribute("x")) + 3);
  var c = Math.floor((w - 6) / 7.08);
  t.textContent = c >= n.length ? n : (c > 2 ? n.substring(0, c - 2) + ".." : "");
}
function zoom(node) {
  var x0 = orig(node, "x"), w0 = orig(node, "width"), y0 = orig(node, "y");
  var s = (W - 2 * XPAD) / w0;
  unzoomBtn.classList.remove("hide");
  each(function (g) {
    var x = orig(g, "x"), w = orig(g, "width"), y = orig(g, "y"), r = rect(g);
    var inside = x >= x0 - 0.01 && x + w <= x0 + w0 + 0.01;
    var below = y > y0 && x <= x0 + 0.01 && x + w >= x0 + w0 - 0.01;
    if (y <= y0 && inside) { r.setAttribute("x", XPAD + (x - x0) * s); r.setAttribute("width", w * s); g.classList.remove("hide"); fit(g); }
    else if (below) { r.setAttribute("x", XPAD); r.setAttribute("width", W - 2 * XPAD); g.style.opacity = 0.5; g.classList.remove("hide"); fit(g); }
    else g.classList.add("hide");
  });
}
function unzoom() {
  unzoomBtn.classList.add("hide");
  each(function (g) { var r = rect(g); r.setAttribute("x", orig(g, "x")); r.setAttribute("width", orig(g, "width")); g.style.opacity = ""; g.classList.remove("hide"); fit(g); });
}
function search(re) {
  var sum = 0, seen = [];
  each(function (g) {
    var r = rect(g);
    if (!r.hasAttribute("data-fill")) r.setAttribute("data-fill", r.getAttribute("fill"));
    if (re && re.test(fname(g))) {
      r.setAttribute("fill", "rgb(230,0,230)");
      var x = orig(g, "x"), w = orig(g, "width"), nested = false;
      for (var i = 0; i < seen.length; i++) if (x >= seen[i][0] && x + w <= seen[i][0] + seen[i][1] + 0.01) nested = true;
      if (!nested) { seen.push([x, w]); sum += parseFloat(r.getAttribute("data-count")); }
    } else r.setAttribute("fill", r.getAttribute("data-fill"));
  });
  matched.textContent = re ? "Matched: " + (100 * sum / total).toFixed(2) + "%" : " ";
  searchBtn.textContent = re ? "Reset Search" : "Search";
}
frames.addEventListener("click", function (e) { var g = e.target.closest("g.frame"); if (g) zoom(g); });
frames.addEventListener("mouseover", function (e) { var g = e.target.closest("g.frame"); if (g) details.nodeValue = "Function: " + title(g); });
frames.addEventListener("mouseout", function () { details.nodeValue = " "; });
unzoomBtn.addEventListener("click", unzoom);
searchBtn.addEventListener("click", function () {
  if (searchBtn.textContent != "Search") { search(null); return; }
  var t = prompt("Search for (regular expression):", "");
  if (t) { try { search(new RegExp(t)); } catch (err) { alert(err); } }
});
window.addEventListener("keydown", function (e) {
  if (e.key == "Escape") unzoom();
  if ((e.ctrlKey || e.metaKey) && e.key == "f") { e.preventDefault(); searchBtn.dispatchEvent(new Event("click")); }
});
"#;
