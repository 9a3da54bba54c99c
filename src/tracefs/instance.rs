//! A trace buffer with its control files: the top level or `instances/NAME`.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;

use super::{AppendMode, Tracefs, TracefsError};

/// One trace buffer: the top-level directory or `instances/NAME` below it.
///
/// Every control-file method reads or writes the file of this buffer; a file the kernel
/// lacks comes back as [`TracefsError::NotSupported`], a rejected write as
/// [`TracefsError::Rejected`] carrying the kernel's `error_log` lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    tracefs: Tracefs,
    name: Option<String>,
}

/// State of an event's (or system's) `enable` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnableState {
    /// `0`.
    Disabled,
    /// `1`.
    Enabled,
    /// `X`: some events of the system are on, some off.
    Mixed,
    /// `0*` / `1*`: soft-disabled by a trigger; the bool is the enable bit.
    Soft(bool),
}

impl EnableState {
    /// Parse the text of an `enable` file.
    pub fn parse(text: &str) -> Option<EnableState> {
        match text.trim() {
            "0" => Some(EnableState::Disabled),
            "1" => Some(EnableState::Enabled),
            "X" => Some(EnableState::Mixed),
            "0*" => Some(EnableState::Soft(false)),
            "1*" => Some(EnableState::Soft(true)),
            _ => None,
        }
    }

    /// The kernel's spelling.
    pub fn as_str(&self) -> &'static str {
        match self {
            EnableState::Disabled => "0",
            EnableState::Enabled => "1",
            EnableState::Mixed => "X",
            EnableState::Soft(false) => "0*",
            EnableState::Soft(true) => "1*",
        }
    }
}

/// `trace_clock`: the clocks and the one in use (shown in brackets by the kernel).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceClocks {
    /// Every clock, in the kernel's order.
    pub available: Vec<String>,
    /// The clock in use.
    pub current: String,
}

impl TraceClocks {
    /// Parse `[local] global counter ...`. A lone word without brackets (a copied
    /// tree after a write) is taken as the current clock.
    pub fn parse(text: &str) -> Option<TraceClocks> {
        let words: Vec<&str> = text.split_whitespace().collect();
        if let [one] = words[..] {
            let c = one
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            return Some(TraceClocks {
                available: vec![c.clone()],
                current: c,
            });
        }
        let mut available = Vec::new();
        let mut current = None;
        for w in text.split_whitespace() {
            if let Some(c) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
                current = Some(c.to_string());
                available.push(c.to_string());
            } else {
                available.push(w.to_string());
            }
        }
        Some(TraceClocks {
            available,
            current: current?,
        })
    }
}

/// `buffer_size_kb`: per-CPU size; before first use the kernel keeps a minimal buffer
/// and shows `7 (expanded: 1410)`; when CPUs differ it shows `X`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferSize {
    /// Every CPU has this many KiB.
    Kb(u64),
    /// Not yet expanded: the current size and the size it will get on first use.
    Unexpanded {
        /// KiB now.
        current: u64,
        /// KiB after expansion.
        expanded: u64,
    },
    /// CPUs differ; read `per_cpu/cpuN/buffer_size_kb`.
    PerCpu,
}

impl BufferSize {
    /// Parse the file's text.
    pub fn parse(text: &str) -> Option<BufferSize> {
        let t = text.trim();
        if t == "X" {
            return Some(BufferSize::PerCpu);
        }
        if let Some((cur, rest)) = t.split_once(" (expanded: ") {
            let exp = rest.strip_suffix(')')?;
            return Some(BufferSize::Unexpanded {
                current: cur.trim().parse().ok()?,
                expanded: exp.trim().parse().ok()?,
            });
        }
        t.parse().ok().map(BufferSize::Kb)
    }

    /// The size a trace will get, in KiB (`None` when CPUs differ).
    pub fn effective_kb(&self) -> Option<u64> {
        match *self {
            BufferSize::Kb(k) => Some(k),
            BufferSize::Unexpanded { expanded, .. } => Some(expanded),
            BufferSize::PerCpu => None,
        }
    }
}

/// `per_cpu/cpuN/stats`, every `key: value` line in order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuStats {
    /// The raw pairs (`entries`, `overrun`, `commit overrun`, `bytes`, `oldest event ts`,
    /// `now ts`, `dropped events`, `read events`).
    pub values: IndexMap<String, String>,
}

impl CpuStats {
    /// Parse the file's text.
    pub fn parse(text: &str) -> CpuStats {
        let values = text
            .lines()
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
            .collect();
        CpuStats { values }
    }

    /// A counter by its name in the file (`entries`, `overrun`, `dropped events`, ...).
    pub fn count(&self, key: &str) -> Option<u64> {
        self.values.get(key)?.parse().ok()
    }

    /// Events in the buffer.
    pub fn entries(&self) -> Option<u64> {
        self.count("entries")
    }

    /// Events overwritten.
    pub fn overrun(&self) -> Option<u64> {
        self.count("overrun")
    }

    /// Events dropped (buffer full in no-overwrite mode).
    pub fn dropped(&self) -> Option<u64> {
        self.count("dropped events")
    }
}

/// One entry of `error_log`: the header line, the command and the caret line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorLogEntry {
    /// `[  123.456] event filter parse error: error: Field not found`
    pub header: String,
    /// What was written, as the kernel echoes it (`Command:` line without the prefix).
    pub command: String,
    /// The whole entry as the kernel printed it.
    pub text: String,
}

/// Split `error_log` into entries; each starts with a `[timestamp]` line.
pub fn parse_error_log(text: &str) -> Vec<ErrorLogEntry> {
    let mut out: Vec<ErrorLogEntry> = Vec::new();
    for line in text.lines() {
        if line.starts_with('[') {
            out.push(ErrorLogEntry {
                header: line.to_string(),
                command: String::new(),
                text: format!("{line}\n"),
            });
        } else if let Some(e) = out.last_mut() {
            if let Some(cmd) = line.trim_start().strip_prefix("Command: ") {
                e.command = cmd.to_string();
            }
            e.text.push_str(line);
            e.text.push('\n');
        }
    }
    out
}

impl Tracefs {
    /// The top-level buffer.
    pub fn top(&self) -> Instance {
        Instance {
            tracefs: self.clone(),
            name: None,
        }
    }

    /// An existing instance, or the top level for `None`.
    pub fn instance(&self, name: Option<&str>) -> Result<Instance, TracefsError> {
        let Some(name) = name else {
            return Ok(self.top());
        };
        check_instance_name(self, name)?;
        let dir = self.path(Path::new("instances").join(name));
        if !dir.is_dir() {
            let known = self.instances().unwrap_or_default();
            return Err(TracefsError::UnknownInstance {
                path: dir,
                suggestions: super::suggest::closest(name, known.iter().map(|s| s.as_str()), 3),
            });
        }
        Ok(Instance {
            tracefs: self.clone(),
            name: Some(name.to_string()),
        })
    }

    /// The buffer whose files and lists `-B NAME` has or will have, for checking values
    /// before anything is created: the instance when it exists, else the top level (a
    /// new instance starts with the top level's lists).
    pub fn instance_or_top(&self, name: Option<&str>) -> Instance {
        match name {
            Some(n)
                if check_instance_name(self, n).is_ok()
                    && self.path(Path::new("instances").join(n)).is_dir() =>
            {
                Instance {
                    tracefs: self.clone(),
                    name: Some(n.to_string()),
                }
            }
            _ => self.top(),
        }
    }

    /// The names under `instances/`, sorted.
    pub fn instances(&self) -> Result<Vec<String>, TracefsError> {
        let dir = self.path("instances");
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(TracefsError::NotSupported {
                    path: dir,
                    feature: "instances".into(),
                })
            }
            Err(e) => return Err(TracefsError::from_io(&dir, e)),
        };
        let mut names: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().map(|t| t.is_dir()).unwrap_or(false))
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        Ok(names)
    }

    /// Create `instances/NAME` (mkdir); an existing instance is reused.
    pub fn create_instance(&self, name: &str) -> Result<Instance, TracefsError> {
        self.make_instance(name, true)
    }

    /// mkdir `instances/NAME`; an existing one is reused when `reuse`, else refused.
    pub(super) fn make_instance(&self, name: &str, reuse: bool) -> Result<Instance, TracefsError> {
        check_instance_name(self, name)?;
        let dir = self.path(Path::new("instances").join(name));
        match std::fs::create_dir(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && reuse => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return Err(TracefsError::BadValue {
                    path: dir,
                    detail: "the instance already exists".into(),
                })
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(TracefsError::NotSupported {
                    path: dir,
                    feature: "instances".into(),
                })
            }
            Err(e) => return Err(TracefsError::from_io(&dir, e)),
        }
        Ok(Instance {
            tracefs: self.clone(),
            name: Some(name.to_string()),
        })
    }

    /// Remove `instances/NAME` (rmdir; the kernel refuses while a reader holds it open).
    pub fn remove_instance(&self, name: &str) -> Result<(), TracefsError> {
        check_instance_name(self, name)?;
        let dir = self.path(Path::new("instances").join(name));
        // In tracefs rmdir removes the whole instance; in a recorded tree an instance is
        // an ordinary directory with files in it.
        let res = if self.is_live() {
            std::fs::remove_dir(&dir)
        } else {
            std::fs::remove_dir_all(&dir)
        };
        res.map_err(|e| TracefsError::from_io(&dir, e))
    }
}

/// The highest CPU a `tracing_cpumask` text names (32-bit hex words separated by
/// commas, the most significant first): None when the text is not such a mask,
/// `Some(None)` when it names no CPU.
fn mask_highest_cpu(mask: &str) -> Option<Option<u64>> {
    let words: Vec<&str> = mask.split(',').collect();
    let mut highest = None;
    for (i, w) in words.iter().rev().enumerate() {
        // The kernel reads each word into 32 bits: at most 8 digits, zeros included.
        if w.is_empty() || w.len() > 8 || !w.chars().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        let digits = w.trim_start_matches('0');
        let Some(first) = digits.chars().next() else {
            continue;
        };
        let top = u64::from(first.to_digit(16)?);
        let bit = (digits.len() as u64 - 1) * 4 + u64::from(63 - top.leading_zeros());
        highest = highest.max(Some(32 * i as u64 + bit));
    }
    Some(highest)
}

fn check_instance_name(t: &Tracefs, name: &str) -> Result<(), TracefsError> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(TracefsError::BadValue {
            path: t.path("instances"),
            detail: format!("{name:?} is not a valid instance name (no '/', not empty)"),
        });
    }
    Ok(())
}

impl Instance {
    /// The tracefs root this buffer lives in.
    pub fn tracefs(&self) -> &Tracefs {
        &self.tracefs
    }

    /// `None` for the top level.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// Whether this is the top-level buffer.
    pub fn is_top(&self) -> bool {
        self.name.is_none()
    }

    /// A file's path relative to the tracefs root.
    pub fn rel(&self, file: impl AsRef<Path>) -> PathBuf {
        match &self.name {
            Some(n) => Path::new("instances").join(n).join(file),
            None => file.as_ref().to_path_buf(),
        }
    }

    /// A file's absolute path.
    pub fn path(&self, file: impl AsRef<Path>) -> PathBuf {
        self.tracefs.path(self.rel(file))
    }

    /// Whether this buffer has the file.
    pub fn exists(&self, file: impl AsRef<Path>) -> bool {
        self.path(file).exists()
    }

    fn unsupported(&self, file: &Path, e: TracefsError) -> TracefsError {
        match e {
            TracefsError::NotFound { path } if path.parent().is_some_and(|p| p.is_dir()) => {
                TracefsError::NotSupported {
                    path,
                    feature: feature_name(file),
                }
            }
            e => e,
        }
    }

    /// Read one of this buffer's files as bytes.
    pub fn read(&self, file: impl AsRef<Path>) -> Result<Vec<u8>, TracefsError> {
        let file = file.as_ref();
        self.tracefs
            .read(self.rel(file))
            .map_err(|e| self.unsupported(file, e))
    }

    /// Read one of this buffer's files as text.
    pub fn read_string(&self, file: impl AsRef<Path>) -> Result<String, TracefsError> {
        let file = file.as_ref();
        self.tracefs
            .read_string(self.rel(file))
            .map_err(|e| self.unsupported(file, e))
    }

    /// Write one of this buffer's files; a rejected write carries the `error_log` entry
    /// that the kernel wrote about it.
    pub fn write(
        &self,
        file: impl AsRef<Path>,
        data: &[u8],
        mode: AppendMode,
    ) -> Result<(), TracefsError> {
        let file = file.as_ref();
        match self.tracefs.write(self.rel(file), data, mode) {
            Err(TracefsError::Rejected {
                path,
                written,
                error_log: None,
            }) => {
                let error_log = self.error_log_for(&written);
                Err(TracefsError::Rejected {
                    path,
                    written,
                    error_log,
                })
            }
            r => r.map_err(|e| self.unsupported(file, e)),
        }
    }

    /// Truncate-write a string.
    pub fn write_str(&self, file: impl AsRef<Path>, text: &str) -> Result<(), TracefsError> {
        self.write(file, text.as_bytes(), AppendMode::Truncate)
    }

    /// The `error_log` entry about `written`: the newest whose `Command:` is what we
    /// wrote (or a part of it: a probe definition is logged without its prefix). Files
    /// that do not log (trace_clock, buffer_size_kb, ...) get none rather than an older,
    /// unrelated entry.
    fn error_log_for(&self, written: &str) -> Option<String> {
        let text = self.tracefs.read_string(self.rel("error_log")).ok()?;
        let entries = parse_error_log(&text);
        let w = written.trim();
        entries
            .iter()
            .rev()
            .find(|e| {
                let c = e.command.trim();
                !c.is_empty() && (w.contains(c) || c.contains(w))
            })
            .map(|e| e.text.clone())
    }

    /// A file read as one trimmed line.
    pub fn read_value(&self, file: impl AsRef<Path>) -> Result<String, TracefsError> {
        Ok(self.read_string(file)?.trim().to_string())
    }

    fn read_number(&self, file: &str) -> Result<u64, TracefsError> {
        let v = self.read_value(file)?;
        v.parse().map_err(|_| TracefsError::Parse {
            path: self.path(file),
            detail: format!("{v:?} is not a number"),
        })
    }

    // ---- tracers -------------------------------------------------------------------

    /// `available_tracers`.
    pub fn available_tracers(&self) -> Result<Vec<String>, TracefsError> {
        Ok(self
            .read_string("available_tracers")?
            .split_whitespace()
            .map(String::from)
            .collect())
    }

    /// `current_tracer`.
    pub fn current_tracer(&self) -> Result<String, TracefsError> {
        self.read_value("current_tracer")
    }

    /// Set `current_tracer`; a tracer not in `available_tracers` is refused before writing.
    pub fn set_tracer(&self, tracer: &str) -> Result<(), TracefsError> {
        if let Ok(avail) = self.available_tracers() {
            if !avail.iter().any(|t| t == tracer) {
                let near = super::suggest::closest(tracer, avail.iter().map(|s| s.as_str()), 3);
                return Err(TracefsError::BadValue {
                    path: self.path("current_tracer"),
                    detail: format!(
                        "tracer {tracer:?} is not in available_tracers ({}){}",
                        avail.join(" "),
                        if near.is_empty() {
                            String::new()
                        } else {
                            format!("; did you mean {}?", near.join(", "))
                        }
                    ),
                });
            }
        }
        self.write_str("current_tracer", tracer)
    }

    // ---- clock, options --------------------------------------------------------------

    /// `trace_clock`.
    pub fn trace_clock(&self) -> Result<TraceClocks, TracefsError> {
        let text = self.read_string("trace_clock")?;
        TraceClocks::parse(&text).ok_or_else(|| TracefsError::Parse {
            path: self.path("trace_clock"),
            detail: "no [current] clock".into(),
        })
    }

    /// Set `trace_clock`; an unknown clock is refused with the list.
    pub fn set_trace_clock(&self, clock: &str) -> Result<(), TracefsError> {
        if let Ok(c) = self.trace_clock() {
            // A single entry is a copied tree's last write, not the kernel's list.
            if c.available.len() > 1 && !c.available.iter().any(|a| a == clock) {
                return Err(TracefsError::BadValue {
                    path: self.path("trace_clock"),
                    detail: format!(
                        "unknown clock {clock:?}; this kernel has: {}",
                        c.available.join(" ")
                    ),
                });
            }
        }
        self.write_str("trace_clock", clock)
    }

    /// Every option with its state: `options/*` when present, else `trace_options`.
    pub fn options(&self) -> Result<Vec<(String, bool)>, TracefsError> {
        let dir = self.path("options");
        if let Ok(rd) = std::fs::read_dir(&dir) {
            let mut names: Vec<String> = rd
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            let mut out = Vec::new();
            for n in names {
                let v = self.read_value(Path::new("options").join(&n))?;
                out.push((n, v == "1"));
            }
            return Ok(out);
        }
        let text = self.read_string("trace_options")?;
        Ok(text
            .split_whitespace()
            .map(|w| match w.strip_prefix("no") {
                Some(n) => (n.to_string(), false),
                None => (w.to_string(), true),
            })
            .collect())
    }

    /// One option's state.
    pub fn option(&self, name: &str) -> Result<bool, TracefsError> {
        if self.exists("options") {
            return match self.read_value(Path::new("options").join(name)) {
                Ok(v) => Ok(v == "1"),
                Err(TracefsError::NotSupported { .. }) | Err(TracefsError::NotFound { .. }) => {
                    Err(self.unknown_option(name))
                }
                Err(e) => Err(e),
            };
        }
        self.options()?
            .into_iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
            .ok_or_else(|| self.unknown_option(name))
    }

    fn unknown_option(&self, name: &str) -> TracefsError {
        let known: Vec<String> = self
            .options()
            .map(|o| o.into_iter().map(|(n, _)| n).collect())
            .unwrap_or_default();
        TracefsError::UnknownOption {
            path: self.path(Path::new("options").join(name)),
            name: name.to_string(),
            suggestions: super::suggest::closest(name, known.iter().map(|s| s.as_str()), 3),
        }
    }

    /// Set or clear an option (`options/NAME` gets `1` or `0`).
    pub fn set_option(&self, name: &str, on: bool) -> Result<(), TracefsError> {
        if self.exists("options") {
            if !self.exists(Path::new("options").join(name)) {
                return Err(self.unknown_option(name));
            }
            return self.write_str(Path::new("options").join(name), if on { "1" } else { "0" });
        }
        let word = if on {
            name.to_string()
        } else {
            format!("no{name}")
        };
        self.write_str("trace_options", &word)
    }

    /// Read trace-cmd's `-O` syntax without writing: `NAME` sets, `noNAME` clears (unless
    /// an option is really called `noNAME`). Returns the option and its new state, or an
    /// error naming the closest options when this buffer has no such option.
    pub fn check_option(&self, spec: &str) -> Result<(String, bool), TracefsError> {
        let has = |name: &str| -> bool {
            if self.exists("options") {
                self.exists(Path::new("options").join(name))
            } else {
                self.options()
                    .map(|o| o.iter().any(|(n, _)| n == name))
                    .unwrap_or(false)
            }
        };
        if has(spec) {
            return Ok((spec.to_string(), true));
        }
        match spec.strip_prefix("no") {
            Some(rest) if has(rest) => Ok((rest.to_string(), false)),
            Some(rest) => Err(match self.unknown_option(rest) {
                TracefsError::BadValue { path, detail } => TracefsError::BadValue {
                    path,
                    detail: format!("{spec:?} clears an option, but {detail}"),
                },
                e => e,
            }),
            None => Err(self.unknown_option(spec)),
        }
    }

    /// Apply trace-cmd's `-O` syntax (see [`Instance::check_option`]).
    pub fn apply_option(&self, spec: &str) -> Result<(), TracefsError> {
        let (name, on) = self.check_option(spec)?;
        self.set_option(&name, on)
    }

    /// The option and state that trace-cmd's `-O SPEC` means here: `noNAME` clears NAME
    /// unless an option is really called `noNAME`.
    pub fn option_spec<'a>(&self, spec: &'a str) -> (&'a str, bool) {
        match spec.strip_prefix("no") {
            Some(rest)
                if !self.exists(Path::new("options").join(spec)) || !self.exists("options") =>
            {
                (rest, false)
            }
            _ => (spec, true),
        }
    }

    // ---- buffers ---------------------------------------------------------------------

    /// `buffer_size_kb`.
    pub fn buffer_size(&self) -> Result<BufferSize, TracefsError> {
        let t = self.read_string("buffer_size_kb")?;
        BufferSize::parse(&t).ok_or_else(|| TracefsError::Parse {
            path: self.path("buffer_size_kb"),
            detail: format!("{:?}", t.trim()),
        })
    }

    /// Check a per-CPU buffer size before writing it: the kernel refuses 0, and turns
    /// KiB into bytes in an unsigned long, which sizes past 2^54 KiB would wrap.
    pub fn check_buffer_size(&self, kb: u64) -> Result<(), TracefsError> {
        let detail = if kb == 0 {
            "0 KiB: a buffer needs at least 1 KiB".to_string()
        } else if kb > u64::MAX >> 10 {
            format!("{kb} KiB is more bytes than a 64-bit size holds")
        } else {
            return Ok(());
        };
        Err(TracefsError::BadValue {
            path: self.path("buffer_size_kb"),
            detail,
        })
    }

    /// Set every CPU's buffer to `kb` KiB.
    pub fn set_buffer_size(&self, kb: u64) -> Result<(), TracefsError> {
        self.check_buffer_size(kb)?;
        self.write_str("buffer_size_kb", &kb.to_string())
    }

    /// `per_cpu/cpuN/buffer_size_kb`.
    pub fn cpu_buffer_size(&self, cpu: u32) -> Result<BufferSize, TracefsError> {
        let f = format!("per_cpu/cpu{cpu}/buffer_size_kb");
        let t = self.read_string(&f)?;
        BufferSize::parse(&t).ok_or_else(|| TracefsError::Parse {
            path: self.path(&f),
            detail: format!("{:?}", t.trim()),
        })
    }

    /// Set one CPU's buffer size.
    pub fn set_cpu_buffer_size(&self, cpu: u32, kb: u64) -> Result<(), TracefsError> {
        self.write_str(format!("per_cpu/cpu{cpu}/buffer_size_kb"), &kb.to_string())
    }

    /// `buffer_total_size_kb` (read-only in the kernel; may say `N (expanded: M)`).
    pub fn buffer_total_size(&self) -> Result<BufferSize, TracefsError> {
        let t = self.read_string("buffer_total_size_kb")?;
        BufferSize::parse(&t).ok_or_else(|| TracefsError::Parse {
            path: self.path("buffer_total_size_kb"),
            detail: format!("{:?}", t.trim()),
        })
    }

    /// `buffer_subbuf_size_kb`: the size of one ring-buffer page.
    pub fn subbuf_size_kb(&self) -> Result<u64, TracefsError> {
        self.read_number("buffer_subbuf_size_kb")
    }

    /// Check a sub-buffer size before writing it: the kernel takes 1 to 128 pages.
    pub fn check_subbuf_size_kb(&self, kb: u64) -> Result<(), TracefsError> {
        let max_kb = self
            .tracefs()
            .host()
            .page_size()
            .map(|p| 128 * u64::from(p / 1024));
        let detail = match max_kb {
            _ if kb == 0 => "0 KiB: a sub-buffer is at least one page".to_string(),
            Some(max) if kb > max => {
                format!("{kb} KiB is over the kernel's limit of 128 pages ({max} KiB)")
            }
            _ => return Ok(()),
        };
        Err(TracefsError::BadValue {
            path: self.path("buffer_subbuf_size_kb"),
            detail,
        })
    }

    /// Set `buffer_subbuf_size_kb` (the kernel rounds up to a power-of-two number of pages).
    pub fn set_subbuf_size_kb(&self, kb: u64) -> Result<(), TracefsError> {
        self.check_subbuf_size_kb(kb)?;
        self.write_str("buffer_subbuf_size_kb", &kb.to_string())
    }

    /// `buffer_percent`: how full a buffer gets before readers wake.
    pub fn buffer_percent(&self) -> Result<u64, TracefsError> {
        self.read_number("buffer_percent")
    }

    /// Check a `buffer_percent` value (0..=100) before writing it.
    pub fn check_buffer_percent(&self, pct: u64) -> Result<(), TracefsError> {
        if pct > 100 {
            return Err(TracefsError::BadValue {
                path: self.path("buffer_percent"),
                detail: format!("{pct} is over 100"),
            });
        }
        Ok(())
    }

    /// Set `buffer_percent` (0..=100).
    pub fn set_buffer_percent(&self, pct: u64) -> Result<(), TracefsError> {
        self.check_buffer_percent(pct)?;
        self.write_str("buffer_percent", &pct.to_string())
    }

    /// `tracing_cpumask` as the kernel prints it (hex words separated by commas).
    pub fn cpumask(&self) -> Result<String, TracefsError> {
        self.read_value("tracing_cpumask")
    }

    /// Check a `tracing_cpumask` value before writing it: 32-bit hex words separated by
    /// commas, most significant first, naming only CPUs this buffer has (the kernel
    /// refuses the others). Returns the text to write (without a `0x`, which the kernel
    /// refuses).
    pub fn check_cpumask<'m>(&self, mask: &'m str) -> Result<&'m str, TracefsError> {
        let m = mask.trim();
        let m = m.strip_prefix("0x").unwrap_or(m);
        let bad = |detail: String| TracefsError::BadValue {
            path: self.path("tracing_cpumask"),
            detail,
        };
        let Some(highest) = mask_highest_cpu(m) else {
            return Err(bad(format!(
                "{mask:?} is not a hex CPU mask (32-bit words of up to 8 hex digits, separated \
                 by commas, the highest first; e.g. 3 for CPUs 0-1)"
            )));
        };
        let ncpus = self
            .cpus()
            .ok()
            .and_then(|c| c.last().map(|&l| u64::from(l) + 1));
        let words = m.split(',').count() as u64;
        if let Some(n) = ncpus.filter(|n| words > n.div_ceil(32)) {
            return Err(bad(format!(
                "{mask:?} has {words} 32-bit words; this buffer's {n} CPUs take {}",
                n.div_ceil(32)
            )));
        }
        if let (Some(cpu), Some(n)) = (highest, ncpus) {
            if cpu >= n {
                return Err(bad(format!(
                    "{mask:?} names CPU {cpu}, but this buffer has CPUs 0-{}",
                    n - 1
                )));
            }
        }
        Ok(m)
    }

    /// Set `tracing_cpumask` (hex, e.g. `3` for CPUs 0 and 1).
    pub fn set_cpumask(&self, mask: &str) -> Result<(), TracefsError> {
        let m = self.check_cpumask(mask)?;
        self.write_str("tracing_cpumask", m)
    }

    /// `tracing_on`.
    pub fn tracing_on(&self) -> Result<bool, TracefsError> {
        Ok(self.read_value("tracing_on")? == "1")
    }

    /// Set `tracing_on`.
    pub fn set_tracing_on(&self, on: bool) -> Result<(), TracefsError> {
        self.write_str("tracing_on", if on { "1" } else { "0" })
    }

    /// The CPUs that have a `per_cpu/cpuN` directory, ascending.
    pub fn cpus(&self) -> Result<Vec<u32>, TracefsError> {
        let dir = self.path("per_cpu");
        let rd = std::fs::read_dir(&dir).map_err(|e| TracefsError::from_io(&dir, e))?;
        let mut cpus: Vec<u32> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| e.file_name().to_str()?.strip_prefix("cpu")?.parse().ok())
            .collect();
        cpus.sort_unstable();
        Ok(cpus)
    }

    /// `per_cpu/cpuN/stats`.
    pub fn cpu_stats(&self, cpu: u32) -> Result<CpuStats, TracefsError> {
        Ok(CpuStats::parse(
            &self.read_string(format!("per_cpu/cpu{cpu}/stats"))?,
        ))
    }

    // ---- buffer contents ---------------------------------------------------------------

    /// Clear the ring buffer (`echo > trace`).
    pub fn clear(&self) -> Result<(), TracefsError> {
        self.write("trace", b"", AppendMode::Truncate)
    }

    /// Clear one CPU's buffer.
    pub fn clear_cpu(&self, cpu: u32) -> Result<(), TracefsError> {
        self.write(format!("per_cpu/cpu{cpu}/trace"), b"", AppendMode::Truncate)
    }

    /// The `trace` text (non-consuming), or one CPU's.
    pub fn trace_text(&self, cpu: Option<u32>) -> Result<String, TracefsError> {
        match cpu {
            Some(c) => self.read_string(format!("per_cpu/cpu{c}/trace")),
            None => self.read_string("trace"),
        }
    }

    /// Write a line to `trace_marker`.
    pub fn mark(&self, text: &str) -> Result<(), TracefsError> {
        self.write("trace_marker", text.as_bytes(), AppendMode::Append)
    }

    /// Write binary data to `trace_marker_raw`; the first four bytes are the marker id.
    pub fn mark_raw(&self, id: u32, data: &[u8]) -> Result<(), TracefsError> {
        let mut buf = id.to_ne_bytes().to_vec();
        buf.extend_from_slice(data);
        self.write("trace_marker_raw", &buf, AppendMode::Append)
    }

    // ---- snapshot --------------------------------------------------------------------

    fn snapshot_file(cpu: Option<u32>) -> String {
        match cpu {
            Some(c) => format!("per_cpu/cpu{c}/snapshot"),
            None => "snapshot".to_string(),
        }
    }

    /// Take a snapshot (`echo 1 > snapshot`), of all CPUs or one. Most kernels swap
    /// single CPUs only when built with CONFIG_RING_BUFFER_ALLOW_SWAP and refuse with
    /// EINVAL otherwise; that comes back as [`TracefsError::NotSupported`].
    pub fn snapshot_take(&self, cpu: Option<u32>) -> Result<(), TracefsError> {
        match self.write_str(Self::snapshot_file(cpu), "1") {
            Err(TracefsError::Rejected { path, .. }) if cpu.is_some() => Err(TracefsError::NotSupported {
                path,
                feature: "per-CPU snapshots (CONFIG_RING_BUFFER_ALLOW_SWAP); take one of all CPUs and read \
                          per_cpu/cpuN/snapshot instead"
                    .into(),
            }),
            r => r,
        }
    }

    /// Clear the snapshot buffer without freeing it (`echo 2 > snapshot`).
    pub fn snapshot_clear(&self, cpu: Option<u32>) -> Result<(), TracefsError> {
        self.write_str(Self::snapshot_file(cpu), "2")
    }

    /// Free the snapshot buffer (`echo 0 > snapshot`; only for all CPUs).
    pub fn snapshot_free(&self) -> Result<(), TracefsError> {
        self.write_str("snapshot", "0")
    }

    /// The snapshot's text.
    pub fn snapshot_text(&self, cpu: Option<u32>) -> Result<String, TracefsError> {
        self.read_string(Self::snapshot_file(cpu))
    }

    // ---- error_log -------------------------------------------------------------------

    /// `error_log` entries, oldest first.
    pub fn error_log(&self) -> Result<Vec<ErrorLogEntry>, TracefsError> {
        Ok(parse_error_log(&self.read_string("error_log")?))
    }

    /// Empty `error_log`.
    pub fn clear_error_log(&self) -> Result<(), TracefsError> {
        self.write("error_log", b"", AppendMode::Truncate)
    }
}

/// The feature a control file stands for, for "not supported" messages.
fn feature_name(file: &Path) -> String {
    let s = file.to_string_lossy();
    match s.as_ref() {
        f if f.ends_with("snapshot") => "the snapshot buffer (CONFIG_TRACER_SNAPSHOT)".into(),
        f if f.ends_with("/hist") => "hist triggers (CONFIG_HIST_TRIGGERS)".into(),
        "kprobe_events" => "kprobe events (CONFIG_KPROBE_EVENTS)".into(),
        "uprobe_events" => "uprobe events (CONFIG_UPROBE_EVENTS)".into(),
        "dynamic_events" => "dynamic events (CONFIG_DYNAMIC_EVENTS)".into(),
        "set_graph_function" | "set_graph_notrace" | "max_graph_depth" => {
            "the function_graph tracer (CONFIG_FUNCTION_GRAPH_TRACER)".into()
        }
        f if f.starts_with("set_ftrace") || f == "available_filter_functions" => {
            "dynamic ftrace (CONFIG_DYNAMIC_FTRACE)".into()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpumask_highest_cpu() {
        assert_eq!(mask_highest_cpu("3"), Some(Some(1)));
        assert_eq!(mask_highest_cpu("0"), Some(None));
        assert_eq!(mask_highest_cpu("00000000,00000001"), Some(Some(0)));
        assert_eq!(mask_highest_cpu("1,0"), Some(Some(32)));
        assert_eq!(mask_highest_cpu("80000000"), Some(Some(31)));
        assert_eq!(mask_highest_cpu("1ffffffff"), None);
        assert_eq!(mask_highest_cpu("000000001"), None);
        assert_eq!(mask_highest_cpu("1,ffffffff0"), None);
        assert_eq!(mask_highest_cpu("zz"), None);
        assert_eq!(mask_highest_cpu("3,,1"), None);
        assert_eq!(mask_highest_cpu(""), None);
    }

    #[test]
    fn clocks() {
        let c = TraceClocks::parse(
            "[local] global counter uptime perf mono mono_raw boot tai x86-tsc\n",
        )
        .unwrap();
        assert_eq!(c.current, "local");
        assert_eq!(c.available.len(), 10);
        assert_eq!(c.available[1], "global");
        assert!(TraceClocks::parse("local global").is_none());
        assert_eq!(TraceClocks::parse("global\n").unwrap().current, "global");
    }

    #[test]
    fn buffer_sizes() {
        assert_eq!(BufferSize::parse("1410\n"), Some(BufferSize::Kb(1410)));
        assert_eq!(
            BufferSize::parse("7 (expanded: 1410)\n"),
            Some(BufferSize::Unexpanded {
                current: 7,
                expanded: 1410
            })
        );
        assert_eq!(BufferSize::parse("X\n"), Some(BufferSize::PerCpu));
        assert_eq!(
            BufferSize::parse("7 (expanded: 1410)")
                .unwrap()
                .effective_kb(),
            Some(1410)
        );
        assert_eq!(BufferSize::parse("lots"), None);
    }

    #[test]
    fn stats() {
        let s = CpuStats::parse("entries: 12\noverrun: 3\ncommit overrun: 0\nbytes: 560\noldest event ts:     0.000000\nnow ts:   913.017705\ndropped events: 1\nread events: 0\n");
        assert_eq!(s.entries(), Some(12));
        assert_eq!(s.overrun(), Some(3));
        assert_eq!(s.dropped(), Some(1));
        assert_eq!(s.values["now ts"], "913.017705");
        assert_eq!(s.count("commit overrun"), Some(0));
    }

    #[test]
    fn error_log_entries() {
        let text = "[   10.100000] event filter parse error: error: Field not found\n  Command: nosuch == 1\n           ^\n\
                    [   11.200000] trace_kprobe: error: Invalid argument\n  Command: p:foo bar\n  ^\n";
        let e = parse_error_log(text);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].command, "nosuch == 1");
        assert!(e[0].text.ends_with("           ^\n"));
        assert!(e[1].header.contains("trace_kprobe"));
    }

    #[test]
    fn enable_states() {
        for s in ["0", "1", "X", "0*", "1*"] {
            assert_eq!(EnableState::parse(s).unwrap().as_str(), s);
        }
        assert_eq!(EnableState::parse("2"), None);
    }
}
