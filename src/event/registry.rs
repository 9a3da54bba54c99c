//! Schemas by id and by `system:name`, parsed on first use.

use crate::endian::Endianness;
use std::fmt;
use std::sync::OnceLock;

use indexmap::IndexMap;

use super::format::{FormatError, Schema};
use super::{HeaderPage, PrintEnv, Record};
use crate::formats::{FormatSource, SourceError};

/// Where a schema's format text comes from.
#[derive(Debug)]
enum Source {
    Text(String),
    /// `format(system, name)` of the registry's source.
    Source,
}

#[derive(Debug)]
struct Entry {
    system: String,
    name: String,
    id: Option<u16>,
    source: Source,
    schema: OnceLock<Result<Schema, FormatError>>,
}

/// A registry that could not be built.
#[derive(Debug)]
#[non_exhaustive]
pub enum RegistryError {
    /// The source could not list its events or give its `header_page`.
    Source(SourceError),
    /// `events/header_page` did not parse.
    HeaderPage(super::HeaderPageError),
}

impl fmt::Display for RegistryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegistryError::Source(e) => write!(f, "{e}"),
            RegistryError::HeaderPage(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for RegistryError {}

/// Every event schema of one kernel, by id and by `system:name`.
///
/// From a [`FormatSource`] (a tracefs root, say) only the ids are read up front
/// (`events/*/*/id`); a format is read and parsed the first time its event is asked for.
pub struct Registry {
    root: Option<Box<dyn FormatSource>>,
    entries: IndexMap<String, Entry>,
    /// Entry index + 1 by event id (0: unknown); a flat table keeps the per-record lookup
    /// to one load.
    by_id: Vec<u32>,
    long_size: usize,
    endian: Endianness,
}

impl fmt::Debug for Registry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registry")
            .field("root", &self.root)
            .field("events", &self.entries.len())
            .field("long_size", &self.long_size)
            .field("endian", &self.endian)
            .finish()
    }
}

impl Registry {
    /// An empty registry for a kernel with this `sizeof(long)` and byte order; fill it
    /// with [`Registry::add_format`].
    pub fn new(long_size: usize, endian: Endianness) -> Registry {
        Registry {
            root: None,
            entries: IndexMap::new(),
            by_id: vec![0; 1 << 16],
            long_size,
            endian,
        }
    }

    /// Index every event of a source of format texts (a tracefs root, live or a fixture
    /// tree). The long size comes from its `header_page`; the byte order is the host's.
    pub fn from_source<S: FormatSource + Clone + 'static>(
        source: &S,
    ) -> Result<Registry, RegistryError> {
        let hp = source.header_page().map_err(RegistryError::Source)?;
        let header = HeaderPage::parse(&hp).map_err(RegistryError::HeaderPage)?;
        Registry::from_source_with_long_size(source, header.long_size())
    }

    /// [`Registry::from_source`] for a source whose `header_page` cannot be read: the
    /// kernel's long size is given.
    pub fn from_source_with_long_size<S: FormatSource + Clone + 'static>(
        source: &S,
        long_size: usize,
    ) -> Result<Registry, RegistryError> {
        Registry::from_source_as(source, long_size, Endianness::NATIVE)
    }

    /// Index every event of a source whose kernel's long size and byte order are known
    /// apart from it (a trace.dat's or a perf.data's formats, [`crate::dat::DatFormats`]).
    /// Only names and ids are read now; a format is parsed the first time its event is
    /// asked for.
    pub fn from_source_as<S: FormatSource + Clone + 'static>(
        source: &S,
        long_size: usize,
        endian: Endianness,
    ) -> Result<Registry, RegistryError> {
        let mut reg = Registry::new(long_size, endian);
        let names = source.events().map_err(RegistryError::Source)?;
        for (system, name) in names {
            // events/ftrace/* have no `id` file: the ID is only in the format.
            let id = source
                .id(&system, &name)
                .or_else(|| Schema::name_and_id(&source.format(&system, &name).ok()?).1);
            let i = reg.entries.len();
            if let Some(id) = id {
                reg.by_id[id as usize] = i as u32 + 1;
            }
            reg.entries.insert(
                format!("{system}:{name}"),
                Entry {
                    system,
                    name,
                    id,
                    source: Source::Source,
                    schema: OnceLock::new(),
                },
            );
        }
        reg.root = Some(Box::new(source.clone()));
        Ok(reg)
    }

    /// Parse one format text (from a trace.dat or perf metadata block) and register it.
    pub fn add_format(&mut self, system: &str, text: &str) -> Result<u16, FormatError> {
        let schema = Schema::parse(system, text, self.long_size)?;
        let id = schema.id;
        let key = format!("{system}:{}", schema.name);
        let entry = Entry {
            system: system.to_string(),
            name: schema.name.clone(),
            id: Some(id),
            source: Source::Text(text.to_string()),
            schema: OnceLock::from(Ok(schema)),
        };
        let (i, _) = self.entries.insert_full(key, entry);
        self.by_id[id as usize] = i as u32 + 1;
        Ok(id)
    }

    /// Formats parsed so far that failed, as `(system, error)`.
    pub fn failed_formats(&self) -> Vec<(String, String)> {
        self.entries
            .values()
            .filter_map(|e| match e.schema.get() {
                Some(Err(err)) => Some((e.system.clone(), err.to_string())),
                _ => None,
            })
            .collect()
    }

    /// The kernel's `sizeof(long)`.
    pub fn long_size(&self) -> usize {
        self.long_size
    }

    /// Whether payloads are big-endian.
    pub fn endian(&self) -> Endianness {
        self.endian
    }

    fn load<'s>(&'s self, e: &'s Entry) -> &'s Result<Schema, FormatError> {
        e.schema.get_or_init(|| {
            let text = match (&e.source, &self.root) {
                (Source::Text(t), _) => t.clone(),
                (Source::Source, Some(root)) => match root.format(&e.system, &e.name) {
                    Ok(t) => t,
                    Err(err) => {
                        return Err(FormatError {
                            event: format!("{}:{}", e.system, e.name),
                            message: format!("cannot read it: {err}"),
                        })
                    }
                },
                (Source::Source, None) => String::new(),
            };
            Schema::parse(&e.system, &text, self.long_size)
        })
    }

    /// The schema for an event id, parsing its format on first use; None when the id is
    /// unknown or its format does not parse (see [`Registry::try_get`]).
    pub fn get(&self, id: u16) -> Option<&Schema> {
        self.try_get(id)?.ok()
    }

    /// Like [`Registry::get`] but tells why a known id has no schema.
    pub fn try_get(&self, id: u16) -> Option<Result<&Schema, &FormatError>> {
        let i = self.by_id[id as usize].checked_sub(1)?;
        let e = &self.entries[i as usize];
        Some(self.load(e).as_ref())
    }

    /// The schema of `system:name`.
    pub fn by_name(&self, system: &str, name: &str) -> Option<&Schema> {
        let e = self.entries.get(&format!("{system}:{name}"))?;
        self.load(e).as_ref().ok()
    }

    /// The schema of a record, from its `common_type`.
    pub fn of(&self, rec: &Record) -> Option<&Schema> {
        self.get(rec.event_id(self.endian)?)
    }

    /// Every known event as `(system, name, id)` in the source's order (sorted by system
    /// and name for a tracefs root, file order for a trace.dat), then those added.
    pub fn events(&self) -> impl Iterator<Item = (&str, &str, Option<u16>)> {
        self.entries
            .values()
            .map(|e| (e.system.as_str(), e.name.as_str(), e.id))
    }

    /// Parse every format now; returns the ones that fail.
    pub fn check_all(&self) -> Vec<FormatError> {
        self.entries
            .values()
            .filter_map(|e| {
                if e.id.is_none() {
                    return Some(FormatError {
                        event: format!("{}:{}", e.system, e.name),
                        message: "no readable `id` file and no `ID:` line in its format".into(),
                    });
                }
                self.load(e).as_ref().err().cloned()
            })
            .collect()
    }

    /// Write what the kernel's `trace` file shows after the context columns:
    /// `name: text` (or the text alone for events the kernel prints without their name).
    /// An unknown id writes a placeholder naming it. Returns false when the text is not
    /// the kernel's (unknown event or `field=value` fallback).
    pub fn write_event(&self, rec: &Record, env: &PrintEnv, out: &mut Vec<u8>) -> bool {
        let id = rec.event_id(self.endian);
        let Some(schema) = id.and_then(|id| self.get(id)) else {
            out.extend_from_slice(
                format!("<unknown event id {}>", id.map_or(-1, i32::from)).as_bytes(),
            );
            return false;
        };
        if schema.prints_name() {
            crate::bytes::put(out, schema.name.as_bytes());
            crate::bytes::put_array(out, *b": ");
        }
        schema.write_text(rec, env, out)
    }

    /// Events whose print fmt fell back to `field=value` pairs at least once (or could not
    /// be compiled), with the reason and the number of records: one line per event type.
    pub fn fallback_report(&self) -> Vec<(String, String, u64)> {
        self.entries
            .values()
            .filter_map(|e| {
                let s = e.schema.get()?.as_ref().ok()?;
                let n = s.fallback_count();
                (n > 0).then(|| {
                    (
                        s.full_name(),
                        s.print_fallback().unwrap_or("").to_string(),
                        n,
                    )
                })
            })
            .collect()
    }
}
