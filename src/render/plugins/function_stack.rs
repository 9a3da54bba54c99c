//! The per-CPU stacks of function names behind the function plugin's `indent` option.
//!
//! libtraceevent's function plugin guesses the call depth of an `ftrace:function` record
//! from names alone. Each CPU has a stack of names, filled from position 0 with no gaps.
//! For a record of function F called from P, the stack is searched from the bottom for
//! the first name equal to P:
//!
//! * found at position i: F is written at position i + 1 (what was there is replaced,
//!   what lies above stays) and the record is indented by i levels;
//! * not found: P is written at position 0 and F at position 1 (the rest stays), and the
//!   record is not indented.
//!
//! A function with no kallsyms name writes nothing (its parent still does when it was
//! not found), and a record whose parent has no name neither reads nor changes the stack.
//!
//! The stacks live in the plugin library, one set for the whole `trace-cmd report`: every
//! buffer (top and instances) and every input file share them, keyed by the record's CPU
//! number within its buffer, and they change in the order records are printed (a record
//! left out by `--cpu`, `-F` and the like is not printed and changes nothing).

/// Deepest position written: beyond it a record's function is not pushed. libtraceevent
/// has no limit; a real call chain is far shallower (each level is a distinct name whose
/// caller sits one below), so this only bounds the time and memory a crafted file can
/// ask for.
pub const MAX_DEPTH: usize = 1024;

/// CPUs with a stack: a record of a higher CPU number is not indented (libtraceevent would
/// allocate for it; a file's CPU numbers are far below).
pub const MAX_CPUS: usize = 1 << 16;

/// The function plugin's stacks, one per CPU number.
#[derive(Debug, Default, Clone)]
pub struct FunctionStacks {
    /// Per CPU: the names at positions 0.. (each `String` reused when replaced).
    cpus: Vec<Stack>,
}

#[derive(Debug, Default, Clone)]
struct Stack {
    names: Vec<String>,
}

impl Stack {
    fn put(&mut self, pos: usize, name: &str) {
        if pos >= MAX_DEPTH {
            return;
        }
        match self.names.get_mut(pos) {
            Some(slot) => {
                slot.clear();
                slot.push_str(name);
            }
            // Positions are written from 0 up with no gaps: `pos` is at most the length.
            None => self.names.push(name.to_string()),
        }
    }
}

impl FunctionStacks {
    /// Empty stacks.
    pub fn new() -> FunctionStacks {
        FunctionStacks::default()
    }

    /// The indent level (in steps of 3 spaces) of a record of `func` (None: not in
    /// kallsyms) called from `parent` on `cpu`, updating that CPU's stack.
    pub fn level(&mut self, cpu: u32, parent: &str, func: Option<&str>) -> usize {
        let cpu = cpu as usize;
        if cpu >= MAX_CPUS {
            return 0;
        }
        if cpu >= self.cpus.len() {
            self.cpus.resize_with(cpu + 1, Stack::default);
        }
        let stack = &mut self.cpus[cpu];
        match stack.names.iter().position(|n| n == parent) {
            Some(i) => {
                if let Some(f) = func {
                    stack.put(i + 1, f);
                }
                i
            }
            None => {
                stack.put(0, parent);
                if let Some(f) = func {
                    stack.put(1, f);
                }
                0
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callees_indent_under_their_callers_and_siblings_share_a_level() {
        let mut s = FunctionStacks::new();
        // __x64_sys_openat -> do_sys_openat2 -> {getname, do_filp_open -> path_openat}
        assert_eq!(s.level(0, "__x64_sys_openat", Some("do_sys_openat2")), 0);
        assert_eq!(s.level(0, "do_sys_openat2", Some("getname")), 1);
        assert_eq!(s.level(0, "do_sys_openat2", Some("do_filp_open")), 1);
        assert_eq!(s.level(0, "do_filp_open", Some("path_openat")), 2);
        // Back out: a caller seen lower in the stack is found there.
        assert_eq!(s.level(0, "__x64_sys_openat", Some("do_sys_openat2")), 0);
        // Another CPU has its own stack.
        assert_eq!(s.level(1, "do_sys_openat2", Some("getname")), 0);
        assert_eq!(s.level(1, "getname", Some("getname_flags")), 1);
    }

    #[test]
    fn an_unknown_caller_resets_the_bottom_and_leaves_stale_names_above() {
        let mut s = FunctionStacks::new();
        s.level(0, "a", Some("b"));
        s.level(0, "b", Some("c"));
        assert_eq!(s.level(0, "c", Some("d")), 2);
        // `x` is new: [x, y, c, d]; `c` is still found at 2.
        assert_eq!(s.level(0, "x", Some("y")), 0);
        assert_eq!(s.level(0, "c", Some("e")), 2);
        // A function without a name pushes nothing: `d` was replaced by `e` above.
        assert_eq!(s.level(0, "e", None), 3);
        assert_eq!(s.level(0, "e", Some("f")), 3);
        assert_eq!(s.level(0, "f", Some("g")), 4);
    }

    #[test]
    fn a_chain_of_new_names_stops_growing_at_the_limit() {
        let mut s = FunctionStacks::new();
        let names: Vec<String> = (0..MAX_DEPTH + 10).map(|i| format!("f{i}")).collect();
        let levels: Vec<usize> = names
            .windows(2)
            .map(|w| s.level(3, &w[0], Some(&w[1])))
            .collect();
        assert!(levels[..MAX_DEPTH].iter().enumerate().all(|(i, l)| *l == i));
        // The function past the limit was not pushed: its callee starts over.
        assert_eq!(levels[MAX_DEPTH], 0);
        assert_eq!(s.cpus[3].names.len(), MAX_DEPTH);
        assert_eq!(s.level(u32::MAX, "f0", Some("f1")), 0);
    }
}
