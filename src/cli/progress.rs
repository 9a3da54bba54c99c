//! Progress on standard error while a long command works (record, report, extract,
//! convert): events and bytes so far, with the rate, drawn only when stderr is a terminal
//! and the command's own output does not go to that terminal.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A progress line, or nothing when it would not be seen or would get in the way.
pub struct Progress {
    bar: Option<ProgressBar>,
    started: Instant,
    last: Instant,
}

impl Progress {
    /// A progress line for `what` ("recording", "reporting", ...), drawn when stderr is a
    /// terminal, `quiet` is false, and (with `stdout_is_output`) standard output is not
    /// the same terminal.
    pub fn new(what: &str, quiet: bool, stdout_is_output: bool) -> Progress {
        let now = Instant::now();
        let shown = !quiet
            && std::io::stderr().is_terminal()
            && !(stdout_is_output && std::io::stdout().is_terminal());
        let bar = shown.then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(5));
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix}: {msg} [{elapsed}]")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(what.to_string());
            bar
        });
        Progress {
            bar,
            started: now,
            last: now - Duration::from_secs(1),
        }
    }

    /// Whether anything is drawn.
    pub fn shown(&self) -> bool {
        self.bar.is_some()
    }

    /// Show `events` (when known) and `bytes` so far; cheap to call often (it redraws at
    /// most five times a second).
    pub fn update(&mut self, events: Option<u64>, bytes: u64) {
        let Some(bar) = &self.bar else { return };
        let now = Instant::now();
        if now.duration_since(self.last) < Duration::from_millis(200) {
            return;
        }
        self.last = now;
        let secs = now.duration_since(self.started).as_secs_f64().max(1e-3);
        let mut msg = String::new();
        if let Some(n) = events {
            msg.push_str(&format!("{n} events ({:.0}/s), ", n as f64 / secs));
        }
        msg.push_str(&format!(
            "{} ({}/s)",
            human_bytes(bytes as f64),
            human_bytes(bytes as f64 / secs)
        ));
        bar.set_message(msg);
        bar.tick();
    }

    /// Take the line away.
    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The bytes written for `output` so far: the file and the files beside it that the
/// writer fills first (a recording's per-CPU capture files `<output>.cpuN`, see
/// `tracectl::record::Recorder::start`; convert's `<output>.partial`).
pub fn recorded_bytes(output: &std::path::Path) -> u64 {
    let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let mut total = size(output);
    let (Some(dir), Some(name)) = (output.parent(), output.file_name()) else {
        return total;
    };
    let dir = if dir.as_os_str().is_empty() {
        std::path::Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}.", name.to_string_lossy());
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            if e.file_name().to_string_lossy().starts_with(&prefix) {
                total += e.metadata().map_or(0, |m| m.len());
            }
        }
    }
    total
}

/// Show [`recorded_bytes`] of `output` on a progress line named `what` while `work` runs.
pub fn while_writing<T>(
    what: &str,
    quiet: bool,
    output: &std::path::Path,
    work: impl FnOnce() -> T,
) -> T {
    let mut progress = Progress::new(what, quiet, false);
    if !progress.shown() {
        return work();
    }
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        let ticker = scope.spawn(|| {
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                progress.update(None, recorded_bytes(output));
                std::thread::sleep(Duration::from_millis(100));
            }
            progress.finish();
        });
        let r = work();
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = ticker.join();
        r
    })
}

fn human_bytes(b: f64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = b;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A writer that counts the bytes and lines that pass through it into a [`Progress`].
pub struct CountingWriter<'p, W: Write> {
    inner: W,
    progress: &'p mut Progress,
    bytes: u64,
    lines: u64,
}

impl<'p, W: Write> CountingWriter<'p, W> {
    /// Count what is written to `inner`, showing it on `progress`.
    pub fn new(inner: W, progress: &'p mut Progress) -> Self {
        CountingWriter {
            inner,
            progress,
            bytes: 0,
            lines: 0,
        }
    }
}

impl<W: Write> Write for CountingWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        if self.progress.shown() {
            self.bytes += n as u64;
            self.lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
            self.progress.update(Some(self.lines), self.bytes);
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_as_people_do() {
        assert_eq!(human_bytes(512.0), "512 B");
        assert_eq!(human_bytes(1536.0), "1.5 KiB");
        assert_eq!(human_bytes(3.0 * 1024.0 * 1024.0 * 1024.0), "3.0 GiB");
    }

    #[test]
    fn a_hidden_progress_passes_writes_through() {
        let mut p = Progress {
            bar: None,
            started: Instant::now(),
            last: Instant::now(),
        };
        let mut out = Vec::new();
        {
            let mut w = CountingWriter::new(&mut out, &mut p);
            w.write_all(b"a\nb\n").unwrap();
        }
        assert_eq!(out, b"a\nb\n");
    }
}
