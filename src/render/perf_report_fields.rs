//! The columns of `perf report --stdio` (perf 6.1) and the order rows are sorted in:
//! the overhead columns (`overhead`, `overhead_sys`, `overhead_us`,
//! `overhead_children`, `sample`, `period`) and the sort keys, as `-F/--fields`, `-s`,
//! `--children`, `-n` and `--show-total-period` set them up (perf's `setup_sorting`),
//! and how a cell is laid out with and without `-t/--field-separator`.
//!
//! perf's rules: a `-F` list that does not start with `+` is *strict*: it names every
//! column, perf adds no overhead column of its own (nor `-n`'s or
//! `--show-total-period`'s), and without `-s` it sorts by the columns alone, in their
//! order. Without a strict `-F`, the sort list is `-s`'s keys (or the default) with
//! `overhead` (and `overhead_children` with `--children`) put in front unless named.
//! Then every sort key missing from the columns is appended to them, and every column
//! missing from the sort list is appended to it.

use crate::render::perf_report::SortKey;

/// One column of the table, or one entry of the sort list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// `overhead_children`: the share of the samples whose call chains pass through
    /// the row (`Children`).
    Children,
    /// `overhead`: the share of the row's own samples (`Overhead`, or `Self` beside
    /// `Children`).
    Overhead,
    /// `overhead_sys`: the share of the row's own samples taken in the kernel (`sys`).
    OverheadSys,
    /// `overhead_us`: the share of the row's own samples taken in user space (`usr`).
    OverheadUs,
    /// `sample`: the number of the row's own samples (`Samples`).
    Samples,
    /// `period`: the period of the row's own samples (`Period`).
    Period,
    /// A sort key's column.
    Key(SortKey),
}

impl Column {
    /// The column of one of perf's names, overhead columns and sort keys alike.
    fn parse(name: &str) -> Result<Column, String> {
        Ok(match name {
            "overhead" => Column::Overhead,
            "overhead_sys" => Column::OverheadSys,
            "overhead_us" => Column::OverheadUs,
            "overhead_children" => Column::Children,
            "sample" => Column::Samples,
            "period" => Column::Period,
            key => Column::Key(SortKey::parse_one(key)?),
        })
    }

    /// A share of the event's period, printed `%.2f%%`.
    pub fn is_percent(self) -> bool {
        matches!(
            self,
            Column::Children | Column::Overhead | Column::OverheadSys | Column::OverheadUs
        )
    }

    /// The width perf gives an overhead column (`fmt->len`); None for a sort key.
    pub fn overhead_width(self) -> Option<usize> {
        match self {
            Column::Samples | Column::Period => Some(12),
            Column::Key(_) => None,
            _ => Some(8),
        }
    }
}

/// Parse a comma-separated list of `what` (`--fields` or `--sort`) entries.
fn parse_list(what: &str, s: &str) -> Result<Vec<Column>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(|k| {
            Column::parse(k).map_err(|e| {
                if what == "--fields" {
                    e.replacen("--sort", "--fields", 1)
                } else {
                    e
                }
            })
        })
        .collect()
}

/// The table's columns and the sort list, set up from the options as perf does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Columns {
    /// The columns, left to right.
    pub output: Vec<Column>,
    /// The sort list: rows are told apart by its keys ([`Columns::keys`]) and printed
    /// in its order.
    pub sort: Vec<Column>,
    /// The `overhead` column is titled `Self` (beside perf's own `Children`).
    pub self_title: bool,
    /// `comm` is among the keys of `-s` (or the default ones): perf then merges rows
    /// again before sorting them for output (`need_collapse`), which the keys that
    /// `-F` adds do not ask for.
    pub collapse: bool,
    /// Without `-F`, `-s` starts with `sym`: perf then leaves a row's own symbol out
    /// of the top of its call graph.
    pub sym_first: bool,
}

/// The options that decide the columns.
#[derive(Debug, Clone, Default)]
pub struct ColumnOptions<'a> {
    /// `-s/--sort` as given.
    pub sort: Option<&'a str>,
    /// `-F/--fields` as given.
    pub fields: Option<&'a str>,
    /// The sort keys without `-s` (`comm,dso,sym`, or `trace` for tracepoints).
    pub default_sort: &'a [SortKey],
    /// Call chains are accumulated (`--children`).
    pub children: bool,
    /// `-n/--show-nr-samples`.
    pub show_nr_samples: bool,
    /// `--show-total-period`.
    pub show_total_period: bool,
    /// `-p/--parent` was given: `parent` is a sort key too.
    pub parent: bool,
}

impl Columns {
    /// perf's `setup_sorting` for `o`; errors name the key or list refused.
    pub fn setup(o: &ColumnOptions<'_>) -> Result<Columns, String> {
        let strict = o.fields.is_some_and(|f| !f.starts_with('+'));
        let mut sort: Vec<Column> = match o.sort {
            // perf's `setup_sort_order`: keys added to the default ones.
            Some(s) if s.starts_with('+') => {
                let added = parse_list("--sort", &s[1..])?;
                if added.is_empty() {
                    return Err(format!(
                        "--sort '{s}': no key named; give keys such as comm,sym, or +KEY to \
                         add one to the default ones"
                    ));
                }
                let mut l: Vec<Column> = o.default_sort.iter().copied().map(Column::Key).collect();
                l.extend(added);
                l
            }
            Some(s) => parse_list("--sort", s)?,
            None if strict => Vec::new(),
            None => o.default_sort.iter().copied().map(Column::Key).collect(),
        };
        if !strict && !sort.is_empty() {
            for c in [Column::Overhead, Column::Children] {
                if (c == Column::Overhead || o.children) && !sort.contains(&c) {
                    sort.insert(0, c);
                }
            }
        }
        if o.parent && !sort.contains(&Column::Key(SortKey::Parent)) {
            sort.push(Column::Key(SortKey::Parent));
        }
        let collapse = sort.contains(&Column::Key(SortKey::Comm));
        let mut output = Vec::new();
        if !strict {
            if o.children {
                output.push(Column::Children);
            }
            output.push(Column::Overhead);
            if o.show_nr_samples {
                output.push(Column::Samples);
            }
            if o.show_total_period {
                output.push(Column::Period);
            }
        }
        if let Some(f) = o.fields {
            let list = f.strip_prefix('+').unwrap_or(f);
            if list.trim().is_empty() {
                return Err(format!(
                    "--fields '{f}': no column named; give columns such as \
                     overhead,comm,sym, or +COLUMN to add one to the defaults"
                ));
            }
            for c in parse_list("--fields", list)? {
                if !output.contains(&c) {
                    output.push(c);
                }
            }
        }
        for &c in &sort {
            if !output.contains(&c) {
                output.push(c);
            }
        }
        for &c in &output {
            if !sort.contains(&c) {
                sort.push(c);
            }
        }
        Ok(Columns {
            output,
            sort,
            self_title: !strict && o.children,
            collapse,
            sym_first: o.fields.is_none() && o.sort.is_some_and(|s| s.starts_with("sym")),
        })
    }

    /// The sort keys of the sort list, in its order: what tells rows apart.
    pub fn keys(&self) -> Vec<SortKey> {
        self.sort
            .iter()
            .filter_map(|c| match c {
                Column::Key(k) => Some(*k),
                _ => None,
            })
            .collect()
    }

    /// The title of an overhead column (perf's `"%*s"` of its name).
    pub fn title(&self, c: Column) -> &'static str {
        match c {
            Column::Children => "Children",
            Column::Overhead if self.self_title => "Self",
            Column::Overhead => "Overhead",
            Column::OverheadSys => "sys",
            Column::OverheadUs => "usr",
            Column::Samples => "Samples",
            Column::Period => "Period",
            Column::Key(k) => k.header(),
        }
    }
}

/// `-t/--field-separator` checked as perf checks it: `.` is refused (perf puts dots
/// in place of the separator inside the cells); an empty one is none.
pub fn parse_field_separator(s: &str) -> Result<Option<String>, String> {
    if s.starts_with('.') {
        return Err(format!(
            "-t/--field-separator '{s}': '.' is the one separator that cannot be used, as \
             it replaces the separator inside the columns; give another such as ',' or '|'"
        ));
    }
    Ok((!s.is_empty()).then(|| s.to_string()))
}

/// A cell's text with the first character of the separator `sep` made a dot, as
/// perf's `repsep_snprintf` does, so that the columns stay apart.
pub fn replace_separator(text: &str, sep: Option<&str>) -> String {
    match sep.and_then(|s| s.chars().next()) {
        Some(c) => text.replace(c, "."),
        None => text.to_string(),
    }
}

/// An overhead column's cell: `value` (a percentage, or a count) as perf's
/// `hpp__fmt` prints it in a column `width` wide, unpadded with a separator.
pub fn overhead_cell(value: &str, percent: bool, width: usize, sep: bool) -> String {
    // `" %*.2f%%"` (or `" %*llu"`) with the width less the space and the sign; 1 with
    // a separator.
    let w = if sep {
        1
    } else if percent {
        width.saturating_sub(2)
    } else {
        width.saturating_sub(1)
    };
    let pct = if percent { "%" } else { "" };
    format!(" {value:>w$}{pct}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup(sort: Option<&str>, fields: Option<&str>, children: bool) -> Columns {
        Columns::setup(&ColumnOptions {
            sort,
            fields,
            default_sort: &[SortKey::Comm, SortKey::Dso, SortKey::Sym],
            children,
            ..ColumnOptions::default()
        })
        .unwrap()
    }

    #[test]
    fn strict_fields_name_every_column() {
        let c = setup(None, Some("comm,overhead"), true);
        assert_eq!(
            c.output,
            [Column::Key(SortKey::Comm), Column::Overhead],
            "no Children of perf's own"
        );
        assert_eq!(c.sort, c.output);
        assert_eq!(c.title(Column::Overhead), "Overhead");
        let c = setup(Some("dso"), Some("comm"), false);
        assert_eq!(
            c.output,
            [Column::Key(SortKey::Comm), Column::Key(SortKey::Dso)]
        );
        assert_eq!(c.keys(), [SortKey::Dso, SortKey::Comm]);
    }

    #[test]
    fn added_fields_keep_the_defaults() {
        let c = setup(None, Some("+period"), true);
        assert_eq!(
            &c.output[..3],
            [Column::Children, Column::Overhead, Column::Period]
        );
        assert_eq!(c.title(Column::Overhead), "Self");
        assert_eq!(&c.sort[..2], [Column::Children, Column::Overhead]);
        assert_eq!(c.sort.last(), Some(&Column::Period));
        let c = setup(Some("sample,comm"), None, false);
        assert_eq!(
            c.sort,
            [
                Column::Overhead,
                Column::Samples,
                Column::Key(SortKey::Comm)
            ]
        );
    }

    #[test]
    fn bad_lists_are_named() {
        let o = |f| ColumnOptions {
            fields: Some(f),
            ..ColumnOptions::default()
        };
        assert!(Columns::setup(&o("comm,bogus"))
            .unwrap_err()
            .contains("'bogus'"));
        assert!(Columns::setup(&o("+")).unwrap_err().contains("'+'"));
        assert!(parse_field_separator(".").unwrap_err().contains("'.'"));
        assert_eq!(parse_field_separator(""), Ok(None));
        assert_eq!(replace_separator("a,b,c", Some(",|")), "a.b.c");
        assert_eq!(overhead_cell("5.00", true, 8, false), "   5.00%");
        assert_eq!(overhead_cell("5.00", true, 8, true), " 5.00%");
        assert_eq!(overhead_cell("75", false, 12, false), "          75");
    }
}
