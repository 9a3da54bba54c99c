//! The order perf's red-black trees (the kernel's `lib/rbtree.c`) leave entries in, and
//! what their lookups find.
//!
//! `perf report` files its rows in such trees three times: as samples arrive, when it
//! merges them, and when it sorts them for output. The comparison it sorts with is not a
//! total order (rows of one thread with equal Children shares are ordered by chain depth,
//! rows of different threads are "equal"; unresolved addresses compare by a wrapping
//! difference), so the order it prints depends on the shape of the tree the rows went
//! into, and that shape on the balancing. [`RbOrder`] balances exactly as the kernel
//! does (the red-black insertion of Cormen et al., which `__rb_insert` implements), so
//! that inserting the same items with the same comparison gives perf's order. The
//! same holds for perf's symbol tables: where symbols overlap (a label inside a
//! function, a JIT's map) the symbol a lookup finds is the first on the way down from
//! the root, so the tree is rebuilt as perf builds it, removals (`rb_erase`) included.

/// A red-black tree of item numbers `0..len`, in insertion order.
#[derive(Debug, Default)]
pub struct RbOrder {
    nodes: Vec<Node>,
    root: Option<usize>,
}

/// A node: 16 bytes rather than the 56 of three `Option<usize>` links, so that a big
/// library's symbol table (a few hundred thousand nodes) stays in cache while its tree
/// is rebuilt.
#[derive(Debug, Clone, Copy)]
struct Node {
    parent: Link,
    left: Link,
    right: Link,
    red: bool,
}

/// A link to a node: its number plus one, 0 for none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Link(u32);

impl Link {
    const NONE: Link = Link(0);

    fn get(self) -> Option<usize> {
        (self.0 as usize).checked_sub(1)
    }
}

impl From<Option<usize>> for Link {
    /// A tree holds fewer than `u32::MAX` nodes (see [`RbOrder::insert`]).
    fn from(n: Option<usize>) -> Link {
        Link(n.map_or(0, |n| n as u32 + 1))
    }
}

impl RbOrder {
    /// An empty tree.
    pub fn new() -> RbOrder {
        RbOrder::default()
    }

    /// How many items were inserted.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether nothing was inserted.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Insert the next item (its number is [`RbOrder::len`] before the call): from the
    /// root down, `go_left(existing)` says whether the new item goes left of the item
    /// `existing`, else it goes right, as perf's `while (*p)` loops do. A tree holds
    /// fewer than `u32::MAX` items (its users number theirs in 32 bits).
    pub fn insert(&mut self, go_left: impl FnMut(usize) -> bool) -> usize {
        let me = self.nodes.len();
        self.nodes.push(Node {
            parent: Link::NONE,
            left: Link::NONE,
            right: Link::NONE,
            red: true,
        });
        self.link(me, go_left);
        me
    }

    /// Insert item `z` again after [`RbOrder::remove`] took it out, as a new one goes
    /// in (perf re-files an object whose name changed so). Nothing happens to an item
    /// still in the tree or never inserted.
    pub fn insert_again(&mut self, z: usize, go_left: impl FnMut(usize) -> bool) {
        if z >= self.nodes.len() || self.holds(z) {
            return;
        }
        self.nodes[z].red = true;
        self.link(z, go_left);
    }

    /// Link the node `me` (no links, red) where `go_left` leads, then rebalance.
    fn link(&mut self, me: usize, mut go_left: impl FnMut(usize) -> bool) {
        let mut parent = None;
        let mut left = false;
        let mut cur = self.root;
        while let Some(c) = cur {
            parent = Some(c);
            left = go_left(c);
            cur = if left {
                self.nodes[c].left.get()
            } else {
                self.nodes[c].right.get()
            };
        }
        self.nodes[me].parent = Link::from(parent);
        match parent {
            None => self.root = Some(me),
            Some(p) if left => self.nodes[p].left = Link::from(Some(me)),
            Some(p) => self.nodes[p].right = Link::from(Some(me)),
        }
        self.fix_after_insert(me);
    }

    /// Remove an item as the kernel's `rb_erase` does: a node with two children is
    /// replaced by its successor, which takes its color, then the colors are fixed
    /// from where a black node went missing. The item keeps its number; removing one
    /// that is not in the tree does nothing.
    pub fn remove(&mut self, z: usize) {
        if z >= self.nodes.len() || !self.holds(z) {
            return;
        }
        let Node {
            parent: zp,
            left: zl,
            right: zr,
            red: z_red,
        } = self.nodes[z];
        let (zp, zl, zr) = (zp.get(), zl.get(), zr.get());
        let (x, x_parent, removed_black) = match (zl, zr) {
            (None, only) | (only, None) => {
                self.replace_link(zp, z, only);
                (only, zp, !z_red)
            }
            (Some(l), Some(r)) => {
                let mut y = r;
                while let Some(yl) = self.nodes[y].left.get() {
                    y = yl;
                }
                let y_black = !self.nodes[y].red;
                let x = self.nodes[y].right.get();
                let x_parent = if y == r {
                    Some(y)
                } else {
                    let yp = self.nodes[y].parent.get();
                    self.replace_link(yp, y, x);
                    self.nodes[y].right = Link::from(Some(r));
                    self.nodes[r].parent = Link::from(Some(y));
                    yp
                };
                self.replace_link(zp, z, Some(y));
                self.nodes[y].left = Link::from(Some(l));
                self.nodes[l].parent = Link::from(Some(y));
                self.nodes[y].red = z_red;
                (x, x_parent, y_black)
            }
        };
        self.nodes[z] = Node {
            parent: Link::NONE,
            left: Link::NONE,
            right: Link::NONE,
            red: false,
        };
        if removed_black {
            self.fix_after_remove(x, x_parent);
        }
    }

    /// The leftmost item of the right subtree of item `n` (its successor when it has
    /// a right child), None when it has none. Removing `n` or that successor leaves
    /// trees of the same shape and colors: the other item holds the place.
    pub fn successor_below(&self, n: usize) -> Option<usize> {
        let mut y = self.nodes.get(n)?.right.get()?;
        while let Some(yl) = self.nodes[y].left.get() {
            y = yl;
        }
        Some(y)
    }

    /// Whether item `n` is in the tree (it is the root or has a parent).
    fn holds(&self, n: usize) -> bool {
        self.root == Some(n) || self.nodes[n].parent.get().is_some()
    }

    /// Put `new` where `old` hangs from `parent` (the root when None).
    fn replace_link(&mut self, parent: Option<usize>, old: usize, new: Option<usize>) {
        match parent {
            None => self.root = new,
            Some(p) if self.nodes[p].left.get() == Some(old) => {
                self.nodes[p].left = Link::from(new)
            }
            Some(p) => self.nodes[p].right = Link::from(new),
        }
        if let Some(n) = new {
            self.nodes[n].parent = Link::from(parent);
        }
    }

    /// `x` (maybe no node) under `parent` has one black node fewer on its paths than
    /// its sibling: the four cases of `____rb_erase_color`.
    fn fix_after_remove(&mut self, mut x: Option<usize>, mut parent: Option<usize>) {
        while x != self.root && !self.is_red(x) {
            let Some(p) = parent else {
                break;
            };
            // As the kernel tells the sides apart: x is the left child unless it is
            // the right one (a missing x beside a missing left child is the right).
            let x_left = x != self.nodes[p].right.get();
            let sibling_of = |t: &Self| {
                if x_left {
                    t.nodes[p].right.get()
                } else {
                    t.nodes[p].left.get()
                }
            };
            // A black node went missing under p, so x's sibling exists.
            let Some(mut s) = sibling_of(self) else {
                break;
            };
            if self.nodes[s].red {
                self.nodes[s].red = false;
                self.nodes[p].red = true;
                if x_left {
                    self.rotate_left(p);
                } else {
                    self.rotate_right(p);
                }
                let Some(s2) = sibling_of(self) else {
                    break;
                };
                s = s2;
            }
            let (near, far) = if x_left {
                (self.nodes[s].left.get(), self.nodes[s].right.get())
            } else {
                (self.nodes[s].right.get(), self.nodes[s].left.get())
            };
            if !self.is_red(near) && !self.is_red(far) {
                self.nodes[s].red = true;
                x = Some(p);
                parent = self.nodes[p].parent.get();
                continue;
            }
            if !self.is_red(far) {
                if let Some(n) = near {
                    self.nodes[n].red = false;
                }
                self.nodes[s].red = true;
                if x_left {
                    self.rotate_right(s);
                } else {
                    self.rotate_left(s);
                }
                let Some(s2) = sibling_of(self) else {
                    break;
                };
                s = s2;
            }
            self.nodes[s].red = self.nodes[p].red;
            self.nodes[p].red = false;
            let far = if x_left {
                self.nodes[s].right.get()
            } else {
                self.nodes[s].left.get()
            };
            if let Some(f) = far {
                self.nodes[f].red = false;
            }
            if x_left {
                self.rotate_left(p);
            } else {
                self.rotate_right(p);
            }
            x = self.root;
            break;
        }
        if let Some(x) = x {
            self.nodes[x].red = false;
        }
    }

    /// Search as perf's lookups do: `cmp(existing)` Less goes left, Greater right,
    /// Equal is the item found.
    pub fn find(&self, mut cmp: impl FnMut(usize) -> std::cmp::Ordering) -> Option<usize> {
        let mut cur = self.root;
        while let Some(c) = cur {
            cur = match cmp(c) {
                std::cmp::Ordering::Equal => return Some(c),
                std::cmp::Ordering::Less => self.nodes[c].left.get(),
                std::cmp::Ordering::Greater => self.nodes[c].right.get(),
            };
        }
        None
    }

    /// The items from the leftmost to the rightmost.
    pub fn in_order(&self) -> Vec<usize> {
        let mut out = Vec::with_capacity(self.nodes.len());
        let mut stack = Vec::new();
        let mut cur = self.root;
        while cur.is_some() || !stack.is_empty() {
            while let Some(c) = cur {
                stack.push(c);
                cur = self.nodes[c].left.get();
            }
            if let Some(c) = stack.pop() {
                out.push(c);
                cur = self.nodes[c].right.get();
            }
        }
        out
    }

    fn is_red(&self, n: Option<usize>) -> bool {
        n.is_some_and(|n| self.nodes[n].red)
    }

    fn fix_after_insert(&mut self, mut node: usize) {
        while let Some(parent) = self.nodes[node].parent.get().filter(|&p| self.nodes[p].red) {
            // A red parent is never the root, so it has a parent.
            let Some(grand) = self.nodes[parent].parent.get() else {
                break;
            };
            let parent_is_left = self.nodes[grand].left.get() == Some(parent);
            let uncle = if parent_is_left {
                self.nodes[grand].right.get()
            } else {
                self.nodes[grand].left.get()
            };
            if self.is_red(uncle) {
                self.nodes[parent].red = false;
                if let Some(u) = uncle {
                    self.nodes[u].red = false;
                }
                self.nodes[grand].red = true;
                node = grand;
                continue;
            }
            let mut parent = parent;
            if parent_is_left {
                if self.nodes[parent].right.get() == Some(node) {
                    self.rotate_left(parent);
                    std::mem::swap(&mut node, &mut parent);
                }
                self.rotate_right(grand);
            } else {
                if self.nodes[parent].left.get() == Some(node) {
                    self.rotate_right(parent);
                    std::mem::swap(&mut node, &mut parent);
                }
                self.rotate_left(grand);
            }
            self.nodes[parent].red = false;
            self.nodes[grand].red = true;
            break;
        }
        if let Some(r) = self.root {
            self.nodes[r].red = false;
        }
    }

    fn replace_child(&mut self, parent: Option<usize>, old: usize, new: usize) {
        match parent {
            None => self.root = Some(new),
            Some(p) if self.nodes[p].left.get() == Some(old) => {
                self.nodes[p].left = Link::from(Some(new))
            }
            Some(p) => self.nodes[p].right = Link::from(Some(new)),
        }
    }

    fn rotate_left(&mut self, x: usize) {
        let Some(y) = self.nodes[x].right.get() else {
            return;
        };
        let b = self.nodes[y].left.get();
        self.nodes[x].right = Link::from(b);
        if let Some(b) = b {
            self.nodes[b].parent = Link::from(Some(x));
        }
        let p = self.nodes[x].parent.get();
        self.nodes[y].parent = Link::from(p);
        self.replace_child(p, x, y);
        self.nodes[y].left = Link::from(Some(x));
        self.nodes[x].parent = Link::from(Some(y));
    }

    fn rotate_right(&mut self, x: usize) {
        let Some(y) = self.nodes[x].left.get() else {
            return;
        };
        let b = self.nodes[y].right.get();
        self.nodes[x].left = Link::from(b);
        if let Some(b) = b {
            self.nodes[b].parent = Link::from(Some(x));
        }
        let p = self.nodes[x].parent.get();
        self.nodes[y].parent = Link::from(p);
        self.replace_child(p, x, y);
        self.nodes[y].right = Link::from(Some(x));
        self.nodes[x].parent = Link::from(Some(y));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn black_height(t: &RbOrder, n: Option<usize>) -> usize {
        match n {
            None => 1,
            Some(n) => {
                let node = t.nodes[n];
                if node.red {
                    assert!(
                        !t.is_red(node.left.get()) && !t.is_red(node.right.get()),
                        "red-red"
                    );
                }
                let l = black_height(t, node.left.get());
                assert_eq!(l, black_height(t, node.right.get()), "black heights");
                l + usize::from(!node.red)
            }
        }
    }

    #[test]
    fn a_total_order_comes_out_sorted_and_balanced() {
        let values: Vec<u32> = (0..500).map(|i| (i * 7919) % 503).collect();
        let mut t = RbOrder::new();
        for &v in &values {
            t.insert(|e| v < values[e]);
        }
        let got: Vec<u32> = t.in_order().iter().map(|&i| values[i]).collect();
        let mut want = values.clone();
        want.sort();
        assert_eq!(got, want);
        assert!(!t.is_red(t.root));
        black_height(&t, t.root);
    }

    #[test]
    fn equal_items_keep_their_insertion_order() {
        let values = [3, 1, 3, 2, 3, 1];
        let mut t = RbOrder::new();
        for &v in &values {
            t.insert(|e| v < values[e]);
        }
        assert_eq!(t.in_order(), vec![1, 5, 3, 0, 2, 4]);
    }

    #[test]
    fn find_follows_the_comparison() {
        let values = [5, 3, 8, 1, 4];
        let mut t = RbOrder::new();
        for &v in &values {
            t.insert(|e| v < values[e]);
        }
        assert_eq!(t.find(|e| 4.cmp(&values[e])), Some(4));
        assert_eq!(t.find(|e| 7.cmp(&values[e])), None);
    }

    /// Removing an item, or the leftmost item below its right child, leaves trees of
    /// one shape and colors, with the one left in the same place.
    #[test]
    fn removing_an_item_or_its_successor_below_leaves_one_shape() {
        let values: Vec<u32> = (0..200).map(|i| (i * 7919) % 37).collect();
        let build = || {
            let mut t = RbOrder::new();
            for &v in &values {
                t.insert(|e| v < values[e]);
            }
            t
        };
        // Each item with its color and links, `from` named `to`.
        let shape = |t: &RbOrder, from: usize, to: usize| {
            let name = |n: Option<usize>| n.map(|n| if n == from { to } else { n });
            let mut items: Vec<_> = t
                .in_order()
                .into_iter()
                .map(|n| {
                    let node = &t.nodes[n];
                    (
                        name(Some(n)),
                        node.red,
                        name(node.parent.get()),
                        name(node.left.get()),
                        name(node.right.get()),
                    )
                })
                .collect();
            items.push((name(t.root), false, None, None, None));
            items
        };
        let base = build();
        let mut checked = 0;
        for n in 0..values.len() {
            let Some(s) = base.successor_below(n) else {
                continue;
            };
            let (mut without_n, mut without_s) = (build(), build());
            without_n.remove(n);
            without_s.remove(s);
            assert_eq!(shape(&without_n, s, n), shape(&without_s, s, s), "{n} {s}");
            checked += 1;
        }
        assert!(checked > 50, "{checked}");
    }

    /// Removing items in any order keeps the rest in order and the tree balanced.
    #[test]
    fn removals_keep_order_and_balance() {
        let values: Vec<u32> = (0..300).map(|i| (i * 7919) % 307).collect();
        let mut t = RbOrder::new();
        for &v in &values {
            t.insert(|e| v < values[e]);
        }
        let mut left: Vec<usize> = (0..values.len()).collect();
        for k in 0..250 {
            let i = (k * 131) % left.len();
            let item = left.remove(i);
            t.remove(item);
            t.remove(item);
            let got: Vec<u32> = t.in_order().iter().map(|&i| values[i]).collect();
            let mut want: Vec<u32> = left.iter().map(|&i| values[i]).collect();
            want.sort();
            assert_eq!(got, want);
            assert!(!t.is_red(t.root));
            black_height(&t, t.root);
        }
    }

    /// With a comparison that is no order the result follows the tree's shape: after
    /// 0, 1, 2 (the root is 1 after one rotation), an item "before 0 only" goes left of
    /// 1 and then left of 0.
    #[test]
    fn the_shape_decides_for_a_comparison_that_is_no_order() {
        let mut t = RbOrder::new();
        for i in 0..3 {
            t.insert(|e| i < e);
        }
        assert_eq!(t.root, Some(1));
        t.insert(|e| e != 2);
        assert_eq!(t.in_order(), vec![3, 0, 1, 2]);
    }
}
