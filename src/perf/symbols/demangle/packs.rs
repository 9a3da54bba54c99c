//! Template argument lists and pack expansions as cpp_demangle writes them, recorded
//! node by node, and a pack expansion's qualifiers on each element as GNU writes them.

use super::references::{place_reference, reference_marker};

/// Where cpp_demangle wrote a template parameter or a template argument list, and the
/// `, ` it wrote between the elements of each.
#[derive(Default)]
pub(super) struct NodeRecorder {
    pub(super) out: String,
    /// Every node opened so far: a template parameter or argument list, with its span
    /// and separators; `None` for the other kinds.
    pub(super) nodes: Vec<Option<ListNode>>,
    pub(super) open: Vec<usize>,
    /// A reference marker ([`marked_references`]) came where no reference can be written.
    pub(super) unplaced_reference: bool,
    /// The template argument each numbered reference marker was first written after.
    pub(super) first_written: Vec<FirstWritten>,
}

/// A template argument as first written after a numbered reference marker: its text,
/// its own separators and the lists inside it, at offsets from its start.
pub(super) struct FirstWritten {
    pub(super) number: usize,
    pub(super) text: String,
    pub(super) separators: Vec<usize>,
    pub(super) lists: Vec<ListNode>,
}

impl NodeRecorder {
    /// The offsets of the nodes after `at` moved by `by` bytes, where the text changed.
    fn moved(&mut self, at: usize, by: isize) {
        let len = self.out.len();
        let shift = |x: &mut usize, after: bool| {
            if *x > at || (!after && *x == at) {
                *x = x.saturating_add_signed(by).clamp(at, len);
            }
        };
        for node in self.nodes.iter_mut().flatten() {
            shift(&mut node.start, false);
            shift(&mut node.end, true);
            for sep in &mut node.separators {
                shift(sep, false);
            }
        }
    }

    /// The template argument just written (before a space) for the reference marker
    /// `number` made the one it was first written as: GNU's demangler keeps the
    /// template arguments that a reference to a template parameter was first printed
    /// with, and prints it with them again when a substitution repeats it elsewhere.
    fn as_first_written(&mut self, number: usize) {
        let Some(end) = self.out.len().checked_sub(1) else {
            return;
        };
        let Some(k) = self
            .nodes
            .iter()
            .rposition(|n| n.as_ref().is_some_and(|n| n.param && n.end == end))
        else {
            return;
        };
        let Some(param) = self.nodes[k].as_ref() else {
            return;
        };
        let start = param.start;
        if start > end || !self.out.is_char_boundary(start) {
            return;
        }
        let text = &self.out[start..end];
        // In a lambda's signature a template parameter is `auto:N`, wherever it is
        // written.
        if text.starts_with("auto:") {
            return;
        }
        let inside = |i: usize, n: &ListNode| i > k && n.start >= start && n.end <= end;
        let Some(first) = self.first_written.iter().find(|f| f.number == number) else {
            let lists = self
                .nodes
                .iter()
                .enumerate()
                .filter_map(|(i, n)| n.as_ref().filter(|n| inside(i, n)))
                .map(|n| ListNode {
                    param: n.param,
                    start: n.start - start,
                    end: n.end - start,
                    separators: n.separators.iter().map(|s| s - start).collect(),
                })
                .collect();
            let separators = param.separators.iter().map(|s| s - start).collect();
            self.first_written.push(FirstWritten {
                number,
                text: text.to_string(),
                separators,
                lists,
            });
            return;
        };
        if first.text == text {
            return;
        }
        // The lists inside the replaced text are those of the first one.
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if node.as_ref().is_some_and(|n| inside(i, n)) {
                *node = None;
            }
        }
        if let Some(param) = self.nodes[k].as_mut() {
            param.end = start + first.text.len();
            param.separators = first.separators.iter().map(|s| s + start).collect();
        }
        let shifted = first.lists.iter().map(|n| {
            Some(ListNode {
                param: n.param,
                start: n.start + start,
                end: n.end + start,
                separators: n.separators.iter().map(|s| s + start).collect(),
            })
        });
        self.nodes.extend(shifted);
        self.out.replace_range(start..end, &first.text);
    }
}

pub(super) struct ListNode {
    pub(super) param: bool,
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) separators: Vec<usize>,
}

impl cpp_demangle::DemangleWrite for NodeRecorder {
    fn push_demangle_node(&mut self, kind: cpp_demangle::DemangleNodeType) {
        use cpp_demangle::DemangleNodeType::{TemplateArgs, TemplateParam};
        let param = kind == TemplateParam;
        self.open.push(self.nodes.len());
        self.nodes
            .push((param || kind == TemplateArgs).then(|| ListNode {
                param,
                start: self.out.len(),
                end: self.out.len(),
                separators: Vec::new(),
            }));
    }

    fn write_string(&mut self, s: &str) -> std::fmt::Result {
        if let Some((marker, number)) = reference_marker(s) {
            if let Some(number) = number {
                self.as_first_written(number);
            }
            // A pack of several elements: the reference is written once, after it and
            // its qualifiers, for `pack_qualifiers` to put on each element.
            let several = marker.pack && self.out.ends_with(' ') && {
                let end = self.out.len() - 1;
                self.nodes.iter().flatten().any(|n| {
                    n.param
                        && !n.separators.is_empty()
                        && n.end <= end
                        && self.out.is_char_boundary(n.end)
                        && n.end + qualifiers_len(&self.out[n.end..end]) == end
                })
            };
            if several {
                self.out.pop();
                self.out.push_str(marker.reference);
            } else if let Some((at, by)) = place_reference(&mut self.out, marker.reference) {
                self.moved(at, by);
            } else {
                self.unplaced_reference = true;
            }
            return Ok(());
        }
        if s == ", " {
            let at = self.out.len();
            if let Some(Some(node)) = self.open.last().map(|&i| &mut self.nodes[i]) {
                node.separators.push(at);
            }
        }
        self.out.push_str(s);
        Ok(())
    }

    fn pop_demangle_node(&mut self) {
        if let Some(Some(node)) = self.open.pop().map(|i| &mut self.nodes[i]) {
            node.end = self.out.len();
        }
    }
}

/// `ty` with the qualifiers `quals` after it, as GNU writes them: a reference to a
/// reference collapses (`A&` and `&&` are `A&`, `A&&` and `&` are `A&`), one to a
/// qualified reference does not (`A& const&`).
pub(super) fn with_qualifiers(ty: &str, quals: &str) -> String {
    match quals {
        "&&" if ty.ends_with('&') => ty.to_string(),
        "&" if ty.ends_with('&') => format!("{}&", ty.trim_end_matches('&')),
        _ => format!("{ty}{quals}"),
    }
}

/// Qualifier words that cpp_demangle writes once for a whole pack expansion.
pub(super) const PACK_QUALIFIERS: [&str; 6] = ["&&", "&", "*", " const", " volatile", " restrict"];

/// The length of the run of [`PACK_QUALIFIERS`] at the start of `s`.
pub(super) fn qualifiers_len(s: &str) -> usize {
    let mut rest = s;
    while let Some(q) = PACK_QUALIFIERS.iter().find(|q| rest.starts_with(**q)) {
        rest = &rest[q.len()..];
    }
    s.len() - rest.len()
}

/// GNU writes the qualifiers of a pack expansion (`DpRKT_`) after each element
/// (`A const&, B const&`); cpp_demangle writes them once, after whichever element takes
/// them, and writes them alone for an empty pack. The elements' own spelling is found
/// in a template argument list written before (the function's or its class's).
pub(super) fn pack_qualifiers(rec: &NodeRecorder) -> String {
    let text = rec.out.as_str();
    // Only lists whose offsets hold together (the text around them was edited).
    let sound = |n: &&ListNode| {
        let mut at = n.start;
        n.start <= n.end
            && n.end <= text.len()
            && [n.start, n.end].iter().all(|&i| text.is_char_boundary(i))
            && n.separators.iter().all(|&s| {
                let ok = s >= at && s + 2 <= n.end && text.is_char_boundary(s + 2);
                at = s + 2;
                ok
            })
    };
    let lists: Vec<&ListNode> = rec.nodes.iter().flatten().filter(sound).collect();
    let elements = |n: &ListNode| -> Vec<(usize, usize)> {
        let mut v = Vec::new();
        let mut from = n.start;
        for &sep in &n.separators {
            v.push((from, sep));
            from = sep + 2;
        }
        // A list whose last element ends with `>` is closed with ` >`, its space
        // written inside the list.
        let end = n.end - text[from..n.end].ends_with(' ') as usize;
        v.push((from, end));
        v
    };
    // (start, end, replacement), in order, not overlapping.
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    for (k, tp) in lists.iter().enumerate() {
        if !tp.param || edits.last().is_some_and(|e| e.1 > tp.start) {
            continue;
        }
        let after = qualifiers_len(&text[tp.end..]);
        if tp.start == tp.end {
            if after == 0 {
                continue;
            }
            // An empty pack: its qualifiers go, with the separator before it (GNU
            // keeps the one after an empty first parameter: `f(, int)`).
            let (mut start, end) = (tp.start, tp.end + after);
            if !matches!(text.as_bytes().get(end), Some(b')' | b',' | b'>')) {
                continue;
            }
            if text[..start].ends_with(", ") {
                start -= 2;
            } else if !text[..start].ends_with(['(', '<']) {
                continue;
            }
            edits.push((start, end, String::new()));
            continue;
        }
        let parts = elements(tp);
        // The `, ` of a function's parameters written inside the parameter's text (a
        // local class's `f(A, B)::X`) do not separate a pack's elements.
        let balanced = |&(s, e): &(usize, usize)| {
            let t = &text[s..e];
            t.matches('(').count() == t.matches(')').count()
        };
        if parts.len() < 2 || !parts.iter().all(balanced) {
            continue;
        }
        let found = lists[..k]
            .iter()
            .rev()
            .filter(|l| !l.param)
            .find_map(|args| {
                let args = elements(args);
                let (j, quals) = (0..args.len().checked_sub(parts.len() - 1)?).find_map(|j| {
                    let mut quals = String::new();
                    for (i, &(s, e)) in parts.iter().enumerate() {
                        let arg = &text[args[j + i].0..args[j + i].1];
                        let rest = text[s..e].strip_prefix(arg)?;
                        if qualifiers_len(rest) != rest.len() {
                            return None;
                        }
                        quals.push_str(rest);
                    }
                    Some((j, quals))
                })?;
                Some((j, args, quals))
            });
        let Some((j, args, mut quals)) = found else {
            continue;
        };
        quals.push_str(&text[tp.end..tp.end + after]);
        if quals.is_empty() {
            continue;
        }
        let spelled: Vec<String> = (0..parts.len())
            .map(|i| with_qualifiers(&text[args[j + i].0..args[j + i].1], &quals))
            .collect();
        edits.push((tp.start, tp.end + after, spelled.join(", ")));
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for (start, end, with) in edits {
        out.push_str(&text[at..start]);
        out.push_str(&with);
        at = end;
    }
    out.push_str(&text[at..]);
    out
}
