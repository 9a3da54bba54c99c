//! The call graphs `perf report --stdio` (perf 6.1) prints under each row: the `-g`
//! option (`graph`, `fractal`, `flat`, `folded`, `caller`/`callee`, the percent
//! threshold, the print limit, `percent`/`period`/`count` values).
//!
//! Each row collects the call chains of its samples in a prefix tree. perf keeps that
//! tree compressed (a node holds a run of entries up to the next branch or chain end),
//! files siblings in a red-black tree by object and symbol address (inlined functions
//! by name), and prints them by their share, largest first, ties in that tree's order;
//! the compressed nodes are rebuilt here from a plain prefix tree.

use std::cmp::Ordering;
use std::fmt::Write as _;

use crate::perf::rbtree::RbOrder;

/// How the call chains under a row are printed (`-g MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphMode {
    /// `none`: no call chains.
    None,
    /// `graph`: a tree, percentages of the event's total.
    Graph,
    /// `fractal`: a tree, percentages of the parent branch.
    Fractal,
    /// `flat`: every chain on its own, root first.
    Flat,
    /// `folded`: every chain on one line, `;`-separated.
    Folded,
}

/// Which end of the call chains comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChainOrder {
    /// `caller`: from the outermost caller to the sampled function.
    Caller,
    /// `callee`: from the sampled function to its callers.
    Callee,
}

/// What the numbers in the call graph show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GraphValue {
    /// `percent` (the default).
    Percent,
    /// `period`: the summed sample periods.
    Period,
    /// `count`: the number of samples.
    Count,
}

/// The `-g` setting of `perf report`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallGraph {
    /// The print mode.
    pub mode: GraphMode,
    /// The chain order; None: caller with `--children`, callee without (perf's default).
    pub order: Option<ChainOrder>,
    /// Branches below this percentage are not printed (`0.5` by default).
    pub min_percent: f64,
    /// At most this many entries per branch; 0: no limit.
    pub print_limit: u32,
    /// What the numbers show.
    pub value: GraphValue,
}

impl Default for CallGraph {
    fn default() -> Self {
        CallGraph {
            mode: GraphMode::Graph,
            order: None,
            min_percent: 0.5,
            print_limit: 0,
            value: GraphValue::Percent,
        }
    }
}

/// perf accepts any prefix of a keyword.
fn abbrev(tok: &str, word: &str) -> bool {
    !tok.is_empty() && word.starts_with(tok)
}

impl CallGraph {
    /// Parse perf's `-g` argument: comma-separated `print_type` (graph, flat, fractal,
    /// folded, none), `order` (caller, callee), `sort_key` (function), `value`
    /// (percent, period, count), then the threshold and the print limit as numbers.
    pub fn parse(arg: &str) -> Result<CallGraph, String> {
        let mut g = CallGraph::default();
        g.parse_onto(arg)?;
        Ok(g)
    }

    /// Apply one more `-g` argument, as perf does with each `-g` given: what it names
    /// replaces what the ones before set, the rest stays (`-g caller -g fractal` is
    /// `-g fractal,caller`). After `none`, an argument that names no print type is an
    /// error, as in perf.
    pub fn parse_onto(&mut self, arg: &str) -> Result<(), String> {
        let g = self;
        let mut numbers = 0;
        for tok in arg.split(',').filter(|t| !t.is_empty()) {
            if abbrev(tok, "none") {
                g.mode = GraphMode::None;
                return Ok(());
            }
            let mode = [
                ("graph", GraphMode::Graph),
                ("flat", GraphMode::Flat),
                ("fractal", GraphMode::Fractal),
                ("folded", GraphMode::Folded),
            ]
            .into_iter()
            .find(|(w, _)| abbrev(tok, w));
            if let Some((_, m)) = mode {
                g.mode = m;
            } else if abbrev(tok, "caller") {
                g.order = Some(ChainOrder::Caller);
            } else if abbrev(tok, "callee") {
                g.order = Some(ChainOrder::Callee);
            } else if abbrev(tok, "function") {
            } else if abbrev(tok, "address") || abbrev(tok, "srcline") || abbrev(tok, "branch") {
                return Err(format!(
                    "-g {arg}: the '{tok}' sort key is not supported; only 'function' is"
                ));
            } else if abbrev(tok, "percent") {
                g.value = GraphValue::Percent;
            } else if abbrev(tok, "period") {
                g.value = GraphValue::Period;
            } else if abbrev(tok, "count") {
                g.value = GraphValue::Count;
            } else if numbers == 0 {
                g.min_percent = tok.parse().map_err(|_| bad(arg, tok))?;
                numbers += 1;
            } else {
                g.print_limit = tok.parse().map_err(|_| bad(arg, tok))?;
            }
        }
        if g.mode == GraphMode::None {
            return Err(format!(
                "-g {arg}: an earlier -g none turned call graphs off; name a print type \
                 too (-g graph,{arg}) or leave out the -g none"
            ));
        }
        Ok(())
    }
}

fn bad(arg: &str, tok: &str) -> String {
    format!(
        "-g {arg}: '{tok}' is not a print type (graph, flat, fractal, folded, none), an order \
         (caller, callee), a value (percent, period, count) or a number (threshold, print limit)"
    )
}

/// How perf tells call chain entries apart (its `function` key): the object, in the
/// order it was first mapped (0: none), and the symbol's start, or the address when
/// either entry compared has no symbol; a function inlined there also by its name.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FrameKey {
    /// 0 for an unmapped address, else 1 + the object's mapping order.
    pub dso: usize,
    /// The symbol's start, or the address.
    pub addr: u64,
    /// The address (perf's `ip`), which perf compares when either entry has no symbol.
    pub ip: u64,
    /// The entry has a symbol.
    pub resolved: bool,
    /// The name of the function inlined at the entry (its symbol's start is that of
    /// the function it was inlined into).
    pub inlined: Option<std::sync::Arc<str>>,
}

/// One call chain entry: its key and the name printed for it.
#[derive(Debug, Clone)]
pub struct Frame {
    /// Identity.
    pub key: FrameKey,
    /// The symbol's name, or the address as `0x...`.
    pub name: String,
}

#[derive(Debug, Default)]
struct TrieNode {
    name: String,
    /// Period and samples of chains ending here.
    hit: u64,
    count: u64,
    /// Period and samples of chains passing through here.
    cumul: u64,
    cumul_count: u64,
    /// The entry's identity.
    key: Option<FrameKey>,
    /// The kids in the order they were made, filed in `kid_order` as perf files them.
    kids: Vec<usize>,
    kid_order: RbOrder,
}

impl TrieNode {
    /// The name perf compares an entry by when it or the other is inlined.
    fn compared_name(&self) -> &str {
        match self.key.as_ref().and_then(|k| k.inlined.as_deref()) {
            Some(inlined) => inlined,
            None => &self.name,
        }
    }
}

/// perf's `match_chain(new, existing)` with the function key, as an ordering of the
/// existing entry against the new one (Less: the new one goes left). Where either
/// entry is a function inlined there, they match by the function's name alone
/// (inlined into different functions, or a function inlined here and called there,
/// are one entry); other entries match by object and symbol start, or by object and
/// address when either has no symbol (so an address that found no symbol once, and
/// its symbol later, is one entry, named as it was first seen). This is no total order.
fn match_chain(existing: &TrieNode, new: &Frame) -> Ordering {
    let old = existing.key.as_ref().expect("a kid has a key");
    if !(old.resolved && new.key.resolved) {
        return (old.dso, old.ip).cmp(&(new.key.dso, new.key.ip));
    }
    if old.inlined.is_some() || new.key.inlined.is_some() {
        let name = new.key.inlined.as_deref().unwrap_or(&new.name);
        return existing.compared_name().cmp(name);
    }
    (old.dso, old.addr).cmp(&(new.key.dso, new.key.addr))
}

/// The call chains of one report row.
#[derive(Debug)]
pub struct CallTree {
    nodes: Vec<TrieNode>,
    max_depth: usize,
}

impl Default for CallTree {
    fn default() -> Self {
        CallTree {
            nodes: vec![TrieNode::default()],
            max_depth: 0,
        }
    }
}

impl CallTree {
    /// Add one sample's chain (in print order) with its period.
    pub fn add(&mut self, chain: &[Frame], period: u64) {
        self.add_counted(chain, period, 1);
    }

    /// Add the chains of `other` (perf's `callchain_merge`, when two rows become one).
    /// The longest chain stays this tree's own, as perf's `max_depth` does.
    pub fn merge(&mut self, other: &CallTree) {
        let mut path: Vec<Frame> = Vec::new();
        other.merge_from(0, &mut path, self);
    }

    /// The chains ending at and below trie node `n` of `self`, reached by `path`,
    /// added to `into`.
    fn merge_from(&self, n: usize, path: &mut Vec<Frame>, into: &mut CallTree) {
        let node = &self.nodes[n];
        if node.count > 0 {
            let depth = into.max_depth;
            into.add_counted(path, node.hit, node.count);
            into.max_depth = depth;
        }
        for e in node.kid_order.in_order() {
            let k = node.kids[e];
            path.push(Frame {
                key: self.nodes[k].key.clone().expect("a kid has a key"),
                name: self.nodes[k].name.clone(),
            });
            self.merge_from(k, path, into);
            path.pop();
        }
    }

    /// Add `count` samples of one chain with `period` in all.
    fn add_counted(&mut self, chain: &[Frame], period: u64, count: u64) {
        if chain.is_empty() {
            return;
        }
        self.max_depth = self.max_depth.max(chain.len());
        let mut n = 0;
        self.nodes[0].cumul += period;
        self.nodes[0].cumul_count += count;
        for f in chain {
            let (nodes, node) = (&self.nodes, &self.nodes[n]);
            let kid = node
                .kid_order
                .find(|e| match_chain(&nodes[node.kids[e]], f))
                .map(|e| node.kids[e]);
            n = match kid {
                Some(k) => k,
                None => {
                    let k = self.nodes.len();
                    let mut order = std::mem::take(&mut self.nodes[n].kid_order);
                    let (nodes, kids) = (&self.nodes, &self.nodes[n].kids);
                    order.insert(|e| match_chain(&nodes[kids[e]], f) == Ordering::Less);
                    self.nodes.push(TrieNode {
                        name: f.name.clone(),
                        key: Some(f.key.clone()),
                        ..TrieNode::default()
                    });
                    let node = &mut self.nodes[n];
                    node.kid_order = order;
                    node.kids.push(k);
                    k
                }
            };
            self.nodes[n].cumul += period;
            self.nodes[n].cumul_count += count;
        }
        self.nodes[n].hit += period;
        self.nodes[n].count += count;
    }

    /// The longest chain added: perf puts, of two rows of one thread with the same
    /// Children share, the one with the longer chains first in caller order (callers
    /// above their callees) and last in callee order.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// The kids of trie node `n` in perf's order of its tree of siblings.
    fn kids_in_order(&self, n: usize) -> Vec<usize> {
        let node = &self.nodes[n];
        node.kid_order
            .in_order()
            .into_iter()
            .map(|e| node.kids[e])
            .collect()
    }

    /// The compressed tree: node 0 is the (empty) root.
    fn compress(&self) -> Vec<RNode> {
        let mut out = vec![RNode {
            entries: Vec::new(),
            hit: 0,
            count: 0,
            cumul: self.nodes[0].cumul,
            cumul_count: self.nodes[0].cumul_count,
            kids: Vec::new(),
            parent: None,
        }];
        for k in self.kids_in_order(0) {
            let r = self.compress_from(k, 0, &mut out);
            out[0].kids.push(r);
        }
        out
    }

    fn compress_from(&self, start: usize, parent: usize, out: &mut Vec<RNode>) -> usize {
        let mut entries = vec![start];
        let mut cur = start;
        while self.nodes[cur].hit == 0 && self.nodes[cur].kids.len() == 1 {
            cur = self.nodes[cur].kids[0];
            entries.push(cur);
        }
        let me = out.len();
        out.push(RNode {
            entries,
            hit: self.nodes[cur].hit,
            count: self.nodes[cur].count,
            cumul: self.nodes[start].cumul,
            cumul_count: self.nodes[start].cumul_count,
            kids: Vec::new(),
            parent: Some(parent),
        });
        for k in self.kids_in_order(cur) {
            let r = self.compress_from(k, me, out);
            out[me].kids.push(r);
        }
        me
    }
}

#[derive(Debug)]
struct RNode {
    /// Trie nodes of the entries this node holds.
    entries: Vec<usize>,
    hit: u64,
    count: u64,
    cumul: u64,
    cumul_count: u64,
    kids: Vec<usize>,
    parent: Option<usize>,
}

impl RNode {
    fn children_hit(&self) -> u64 {
        self.cumul - self.hit
    }
}

/// The bit of a level in perf's `int` depth mask: `1 << depth` as x86 computes it
/// (the count taken modulo 32), so that graphs deeper than 32 levels print as perf's
/// do instead of overflowing.
fn bit(depth: usize) -> u32 {
    1u32.wrapping_shl(depth as u32)
}

/// What printing a row's call graph needs besides the tree.
#[derive(Debug, Clone, Copy)]
pub struct GraphContext<'s> {
    /// The setting.
    pub graph: CallGraph,
    /// The event's total period (perf's percentages of `graph` are of it).
    pub total: u64,
    /// The period the threshold is a share of: the event's, or with `--percentage
    /// relative` that of the rows the filters leave (perf's `hists__total_period`).
    pub threshold_total: u64,
    /// The row's period (Children with `--children`, else Self).
    pub row: u64,
    /// The first sort key is `sym`: the row's own symbol is not repeated at the top.
    pub sym_first: bool,
    /// `-t/--field-separator`, which `folded` puts between a chain's entries in place
    /// of `;`.
    pub folded_separator: Option<&'s str>,
}

struct Printer<'a> {
    tree: &'a CallTree,
    nodes: Vec<RNode>,
    /// Sorted, filtered children per node.
    sorted: Vec<Vec<usize>>,
    cx: GraphContext<'a>,
    out: String,
}

impl Printer<'_> {
    fn value(&self, cumul: u64, count: u64, total: u64) -> String {
        match self.cx.graph.value {
            GraphValue::Period => cumul.to_string(),
            GraphValue::Count => count.to_string(),
            GraphValue::Percent => {
                let p = if total == 0 {
                    0.0
                } else {
                    cumul as f64 * 100.0 / total as f64
                };
                format!("{p:.2}%")
            }
        }
    }

    /// The entry's text as perf prints it: made in a buffer of 1024 bytes
    /// (`callchain_list__sym_name`), so cut to 1023.
    fn name(&self, trie: usize) -> &str {
        const MAX: usize = 1023;
        let name = &self.tree.nodes[trie].name;
        if name.len() <= MAX {
            return name;
        }
        let mut end = MAX;
        while !name.is_char_boundary(end) {
            end -= 1;
        }
        &name[..end]
    }

    fn margin(&mut self, left: usize) {
        self.out.push_str("            ");
        for _ in 0..left {
            self.out.push(' ');
        }
    }

    fn graph_line(&mut self, depth: usize, mask: u32, left: usize) {
        self.margin(left);
        for i in 0..depth {
            if mask & bit(i) != 0 {
                self.out.push_str("|          ");
            } else {
                self.out.push_str("           ");
            }
        }
        self.out.push('\n');
    }

    #[allow(clippy::too_many_arguments)]
    fn graph_entry(
        &mut self,
        name: &str,
        value: &str,
        depth: usize,
        mask: u32,
        first: bool,
        left: usize,
    ) {
        self.margin(left);
        for i in 0..depth {
            self.out.push(if mask & bit(i) != 0 { '|' } else { ' ' });
            if first && i == depth - 1 {
                let _ = write!(self.out, "--{value}--");
            } else {
                self.out.push_str("          ");
            }
        }
        self.out.push_str(name);
        self.out.push('\n');
    }

    fn graph_level(&mut self, node: usize, total: u64, depth: usize, mask: u32, left: usize) {
        let fractal = self.cx.graph.mode == GraphMode::Fractal;
        let mut remaining = total;
        let mut new_mask = mask;
        let kids = self.sorted[node].clone();
        let limit = self.cx.graph.print_limit as usize;
        for (printed, (i, &k)) in kids.iter().enumerate().enumerate() {
            let (cumul, count) = (self.nodes[k].cumul, self.nodes[k].cumul_count);
            remaining = remaining.wrapping_sub(cumul);
            let last = i + 1 == kids.len();
            if last && (!fractal || remaining == 0) {
                new_mask &= !bit(depth - 1);
            }
            self.graph_line(depth, mask, left);
            let value = self.value(cumul, count, total);
            let entries = self.nodes[k].entries.clone();
            for (j, &e) in entries.iter().enumerate() {
                let name = self.name(e).to_string();
                self.graph_entry(&name, &value, depth, new_mask, j == 0, left);
            }
            let new_total = if fractal {
                self.nodes[k].children_hit()
            } else {
                total
            };
            self.graph_level(k, new_total, depth + 1, new_mask | bit(depth), left);
            if printed + 1 == limit {
                break;
            }
        }
        if fractal && remaining != 0 && remaining != total {
            new_mask &= !bit(depth - 1);
            let value = match self.cx.graph.value {
                // perf counts the remaining samples from the parent's counts.
                GraphValue::Count => {
                    let counted: u64 = kids.iter().map(|&k| self.nodes[k].cumul_count).sum();
                    let parent = &self.nodes[node];
                    let c = (parent.cumul_count - parent.count).saturating_sub(counted);
                    if c == 0 {
                        return;
                    }
                    c.to_string()
                }
                _ => self.value(remaining, 0, total),
            };
            // perf 6.1 names the rest `[...]`; it reads the "inlined" flag of that
            // stand-in symbol from uninitialized memory, so it sometimes appends
            // " (inlined)" too, which is not reproduced here.
            self.graph_entry("[...]", &value, depth, new_mask, true, left);
        }
    }

    fn graph(&mut self) {
        let mut total = self.cx.total;
        let parent_samples = self.cx.row;
        let mut root = 0;
        let mut left = 0;
        let top = self.sorted[0].clone();
        let single = top.len() == 1 && self.nodes[top[0]].cumul == parent_samples;
        let start = self.out.len();
        if single {
            let only = top[0];
            let mut printed = false;
            let mut count = 0;
            let entries = self.nodes[only].entries.clone();
            for (i, &e) in entries.iter().enumerate() {
                if i == 0 && self.cx.sym_first {
                    continue;
                }
                if !printed {
                    self.margin(left);
                    self.out.push_str("|\n");
                    self.margin(left);
                    self.out.push_str("---");
                    left += 3;
                    printed = true;
                } else {
                    self.margin(left);
                }
                let name = self.name(e).to_string();
                self.out.push_str(&name);
                self.out.push('\n');
                count += 1;
                if count == self.cx.graph.print_limit as usize {
                    break;
                }
            }
            root = only;
        }
        if self.cx.graph.mode == GraphMode::Fractal {
            total = parent_samples;
        }
        self.graph_level(root, total, 1, 1, left);
        if self.out.len() > start {
            self.out.push('\n');
        }
    }

    /// The compressed nodes from the root down to `n`.
    fn path(&self, n: usize) -> Vec<usize> {
        let mut p = Vec::new();
        let mut cur = Some(n);
        while let Some(c) = cur {
            p.push(c);
            cur = self.nodes[c].parent;
        }
        p.reverse();
        p
    }

    fn flat(&mut self, folded: bool) {
        let limit = self.cx.graph.print_limit as usize;
        let list = self.sorted[0].clone();
        for (i, &n) in list.iter().enumerate() {
            let node = &self.nodes[n];
            let value = if folded {
                self.value(node.hit, node.count, self.cx.total)
            } else {
                self.value(node.cumul, node.cumul_count, self.cx.total)
            };
            let names: Vec<String> = self
                .path(n)
                .iter()
                .flat_map(|&r| self.nodes[r].entries.iter())
                .map(|&e| self.name(e).to_string())
                .collect();
            if folded {
                let sep = self.cx.folded_separator.unwrap_or(";");
                let _ = writeln!(self.out, "{value} {}", names.join(sep));
            } else {
                let _ = writeln!(self.out, "           {value}");
                for name in names {
                    let _ = writeln!(self.out, "                {name}");
                }
                self.out.push('\n');
            }
            if i + 1 == limit {
                break;
            }
        }
    }
}

/// Sorted, filtered children of every node for the graph modes.
fn sort_graph(nodes: &[RNode], graph: &CallGraph, min_hit: u64) -> Vec<Vec<usize>> {
    nodes
        .iter()
        .map(|n| {
            let floor = if graph.mode == GraphMode::Fractal {
                (n.children_hit() as f64 * (graph.min_percent / 100.0)).ceil() as u64
            } else {
                min_hit
            };
            let mut kids: Vec<usize> = n
                .kids
                .iter()
                .copied()
                .filter(|&k| nodes[k].cumul >= floor)
                .collect();
            kids.sort_by(|&a, &b| nodes[b].cumul.cmp(&nodes[a].cumul));
            kids
        })
        .collect()
}

/// Every node holding chain ends, in perf's flat order (children before their
/// parent, then by period), as node 0's list.
fn sort_flat(nodes: &[RNode], min_hit: u64) -> Vec<Vec<usize>> {
    fn walk(nodes: &[RNode], n: usize, min_hit: u64, out: &mut Vec<usize>) {
        for &k in &nodes[n].kids {
            walk(nodes, k, min_hit, out);
        }
        if nodes[n].hit > 0 && nodes[n].hit >= min_hit {
            out.push(n);
        }
    }
    let mut list = Vec::new();
    walk(nodes, 0, min_hit, &mut list);
    list.sort_by(|&a, &b| nodes[b].hit.cmp(&nodes[a].hit));
    let mut sorted = vec![Vec::new(); nodes.len()];
    sorted[0] = list;
    sorted
}

/// The call graph of one row as perf prints it under the row.
pub fn render(tree: &CallTree, cx: GraphContext<'_>) -> String {
    let nodes = tree.compress();
    // perf: the threshold of `graph`, `flat` and `folded` is a share of the event's
    // period, cut to an integer.
    let min_hit = (cx.threshold_total as f64 * (cx.graph.min_percent / 100.0)) as u64;
    let sorted = match cx.graph.mode {
        GraphMode::Flat | GraphMode::Folded => sort_flat(&nodes, min_hit),
        _ => sort_graph(&nodes, &cx.graph, min_hit),
    };
    let mut p = Printer {
        tree,
        nodes,
        sorted,
        cx,
        out: String::new(),
    };
    match cx.graph.mode {
        GraphMode::None => {}
        GraphMode::Graph | GraphMode::Fractal => p.graph(),
        GraphMode::Flat => p.flat(false),
        GraphMode::Folded => p.flat(true),
    }
    p.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_perf_forms() {
        let g = CallGraph::parse("fractal,2,callee,period").unwrap();
        assert_eq!(g.mode, GraphMode::Fractal);
        assert_eq!(g.order, Some(ChainOrder::Callee));
        assert_eq!(g.min_percent, 2.0);
        assert_eq!(g.value, GraphValue::Period);
        let g = CallGraph::parse("graph,0.5,3").unwrap();
        assert_eq!(g.print_limit, 3);
        assert_eq!(CallGraph::parse("none").unwrap().mode, GraphMode::None);
        assert_eq!(CallGraph::parse("fl").unwrap().mode, GraphMode::Flat);
        assert!(CallGraph::parse("address").is_err());
        assert!(CallGraph::parse("bogus").unwrap_err().contains("'bogus'"));
        // Each -g given changes only what it names.
        let mut g = CallGraph::parse("flat,0,2").unwrap();
        g.parse_onto("callee").unwrap();
        assert_eq!(
            (g.mode, g.order, g.print_limit),
            (GraphMode::Flat, Some(ChainOrder::Callee), 2)
        );
        g.parse_onto("5").unwrap();
        assert_eq!((g.min_percent, g.print_limit), (5.0, 2));
        g.parse_onto("none").unwrap();
        assert!(g.parse_onto("caller").unwrap_err().contains("-g none"));
        g.parse_onto("fractal").unwrap();
        assert_eq!(g.mode, GraphMode::Fractal);
    }
}
