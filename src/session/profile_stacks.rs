//! The kernel stacks of a `report --profile` entry, and the tree trace-cmd 3.1.6 prints
//! them as under the entry (`+ func (0xaddr)` branches with their share of the time).
//!
//! Facts from trace-cmd (not its code): a stack is the `caller` bytes of an
//! `ftrace:kernel_stack` record to the record's end; equal bytes are one stack with a
//! count and times. For the tree the stacks are sorted by their bytes (compared as
//! 32-bit words, then the shorter first) and grouped level by level by the address at
//! that level; an address of all ones (the old end mark) or the end of a stack ends it.
//! Branches go by total time, then count, larger first (equal ones keep the sorted
//! order); the percentage is of the level's total time (or count when no time).

use std::collections::HashMap;
use std::io::{self, Write};

use crate::endian::Endianness;
use crate::render::tracecmd::Catalog;

/// How many durations, their total, and the longest and shortest with the times they
/// were seen at, as trace-cmd keeps them for a profile entry and for each of its
/// stacks.
#[derive(Debug, Clone, Copy, Default)]
pub struct Durations {
    /// How many.
    pub count: u64,
    /// Their sum (wrapping, as trace-cmd's).
    pub total: u64,
    /// The longest, and when it was seen.
    pub max: u64,
    /// See `max`.
    pub ts_max: u64,
    /// The shortest, and when it was seen.
    pub min: u64,
    /// See `min`.
    pub ts_min: u64,
}

impl Durations {
    /// One more duration `d`, seen at `ts`.
    pub fn add(&mut self, d: u64, ts: u64) {
        self.count += 1;
        self.total = self.total.wrapping_add(d);
        if d > self.max {
            self.max = d;
            self.ts_max = ts;
        }
        if self.count == 1 || d < self.min {
            self.min = d;
            self.ts_min = ts;
        }
    }

    /// Add `other`: counts and totals summed, the longest and shortest kept (as
    /// trace-cmd merges the tasks of one comm).
    pub fn merge(&mut self, other: &Durations) {
        let first = self.count == 0;
        self.count += other.count;
        self.total = self.total.wrapping_add(other.total);
        if first || other.max > self.max {
            self.max = other.max;
            self.ts_max = other.ts_max;
        }
        if first || other.min < self.min {
            self.min = other.min;
            self.ts_min = other.ts_min;
        }
    }
}

/// The stacks seen with one profile entry, by their bytes.
#[derive(Debug, Default)]
pub struct Stacks {
    by_bytes: HashMap<Vec<u8>, Durations>,
}

impl Stacks {
    /// One more `stack` (the caller bytes) that took `time`, seen at `ts`.
    pub fn add(&mut self, stack: &[u8], time: u64, ts: u64) {
        let s = match self.by_bytes.get_mut(stack) {
            Some(s) => s,
            None => self.by_bytes.entry(stack.to_vec()).or_default(),
        };
        s.add(time, ts);
    }

    /// Add every stack of `other` (counts and times summed, the longest and shortest
    /// kept), as trace-cmd merges the stacks of the tasks of one comm.
    pub fn merge(&mut self, other: &Stacks) {
        for (bytes, o) in &other.by_bytes {
            self.by_bytes.entry(bytes.clone()).or_default().merge(o);
        }
    }

    /// The tree of these stacks (nothing when there are none).
    pub fn write(
        &self,
        layout: Layout,
        catalog: &dyn Catalog,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        if self.by_bytes.is_empty() {
            return Ok(());
        }
        let mut stacks: Vec<(&[u8], &Durations)> = self
            .by_bytes
            .iter()
            .map(|(b, t)| (b.as_slice(), t))
            .collect();
        stacks.sort_by(|a, b| compare_stacks(a.0, b.0, layout.endian));
        let chains = make_chains(&stacks, layout, 0);
        let mut w = TreeWriter {
            catalog,
            out,
            mask: 0,
        };
        w.chains(&chains, 0)
    }
}

/// How the file stores an address.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// The traced kernel's `sizeof(long)`: 4 or 8.
    pub long_size: usize,
    /// Its byte order.
    pub endian: Endianness,
}

impl Layout {
    fn overflows(self, stack: &[u8], level: usize) -> bool {
        stack.len() < self.long_size || self.long_size * level > stack.len() - self.long_size
    }

    fn value(self, stack: &[u8], level: usize) -> u64 {
        let at = self.long_size * level;
        if self.long_size == 8 {
            self.endian.u64_at(stack, at).unwrap_or(0)
        } else {
            self.endian.u32_at(stack, at).map_or(0, u64::from)
        }
    }

    fn stop(self) -> u64 {
        if self.long_size < 8 {
            (1u64 << (self.long_size * 8)) - 1
        } else {
            u64::MAX
        }
    }
}

/// trace-cmd's order of stacks: 32-bit words up to the shorter length, then the shorter
/// first.
fn compare_stacks(a: &[u8], b: &[u8], endian: Endianness) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 4 <= n {
        let (x, y) = (endian.u32(&a[i..i + 4]), endian.u32(&b[i..i + 4]));
        if x != y {
            return x.cmp(&y);
        }
        i += 4;
    }
    a.len().cmp(&b.len())
}

/// One branch of the tree: an address and the stacks through it.
#[derive(Debug)]
struct Chain {
    val: u64,
    count: u64,
    time: u64,
    time_min: u64,
    ts_min: u64,
    time_max: u64,
    ts_max: u64,
    time_avg: u64,
    percent: u64,
    children: Vec<Chain>,
}

fn make_chains(stacks: &[(&[u8], &Durations)], layout: Layout, level: usize) -> Vec<Chain> {
    let stop = layout.stop();
    let mut chains = Vec::new();
    let (mut total_time, mut total_count) = (0u64, 0u64);
    let (mut count, mut time, mut time_min, mut ts_min, mut time_max, mut ts_max) =
        (0u64, 0u64, 0u64, 0u64, 0u64, 0u64);
    let mut start = 0;
    for i in 0..stacks.len() {
        let (bytes, s) = stacks[i];
        if layout.overflows(bytes, level) {
            start = i + 1;
            continue;
        }
        let val = layout.value(bytes, level);
        if val == stop {
            start = i + 1;
            continue;
        }
        count += s.count;
        time = time.wrapping_add(s.total);
        if s.max > time_max {
            time_max = s.max;
            ts_max = s.ts_max;
        }
        if i == start || s.min < time_min {
            time_min = s.min;
            ts_min = s.ts_min;
        }
        let ends = match stacks.get(i + 1) {
            None => true,
            Some((next, _)) => layout.overflows(next, level) || layout.value(next, level) != val,
        };
        if ends {
            total_time = total_time.wrapping_add(time);
            total_count += count;
            chains.push(Chain {
                val,
                count,
                time,
                time_min,
                ts_min,
                time_max,
                ts_max,
                time_avg: time / count.max(1),
                percent: 0,
                children: make_chains(&stacks[start..=i], layout, level + 1),
            });
            start = i + 1;
            (count, time, time_min, time_max) = (0, 0, 0, 0);
        }
    }
    // Stable, as glibc's merge sort is: equal branches keep the stacks' order.
    chains.sort_by(|a, b| b.time.cmp(&a.time).then(b.count.cmp(&a.count)));
    let percent = |v: u64, total: u64| v.wrapping_mul(100).wrapping_add(total / 2) / total;
    for c in &mut chains {
        if total_time != 0 {
            c.percent = percent(c.time, total_time);
        } else if total_count != 0 {
            c.percent = percent(c.count, total_count);
        }
    }
    chains
}

struct TreeWriter<'a, 'o> {
    catalog: &'a dyn Catalog,
    out: &'o mut dyn Write,
    /// Which levels still have a branch below (a `|` in their column).
    mask: u64,
}

fn bit(level: usize) -> u64 {
    1u64.checked_shl(level as u32).unwrap_or(0)
}

impl TreeWriter<'_, '_> {
    fn indent(&mut self, level: usize) -> io::Result<()> {
        for p in 0..=level {
            let c = if self.mask & bit(p) != 0 { '|' } else { ' ' };
            write!(self.out, "{c:>5} ")?;
        }
        Ok(())
    }

    fn func(&mut self, val: u64) -> io::Result<()> {
        match self.catalog.function(val) {
            Some((name, _)) => writeln!(self.out, "{name} (0x{val:x})"),
            None => writeln!(self.out, "0x{val:x}"),
        }
    }

    fn chains(&mut self, chains: &[Chain], level: usize) -> io::Result<()> {
        if chains.is_empty() {
            return Ok(());
        }
        self.mask |= bit(level + 1);
        self.indent(level + 1)?;
        writeln!(self.out)?;
        let mut line = '|';
        for (i, c) in chains.iter().enumerate() {
            self.indent(level)?;
            write!(self.out, "{:>5} ", '+')?;
            if i == chains.len() - 1 {
                self.mask &= !bit(level + 1);
                line = ' ';
            }
            self.func(c.val)?;
            self.indent(level)?;
            write!(self.out, "{line:>5} ")?;
            write!(self.out, "  {}% ({})", c.percent as i32, c.count)?;
            if c.time != 0 {
                let sec = |ts: u64| ts / 1_000_000_000;
                let usec = |ts: u64| ((ts % 1_000_000_000) + 500) / 1000;
                write!(
                    self.out,
                    " time:{} max:{}(ts:{}.{:06}) min:{}(ts:{}.{:06}) avg:{}",
                    c.time,
                    c.time_max,
                    sec(c.ts_max),
                    usec(c.ts_max),
                    c.time_min,
                    sec(c.ts_min),
                    usec(c.ts_min),
                    c.time_avg
                )?;
            }
            writeln!(self.out)?;
            let mut child = &c.children;
            while child.len() == 1 {
                self.indent(level)?;
                write!(self.out, "{line:>5}    ")?;
                self.func(child[0].val)?;
                child = &child[0].children;
            }
            if !child.is_empty() {
                self.chains(child, level + 1)?;
            }
            self.indent(level + 1)?;
            writeln!(self.out)?;
        }
        self.mask &= !bit(level + 1);
        self.indent(level)?;
        writeln!(self.out)
    }
}
