//! How `perf report` compares its rows (`hist_entry__cmp` and the sort keys' `se_cmp`):
//! the comparisons its trees file and merge the rows with.

use std::cmp::Ordering;

use super::*;

/// perf's `cmp_null`: which of two possibly missing things comes first.
pub(super) fn cmp_null<T>(l: Option<T>, r: Option<T>) -> Ordering {
    match (l, r) {
        (None, None) => Ordering::Equal,
        (None, Some(_)) => Ordering::Less,
        (Some(_), _) => Ordering::Greater,
    }
}

/// `sort__dso_cmp(left, right)`: names compared right to left, a missing object after
/// any other.
pub(super) fn dso_cmp(l: Option<&str>, r: Option<&str>) -> Ordering {
    match (l, r) {
        (Some(a), Some(b)) => b.cmp(a),
        _ => cmp_null(l, r),
    }
}

/// perf's `(int64_t)(right - left)` on addresses: a wrapping difference, so that an
/// address 2^63 above another comes before it.
pub(super) fn addr_cmp(l: u64, r: u64) -> Ordering {
    (r.wrapping_sub(l) as i64).cmp(&0)
}

/// `sort__trace_cmp(left, right)`: texts right to left; rows of other events are
/// equal. perf makes the texts of both rows here.
pub(super) fn trace_cmp(l: &Row, r: &Row) -> Ordering {
    match (&l.key.trace, &r.key.trace) {
        (Some(a), Some(b)) => {
            l.mark(MADE_TRACE);
            r.mark(MADE_TRACE);
            b.cmp(a)
        }
        _ => Ordering::Equal,
    }
}

/// `sort__dso_size_cmp(left, right)`: by the size of the mapping, 0 when unmapped.
pub(super) fn map_size_cmp(l: &Key, r: &Key) -> Ordering {
    r.map_size.unwrap_or(0).cmp(&l.map_size.unwrap_or(0))
}

/// `sort__parent_cmp(left, right)`: `[other]` first, then names right to left.
pub(super) fn parent_cmp(l: &Key, r: &Key) -> Ordering {
    match (&l.parent, &r.parent) {
        (Some(a), Some(b)) => b.cmp(a),
        (a, b) => cmp_null(a.as_ref(), b.as_ref()),
    }
}

/// `sort__srcline_cmp` and `sort__srcfile_cmp(left, right)`: texts right to left;
/// perf makes the texts of both rows here.
pub(super) fn text_cmp(k: SortKey, l: &Row, r: &Row) -> Ordering {
    let (what, a, b) = if k == SortKey::Srcline {
        (MADE_SRCLINE, &l.key.srcline, &r.key.srcline)
    } else {
        (MADE_SRCFILE, &l.key.srcfile, &r.key.srcfile)
    };
    l.mark(what);
    r.mark(what);
    b.cmp(a)
}

/// `hist_entry__cmp(left, right)` (and `hist_entry__collapse`, the same for these
/// keys): how perf tells rows apart and files them before sorting for output.
pub(super) fn entry_cmp(keys: &[SortKey], l: &Row, r: &Row) -> Ordering {
    let dso_key = keys.contains(&SortKey::Dso);
    for k in keys {
        let o = match k {
            SortKey::Sym => sym_cmp(l, r, dso_key),
            _ => key_cmp(*k, l, r),
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// One sort key's `se_cmp(left, right)`, which [`entry_cmp`] chains; the output sort
/// (`se_sort`) is the same but for `dso` and `sym`.
pub(super) fn key_cmp(k: SortKey, l: &Row, r: &Row) -> Ordering {
    match k {
        SortKey::Comm => r.key.comm.cmp(&l.key.comm),
        SortKey::Pid => r.key.pid.cmp(&l.key.pid),
        SortKey::Cpu => r.key.cpu.cmp(&l.key.cpu),
        SortKey::Addr => addr_cmp(l.key.addr, r.key.addr),
        SortKey::Time => addr_cmp(l.key.time, r.key.time),
        SortKey::Trace => trace_cmp(l, r),
        SortKey::Socket => r.key.socket.cmp(&l.key.socket),
        // `right - left` as a signed 64-bit difference.
        SortKey::Cgroup => (r.key.cgroup.wrapping_sub(l.key.cgroup) as i64).cmp(&0),
        // perf swaps the sides twice: `left - right`, the device before the inode.
        SortKey::CgroupId => {
            let (ld, li) = l.key.cgroup_ns;
            let (rd, ri) = r.key.cgroup_ns;
            (ld.wrapping_sub(rd) as i64)
                .cmp(&0)
                .then_with(|| (li.wrapping_sub(ri) as i64).cmp(&0))
        }
        SortKey::DsoSize => map_size_cmp(&l.key, &r.key),
        SortKey::Parent => parent_cmp(&l.key, &r.key),
        SortKey::Srcline | SortKey::Srcfile => text_cmp(k, l, r),
        SortKey::Dso => dso_cmp(l.key.dso.as_deref(), r.key.dso.as_deref()),
        SortKey::Sym => sym_cmp(l, r, false),
    }
}

/// `sort__sym_cmp(left, right)`: two rows without a symbol by address; else by object
/// (unless `dso` is a sort key of its own: perf 6.1.187 carries the stable fix that
/// tests the table's keys once, so that `sym,dso` compares the symbols alone and then
/// the objects), then by symbol.
fn sym_cmp(l: &Row, r: &Row, dso_key: bool) -> Ordering {
    match (&l.key.sym, &r.key.sym) {
        (SymKey::Unresolved(a), SymKey::Unresolved(b)) => addr_cmp(*a, *b),
        (ls, rs) => {
            let by_object = if dso_key {
                Ordering::Equal
            } else {
                dso_cmp(l.map_dso.as_deref(), r.map_dso.as_deref())
            };
            by_object.then_with(|| {
                match (ls, rs) {
                    (
                        SymKey::Resolved {
                            start: a,
                            end: ea,
                            name: na,
                            inlined: ia,
                        },
                        SymKey::Resolved {
                            start: b,
                            end: eb,
                            name: nb,
                            inlined: ib,
                        },
                    ) => {
                        if a == b && ea == eb && na == nb && ia == ib {
                            return Ordering::Equal;
                        }
                        // `_sort__sym_cmp`: an inlined function is told apart by
                        // its name (`strcmp(left, right)`), and is the same as a
                        // symbol of its name whose span touches its own (the span
                        // of the function it is inlined into, ends included).
                        if *ia || *ib {
                            match na.cmp(nb) {
                                Ordering::Equal if a <= eb && ea >= b => {
                                    return Ordering::Equal;
                                }
                                Ordering::Equal => {}
                                o => return o,
                            }
                        }
                        addr_cmp(*a, *b).then_with(|| addr_cmp(*ea, *eb))
                    }
                    (SymKey::Resolved { .. }, _) => Ordering::Greater,
                    (_, SymKey::Resolved { .. }) => Ordering::Less,
                    _ => Ordering::Equal,
                }
            })
        }
    }
}
