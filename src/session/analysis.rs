//! What the analyses of one recording (`hist`, `mem`) share: opening the file, refusing a
//! latency tracer's text, and one error type whose messages say what each one needs.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::dat::{BufferData, DatError, DatFile};
use crate::render::tracecmd::SourceError;

/// Which analysis of a recording: it words the errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Analysis {
    /// `hist`: the call-stack histogram.
    Hist,
    /// `mem`: the allocation table per call site.
    Mem,
}

impl Analysis {
    /// What the analysis writes, in "writing the ...".
    fn output(self) -> &'static str {
        match self {
            Analysis::Hist => "histogram",
            Analysis::Mem => "table",
        }
    }
}

/// Why an analysis of a recording failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum AnalysisError {
    /// The file could not be opened or read.
    Open(DatError),
    /// The file holds a latency tracer's text, not records.
    Latency {
        /// The analysis.
        analysis: Analysis,
        /// The file.
        path: PathBuf,
    },
    /// The file holds no record at all.
    NoRecords {
        /// The analysis.
        analysis: Analysis,
        /// The file.
        path: PathBuf,
    },
    /// Reading the records failed.
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: SourceError,
    },
    /// Writing the result failed.
    Output {
        /// The analysis.
        analysis: Analysis,
        /// What went wrong.
        source: io::Error,
    },
}

impl fmt::Display for AnalysisError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const RECORD_KMEM: &str = "record kmem events with `tracectl record -e kmem`";
        match self {
            // The reader's errors name the file already.
            AnalysisError::Open(e) => write!(f, "{e}"),
            AnalysisError::Latency { analysis, path } => {
                let p = path.display();
                match analysis {
                    Analysis::Hist => write!(
                        f,
                        "{p}: a latency tracer's trace has no records to make a histogram of"
                    ),
                    Analysis::Mem => write!(
                        f,
                        "{p}: a latency tracer's trace has no records to sum ({RECORD_KMEM})"
                    ),
                }
            }
            AnalysisError::NoRecords { analysis, path } => {
                let what = match analysis {
                    Analysis::Hist => "record events, with -T for stack traces",
                    Analysis::Mem => RECORD_KMEM,
                };
                write!(
                    f,
                    "{}: no records found in the file ({what})",
                    path.display()
                )
            }
            AnalysisError::Read { path, source } => {
                write!(f, "{}: reading the records: {source}", path.display())
            }
            AnalysisError::Output { analysis, source } => {
                write!(f, "writing the {}: {source}", analysis.output())
            }
        }
    }
}

/// The messages carry their causes' text, so no source is chained.
impl std::error::Error for AnalysisError {}

/// Open the recording at `path` for `analysis`, refusing a latency tracer's text.
pub(crate) fn open_records(path: &Path, analysis: Analysis) -> Result<DatFile, AnalysisError> {
    let dat = DatFile::open(path).map_err(AnalysisError::Open)?;
    let top = dat.buffer(0).map_err(AnalysisError::Open)?;
    if matches!(top.data, BufferData::Latency { .. }) {
        return Err(AnalysisError::Latency {
            analysis,
            path: path.to_path_buf(),
        });
    }
    Ok(dat)
}

/// The error for a file whose records could not be read.
pub(crate) fn read_error(path: &Path) -> impl Fn(SourceError) -> AnalysisError + Copy + '_ {
    move |source| AnalysisError::Read {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_say_what_each_analysis_needs() {
        let p = PathBuf::from("t.dat");
        let e = |a, latency: bool| {
            if latency {
                AnalysisError::Latency {
                    analysis: a,
                    path: p.clone(),
                }
            } else {
                AnalysisError::NoRecords {
                    analysis: a,
                    path: p.clone(),
                }
            }
            .to_string()
        };
        assert_eq!(
            e(Analysis::Hist, true),
            "t.dat: a latency tracer's trace has no records to make a histogram of"
        );
        assert_eq!(
            e(Analysis::Mem, false),
            "t.dat: no records found in the file (record kmem events with `tracectl record -e kmem`)"
        );
        assert_eq!(
            e(Analysis::Hist, false),
            "t.dat: no records found in the file (record events, with -T for stack traces)"
        );
        let out = AnalysisError::Output {
            analysis: Analysis::Mem,
            source: io::Error::other("pipe"),
        };
        assert_eq!(out.to_string(), "writing the table: pipe");
    }
}
