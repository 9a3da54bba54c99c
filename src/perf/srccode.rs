//! Lines of source files as perf 6.1 shows them under a sample (`perf script -F
//! srccode`, tools/perf/util/srccode.c): a file is read whole when first asked for and
//! kept, up to [`MAX_FILES`] files and [`MAX_BYTES`] bytes, the least recently used
//! dropped first; a file that cannot be read is asked for again next time.

/// perf's `MAXSRCFILES`: more files than this are not kept.
pub const MAX_FILES: usize = 64;
/// perf's `MAXSRCCACHE`: more bytes than this are not kept.
pub const MAX_BYTES: usize = 32 * 1024 * 1024;

/// One source file read: its text and where each line starts.
struct SourceFile {
    path: String,
    text: Vec<u8>,
    starts: Vec<usize>,
}

/// Source files read so far, most recently used first.
#[derive(Default)]
pub struct SourceCode {
    files: Vec<SourceFile>,
    bytes: usize,
}

impl std::fmt::Debug for SourceCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SourceCode")
            .field("files", &self.files.len())
            .field("bytes", &self.bytes)
            .finish()
    }
}

impl SourceCode {
    /// No files read yet.
    pub fn new() -> SourceCode {
        SourceCode::default()
    }

    /// Line `line` (from 1) of the file at `path`, without its newline, as perf's
    /// `find_sourceline` gives it; None when the file cannot be read or has no such
    /// line (line 0 included).
    pub fn line(&mut self, path: &str, line: u32) -> Option<&[u8]> {
        let at = match self.files.iter().position(|f| f.path == path) {
            Some(at) => at,
            None => {
                // As perf: the files kept are pruned before another is read.
                while self.files.len() > MAX_FILES || self.bytes > MAX_BYTES {
                    let Some(dropped) = self.files.pop() else {
                        break;
                    };
                    self.bytes -= dropped.text.len();
                }
                let text = std::fs::read(path).ok()?;
                self.bytes += text.len();
                let starts = line_starts(&text);
                self.files.push(SourceFile {
                    path: path.to_string(),
                    text,
                    starts,
                });
                self.files.len() - 1
            }
        };
        let file = self.files.remove(at);
        self.files.insert(0, file);
        let file = &self.files[0];
        let index = usize::try_from(line.checked_sub(1)?).ok()?;
        let start = *file.starts.get(index)?;
        let rest = &file.text[start..];
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        Some(&rest[..end])
    }
}

/// Where each line of `text` starts: after each newline, and a last line without one.
fn line_starts(text: &[u8]) -> Vec<usize> {
    let mut starts = Vec::new();
    if text.is_empty() {
        return starts;
    }
    starts.push(0);
    starts.extend(
        memchr::memchr_iter(b'\n', text)
            .map(|i| i + 1)
            .filter(|&s| s < text.len()),
    );
    starts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_a_file_as_perf_numbers_them() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a.c");
        std::fs::write(&p, "int a;\n\n\tb();\nlast").unwrap();
        let path = p.to_str().unwrap();
        let mut code = SourceCode::new();
        assert_eq!(code.line(path, 1), Some(&b"int a;"[..]));
        assert_eq!(code.line(path, 2), Some(&b""[..]));
        assert_eq!(code.line(path, 3), Some(&b"\tb();"[..]));
        assert_eq!(code.line(path, 4), Some(&b"last"[..]));
        assert_eq!(code.line(path, 5), None);
        assert_eq!(code.line(path, 0), None);
        assert_eq!(code.line("/nonexistent/x.c", 1), None);
    }

    #[test]
    fn files_kept_are_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let mut code = SourceCode::new();
        for i in 0..MAX_FILES + 10 {
            let p = dir.path().join(format!("{i}.c"));
            std::fs::write(&p, format!("line {i}\n")).unwrap();
            let want = format!("line {i}");
            assert_eq!(code.line(p.to_str().unwrap(), 1), Some(want.as_bytes()));
        }
        assert!(code.files.len() <= MAX_FILES + 1);
    }
}
