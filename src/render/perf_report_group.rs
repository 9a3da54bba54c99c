//! Event groups in `perf report --stdio` (perf 6.1): the events recorded together
//! (`perf record -e '{a,b}'`, the GROUP_DESC feature) shown in the leader's table,
//! each row with a share of each event (`--group`, perf's default for a file with
//! groups): perf's `hists__match` and `hists__link`, which pair the rows of the
//! other events with the leader's and add the rows the leader lacks.

use std::cell::Cell;
use std::cmp::Ordering;

use super::{entry_cmp, EventHists, Row, SortKey, Totals};
use crate::perf::data::{PerfData, PerfDataError};

impl EventHists {
    /// perf's `hists__find_entry`: the row of the tree the rows are in now that
    /// compares equal to `probe`.
    pub(super) fn find_current(&self, keys: &[SortKey], probe: &Row) -> Option<usize> {
        let rows = &self.rows;
        match &self.collapsed {
            Some((tree, filed)) => tree
                .find(|e| entry_cmp(keys, &rows[filed[e]], probe))
                .map(|e| filed[e]),
            None => self.entries_in.find(|e| entry_cmp(keys, &rows[e], probe)),
        }
    }

    /// perf's `hists__add_dummy_entry`: the row equal to `pair` (a row of another
    /// event of the group), else a new one with its key and no share, filed in the
    /// tree the rows are in now.
    pub(super) fn add_dummy(&mut self, keys: &[SortKey], pair: &Row) -> usize {
        if let Some(i) = self.find_current(keys, pair) {
            return i;
        }
        let i = self.rows.len();
        let rows = &self.rows;
        match &mut self.collapsed {
            Some((tree, filed)) => {
                tree.insert(|e| entry_cmp(keys, &rows[filed[e]], pair) == Ordering::Less);
                filed.push(i);
            }
            None => {
                self.entries_in
                    .insert(|e| entry_cmp(keys, &rows[e], pair) == Ordering::Less);
            }
        }
        self.rows.push(Row {
            key: pair.key.clone(),
            totals: Totals {
                first_tid: pair.totals.first_tid,
                kernel: pair.totals.kernel,
                unresolved: pair.totals.unresolved,
                ..Totals::default()
            },
            map_dso: pair.map_dso.clone(),
            map: pair.map,
            tree: None,
            made: Cell::new(pair.made.get()),
            filtered: pair.filtered,
            dummy: true,
        });
        i
    }
}

/// A group of events as the report shows it.
pub(super) struct ReportGroup {
    pub(super) leader: usize,
    pub(super) members: usize,
    pub(super) name: Option<String>,
    /// Made by `--group` of the events of a file without groups (perf's
    /// `forced_leader`): its name is the events' alone.
    pub(super) forced: bool,
}

/// The file's groups (GROUP_DESC); with `--group` or `--no-group` and none, all its
/// events as one (perf's `evlist__force_leader`: shown together with `--group`; with
/// `--no-group` only the first event's title says `events`).
pub(super) fn event_groups(
    file: &PerfData,
    group: Option<bool>,
) -> Result<Vec<ReportGroup>, PerfDataError> {
    let mut groups: Vec<ReportGroup> = file
        .groups()?
        .into_iter()
        .map(|g| ReportGroup {
            leader: g.leader,
            members: g.members,
            name: g.name,
            forced: false,
        })
        .collect();
    if groups.is_empty() && group.is_some() && file.attrs().len() > 1 {
        groups.push(ReportGroup {
            leader: 0,
            members: file.attrs().len(),
            name: None,
            forced: true,
        });
    }
    Ok(groups)
}

/// perf's `hists__match` and `hists__link` of each other event of group `g` with its
/// leader: the leader's rows take the counts of the rows of the same key, and rows
/// the leader lacks are added to it without counts of its own.
pub(super) fn link_group(
    hists: &mut [EventHists],
    g: &ReportGroup,
    keys: &[SortKey],
    relative: bool,
) {
    let others = g.members - 1;
    let (before, after) = hists.split_at_mut(g.leader + 1);
    let leader = &mut before[g.leader];
    leader.pairs = vec![vec![Totals::default(); others]; leader.rows.len()];
    leader.member_totals.clear();
    for (m, member) in after.iter().take(others).enumerate() {
        leader.member_totals.push(if relative {
            member.unfiltered_period()
        } else {
            member.period
        });
        let mut paired = vec![false; member.rows.len()];
        for li in leader.current_order() {
            if let Some(mi) = member.find_current(keys, &leader.rows[li]) {
                leader.pairs[li][m] = member.rows[mi].totals;
                paired[mi] = true;
            }
        }
        for mi in member.current_order() {
            if paired[mi] {
                continue;
            }
            let li = leader.add_dummy(keys, &member.rows[mi]);
            if li == leader.pairs.len() {
                leader.pairs.push(vec![Totals::default(); others]);
            }
            leader.pairs[li][m] = member.rows[mi].totals;
        }
    }
}
