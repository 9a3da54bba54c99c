//! The threads of a [`Machine`] as perf's machine keeps them, for `perf report
//! --tasks` and `--mmaps`: made by the COMM, FORK, EXIT and MMAP records with perf's
//! rules, listed as trees of parents and children.

use super::{Machine, PidMap};

/// A thread as perf's machine keeps it: its process and its parent thread (perf's
/// `ppid`, the tid of the thread a FORK record named as parent; -1 without one).
#[derive(Debug, Clone, Copy)]
pub(super) struct ThreadLink {
    pub(super) pid: i32,
    pub(super) ppid: i32,
}

/// A thread as `perf report --tasks` lists it (see [`Machine::tasks`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Process id.
    pub pid: i32,
    /// Thread id.
    pub tid: i32,
    /// The parent's thread id (-1: none known).
    pub ppid: i32,
    /// Its depth under the thread at the top of its tree (0 there).
    pub level: usize,
    /// The thread's comm (`:TID` when no record named one).
    pub comm: String,
    /// The mappings of its process, by address.
    pub maps: Vec<TaskMap>,
}

/// A mapping of a [`Task`]'s process, as perf keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskMap {
    /// First address.
    pub start: u64,
    /// The address after the last.
    pub end: u64,
    /// mmap(2)'s `PROT_*` bits.
    pub prot: u32,
    /// mmap(2)'s `MAP_*` bits.
    pub flags: u32,
    /// File offset of `start`.
    pub pgoff: u64,
    /// The inode of the mapped object (0 when the records gave none).
    pub ino: u64,
    /// The object's name.
    pub name: String,
}

impl Machine {
    /// perf's `machine__findnew_thread(pid, tid)`: the thread `tid`, made (with no
    /// parent) when absent, and with it its process's first thread; a thread made
    /// without a process (-1) takes the one given here.
    pub(super) fn find_new_thread(&mut self, pid: i32, tid: i32) {
        if self.threads.contains_key(&tid) {
            self.update_thread_pid(tid, pid);
            return;
        }
        self.threads.insert(tid, ThreadLink { pid, ppid: -1 });
        if pid != tid && pid != -1 {
            self.find_new_thread(pid, pid);
        }
    }

    /// perf's `machine__update_thread_pid` of the existing thread `tid`.
    pub(super) fn update_thread_pid(&mut self, tid: i32, pid: i32) {
        let Some(t) = self.threads.get_mut(&tid) else {
            return;
        };
        if pid == t.pid || pid == -1 || t.pid != -1 {
            return;
        }
        t.pid = pid;
        if pid != tid {
            self.find_new_thread(pid, pid);
        }
    }

    /// The threads of perf's `machine__process_fork_event`: the parent found or made
    /// (made afresh when the one of its tid belongs to another process), the child made
    /// afresh with the parent's tid as its `ppid`.
    pub(super) fn fork_thread(&mut self, pid: i32, tid: i32, ppid: i32, ptid: i32) {
        let existed = self.threads.contains_key(&tid);
        if existed {
            self.update_thread_pid(tid, pid);
        }
        self.find_new_thread(ppid, ptid);
        if self.threads.get(&ptid).is_some_and(|p| p.pid != ppid) {
            self.threads.remove(&ptid);
            self.find_new_thread(ppid, ptid);
        }
        if existed {
            self.threads.remove(&tid);
        }
        self.find_new_thread(pid, tid);
        if let Some(t) = self.threads.get_mut(&tid) {
            t.ppid = ptid;
        }
    }

    /// The threads as perf 6.1's `perf report --tasks` lists them: each tree of
    /// threads linked by their parents, the top ones in the order perf's thread table
    /// meets them (by tid modulo 256, then by tid), each thread's children in the
    /// order it meets them, depth first. A thread whose parent is not known ends the
    /// listing with an error (perf's "failed to process tasks"). With `maps`, each
    /// thread's process's mappings.
    pub fn tasks(&mut self, maps: bool) -> Result<Vec<Task>, String> {
        let mut order: Vec<i32> = self.threads.keys().copied().collect();
        order.sort_by_key(|&tid| ((tid as u32) % 256, tid));
        let mut children: PidMap<Vec<i32>> = PidMap::default();
        let mut listed: std::collections::HashSet<i32> = std::collections::HashSet::new();
        let mut tops = Vec::new();
        for &tid in &order {
            // perf's `tasks_list`: up the parents, each linked under its parent,
            // until one already linked or one without a parent, which is a top.
            let mut t = tid;
            loop {
                if listed.contains(&t) {
                    break;
                }
                let ppid = self.threads[&t].ppid;
                if ppid == -1 {
                    listed.insert(t);
                    tops.push(t);
                    break;
                }
                if !self.threads.contains_key(&ppid) {
                    return Err(format!(
                        "thread {t} names {ppid} as its parent, which no record made"
                    ));
                }
                listed.insert(t);
                children.entry(ppid).or_default().push(t);
                t = ppid;
            }
        }
        let mut out = Vec::new();
        let mut stack: Vec<(i32, usize)> = tops.iter().rev().map(|&t| (t, 0)).collect();
        while let Some((tid, level)) = stack.pop() {
            let link = self.threads[&tid];
            let task_maps = if maps {
                self.maps
                    .get(&link.pid)
                    .map(|ms| {
                        ms.iter()
                            .map(|m| TaskMap {
                                start: m.start,
                                end: m.end,
                                prot: m.prot,
                                flags: m.flags,
                                pgoff: m.file_pgoff,
                                ino: self.dsos[m.dso].id.ino,
                                name: self.dsos[m.dso].name.clone(),
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            out.push(Task {
                pid: link.pid,
                tid,
                ppid: link.ppid,
                level,
                comm: self.comm(tid).to_string(),
                maps: task_maps,
            });
            if let Some(kids) = children.get(&tid) {
                stack.extend(kids.iter().rev().map(|&k| (k, level + 1)));
            }
        }
        Ok(out)
    }
}
