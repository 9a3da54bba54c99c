//! The C expressions of a `print fmt`: tokens and a precedence-climbing parser.
//!
//! The kernel writes `print fmt: "format", arg, arg...` where each arg is the C expression
//! of the event's `TP_printk` after macro expansion: `REC->field`, casts, `?:`, helper
//! calls such as `__print_flags(...)` with `{ value, "name" }` tables.

use std::ops::Range;

/// One token of a `print fmt`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Num(u64),
    /// A number with an `L`/`UL`/`ULL` suffix: at least `long` wide.
    LNum(u64),
    Str(Vec<u8>),
    Ident(String),
    Punct(&'static str),
}

/// Every punctuator, longest first: the reference [`punct`] is tested against.
#[cfg(test)]
const PUNCTS: &[&str] = &[
    "<<=", ">>=", "...", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++", "--", "+=",
    "-=", "*=", "/=", "%=", "&=", "|=", "^=", "(", ")", "[", "]", "{", "}", ",", ";", "?", ":",
    "+", "-", "*", "/", "%", "&", "|", "^", "!", "~", "<", ">", "=", ".",
];

/// The punctuator at the start of `b`, the longest that matches, found by its first byte
/// (formats are mostly punctuation: a scan of every punctuator per token was most of the
/// time to compile an event).
fn punct(b: &[u8]) -> Option<&'static str> {
    let candidates: &[&'static str] = match b.first()? {
        b'<' => &["<<=", "<<", "<=", "<"],
        b'>' => &[">>=", ">>", ">=", ">"],
        b'.' => &["...", "."],
        b'-' => &["->", "--", "-=", "-"],
        b'+' => &["++", "+=", "+"],
        b'=' => &["==", "="],
        b'!' => &["!=", "!"],
        b'&' => &["&&", "&=", "&"],
        b'|' => &["||", "|=", "|"],
        b'*' => &["*=", "*"],
        b'/' => &["/=", "/"],
        b'%' => &["%=", "%"],
        b'^' => &["^=", "^"],
        b'(' => &["("],
        b')' => &[")"],
        b'[' => &["["],
        b']' => &["]"],
        b'{' => &["{"],
        b'}' => &["}"],
        b',' => &[","],
        b';' => &[";"],
        b'?' => &["?"],
        b':' => &[":"],
        b'~' => &["~"],
        _ => &[],
    };
    candidates
        .iter()
        .find(|p| b.starts_with(p.as_bytes()))
        .copied()
}

/// Split a `print fmt` into tokens; adjacent string literals are joined, as C does.
pub(crate) fn lex(src: &str) -> Result<Vec<Tok>, String> {
    lex_into(src, None)
}

/// [`lex`], with the byte range in `src` of each token (a joined string literal covers
/// all its parts).
pub(crate) fn lex_spanned(src: &str) -> Result<Vec<(Tok, Range<usize>)>, String> {
    let mut spans = Vec::new();
    let toks = lex_into(src, Some(&mut spans))?;
    Ok(toks.into_iter().zip(spans).collect())
}

/// The lexer: tokens, and their byte ranges into `spans` when asked for.
fn lex_into(src: &str, mut spans: Option<&mut Vec<Range<usize>>>) -> Result<Vec<Tok>, String> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out: Vec<Tok> = Vec::new();
    let mark = |spans: &mut Option<&mut Vec<Range<usize>>>, start: usize, end: usize| {
        if let Some(s) = spans.as_deref_mut() {
            s.push(start..end);
        }
    };
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() || c == b'\\' && b.get(i + 1) == Some(&b'\n') {
            i += 1;
            continue;
        }
        if c == b'"' || c == b'\'' {
            let start = i;
            let (bytes, next) = lex_quoted(b, i)?;
            i = next;
            if c == b'\'' {
                let v = bytes.first().copied().unwrap_or(0) as u64;
                out.push(Tok::Num(v));
                mark(&mut spans, start, i);
            } else if let Some(Tok::Str(prev)) = out.last_mut() {
                prev.extend_from_slice(&bytes);
                if let Some(last) = spans.as_deref_mut().and_then(|s| s.last_mut()) {
                    last.end = i;
                }
            } else {
                out.push(Tok::Str(bytes));
                mark(&mut spans, start, i);
            }
            continue;
        }
        if c.is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let text = &src[start..i];
            let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
            let v = if let Some(h) = digits
                .strip_prefix("0x")
                .or_else(|| digits.strip_prefix("0X"))
            {
                u64::from_str_radix(h, 16)
            } else if digits.len() > 1 && digits.starts_with('0') {
                u64::from_str_radix(&digits[1..], 8)
            } else {
                digits.parse::<u64>()
            };
            let v = v.map_err(|_| format!("bad number `{text}`"))?;
            out.push(if digits.len() != text.len() && text.contains(['l', 'L']) {
                Tok::LNum(v)
            } else {
                Tok::Num(v)
            });
            mark(&mut spans, start, i);
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(src[start..i].to_string()));
            mark(&mut spans, start, i);
            continue;
        }
        match punct(&b[i..]) {
            Some(p) => {
                out.push(Tok::Punct(p));
                mark(&mut spans, i, i + p.len());
                i += p.len();
            }
            None => {
                return Err(format!(
                    "unexpected character `{}`",
                    src[i..].chars().next().unwrap_or('?')
                ))
            }
        }
    }
    Ok(out)
}

fn lex_quoted(b: &[u8], start: usize) -> Result<(Vec<u8>, usize), String> {
    let q = b[start];
    let mut i = start + 1;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c == q {
            return Ok((out, i + 1));
        }
        if c == b'\\' && i + 1 < b.len() {
            i += 1;
            let e = b[i];
            match e {
                b'n' => out.push(b'\n'),
                b't' => out.push(b'\t'),
                b'r' => out.push(b'\r'),
                b'a' => out.push(7),
                b'b' => out.push(8),
                b'f' => out.push(12),
                b'v' => out.push(11),
                b'e' => out.push(27),
                b'x' => {
                    let mut v = 0u32;
                    let mut n = 0;
                    while n < 2 && i + 1 < b.len() && b[i + 1].is_ascii_hexdigit() {
                        i += 1;
                        v = v * 16 + (b[i] as char).to_digit(16).unwrap_or(0);
                        n += 1;
                    }
                    out.push(v as u8);
                }
                b'0'..=b'7' => {
                    let mut v = (e - b'0') as u32;
                    let mut n = 1;
                    while n < 3 && i + 1 < b.len() && (b'0'..=b'7').contains(&b[i + 1]) {
                        i += 1;
                        v = v * 8 + (b[i] - b'0') as u32;
                        n += 1;
                    }
                    out.push(v as u8);
                }
                other => out.push(other),
            }
            i += 1;
            continue;
        }
        out.push(c);
        i += 1;
    }
    Err("unterminated string literal".into())
}

/// A C type named in a cast or `sizeof`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CType {
    /// Size in bytes of the value (pointers: long size).
    pub size: u8,
    pub signed: bool,
    pub pointer: bool,
    /// For pointers, the pointee size (1 for `char *`), 0 when unknown/void.
    pub elem: u8,
}

/// The parsed expression tree.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Num(u64),
    /// A folded constant with its C type (value, signed, size).
    Const(u64, bool, u8),
    Str(Vec<u8>),
    /// `REC->name`, resolved to a field index at compile time.
    Field(usize),
    /// An identifier that is not a field (an enum constant the kernel left unexpanded).
    Ident(String),
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    Cast(CType, Box<Expr>),
    Call(String, Vec<Expr>),
    Index(Box<Expr>, Box<Expr>),
    /// `{ a, b }` entries of symbol and flag tables.
    List(Vec<Expr>),
    /// `x.member` / `x->member` on something that is not `REC`.
    Member(Box<Expr>, String),
    /// A local of a statement expression, by slot.
    Local(usize),
    /// `({ T x = e; ...; value; })`: slot assignments (with their declared type), then the value.
    Block(Vec<(usize, CType, Expr)>, Box<Expr>),
}

/// Most locals one print fmt may declare in statement expressions.
pub(crate) const MAX_LOCALS: usize = 16;

/// Deepest nesting the parser reads: parentheses, brackets, braces, and prefix operators
/// and casts applied to each other, one level each (trace-cmd reads 5,000 parentheses).
pub(crate) const MAX_NESTING: u32 = 10_000;

/// Tallest expression tree accepted. Name resolution, folding, compilation, evaluation
/// and dropping all recurse on the tree, on any thread (a report's decoding threads have
/// the default 2 MiB stack), in debug builds too. Parentheses alone add no height.
pub(crate) const MAX_HEIGHT: u32 = 128;

/// Nesting the parser goes to on the caller's stack. A deeper print fmt is parsed again on
/// a thread with a stack sized for [`MAX_NESTING`]; the tree it returns is short enough
/// for the caller's stack (it is at most [`MAX_HEIGHT`] tall).
const SHALLOW_NESTING: u32 = 64;

/// Stack of the thread that parses deeply nested print fmts: [`MAX_NESTING`] levels of
/// about five parser frames each, with room for debug builds' larger frames.
const DEEP_STACK: usize = 512 << 20;

/// An expression and the height of its tree.
type Parsed = Result<(Expr, u32), String>;

pub(crate) struct Parser<'t, F: Fn(&str) -> Option<usize>> {
    toks: &'t [Tok],
    pos: usize,
    locals: Vec<String>,
    long_size: usize,
    field: F,
    /// Current nesting, and the most allowed on this thread.
    depth: u32,
    max_depth: u32,
    /// Set when `max_depth` was reached below [`MAX_NESTING`]: the print fmt is not wrong,
    /// it needs a deeper stack.
    needs_deep_stack: bool,
}

/// The format string and the arguments of a print fmt's tokens, `"format", arg, ...`.
///
/// `field` gives the index of a `REC->name` field.
pub(crate) fn parse_print_fmt<F>(
    toks: &[Tok],
    long_size: usize,
    field: F,
) -> Result<(Vec<u8>, Vec<Expr>), String>
where
    F: Fn(&str) -> Option<usize> + Sync,
{
    let parse = |max_depth: u32| {
        let mut p = Parser::new(toks, long_size, &field);
        p.max_depth = max_depth;
        let res = p.print_fmt();
        (res, p.needs_deep_stack)
    };
    match parse(SHALLOW_NESTING) {
        (Err(_), true) => {}
        (res, _) => return res,
    }
    std::thread::scope(|s| {
        let deep = std::thread::Builder::new()
            .name("print-fmt-parser".into())
            .stack_size(DEEP_STACK)
            .spawn_scoped(s, || parse(MAX_NESTING).0)
            .map_err(|e| {
                format!("cannot start a thread to parse a deeply nested print fmt: {e}")
            })?;
        deep.join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
    })
}

pub(crate) fn prec(op: &str) -> Option<u8> {
    Some(match op {
        "||" => 1,
        "&&" => 2,
        "|" => 3,
        "^" => 4,
        "&" => 5,
        "==" | "!=" => 6,
        "<" | ">" | "<=" | ">=" => 7,
        "<<" | ">>" => 8,
        "+" | "-" => 9,
        "*" | "/" | "%" => 10,
        _ => return None,
    })
}

const TYPE_WORDS: &[&str] = &[
    "unsigned", "signed", "int", "long", "short", "char", "void", "bool", "_Bool", "const",
    "volatile", "struct", "enum", "union", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
    "__u8", "__u16", "__u32", "__u64", "__s8", "__s16", "__s32", "__s64", "uint", "ulong",
    "__le16", "__le32", "__le64", "__be16", "__be32", "__be64", "__user",
];

fn is_type_word(s: &str) -> bool {
    TYPE_WORDS.contains(&s) || s.ends_with("_t")
}

impl<'t, F: Fn(&str) -> Option<usize>> Parser<'t, F> {
    pub(crate) fn new(toks: &'t [Tok], long_size: usize, field: F) -> Self {
        Parser {
            toks,
            pos: 0,
            locals: Vec::new(),
            long_size,
            field,
            depth: 0,
            max_depth: SHALLOW_NESTING,
            needs_deep_stack: false,
        }
    }

    /// `"format", arg, ...` to the end of the tokens.
    fn print_fmt(&mut self) -> Result<(Vec<u8>, Vec<Expr>), String> {
        let fmt = self.format_string()?;
        let mut args = Vec::new();
        while self.eat(",") {
            args.push(self.expr()?);
        }
        if !self.at_end() {
            return Err("unexpected text after the print fmt arguments".into());
        }
        Ok((fmt, args))
    }

    /// `parse` one level deeper; an error past the limit.
    fn nested(&mut self, parse: fn(&mut Self) -> Parsed) -> Parsed {
        if self.depth >= self.max_depth {
            self.needs_deep_stack = self.max_depth < MAX_NESTING;
            return Err(format!(
                "the print fmt nests expressions more than {MAX_NESTING} levels deep (at {})",
                self.describe()
            ));
        }
        self.depth += 1;
        let res = parse(self);
        self.depth -= 1;
        res
    }

    /// A node over children of height `h`: its height, or an error past [`MAX_HEIGHT`].
    fn node(&self, e: Expr, h: u32) -> Parsed {
        if h >= MAX_HEIGHT {
            return Err(format!(
                "the print fmt's expression is more than {MAX_HEIGHT} operations deep (at {})",
                self.describe()
            ));
        }
        Ok((e, h + 1))
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    fn peek(&self) -> Option<&'t Tok> {
        self.toks.get(self.pos)
    }

    fn peek_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if *q == p)
    }

    pub(crate) fn eat(&mut self, p: &str) -> bool {
        if self.peek_punct(p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(format!("expected `{p}` at {}", self.describe()))
        }
    }

    fn describe(&self) -> String {
        match self.peek() {
            None => "end of print fmt".into(),
            Some(Tok::Num(n)) | Some(Tok::LNum(n)) => format!("`{n}`"),
            Some(Tok::Str(s)) => format!("\"{}\"", String::from_utf8_lossy(s)),
            Some(Tok::Ident(s)) => format!("`{s}`"),
            Some(Tok::Punct(p)) => format!("`{p}`"),
        }
    }

    /// The leading string literal.
    pub(crate) fn format_string(&mut self) -> Result<Vec<u8>, String> {
        match self.peek() {
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(s.clone())
            }
            _ => Err(format!(
                "print fmt does not start with a string literal but {}",
                self.describe()
            )),
        }
    }

    /// An assignment-level expression (no comma operator: commas separate arguments).
    pub(crate) fn expr(&mut self) -> Result<Expr, String> {
        Ok(self.expr_h()?.0)
    }

    fn expr_h(&mut self) -> Parsed {
        self.nested(Self::conditional)
    }

    fn conditional(&mut self) -> Parsed {
        let (c, hc) = self.binary(1)?;
        if self.eat("?") {
            // GNU `a ?: b`
            let (t, ht) = if self.peek_punct(":") {
                (c.clone(), hc)
            } else {
                self.expr_h()?
            };
            self.expect(":")?;
            let (f, hf) = self.expr_h()?;
            let h = hc.max(ht).max(hf);
            return self.node(Expr::Cond(Box::new(c), Box::new(t), Box::new(f)), h);
        }
        Ok((c, hc))
    }

    /// The binary operator at the cursor if it binds at least as tightly as `min`.
    fn peek_binary(&self, min: u8) -> Option<(&'static str, u8)> {
        match self.peek() {
            Some(Tok::Punct(p)) => prec(p).filter(|&pr| pr >= min).map(|pr| (*p, pr)),
            _ => None,
        }
    }

    fn binary(&mut self, min: u8) -> Parsed {
        let (mut lhs, mut h) = self.unary()?;
        while let Some(op) = self.peek_binary(min) {
            self.pos += 1;
            let (rhs, hr) = self.binary(op.1 + 1)?;
            (lhs, h) = self.node(Expr::Binary(op.0, Box::new(lhs), Box::new(rhs)), h.max(hr))?;
        }
        Ok((lhs, h))
    }

    /// Try to read `( type )` at the current position; restore on failure.
    fn try_type_in_parens(&mut self) -> Option<CType> {
        let save = self.pos;
        if !self.eat("(") {
            return None;
        }
        let ty = self.type_name();
        if ty.is_some() && self.eat(")") {
            return ty;
        }
        self.pos = save;
        None
    }

    fn type_name(&mut self) -> Option<CType> {
        let start = self.pos;
        let mut words: Vec<&str> = Vec::new();
        while let Some(Tok::Ident(w)) = self.peek() {
            if words.is_empty() && !is_type_word(w) {
                break;
            }
            // `struct foo`: the tag is any identifier.
            let after_tag = matches!(
                words.last(),
                Some(&"struct") | Some(&"union") | Some(&"enum")
            );
            if !words.is_empty() && !after_tag && !is_type_word(w) {
                break;
            }
            words.push(w);
            self.pos += 1;
        }
        if words.is_empty() {
            self.pos = start;
            return None;
        }
        let mut stars = 0;
        while self.eat("*") {
            stars += 1;
        }
        let base = words
            .iter()
            .filter(|w| !matches!(**w, "const" | "volatile" | "__user"))
            .copied()
            .collect::<Vec<_>>()
            .join(" ");
        let signed_word = words.contains(&"signed");
        let unsigned = words.contains(&"unsigned")
            || base.starts_with('u')
            || base.starts_with("__u")
            || base.starts_with("__le")
            || base.starts_with("__be");
        let base_size = super::format::c_type_size(&base, self.long_size);
        if stars > 0 {
            let tagged = base
                .strip_prefix("struct ")
                .and_then(super::constants::struct_size);
            let elem = if stars == 1 {
                base_size.or(tagged).unwrap_or(0) as u8
            } else {
                self.long_size as u8
            };
            return Some(CType {
                size: self.long_size as u8,
                signed: false,
                pointer: true,
                elem,
            });
        }
        if base == "void" {
            return Some(CType {
                size: 0,
                signed: false,
                pointer: false,
                elem: 0,
            });
        }
        let size = match base_size {
            Some(s) => s,
            None if base.starts_with("struct") || base.starts_with("union") => return None,
            // An unknown typedef (`gfp_t`, `__kernel_rwf_t`): keep the value's width.
            None => 0,
        };
        let signed = if base == "char" {
            !unsigned
        } else {
            !unsigned || signed_word
        };
        let signed = signed
            && !matches!(
                base.as_str(),
                "bool" | "_Bool" | "size_t" | "dev_t" | "gfp_t"
            );
        Some(CType {
            size: size as u8,
            signed,
            pointer: false,
            elem: 0,
        })
    }

    /// The operand of a prefix operator or cast: one level deeper.
    fn operand(&mut self) -> Parsed {
        self.nested(Self::unary)
    }

    fn unary(&mut self) -> Parsed {
        if let Some(Tok::Punct(p)) = self.peek() {
            let p = *p;
            match p {
                "-" | "!" | "~" | "+" | "*" | "&" => {
                    self.pos += 1;
                    let (e, h) = self.operand()?;
                    return self.node(Expr::Unary(p, Box::new(e)), h);
                }
                "(" => {
                    if let Some(ty) = self.try_type_in_parens() {
                        let (e, h) = self.operand()?;
                        return self.node(Expr::Cast(ty, Box::new(e)), h);
                    }
                }
                _ => {}
            }
        }
        if let Some(Tok::Ident(w)) = self.peek() {
            if w == "sizeof" {
                self.pos += 1;
                if let Some(ty) = self.try_type_in_parens() {
                    if ty.size == 0 && !ty.pointer {
                        return Err("sizeof of an unknown type".into());
                    }
                    return Ok((Expr::Num(ty.size as u64), 1));
                }
                let (e, h) = self.operand()?;
                return self.node(Expr::Call("sizeof".into(), vec![e]), h);
            }
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Parsed {
        let (mut e, mut h) = self.primary()?;
        loop {
            if self.eat("[") {
                let (i, hi) = self.expr_h()?;
                self.expect("]")?;
                (e, h) = self.node(Expr::Index(Box::new(e), Box::new(i)), h.max(hi))?;
            } else if self.peek_punct("->") || self.peek_punct(".") {
                self.pos += 1;
                let name = match self.peek() {
                    Some(Tok::Ident(n)) => n.clone(),
                    _ => return Err(format!("expected a member name at {}", self.describe())),
                };
                self.pos += 1;
                (e, h) = match e {
                    Expr::Ident(ref r) if r == "REC" => match (self.field)(&name) {
                        Some(i) => (Expr::Field(i), 1),
                        None => return Err(format!("REC->{name}: no such field")),
                    },
                    other => self.node(Expr::Member(Box::new(other), name), h)?,
                };
            } else if self.peek_punct("(") {
                let name = match &e {
                    Expr::Ident(n) => n.clone(),
                    _ => return Err(format!("call of a non-name at {}", self.describe())),
                };
                self.pos += 1;
                let mut args = Vec::new();
                let mut ha = 0;
                if !self.eat(")") {
                    loop {
                        let (a, h) = self.expr_h()?;
                        args.push(a);
                        ha = ha.max(h);
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                (e, h) = self.node(Expr::Call(name, args), ha)?;
            } else {
                break;
            }
        }
        Ok((e, h))
    }

    fn primary(&mut self) -> Parsed {
        let t = self
            .peek()
            .ok_or_else(|| "expression expected at end of print fmt".to_string())?;
        self.pos += 1;
        match t {
            Tok::Num(n) => Ok((Expr::Num(*n), 1)),
            Tok::LNum(n) => Ok((
                Expr::Cast(
                    CType {
                        size: 8,
                        signed: *n <= i64::MAX as u64,
                        pointer: false,
                        elem: 0,
                    },
                    Box::new(Expr::Num(*n)),
                ),
                2,
            )),
            Tok::Str(s) => Ok((Expr::Str(s.clone()), 1)),
            Tok::Ident(s) => match self.locals.iter().rposition(|l| l == s) {
                Some(slot) => Ok((Expr::Local(slot), 1)),
                None => Ok((Expr::Ident(s.clone()), 1)),
            },
            Tok::Punct("(") if self.peek_punct("{") => {
                self.pos += 1;
                let mut decls = Vec::new();
                let mut hd = 0;
                loop {
                    let save = self.pos;
                    if let Some(ty) = self.type_name() {
                        if let Some(Tok::Ident(name)) = self.peek() {
                            let name = name.clone();
                            self.pos += 1;
                            if self.eat("=") {
                                let (init, h) = self.expr_h()?;
                                hd = hd.max(h);
                                self.expect(";")?;
                                if self.locals.len() >= MAX_LOCALS {
                                    return Err("too many locals in statement expressions".into());
                                }
                                self.locals.push(name);
                                decls.push((self.locals.len() - 1, ty, init));
                                continue;
                            }
                        }
                    }
                    self.pos = save;
                    break;
                }
                let (value, hv) = self.expr_h()?;
                self.expect(";")?;
                self.expect("}")?;
                self.expect(")")?;
                self.node(Expr::Block(decls, Box::new(value)), hd.max(hv))
            }
            Tok::Punct("(") => {
                let mut e = self.expr_h()?;
                // The comma operator inside parentheses: value of the last.
                while self.eat(",") {
                    e = self.expr_h()?;
                }
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("{") => {
                let mut items = Vec::new();
                let mut hi = 0;
                if !self.eat("}") {
                    loop {
                        let (item, h) = self.expr_h()?;
                        items.push(item);
                        hi = hi.max(h);
                        if self.eat("}") {
                            break;
                        }
                        self.expect(",")?;
                        if self.eat("}") {
                            break;
                        }
                    }
                }
                self.node(Expr::List(items), hi)
            }
            Tok::Punct(p) => {
                self.pos -= 1;
                Err(format!("unexpected `{p}`"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str) -> Expr {
        let t = lex(s).unwrap();
        let mut p = Parser::new(&t, 8, |n| if n == "a" { Some(7) } else { None });
        let e = p.expr().unwrap();
        assert!(p.at_end(), "{s}");
        e
    }

    #[test]
    fn spans_cover_each_token_and_joined_strings() {
        let src = r#""a" "b", REC->x_1 + 0x10UL, 'c'"#;
        let toks = lex_spanned(src).unwrap();
        let texts: Vec<&str> = toks.iter().map(|(_, r)| &src[r.clone()]).collect();
        assert_eq!(
            texts,
            [
                r#""a" "b""#,
                ",",
                "REC",
                "->",
                "x_1",
                "+",
                "0x10UL",
                ",",
                "'c'"
            ]
        );
        let plain: Vec<Tok> = toks.into_iter().map(|(t, _)| t).collect();
        assert_eq!(plain, lex(src).unwrap());
    }

    #[test]
    fn lexes_literals() {
        let t = lex(r#""a\n" "b%d", 0x1fUL, 017, 'c', REC->a"#).unwrap();
        assert_eq!(t[0], Tok::Str(b"a\nb%d".to_vec()));
        assert_eq!(t[2], Tok::LNum(0x1f));
        assert_eq!(t[4], Tok::Num(0o17));
        assert_eq!(t[6], Tok::Num(b'c' as u64));
    }

    #[test]
    fn precedence_casts_and_fields() {
        assert_eq!(
            parse("1 + 2 * 3"),
            Expr::Binary(
                "+",
                Box::new(Expr::Num(1)),
                Box::new(Expr::Binary(
                    "*",
                    Box::new(Expr::Num(2)),
                    Box::new(Expr::Num(3))
                ))
            )
        );
        assert_eq!(
            parse("(unsigned int)REC->a"),
            Expr::Cast(
                CType {
                    size: 4,
                    signed: false,
                    pointer: false,
                    elem: 0
                },
                Box::new(Expr::Field(7))
            )
        );
        assert_eq!(parse("sizeof(u64)"), Expr::Num(8));
        assert!(matches!(parse("REC->a ? \"x\" : \"y\""), Expr::Cond(..)));
        assert!(matches!(
            parse("(char *)REC->a"),
            Expr::Cast(
                CType {
                    pointer: true,
                    elem: 1,
                    ..
                },
                _
            )
        ));
    }

    #[test]
    fn unknown_field_is_an_error() {
        let t = lex("REC->nope").unwrap();
        let mut p = Parser::new(&t, 8, |_| None);
        assert!(p.expr().unwrap_err().contains("REC->nope"));
    }

    #[test]
    fn punctuators_are_the_longest_match() {
        // Every string of up to three punctuation bytes: the first-byte lookup gives what
        // a longest-first scan of the whole list gives.
        let alphabet = b"<>.-+=!&|*/%^()[]{},;?:~@ ";
        for a in alphabet {
            for b in alphabet {
                for c in alphabet {
                    let s = [*a, *b, *c];
                    let want = PUNCTS.iter().find(|p| s.starts_with(p.as_bytes())).copied();
                    assert_eq!(super::punct(&s), want, "{:?}", String::from_utf8_lossy(&s));
                }
            }
        }
    }
}
