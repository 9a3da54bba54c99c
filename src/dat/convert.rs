//! `trace-cmd convert`: rewrite a trace.dat in another version (6 or 7) or compression,
//! with the same metadata, options and trace data.

use std::path::{Path, PathBuf};

use super::compress::Compression;
use super::error::{DatError, DatErrorKind};
use super::reader::DatFile;
use super::writer::{buffers_of, write_dat, Metadata, NewOption, WriteOptions, WriteSummary};

/// The temporary sibling a conversion writes before it renames it over `output`.
fn partial_path(output: &Path) -> PathBuf {
    let mut name = output
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    name.push(".partial");
    output.with_file_name(name)
}

/// Convert `input` into `output` as trace.dat `version` (6 or 7) with `compression`
/// (ignored for version 6). The output appears only when the whole file is written, so a
/// failure leaves whatever was at `output` untouched.
pub fn convert_dat(
    input: &Path,
    output: &Path,
    version: u32,
    compression: Compression,
) -> Result<WriteSummary, DatError> {
    if !(6..=7).contains(&version) {
        return Err(DatError::new(
            output,
            "file version",
            0,
            DatErrorKind::Unsupported(format!("version {version}: use 6 or 7")),
        ));
    }
    let d = DatFile::open(input)?;
    let options: Vec<NewOption> = d.options().all.iter().map(NewOption::from).collect();
    let wo = WriteOptions {
        version,
        compression: if version < 7 {
            Compression::None
        } else {
            compression
        },
        endian: d.endian(),
        long_size: d.header().file_long_size,
        page_size: d.header().page_size,
    };
    // Every section is read before the first byte is written.
    let meta = Metadata::from_dat(&d)?;
    let partial = partial_path(output);
    let written =
        buffers_of(&d).and_then(|buffers| write_dat(&partial, &wo, &meta, &options, buffers));
    match written {
        Ok(s) => {
            std::fs::rename(&partial, output).map_err(|e| {
                let _ = std::fs::remove_file(&partial);
                DatError::new(output, "rename", 0, DatErrorKind::Io(e))
            })?;
            Ok(s)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}
