//! perf's configuration files (`perfconfig`), read as perf 6.1 reads them at start, for
//! the variables tracectl follows: `buildid.dir`, the build-id cache.
//!
//! perf reads `$PERF_CONFIG` alone when that variable is set (to anything: an empty or
//! missing file is no configuration at all); otherwise `/etc/perfconfig` (unless
//! `PERF_CONFIG_NOSYSTEM` is true), then `$HOME/.perfconfig` (unless
//! `PERF_CONFIG_NOGLOBAL` is true; skipped when empty, or owned by a user other than
//! root and the one running). A value set twice keeps the last one read. A line perf
//! cannot parse ends the reading of its file with a warning naming the file and the
//! line; the values before it hold, and a bad `/etc/perfconfig` leaves
//! `~/.perfconfig` unread. `PERF_BUILDID_DIR` is no input: perf overwrites it for the
//! programs it starts.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The system-wide file of Debian's perf (`ETC_PERFCONFIG` of its build).
pub const SYSTEM_CONFIG: &str = "/etc/perfconfig";

/// Where perf looks for its configuration: the environment it reads at start.
#[derive(Debug, Clone, Default)]
pub struct ConfigSources {
    /// `PERF_CONFIG`: the only file read, when set.
    pub exclusive: Option<PathBuf>,
    /// The system-wide file ([`SYSTEM_CONFIG`]).
    pub system: PathBuf,
    /// `HOME`, whose `.perfconfig` is the user's file.
    pub home: Option<OsString>,
    /// `PERF_CONFIG_NOSYSTEM`, as set.
    pub no_system: Option<OsString>,
    /// `PERF_CONFIG_NOGLOBAL`, as set.
    pub no_global: Option<OsString>,
}

impl ConfigSources {
    /// The sources this process's environment names.
    pub fn from_env() -> ConfigSources {
        ConfigSources {
            exclusive: std::env::var_os("PERF_CONFIG").map(PathBuf::from),
            system: PathBuf::from(SYSTEM_CONFIG),
            home: std::env::var_os("HOME"),
            no_system: std::env::var_os("PERF_CONFIG_NOSYSTEM"),
            no_global: std::env::var_os("PERF_CONFIG_NOGLOBAL"),
        }
    }
}

/// Something perf warns about while reading its configuration; it goes on reading.
/// Shown as perf words it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigWarning {
    /// A line perf cannot parse: the rest of the file is not read.
    BadLine {
        /// The file.
        file: PathBuf,
        /// Its line, counted from 1 as perf counts it.
        line: usize,
    },
    /// `~/.perfconfig` belongs to another user (not root): it is not read.
    NotOwned {
        /// The file.
        file: PathBuf,
    },
    /// An environment variable meant as a boolean holds neither a boolean word nor a
    /// number: perf takes it as true.
    BadBoolean {
        /// The variable.
        name: String,
    },
}

impl std::fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigWarning::BadLine { file, line } => {
                write!(f, "bad config file line {line} in {}", file.display())
            }
            ConfigWarning::NotOwned { file } => write!(
                f,
                "File {} not owned by current user or root, ignoring it.",
                file.display()
            ),
            ConfigWarning::BadBoolean { name } => {
                write!(f, "bad config value for '{name}', ignoring...")
            }
        }
    }
}

/// The configuration perf would run with: every `section.name = value` read, the last
/// value of each, and what perf warned about on the way.
#[derive(Debug, Clone, Default)]
pub struct PerfConfig {
    values: Vec<(Vec<u8>, Vec<u8>)>,
    warnings: Vec<ConfigWarning>,
}

impl PerfConfig {
    /// Read the files `sources` name, as perf does at start.
    pub fn load(sources: &ConfigSources) -> PerfConfig {
        let mut c = PerfConfig::default();
        if let Some(file) = &sources.exclusive {
            // A file that cannot be opened is no configuration, silently.
            if let Ok(text) = std::fs::read(file) {
                c.parse(&text, file);
            }
            return c;
        }
        let system = !c.env_bool("PERF_CONFIG_NOSYSTEM", sources.no_system.as_deref());
        if system && readable(&sources.system) {
            if let Ok(text) = std::fs::read(&sources.system) {
                if !c.parse(&text, &sources.system) {
                    return c;
                }
            }
        }
        let home = sources.home.as_deref().filter(|h| !h.is_empty());
        let Some(home) = home else {
            return c;
        };
        if c.env_bool("PERF_CONFIG_NOGLOBAL", sources.no_global.as_deref()) {
            return c;
        }
        let mut file = home.to_os_string();
        file.push("/.perfconfig");
        let file = PathBuf::from(file);
        let Ok(meta) = std::fs::metadata(&file) else {
            return c;
        };
        if meta.uid() != 0 && meta.uid() != nix::unistd::geteuid().as_raw() {
            c.warnings.push(ConfigWarning::NotOwned { file });
            return c;
        }
        if meta.len() == 0 {
            return c;
        }
        if let Ok(text) = std::fs::read(&file) {
            c.parse(&text, &file);
        }
        c
    }

    /// Read the configuration text `text` of `file`, as perf reads a file.
    pub fn from_text(text: &[u8], file: &Path) -> PerfConfig {
        let mut c = PerfConfig::default();
        c.parse(text, file);
        c
    }

    /// What perf warned about, in order.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// The value of `key` (`section.name`, the section in lower case), when set.
    pub fn get(&self, key: &str) -> Option<&OsStr> {
        self.values
            .iter()
            .find(|(k, _)| k == key.as_bytes())
            .map(|(_, v)| OsStr::from_bytes(v))
    }

    /// perf's build-id cache as configured (`buildid.dir`), when set and not empty
    /// (perf's default, `$HOME/.debug`, holds otherwise).
    pub fn buildid_dir(&self) -> Option<PathBuf> {
        self.get("buildid.dir")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
    }

    /// perf's `perf_env_bool`: an unset variable is false.
    fn env_bool(&mut self, name: &str, value: Option<&OsStr>) -> bool {
        let Some(v) = value else {
            return false;
        };
        match config_bool(v.as_bytes()) {
            Some(b) => b,
            None => {
                self.warnings.push(ConfigWarning::BadBoolean {
                    name: name.to_string(),
                });
                true
            }
        }
    }

    /// Add the values of `text` (the file `file`); false, with a warning, when a line
    /// cannot be parsed (the values before it are kept).
    fn parse(&mut self, text: &[u8], file: &Path) -> bool {
        let mut p = Parser {
            text,
            at: 0,
            line: 1,
            eof: false,
        };
        match p.file(&mut |k, v| self.set(k, v)) {
            Ok(()) => true,
            Err(line) => {
                self.warnings.push(ConfigWarning::BadLine {
                    file: file.to_path_buf(),
                    line,
                });
                false
            }
        }
    }

    /// Keep `value` for `key`: the first place a key was set, its last value. A key
    /// without a section or without a value is a bad line.
    fn set(&mut self, key: &[u8], value: Option<Vec<u8>>) -> bool {
        let (Some(value), true) = (value, key.contains(&b'.')) else {
            return false;
        };
        match self.values.iter_mut().find(|(k, _)| k == key) {
            Some(slot) => slot.1 = value,
            None => self.values.push((key.to_vec(), value)),
        }
        true
    }
}

/// Whether the process may read `path` (perf's `access(R_OK)`).
fn readable(path: &Path) -> bool {
    nix::unistd::access(path, nix::unistd::AccessFlags::R_OK).is_ok()
}

/// perf's `perf_config_bool`: the words true, yes, on (false, no, off) in any case, an
/// empty value (false), or a number as C's strtol reads it with an optional k, m or g
/// (true unless 0); None for anything else, which perf warns about and takes as true.
fn config_bool(v: &[u8]) -> Option<bool> {
    if v.is_empty() {
        return Some(false);
    }
    let word = |w: &str| v.eq_ignore_ascii_case(w.as_bytes());
    if word("true") || word("yes") || word("on") {
        return Some(true);
    }
    if word("false") || word("no") || word("off") {
        return Some(false);
    }
    let (value, rest) = c_strtol(v);
    let unit = rest.is_empty()
        || rest.eq_ignore_ascii_case(b"k")
        || rest.eq_ignore_ascii_case(b"m")
        || rest.eq_ignore_ascii_case(b"g");
    unit.then_some(value != 0)
}

/// C's `strtol(s, &end, 0)`, as far as telling zero from the rest goes: whether the
/// number read is not zero, and what follows it (all of `s` when no digit was read).
fn c_strtol(s: &[u8]) -> (u64, &[u8]) {
    let mut i = s.iter().take_while(|c| is_c_space(**c)).count();
    if matches!(s.get(i), Some(b'+' | b'-')) {
        i += 1;
    }
    let hex = s.get(i) == Some(&b'0')
        && matches!(s.get(i + 1), Some(b'x' | b'X'))
        && s.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
    let (radix, start) = match (hex, s.get(i)) {
        (true, _) => (16, i + 2),
        (false, Some(b'0')) => (8, i),
        _ => (10, i),
    };
    let digits = s[start..]
        .iter()
        .take_while(|c| (**c as char).is_digit(radix))
        .count();
    if digits == 0 {
        return (0, s);
    }
    let nonzero = s[start..start + digits].iter().any(|&c| c != b'0');
    (u64::from(nonzero), &s[start + digits..])
}

/// C's `isspace` in the C locale.
fn is_c_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// A character of a variable name.
fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-' || c == b'_'
}

/// Longest variable name perf reads.
const MAX_NAME: usize = 256;
/// Longest value perf reads, plus one.
const MAX_VALUE: usize = 1024;

/// perf's reader of a configuration file (git's syntax), one character at a time, with
/// its line count.
struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    line: usize,
    eof: bool,
}

/// Takes a variable (`section.name`) and its value (None for a name alone); false when
/// it cannot, which makes the line a bad one.
type SetValue<'a> = dyn FnMut(&[u8], Option<Vec<u8>>) -> bool + 'a;

/// The end of a line, and what the parser reads at the end of the text.
const NL: u16 = b'\n' as u16;

impl Parser<'_> {
    /// The next character: `\r\n` reads as `\n`, the end of the text as `\n` (and
    /// sets `eof`). A character (not the end) is below 256.
    fn next(&mut self) -> u16 {
        let Some(&c) = self.text.get(self.at) else {
            self.eof = true;
            return NL;
        };
        self.at += 1;
        let c = if c == b'\r' && self.text.get(self.at) == Some(&b'\n') {
            self.at += 1;
            b'\n'
        } else {
            c
        };
        if c == b'\n' {
            self.line += 1;
        }
        u16::from(c)
    }

    /// The whole file, handing each `section.name` and value (None for a name alone)
    /// to `set`, which says whether it takes it; Err(line) at the first line that
    /// cannot be parsed.
    fn file(&mut self, set: &mut SetValue<'_>) -> Result<(), usize> {
        const BOM: &[u8] = b"\xef\xbb\xbf";
        let mut bom = Some(0usize);
        let mut comment = false;
        let mut var: Vec<u8> = Vec::new();
        loop {
            let c = self.next();
            if let Some(n) = bom.filter(|&n| n < BOM.len()) {
                if c == u16::from(BOM[n]) {
                    bom = Some(n + 1);
                    continue;
                }
                if n != 0 {
                    // Part of a byte order mark.
                    return Err(self.line);
                }
                bom = None;
            }
            if c == NL {
                if self.eof {
                    return Ok(());
                }
                comment = false;
                continue;
            }
            let b = c as u8;
            if comment || is_c_space(b) {
                continue;
            }
            if b == b'#' || b == b';' {
                comment = true;
                continue;
            }
            if b == b'[' {
                var.clear();
                if !self.section(&mut var) || var.is_empty() {
                    return Err(self.line);
                }
                var.push(b'.');
                continue;
            }
            if !b.is_ascii_alphabetic() {
                return Err(self.line);
            }
            let section = var.iter().rposition(|&c| c == b'.').map_or(0, |i| i + 1);
            var.truncate(section);
            var.push(b.to_ascii_lowercase());
            let line = self.line;
            if !self.value(&mut var, set) {
                return Err(line);
            }
        }
    }

    /// A section name after `[`, lower-cased (`[base "extension"]` keeps the
    /// extension's case): false when it is not one.
    fn section(&mut self, name: &mut Vec<u8>) -> bool {
        loop {
            let c = self.next();
            if self.eof {
                return false;
            }
            let b = c as u8;
            if b == b']' {
                return true;
            }
            if is_c_space(b) {
                return self.extended_section(name, b);
            }
            if !is_key_char(b) && b != b'.' {
                return false;
            }
            if name.len() > MAX_NAME / 2 {
                return false;
            }
            name.push(b.to_ascii_lowercase());
        }
    }

    /// The `"extension"]` of `[base "extension"]`, after the space `c`.
    fn extended_section(&mut self, name: &mut Vec<u8>, mut c: u8) -> bool {
        loop {
            if c == b'\n' {
                return false;
            }
            c = self.next() as u8;
            if !is_c_space(c) {
                break;
            }
        }
        if c != b'"' {
            return false;
        }
        name.push(b'.');
        loop {
            let mut ch = self.next();
            if ch == NL {
                return false;
            }
            if ch == u16::from(b'"') {
                break;
            }
            if ch == u16::from(b'\\') {
                ch = self.next();
                if ch == NL {
                    return false;
                }
            }
            name.push(ch as u8);
            if name.len() > MAX_NAME / 2 {
                return false;
            }
        }
        self.next() == u16::from(b']')
    }

    /// The rest of a variable's name (its first letter is in `var`) and its value,
    /// handed to `set`: false when the line is bad.
    fn value(&mut self, var: &mut Vec<u8>, set: &mut SetValue<'_>) -> bool {
        let mut c;
        loop {
            c = self.next();
            if self.eof || !is_key_char(c as u8) {
                break;
            }
            var.push(c as u8);
            if var.len() >= MAX_NAME {
                return false;
            }
        }
        while c == u16::from(b' ') || c == u16::from(b'\t') {
            c = self.next();
        }
        let mut value = None;
        if c != NL {
            if c != u16::from(b'=') {
                return false;
            }
            match self.value_text() {
                Some(v) => value = Some(v),
                None => return false,
            }
        }
        set(var, value)
    }

    /// A value after `=`: blanks between words become one space, `;` and `#` start a
    /// comment, `"` quotes, and `\` escapes `t`, `b`, `n`, `\`, `"` and the end of the
    /// line. None for an unknown escape, an open quote or a value too long.
    fn value_text(&mut self) -> Option<Vec<u8>> {
        let (mut quote, mut comment, mut space) = (false, false, false);
        let mut v = Vec::new();
        loop {
            let c = self.next();
            if v.len() >= MAX_VALUE - 1 {
                return None;
            }
            if c == NL {
                return (!quote).then_some(v);
            }
            if comment {
                continue;
            }
            let b = c as u8;
            if is_c_space(b) && !quote {
                space = true;
                continue;
            }
            if !quote && (b == b';' || b == b'#') {
                comment = true;
                continue;
            }
            if space {
                if !v.is_empty() {
                    v.push(b' ');
                }
                space = false;
            }
            if b == b'\\' {
                let e = self.next();
                let out = match e {
                    NL => continue,
                    _ => match e as u8 {
                        b't' => b'\t',
                        b'b' => b'\x08',
                        b'n' => b'\n',
                        b'\\' | b'"' => e as u8,
                        _ => return None,
                    },
                };
                v.push(out);
                continue;
            }
            if b == b'"' {
                quote = !quote;
                continue;
            }
            v.push(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_of(text: impl AsRef<[u8]>) -> (Option<String>, Vec<String>) {
        let c = PerfConfig::from_text(text.as_ref(), Path::new("/cfg"));
        (
            c.buildid_dir().map(|d| d.display().to_string()),
            c.warnings().iter().map(|w| w.to_string()).collect(),
        )
    }

    /// What Debian's perf 6.1 made of these files (each given as PERF_CONFIG): whether
    /// it read the build-id cache at /c, and its warning.
    #[test]
    fn files_read_as_perf_reads_them() {
        let some = |s: &str| Some(s.to_string());
        let bad = |n: usize| vec![format!("bad config file line {n} in /cfg")];
        let cases: &[(&str, Option<String>, Vec<String>)] = &[
            ("[buildid]\n\tdir = /c\n", some("/c"), vec![]),
            ("[buildid]\n\tdir = /c\nbogus line !\n", some("/c"), bad(3)),
            ("bogus line !\n[buildid]\n\tdir = /c\n", None, bad(1)),
            ("[buildid]\n\tdir\n", None, bad(2)),
            ("[buildid]\n\tdir = \"/c\n", None, bad(2)),
            ("[buildid \"x\"]\n\tdir = /c\n", None, vec![]),
            ("[BuildID]\n\tdir = /c\n", some("/c"), vec![]),
            ("[buildid]\n\tDir = /c\n", some("/c"), vec![]),
            ("[buildid]\n\tdIR = /c\n", None, vec![]),
            ("[buildid]\ndir=/c # c\n", some("/c"), vec![]),
            ("[buildid]\ndir=/e\ndir=/c\n", some("/c"), vec![]),
            ("[buildid]\ndir=/c\ndir=\n", None, vec![]),
            ("[buildid]\ndir=/\\c\n", None, bad(2)),
            ("buildid.dir=/c\n", None, bad(1)),
            ("[buildid] dir=/c\n", some("/c"), vec![]),
            ("[buildid]\n dir =  \"/c\"\n", some("/c"), vec![]),
            ("\u{feff}[buildid]\ndir=/c\n", some("/c"), vec![]),
            ("[buildid]\r\ndir = /c\r\n", some("/c"), vec![]),
            (
                "[buildid]\ndir = /a b  \"c  d\" \\\n\n",
                some("/a b c  d "),
                vec![],
            ),
            ("[]\ndir = /c\n", None, bad(1)),
            ("[buildid]\ndir = /c", some("/c"), vec![]),
            ("dir = /c\n", None, bad(1)),
            ("[buildid\ndir = /c\n", None, bad(2)),
        ];
        for (text, dir, warnings) in cases {
            assert_eq!(&dir_of(text), &(dir.clone(), warnings.clone()), "{text:?}");
        }
        // Part of a byte order mark.
        assert_eq!(dir_of(b"\xef\xbb[buildid]\ndir = /c\n"), (None, bad(1)));
    }

    /// PERF_CONFIG names the only file read; HOME's .perfconfig comes after
    /// /etc/perfconfig and wins; a bad system file leaves the user's unread;
    /// PERF_CONFIG_NOGLOBAL and PERF_CONFIG_NOSYSTEM turn either off (a value that is no
    /// boolean counts as true, with perf's warning).
    #[test]
    fn the_files_perf_reads_and_their_order() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let write = |name: &str, text: &str| {
            let p = d.join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, text).unwrap();
            p
        };
        let system = write("etc/perfconfig", "[buildid]\ndir = /system\n");
        write("home/.perfconfig", "[buildid]\ndir = /home\n");
        let exclusive = write("only", "[buildid]\ndir = /only\n");
        let sources = ConfigSources {
            exclusive: None,
            system: system.clone(),
            home: Some(d.join("home").into_os_string()),
            no_system: None,
            no_global: None,
        };
        let dir_of = |s: &ConfigSources| {
            let c = PerfConfig::load(s);
            (
                c.buildid_dir().map(|p| p.display().to_string()),
                c.warnings().len(),
            )
        };
        let some = |s: &str, w: usize| (Some(s.to_string()), w);
        assert_eq!(dir_of(&sources), some("/home", 0));
        let only = ConfigSources {
            exclusive: Some(exclusive),
            ..sources.clone()
        };
        assert_eq!(dir_of(&only), some("/only", 0));
        let nothing = ConfigSources {
            exclusive: Some("/dev/null".into()),
            ..sources.clone()
        };
        assert_eq!(dir_of(&nothing), (None, 0));
        let no_global = ConfigSources {
            no_global: Some("1".into()),
            ..sources.clone()
        };
        assert_eq!(dir_of(&no_global), some("/system", 0));
        let odd = ConfigSources {
            no_global: Some("xyz".into()),
            ..sources.clone()
        };
        assert_eq!(dir_of(&odd), some("/system", 1));
        for off in ["0", "no", "", "k"] {
            let kept = ConfigSources {
                no_global: Some(off.into()),
                ..sources.clone()
            };
            assert_eq!(dir_of(&kept), some("/home", 0), "NOGLOBAL={off:?}");
        }
        let no_system = ConfigSources {
            no_system: Some("yes".into()),
            home: Some(d.join("nohome").into_os_string()),
            ..sources.clone()
        };
        assert_eq!(dir_of(&no_system), (None, 0));
        write("etc/perfconfig", "[buildid]\ndir = /system\n!\n");
        assert_eq!(dir_of(&sources), some("/system", 1));
        write("home/.perfconfig", "");
        write("etc/perfconfig", "[buildid]\ndir = /system\n");
        assert_eq!(
            dir_of(&sources),
            some("/system", 0),
            "an empty file is skipped"
        );
    }
}
