//! Read a trace.dat (written by trace-cmd or tracectl) and count its events by name,
//! decoding each record's fields with the event model.
//!
//!     cargo run --example read_dat -- trace.dat
//!
//! No root needed: the file carries its own event formats.

use std::collections::BTreeMap;

use tracectl::dat::{DatFile, DatFormats};
use tracectl::event::{FieldValue, Registry};
use tracectl::render::tracecmd::{DatSource, RecordSource};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: read_dat FILE.dat")?;
    let dat = DatFile::open(&path)?;
    // The formats inside the file, parsed when an event is first met.
    let registry =
        Registry::from_source_as(&DatFormats::of_dat(&dat), dat.long_size(), dat.endian())?;
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    let mut longest_comm = String::new();
    let mut source = DatSource::open(&dat, 0)?;
    while source.peek_ts().map_err(|e| e.to_string())?.is_some() {
        let Some(taken) = source.take() else { break };
        let Some(schema) = registry.of(&taken.rec) else {
            continue;
        };
        *counts
            .entry(format!("{}:{}", schema.system, schema.name))
            .or_default() += 1;
        if let Some(FieldValue::Str(comm)) = schema
            .field("next_comm")
            .and_then(|f| f.value(taken.rec.data, dat.endian()))
        {
            let comm = String::from_utf8_lossy(comm);
            if comm.len() > longest_comm.len() {
                longest_comm = comm.into_owned();
            }
        }
    }
    for (event, n) in &counts {
        println!("{n:>8} {event}");
    }
    if !longest_comm.is_empty() {
        println!("longest task name switched to: {longest_comm}");
    }
    Ok(())
}
