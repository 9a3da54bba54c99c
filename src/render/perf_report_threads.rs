//! The table `perf report -T/--threads` (perf 6.1) prints after the report: for each
//! thread with a `PERF_RECORD_READ` record (written when a thread of a process
//! recorded with `perf record -s`, inherit_stat, exits), the counts of each event,
//! added up (perf's `perf_read_values`, shown in its `normal` or `raw` style).

/// The counts of the READ records, by thread and event, in the order perf first met
/// them.
#[derive(Debug, Clone, Default)]
pub struct ThreadValues {
    /// `(pid, tid)` of each row.
    threads: Vec<(i32, i32)>,
    /// `(attr index, event name)` of each column.
    counters: Vec<(usize, String)>,
    /// `values[thread][counter]`.
    values: Vec<Vec<u64>>,
}

impl ThreadValues {
    /// Add a READ record's `value` of thread `pid`/`tid` to the event `attr`, named
    /// `name`.
    pub fn add(
        &mut self,
        pid: i32,
        tid: i32,
        attr: usize,
        name: impl FnOnce() -> String,
        value: u64,
    ) {
        let t = match self.threads.iter().position(|&p| p == (pid, tid)) {
            Some(t) => t,
            None => {
                self.threads.push((pid, tid));
                self.values.push(vec![0; self.counters.len()]);
                self.threads.len() - 1
            }
        };
        let c = match self.counters.iter().position(|(a, _)| *a == attr) {
            Some(c) => c,
            None => {
                self.counters.push((attr, name()));
                for v in &mut self.values {
                    v.push(0);
                }
                self.counters.len() - 1
            }
        };
        self.values[t][c] = self.values[t][c].wrapping_add(value);
    }

    /// The table: a title line, then one line per thread, each column as wide as its
    /// widest entry (at least 3 for the ids).
    pub fn render(&self) -> String {
        let width = |n: &dyn std::fmt::Display| n.to_string().len();
        let pid_w = self.threads.iter().map(|t| width(&t.0)).fold(3, usize::max);
        let tid_w = self.threads.iter().map(|t| width(&t.1)).fold(3, usize::max);
        let counter_w: Vec<usize> = self
            .counters
            .iter()
            .enumerate()
            .map(|(c, (_, name))| {
                self.values
                    .iter()
                    .map(|v| width(&v[c]))
                    .fold(name.len(), usize::max)
            })
            .collect();
        let mut out = format!("# {:>pid_w$}  {:>tid_w$}", "PID", "TID");
        for ((_, name), w) in self.counters.iter().zip(&counter_w) {
            out.push_str(&format!("  {name:>w$}"));
        }
        out.push('\n');
        for ((pid, tid), values) in self.threads.iter().zip(&self.values) {
            out.push_str(&format!("  {pid:>pid_w$}  {tid:>tid_w$}"));
            for (v, w) in values.iter().zip(&counter_w) {
                out.push_str(&format!("  {v:>w$}"));
            }
            out.push('\n');
        }
        out
    }

    /// The table in perf's `--pretty raw` style: a title line, then one entry per thread
    /// and event, `pid tid name idx count` with the event's index in hex, all entries on
    /// one line without a newline (as perf 6.1 prints them). Each column is as wide as
    /// its widest entry, at least as its title.
    pub fn render_raw(&self) -> String {
        let width = |n: &dyn std::fmt::Display| n.to_string().len();
        let pid_w = self.threads.iter().map(|t| width(&t.0)).fold(3, usize::max);
        let tid_w = self.threads.iter().map(|t| width(&t.1)).fold(3, usize::max);
        let name_w = self.counters.iter().map(|c| c.1.len()).fold(4, usize::max);
        let raw_w = self
            .counters
            .iter()
            .map(|c| format!("{:x}", c.0).len())
            .fold(3, usize::max);
        let count_w = self
            .values
            .iter()
            .flatten()
            .map(|v| width(v))
            .fold(5, usize::max);
        let mut out = format!(
            "# {:>pid_w$}  {:>tid_w$}  {:>name_w$}  {:>raw_w$}  {:>count_w$}\n",
            "PID", "TID", "Name", "Raw", "Count"
        );
        for ((pid, tid), values) in self.threads.iter().zip(&self.values) {
            for ((idx, name), v) in self.counters.iter().zip(values) {
                out.push_str(&format!(
                    "  {pid:>pid_w$}  {tid:>tid_w$}  {name:>name_w$}  {idx:>raw_w$x}  {v:>count_w$}"
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_by_thread_and_event() {
        let mut t = ThreadValues::default();
        assert_eq!(t.render(), "# PID  TID\n");
        t.add(12412, 12417, 0, || "cpu-clock".into(), 14483408);
        t.add(12416, 12416, 1, || "task-clock".into(), 5);
        t.add(12416, 12416, 1, || "named once".into(), 7);
        assert_eq!(
            t.render(),
            "#   PID    TID  cpu-clock  task-clock\n\
             \x20 12412  12417   14483408           0\n\
             \x20 12416  12416          0          12\n"
        );
        assert_eq!(
            t.render_raw(),
            "#   PID    TID        Name  Raw     Count\n\
             \x20 12412  12417   cpu-clock    0  14483408\
             \x20 12412  12417  task-clock    1         0\
             \x20 12416  12416   cpu-clock    0         0\
             \x20 12416  12416  task-clock    1        12"
        );
    }
}
