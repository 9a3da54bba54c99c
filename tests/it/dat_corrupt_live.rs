//! Truncated and bit-flipped copies of real trace.dat files give errors, never panics.

use crate::support::skips;

use crate::support::dat::*;

use tracectl::dat::DatFile;

/// Open `path` and read every page of every buffer; errors are fine, panics are not.
fn read_everything(path: &std::path::Path) -> Result<u64, String> {
    let dat = DatFile::open(path).map_err(|e| e.to_string())?;
    let mut pages = 0;
    for (b, buf) in dat.buffers().iter().enumerate() {
        if buf.cpus().is_empty() {
            let _ = dat.latency_text(b);
        }
        for c in 0..buf.cpus().len() {
            let mut it = dat.cpu_pages(b, c).map_err(|e| e.to_string())?;
            while let Some(_p) = it.next_page().map_err(|e| e.to_string())? {
                pages += 1;
            }
        }
    }
    Ok(pages)
}

fn torture(args: &[&str]) {
    if let Some(why) = skip_reason() {
        skips::skip(why);
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.dat");
    let mut a = vec!["-e", "sched"];
    a.extend_from_slice(args);
    tracecmd_record(&file, &a);
    let orig = std::fs::read(&file).unwrap();
    assert!(read_everything(&file).unwrap() > 0);
    let bad = dir.path().join("bad.dat");

    // Truncations: densely through the metadata, then spread over the whole file.
    let mut cuts: Vec<usize> = (0..600).step_by(7).collect();
    cuts.extend((1..40).map(|i| orig.len() * i / 40));
    cuts.extend([orig.len() - 1, orig.len() - 4, orig.len() - 100]);
    let mut errors = 0;
    for cut in cuts {
        std::fs::write(&bad, &orig[..cut]).unwrap();
        if let Err(e) = read_everything(&bad) {
            assert!(
                e.contains("bad.dat") && e.contains("offset"),
                "error names file and offset: {e}"
            );
            errors += 1;
        }
    }
    assert!(
        errors > 40,
        "truncated files must be refused ({errors} errors)"
    );

    // Bit flips, deterministic.
    let mut x: u64 = 0x9e3779b97f4a7c15;
    for _ in 0..200 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut v = orig.clone();
        // Half the flips hit the first 4 KiB where most of the structure is.
        let pos = if x & 1 == 0 {
            (x >> 8) as usize % 4096.min(v.len())
        } else {
            (x >> 8) as usize % v.len()
        };
        v[pos] ^= 1 << ((x >> 3) & 7);
        std::fs::write(&bad, &v).unwrap();
        let _ = read_everything(&bad);
    }
}

#[test]
fn corrupt_v7_zstd_never_panics() {
    torture(&[]);
}

#[test]
fn corrupt_v6_never_panics() {
    torture(&["--file-version", "6"]);
}

#[test]
fn not_a_trace_dat() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.dat");
    std::fs::write(&p, b"hello world, not a trace").unwrap();
    let e = DatFile::open(&p).unwrap_err().to_string();
    assert!(
        e.contains("x.dat") && e.contains("initial header") && e.contains("magic"),
        "{e}"
    );
    let e = DatFile::open(dir.path().join("missing.dat"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("missing.dat"), "{e}");
}
