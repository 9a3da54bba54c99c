//! `trace-cmd report -F`: libtraceevent's event filter language.
//!
//! A filter string is `EVENTS[:EXPR]`. EVENTS is a comma-separated list of `system/event`
//! or `name` patterns; each pattern is a POSIX basic regular expression matched
//! case-insensitively against the whole name (`^pattern$`), and a bare `name` matches
//! events whose system *or* name matches. Without `:EXPR` every record of the matched
//! events passes.
//!
//! EXPR combines comparisons with `&&`, `||` (equal precedence, evaluated left to
//! right: `a || b && c` is `(a || b) && c`), `!` and parentheses. A comparison is
//! `FIELD OP VALUE` with `==`, `!=`, `<`, `<=`, `>`, `>=` on numbers (`strtoull` syntax:
//! `0x..`, octal `0..`), `==`, `!=`, `=~`, `!~` (regex, case-insensitive) on strings in
//! quotes, or `FIELD ARITH NUMBER` (`+ - * / % << >> & | ^`) used as a truth value. `COMM`
//! is the task name of the record's pid and `CPU` its CPU, unless the event has fields of
//! those names. A field the event lacks makes its comparison false (not an error), so
//! `.*:prev_pid==0` keeps only the events that have `prev_pid`. A non-string field
//! compared with a string is compared as the name of the kernel function at that address
//! (pointers and longs) or as `0x%x` of its value. A one-character single-quoted value is
//! a number (its character code).
//!
//! Several `-F` options: a record passes when any of them passes it; a record of an
//! event that no `-F` names is dropped. After `-v`, further `-F` options remove the
//! records they match instead.

use std::collections::HashMap;
use std::fmt;

use regex::Regex;

use crate::bre::basic_regex;

use super::{read_uint, sign_extend, Catalog, FieldClass, FieldSpec};
use crate::event::Record;

/// A filter string that could not be used, with what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterError {
    /// The `-F` argument.
    pub filter: String,
    /// What is wrong with it.
    pub message: String,
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "filter '{}': {}", self.filter, self.message)
    }
}

impl std::error::Error for FilterError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Re,
    NotRe,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shr,
    Shl,
    And,
    Or,
    Xor,
}

#[derive(Debug, Clone)]
enum Value {
    /// A field, with its name (for `-T`).
    Field(FieldSpec, Box<str>),
    Comm,
    Cpu,
    Const(u64),
    Arith(Box<Value>, Arith, Box<Value>),
}

#[derive(Debug, Clone)]
enum StrSource {
    Field(FieldSpec, Box<str>),
    Comm,
    Cpu,
}

#[derive(Debug, Clone)]
enum Expr {
    Bool(bool),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Num(Value, Cmp, Value),
    Str {
        src: StrSource,
        equal: bool,
        text: String,
    },
    Regex {
        src: StrSource,
        negate: bool,
        re: Regex,
        /// The regex as given (for `-T`).
        pattern: String,
    },
    Truthy(Value),
}

/// One `-F` argument compiled for every event it names.
#[derive(Debug, Clone)]
struct FilterSet {
    by_id: HashMap<u16, Expr>,
}

/// All `-F` filters of a report.
#[derive(Debug, Clone, Default)]
pub struct EventFilter {
    keep: Vec<FilterSet>,
    drop: Vec<FilterSet>,
}

/// What a filter needs to know about a record beyond its payload.
pub struct FilterContext<'a> {
    /// The comm of a pid (`COMM`).
    pub comm: &'a dyn Fn(i32) -> String,
    /// The pid of the record.
    pub pid: i32,
}

impl EventFilter {
    /// No filters: everything passes.
    pub fn new() -> EventFilter {
        EventFilter::default()
    }

    /// Whether no `-F` was given.
    pub fn is_empty(&self) -> bool {
        self.keep.is_empty() && self.drop.is_empty()
    }

    /// Add one `-F` argument; `negate` for those given after `-v`.
    ///
    /// Returns warnings for the caller to show: a name that is no field of any event the
    /// filter matched (its comparisons are false, as in trace-cmd, but it is most likely a
    /// typo).
    pub fn add<C: Catalog + ?Sized>(
        &mut self,
        catalog: &C,
        text: &str,
        negate: bool,
    ) -> Result<Vec<String>, FilterError> {
        let err = |m: String| FilterError {
            filter: text.to_string(),
            message: m,
        };
        let (events_part, expr_part) = match text.find(':') {
            Some(i) => (&text[..i], Some(&text[i + 1..])),
            None => (text, None),
        };
        let mut ids: Vec<u16> = Vec::new();
        for id in pattern_matches(catalog, events_part)
            .map_err(&err)?
            .into_iter()
            .flatten()
        {
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        let mut by_id = HashMap::new();
        // Names that are no field of any matched event: a typo, not a condition.
        let mut missing_everywhere: Option<Vec<String>> = None;
        for id in ids {
            let (expr, missing) = compile(catalog, id, expr_part).map_err(&err)?;
            if expr_part.is_some() {
                missing_everywhere = Some(match missing_everywhere {
                    None => missing,
                    Some(prev) => prev.into_iter().filter(|n| missing.contains(n)).collect(),
                });
            }
            by_id.insert(id, expr);
        }
        let warnings = match missing_everywhere.filter(|m| !m.is_empty()) {
            Some(names) => vec![format!(
                "filter '{text}': no event matched by '{}' has a field named '{}'; its comparisons are false",
                events_part.trim(),
                names.join("', '")
            )],
            None => Vec::new(),
        };
        let set = FilterSet { by_id };
        if negate {
            self.drop.push(set);
        } else {
            self.keep.push(set);
        }
        Ok(warnings)
    }

    /// Whether a record of event `id` passes the filters.
    pub fn accepts<C: Catalog + ?Sized>(
        &self,
        catalog: &C,
        id: u16,
        rec: &Record,
        ctx: &FilterContext,
    ) -> bool {
        let eval = |set: &FilterSet| {
            set.by_id
                .get(&id)
                .is_some_and(|e| eval(e, catalog, rec, ctx))
        };
        if !self.keep.is_empty() && !self.keep.iter().any(eval) {
            return false;
        }
        !self.drop.iter().any(eval)
    }
}

/// `-T`: each event a `-F` argument names with the filter libtraceevent keeps for it,
/// printed as `tep_filter_make_string` prints it (`TRUE`, `FALSE`, `(A) && (B)`, `FIELD
/// OP VALUE`, ...), in libtraceevent's order (each pattern's events by id, the whole list
/// reversed; an event two patterns name comes twice). `negate` (`-v`) changes nothing.
pub fn filter_test_strings<C: Catalog + ?Sized>(
    catalog: &C,
    text: &str,
) -> Result<Vec<(String, String)>, FilterError> {
    let err = |m: String| FilterError {
        filter: text.to_string(),
        message: m,
    };
    let (events_part, expr_part) = match text.find(':') {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let mut ids: Vec<u16> = pattern_matches(catalog, events_part)
        .map_err(&err)?
        .into_iter()
        .flatten()
        .collect();
    ids.reverse();
    let mut out = Vec::new();
    for id in ids {
        let (expr, _) = compile(catalog, id, expr_part).map_err(&err)?;
        let shown = match reduce(expr) {
            Reduced::True => "TRUE".to_string(),
            Reduced::False => "FALSE".to_string(),
            Reduced::Expr(e) => show(&e),
        };
        let name = catalog.event(id).map_or("", |(_, n)| n).to_string();
        out.push((name, shown));
    }
    Ok(out)
}

/// The ids of the events each comma-separated pattern of a filter's EVENTS part matches,
/// by id; a pattern that matches nothing is an error.
fn pattern_matches<C: Catalog + ?Sized>(
    catalog: &C,
    events_part: &str,
) -> Result<Vec<Vec<u16>>, String> {
    let mut all = catalog.events();
    all.sort_by_key(|e| e.0);
    let mut out = Vec::new();
    for pat in events_part.split(',') {
        let mut parts = pat.split('/').filter(|s| !s.is_empty());
        let first = parts
            .next()
            .map(str::trim)
            .ok_or_else(|| "no event named".to_string())?;
        let second = parts.next().map(str::trim);
        let (sys_re, ev_re) = match second {
            Some(ev) => (Some(anchored(first)?), anchored(ev)?),
            None => (None, anchored(first)?),
        };
        let ids: Vec<u16> = all
            .iter()
            .filter(|&&(_, sys, name)| match &sys_re {
                Some(s) => s.is_match(sys) && ev_re.is_match(name),
                None => ev_re.is_match(sys) || ev_re.is_match(name),
            })
            .map(|e| e.0)
            .collect();
        if ids.is_empty() {
            return Err(format!("no event of the file matches '{}'", pat.trim()));
        }
        out.push(ids);
    }
    Ok(out)
}

/// A filter's expression (None: every record passes) compiled for event `id`, with the
/// names it reads that are no field of the event.
fn compile<C: Catalog + ?Sized>(
    catalog: &C,
    id: u16,
    expr_part: Option<&str>,
) -> Result<(Expr, Vec<String>), String> {
    let Some(e) = expr_part else {
        return Ok((Expr::Bool(true), Vec::new()));
    };
    let toks = tokenize(e)?;
    let mut p = Parser {
        toks: &toks,
        pos: 0,
        catalog,
        id,
        depth: 0,
        missing: Vec::new(),
    };
    let (x, _) = p.expr()?;
    if p.pos != toks.len() {
        return Err(format!("syntax error near '{}'", toks[p.pos].text()));
    }
    Ok((x, p.missing))
}

/// A filter tree after libtraceevent's collapse of its constant parts.
enum Reduced {
    True,
    False,
    Expr(Expr),
}

/// libtraceevent's `collapse_tree`: `FALSE && X` is `FALSE`, `TRUE && X` is `X`, `X &&
/// FALSE` is `FALSE`, `X && TRUE` is `X` (and so for `||`), `!TRUE` is `FALSE`.
fn reduce(e: Expr) -> Reduced {
    match e {
        Expr::Bool(true) => Reduced::True,
        Expr::Bool(false) => Reduced::False,
        Expr::Not(x) => match reduce(*x) {
            Reduced::True => Reduced::False,
            Reduced::False => Reduced::True,
            Reduced::Expr(y) => Reduced::Expr(Expr::Not(Box::new(y))),
        },
        Expr::And(l, r) => match reduce(*l) {
            Reduced::False => Reduced::False,
            Reduced::True => reduce(*r),
            Reduced::Expr(a) => match reduce(*r) {
                Reduced::Expr(b) => Reduced::Expr(Expr::And(Box::new(a), Box::new(b))),
                Reduced::True => Reduced::Expr(a),
                Reduced::False => Reduced::False,
            },
        },
        Expr::Or(l, r) => match reduce(*l) {
            Reduced::True => Reduced::True,
            Reduced::False => reduce(*r),
            Reduced::Expr(a) => match reduce(*r) {
                Reduced::Expr(b) => Reduced::Expr(Expr::Or(Box::new(a), Box::new(b))),
                Reduced::True => Reduced::True,
                Reduced::False => Reduced::Expr(a),
            },
        },
        other => Reduced::Expr(other),
    }
}

/// libtraceevent's `arg_to_str` of a collapsed filter.
fn show(e: &Expr) -> String {
    match e {
        Expr::Bool(b) => (if *b { "TRUE" } else { "FALSE" }).to_string(),
        Expr::And(l, r) | Expr::Or(l, r) => {
            let and = matches!(e, Expr::And(..));
            let (l, r) = (show(l), show(r));
            let val = |s: &str| match s {
                "TRUE" => Some(true),
                "FALSE" => Some(false),
                _ => None,
            };
            match (val(&l), val(&r)) {
                (Some(lv), _) if lv != and => l,
                (Some(lv), Some(rv)) => {
                    let v = if and { lv && rv } else { lv || rv };
                    (if v { "TRUE" } else { "FALSE" }).to_string()
                }
                (_, Some(rv)) if rv != and => r,
                (_, Some(_)) => l,
                _ => format!("({l}) {} ({r})", if and { "&&" } else { "||" }),
            }
        }
        Expr::Not(x) => match show(x).as_str() {
            "TRUE" => "FALSE".to_string(),
            "FALSE" => "TRUE".to_string(),
            s => format!("!({s})"),
        },
        Expr::Truthy(v) => show_value(v),
        Expr::Num(l, cmp, r) => {
            let op = match cmp {
                Cmp::Eq => "==",
                Cmp::Ne => "!=",
                Cmp::Lt => "<",
                Cmp::Le => "<=",
                Cmp::Gt => ">",
                Cmp::Ge => ">=",
                Cmp::Re => "=~",
                Cmp::NotRe => "!~",
            };
            format!("{} {op} {}", show_value(l), show_value(r))
        }
        Expr::Str { src, equal, text } => {
            format!(
                "{} {} \"{text}\"",
                show_source(src),
                if *equal { "==" } else { "!=" }
            )
        }
        Expr::Regex {
            src,
            negate,
            pattern,
            ..
        } => format!(
            "{} {} \"{pattern}\"",
            show_source(src),
            if *negate { "!~" } else { "=~" }
        ),
    }
}

fn show_source(s: &StrSource) -> String {
    match s {
        StrSource::Field(_, name) => name.to_string(),
        StrSource::Comm => "COMM".to_string(),
        StrSource::Cpu => "CPU".to_string(),
    }
}

fn show_value(v: &Value) -> String {
    match v {
        Value::Field(_, name) => name.to_string(),
        Value::Comm => "COMM".to_string(),
        Value::Cpu => "CPU".to_string(),
        Value::Const(c) => (*c as i64).to_string(),
        Value::Arith(l, op, r) => {
            let op = match op {
                Arith::Add => "+",
                Arith::Sub => "-",
                Arith::Mul => "*",
                Arith::Div => "/",
                Arith::Mod => "%",
                Arith::Shr => ">>",
                Arith::Shl => "<<",
                Arith::And => "&",
                Arith::Or => "|",
                Arith::Xor => "^",
            };
            format!("{} {op} {}", show_value(l), show_value(r))
        }
    }
}

/// Compile a POSIX basic regex (as `regcomp` without `REG_EXTENDED`, case-insensitive)
/// anchored at both ends.
fn anchored(pat: &str) -> Result<Regex, String> {
    basic_regex(&format!("^{pat}$"))
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Item(String),
    DQuote(String),
    SQuote(String),
    Op(String),
    Open,
    Close,
}

impl Tok {
    fn text(&self) -> String {
        match self {
            Tok::Item(s) | Tok::Op(s) => s.clone(),
            Tok::DQuote(s) => format!("\"{s}\""),
            Tok::SQuote(s) => format!("'{s}'"),
            Tok::Open => "(".into(),
            Tok::Close => ")".into(),
        }
    }
}

fn tokenize(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'(' {
            out.push(Tok::Open);
            i += 1;
        } else if c == b')' {
            out.push(Tok::Close);
            i += 1;
        } else if c == b'"' || c == b'\'' {
            let mut j = i + 1;
            let mut text = Vec::new();
            while j < b.len() && b[j] != c {
                if b[j] == b'\\' && j + 1 < b.len() {
                    j += 1;
                }
                text.push(b[j]);
                j += 1;
            }
            if j >= b.len() {
                return Err("unterminated quote".into());
            }
            let text = String::from_utf8_lossy(&text).into_owned();
            out.push(if c == b'"' {
                Tok::DQuote(text)
            } else {
                Tok::SQuote(text)
            });
            i = j + 1;
        } else if c.is_ascii_alphanumeric() || c == b'_' {
            let mut j = i;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'.') {
                j += 1;
            }
            out.push(Tok::Item(s[i..j].to_string()));
            i = j;
        } else if c == b',' {
            return Err("illegal token ','".into());
        } else {
            let two = s.get(i..i + 2).unwrap_or("");
            let op = match two {
                "&&" | "||" | "==" | "!=" | "<=" | ">=" | "=~" | "!~" | "<<" | ">>" => two,
                _ => match c {
                    b'!' | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^'
                    | b'~' => &s[i..i + 1],
                    _ => {
                        return Err(format!(
                            "unknown token '{}'",
                            &s[i..].chars().next().unwrap_or('?')
                        ))
                    }
                },
            };
            out.push(Tok::Op(op.to_string()));
            i += op.len();
        }
    }
    Ok(out)
}

/// Deepest nesting of a filter's parentheses and `!`, and tallest tree of `&&`/`||`:
/// parsing, evaluating and dropping recurse that deep.
const MAX_FILTER_DEPTH: u32 = 256;

struct Parser<'t, 'c, C: Catalog + ?Sized> {
    toks: &'t [Tok],
    pos: usize,
    catalog: &'c C,
    id: u16,
    /// Current nesting of parentheses and `!`.
    depth: u32,
    /// Names read that are no field of this event (nor COMM or CPU).
    missing: Vec<String>,
}

fn too_deep() -> String {
    format!("the filter nests deeper than {MAX_FILTER_DEPTH} levels")
}

enum Item {
    Value(Value),
    /// A name that is no field of the event: its comparisons are false.
    Missing,
    DQ(String),
    SQ(String),
}

impl<C: Catalog + ?Sized> Parser<'_, '_, C> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn next(&mut self) -> Option<Tok> {
        let t = self.toks.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    /// `term (('&&'|'||') term)*`, left to right with one precedence; with the height
    /// of its tree.
    fn expr(&mut self) -> Result<(Expr, u32), String> {
        let (mut left, mut height) = self.term()?;
        while let Some(Tok::Op(op)) = self.peek() {
            let and = match op.as_str() {
                "&&" => true,
                "||" => false,
                _ => break,
            };
            self.pos += 1;
            let (right, h) = self.term()?;
            height = height.max(h) + 1;
            if height > MAX_FILTER_DEPTH {
                return Err(too_deep());
            }
            left = if and {
                Expr::And(Box::new(left), Box::new(right))
            } else {
                Expr::Or(Box::new(left), Box::new(right))
            };
        }
        Ok((left, height))
    }

    /// A term one level of nesting deeper.
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, String>) -> Result<T, String> {
        if self.depth >= MAX_FILTER_DEPTH {
            return Err(too_deep());
        }
        self.depth += 1;
        let res = f(self);
        self.depth -= 1;
        res
    }

    fn term(&mut self) -> Result<(Expr, u32), String> {
        match self.next() {
            Some(Tok::Op(op)) if op == "!" => {
                let (x, h) = self.nested(Self::term)?;
                if h >= MAX_FILTER_DEPTH {
                    return Err(too_deep());
                }
                Ok((Expr::Not(Box::new(x)), h + 1))
            }
            Some(Tok::Open) => {
                let e = self.nested(Self::expr)?;
                match self.next() {
                    Some(Tok::Close) => Ok(e),
                    _ => Err("unbalanced '('".into()),
                }
            }
            Some(t @ (Tok::Item(_) | Tok::DQuote(_) | Tok::SQuote(_))) => {
                let left = self.item(t)?;
                Ok((self.comparison(left)?, 1))
            }
            Some(t) => Err(format!("syntax error near '{}'", t.text())),
            None => Err("syntax error: expression ends early".into()),
        }
    }

    fn item(&mut self, t: Tok) -> Result<Item, String> {
        Ok(match t {
            Tok::DQuote(s) => Item::DQ(s),
            Tok::SQuote(s) => Item::SQ(s),
            Tok::Item(s) => {
                if s.as_bytes()[0].is_ascii_digit() {
                    Item::Value(Value::Const(parse_ull(&s)))
                } else if let Some(f) = self.catalog.field(self.id, &s) {
                    Item::Value(Value::Field(f, s.into()))
                } else if s == "COMM" {
                    Item::Value(Value::Comm)
                } else if s == "CPU" {
                    Item::Value(Value::Cpu)
                } else {
                    if !self.missing.contains(&s) {
                        self.missing.push(s);
                    }
                    Item::Missing
                }
            }
            other => return Err(format!("expected a value but found '{}'", other.text())),
        })
    }

    fn comparison(&mut self, left: Item) -> Result<Expr, String> {
        let op = match self.peek() {
            Some(Tok::Op(op)) if op != "&&" && op != "||" && op != "!" => op.clone(),
            _ => {
                return Ok(match left {
                    Item::Value(v) => Expr::Truthy(v),
                    Item::Missing => Expr::Bool(false),
                    Item::DQ(_) | Item::SQ(_) => return Err("a string is no condition".into()),
                })
            }
        };
        self.pos += 1;
        let arith = match op.as_str() {
            "+" => Some(Arith::Add),
            "-" => Some(Arith::Sub),
            "*" => Some(Arith::Mul),
            "/" => Some(Arith::Div),
            "%" => Some(Arith::Mod),
            ">>" => Some(Arith::Shr),
            "<<" => Some(Arith::Shl),
            "&" => Some(Arith::And),
            "|" => Some(Arith::Or),
            "^" => Some(Arith::Xor),
            _ => None,
        };
        let right_tok = self
            .next()
            .ok_or_else(|| "syntax error: missing right operand".to_string())?;
        let right = self.item(right_tok)?;
        if let Some(a) = arith {
            return Ok(match (left, right) {
                (Item::Value(l), Item::Value(r)) => {
                    Expr::Truthy(Value::Arith(Box::new(l), a, Box::new(r)))
                }
                (Item::Missing, _) | (_, Item::Missing) => Expr::Bool(false),
                _ => return Err("arithmetic needs numbers".into()),
            });
        }
        let cmp = match op.as_str() {
            "==" => Cmp::Eq,
            "!=" => Cmp::Ne,
            "<" => Cmp::Lt,
            "<=" => Cmp::Le,
            ">" => Cmp::Gt,
            ">=" => Cmp::Ge,
            "=~" => Cmp::Re,
            "!~" => Cmp::NotRe,
            other => return Err(format!("unknown op token {other}")),
        };
        let is_re = matches!(cmp, Cmp::Re | Cmp::NotRe);
        let right = match right {
            Item::SQ(s) if s.len() == 1 && !is_re => {
                Item::Value(Value::Const(u64::from(s.as_bytes()[0])))
            }
            other => other,
        };
        match right {
            Item::DQ(text) | Item::SQ(text) => {
                let src = match left {
                    Item::Missing => return Ok(Expr::Bool(false)),
                    Item::Value(Value::Field(f, name)) => StrSource::Field(f, name),
                    Item::Value(Value::Comm) => StrSource::Comm,
                    Item::Value(Value::Cpu) => StrSource::Cpu,
                    _ => return Err("illegal lvalue for string comparison".into()),
                };
                match cmp {
                    Cmp::Eq | Cmp::Ne => Ok(Expr::Str {
                        src,
                        equal: cmp == Cmp::Eq,
                        text,
                    }),
                    Cmp::Re | Cmp::NotRe => {
                        let re = basic_regex(&text)?;
                        Ok(Expr::Regex {
                            src,
                            negate: cmp == Cmp::NotRe,
                            re,
                            pattern: text,
                        })
                    }
                    _ => Err("illegal comparison for string".into()),
                }
            }
            Item::Value(r) => {
                if is_re {
                    return Err("op not allowed with integers".into());
                }
                match left {
                    Item::Missing => Ok(Expr::Bool(false)),
                    Item::Value(l) => Ok(Expr::Num(l, cmp, r)),
                    _ => Err("illegal lvalue".into()),
                }
            }
            Item::Missing => Ok(Expr::Bool(false)),
        }
    }
}

/// `strtoull(s, NULL, 0)`: hex with `0x`, octal with a leading 0, stops at the first
/// character that is not a digit.
fn parse_ull(s: &str) -> u64 {
    let (digits, radix) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (h, 16)
    } else if s.len() > 1 && s.starts_with('0') {
        (&s[1..], 8)
    } else {
        (s, 10)
    };
    let mut v: u64 = 0;
    for c in digits.chars() {
        match c.to_digit(radix) {
            Some(d) => v = v.wrapping_mul(u64::from(radix)).wrapping_add(u64::from(d)),
            None => break,
        }
    }
    v
}

fn value<C: Catalog + ?Sized>(v: &Value, c: &C, rec: &Record) -> u64 {
    match v {
        Value::Const(x) => *x,
        Value::Cpu => u64::from(rec.cpu),
        // libtraceevent compares the address of the comm string here; it is never useful.
        Value::Comm => 0,
        Value::Field(f, _) => {
            let raw = read_uint(rec.data, *f, c.endian()).unwrap_or(0);
            if f.signed {
                sign_extend(raw, f.size) as u64
            } else {
                raw
            }
        }
        Value::Arith(l, op, r) => {
            let (l, r) = (value(l, c, rec), value(r, c, rec));
            match op {
                Arith::Add => l.wrapping_add(r),
                Arith::Sub => l.wrapping_sub(r),
                Arith::Mul => l.wrapping_mul(r),
                Arith::Div => l.checked_div(r).unwrap_or(0),
                Arith::Mod => l.checked_rem(r).unwrap_or(0),
                Arith::Shr => l.checked_shr(r as u32).unwrap_or(0),
                Arith::Shl => l.checked_shl(r as u32).unwrap_or(0),
                Arith::And => l & r,
                Arith::Or => l | r,
                Arith::Xor => l ^ r,
            }
        }
    }
}

fn string<C: Catalog + ?Sized>(
    src: &StrSource,
    c: &C,
    rec: &Record,
    ctx: &FilterContext,
) -> String {
    match src {
        StrSource::Comm => (ctx.comm)(ctx.pid),
        StrSource::Cpu => format!("0x{:x}", rec.cpu),
        StrSource::Field(f, _) => {
            let d = rec.data;
            let endian = c.endian();
            let bytes = match f.class {
                FieldClass::CharArray => d.get(f.offset..f.offset + f.size).unwrap_or(&[]),
                FieldClass::DataLocString | FieldClass::RelLocString => {
                    let loc = read_uint(d, FieldSpec { size: 4, ..*f }, endian).unwrap_or(0);
                    let mut off = (loc & 0xffff) as usize;
                    let len = (loc >> 16) as usize;
                    if f.class == FieldClass::RelLocString {
                        off += f.offset + f.size;
                    }
                    d.get(off..off + len).unwrap_or(&[])
                }
                _ => {
                    let raw = read_uint(d, *f, endian).unwrap_or(0);
                    let v = if f.signed {
                        sign_extend(raw, f.size) as u64
                    } else {
                        raw
                    };
                    if f.class == FieldClass::Long {
                        if let Some((name, _)) = c.function(v) {
                            return name.to_string();
                        }
                    }
                    return format!("0x{v:x}");
                }
            };
            let end = memchr::memchr(0, bytes).unwrap_or(bytes.len());
            String::from_utf8_lossy(&bytes[..end]).into_owned()
        }
    }
}

fn eval<C: Catalog + ?Sized>(e: &Expr, c: &C, rec: &Record, ctx: &FilterContext) -> bool {
    match e {
        Expr::Bool(b) => *b,
        Expr::And(l, r) => eval(l, c, rec, ctx) && eval(r, c, rec, ctx),
        Expr::Or(l, r) => eval(l, c, rec, ctx) || eval(r, c, rec, ctx),
        Expr::Not(x) => !eval(x, c, rec, ctx),
        Expr::Truthy(v) => value(v, c, rec) != 0,
        Expr::Num(l, cmp, r) => {
            let (l, r) = (value(l, c, rec), value(r, c, rec));
            match cmp {
                Cmp::Eq => l == r,
                Cmp::Ne => l != r,
                Cmp::Lt => l < r,
                Cmp::Le => l <= r,
                Cmp::Gt => l > r,
                Cmp::Ge => l >= r,
                Cmp::Re | Cmp::NotRe => false,
            }
        }
        Expr::Str { src, equal, text } => (string(src, c, rec, ctx) == *text) == *equal,
        Expr::Regex {
            src, negate, re, ..
        } => re.is_match(&string(src, c, rec, ctx)) != *negate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_regex_translation() {
        assert!(anchored("sched_.*").unwrap().is_match("sched_switch"));
        assert!(anchored("SCHED_SWITCH").unwrap().is_match("sched_switch"));
        assert!(!anchored("sched").unwrap().is_match("sched_switch"));
        // In a basic regex `|` is a literal character, `\|` the alternation.
        assert!(!anchored("sched_switch|sched_wakeup")
            .unwrap()
            .is_match("sched_wakeup"));
        assert!(anchored("sched_switch\\|sched_wakeup")
            .unwrap()
            .is_match("sched_wakeup"));
    }

    #[test]
    fn numbers_like_strtoull() {
        assert_eq!(parse_ull("0x1f"), 31);
        assert_eq!(parse_ull("010"), 8);
        assert_eq!(parse_ull("42"), 42);
        assert_eq!(parse_ull("0"), 0);
    }

    #[test]
    fn tokens() {
        let t = tokenize("prev_pid==0 && COMM=~\"ls\"||!(x&4)").unwrap();
        assert_eq!(t.len(), 14);
        assert!(tokenize("a == 1, b").is_err());
    }
}
