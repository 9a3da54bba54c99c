//! A trace.dat's format texts (or those of a perf.data tracing data block) as the event
//! model's [`FormatSource`]: the registry reads them through the same path as a tracefs
//! root, indexing names and ids up front and parsing a format when its event is first met.

use std::collections::HashMap;
use std::sync::Arc;

use super::writer::Metadata;
use super::DatFile;
use crate::event::Schema;
use crate::formats::{FormatSource, SourceError};

/// The format texts of one file. Cheap to clone (the texts are shared).
#[derive(Debug, Clone)]
pub struct DatFormats {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    header_page: String,
    printk_formats: String,
    /// `(system, name, id, text)` of the formats with a `name:` and an `ID:` line, in
    /// file order (ftrace formats first).
    named: Vec<(String, String, u16, String)>,
    /// `(system, name)` to its index in `named` (the last one when a file repeats it).
    index: HashMap<(String, String), usize>,
    /// `(system, text)` of the formats without a `name:` or `ID:` line.
    unnamed: Vec<(String, String)>,
}

impl DatFormats {
    /// The source of `header_page`, `(system, format text)` pairs and `printk_formats`.
    pub fn new<'f>(
        header_page: &str,
        formats: impl Iterator<Item = (&'f str, &'f str)>,
        printk_formats: &str,
    ) -> DatFormats {
        let mut named = Vec::new();
        let mut index = HashMap::new();
        let mut unnamed = Vec::new();
        for (system, text) in formats {
            match Schema::name_and_id(text) {
                (Some(name), Some(id)) if !name.is_empty() => {
                    index.insert((system.to_string(), name.to_string()), named.len());
                    named.push((system.to_string(), name.to_string(), id, text.to_string()));
                }
                _ => unnamed.push((system.to_string(), text.to_string())),
            }
        }
        DatFormats {
            inner: Arc::new(Inner {
                header_page: header_page.to_string(),
                printk_formats: printk_formats.to_string(),
                named,
                index,
                unnamed,
            }),
        }
    }

    /// The formats of an open trace.dat.
    pub fn of_dat(dat: &DatFile) -> DatFormats {
        DatFormats::new(dat.header_page(), dat.all_formats(), dat.printk_formats())
    }

    /// The formats of a tracing data block's texts.
    pub fn of_metadata(meta: &Metadata) -> DatFormats {
        DatFormats::new(&meta.header_page, meta.all_formats(), &meta.printk_formats)
    }

    /// `(system, text)` of the formats that cannot be indexed: no `name:` or no `ID:`
    /// line. A registry never sees them; parse them for their error.
    pub fn unnamed(&self) -> impl Iterator<Item = (&str, &str)> {
        self.inner
            .unnamed
            .iter()
            .map(|(s, t)| (s.as_str(), t.as_str()))
    }
}

impl FormatSource for DatFormats {
    fn header_page(&self) -> Result<String, SourceError> {
        Ok(self.inner.header_page.clone())
    }

    /// In file order, so that a registry lists them as the file does.
    fn events(&self) -> Result<Vec<(String, String)>, SourceError> {
        let mut seen = std::collections::HashSet::new();
        Ok(self
            .inner
            .named
            .iter()
            .filter(|(s, n, _, _)| seen.insert((s.as_str(), n.as_str())))
            .map(|(s, n, _, _)| (s.clone(), n.clone()))
            .collect())
    }

    fn id(&self, system: &str, name: &str) -> Option<u16> {
        let i = *self
            .inner
            .index
            .get(&(system.to_string(), name.to_string()))?;
        Some(self.inner.named[i].2)
    }

    fn format(&self, system: &str, name: &str) -> Result<String, SourceError> {
        match self
            .inner
            .index
            .get(&(system.to_string(), name.to_string()))
        {
            Some(&i) => Ok(self.inner.named[i].3.clone()),
            None => Err(format!("the file has no format for {system}:{name}").into()),
        }
    }

    fn printk_formats(&self) -> Option<String> {
        Some(self.inner.printk_formats.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::endian::Endianness;
    use crate::event::Registry;

    const HELLO: &str = "name: hello\nID: 42\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:int x;\toffset:4;\tsize:4;\tsigned:1;\n\nprint fmt: \"x=%d\", REC->x\n";
    const BROKEN: &str = "name: broken\nID: 43\nformat:\n\tfield:int x;\toffset:zz;\tsize:4;\tsigned:1;\n\nprint fmt: \"x=%d\", REC->x\n";

    #[test]
    fn formats_load_lazily_through_the_registry_and_keep_file_order() {
        let src = DatFormats::new(
            "",
            [
                ("demo", BROKEN),
                ("demo", HELLO),
                ("demo", "no name here\n"),
            ]
            .into_iter(),
            "",
        );
        assert_eq!(src.unnamed().count(), 1);
        assert_eq!(src.id("demo", "hello"), Some(42));
        let reg = Registry::from_source_as(&src, 8, Endianness::Big).unwrap();
        assert_eq!(reg.endian(), Endianness::Big);
        let names: Vec<_> = reg.events().collect();
        assert_eq!(
            names,
            [("demo", "broken", Some(43)), ("demo", "hello", Some(42))]
        );
        // Nothing parsed yet: no failure known.
        assert!(reg.failed_formats().is_empty());
        assert_eq!(reg.get(42).unwrap().fields[1].name, "x");
        let err = reg.try_get(43).unwrap().unwrap_err().to_string();
        assert!(
            err.contains("demo/broken") && err.contains("offset:zz"),
            "{err}"
        );
        assert_eq!(reg.failed_formats().len(), 1);
    }
}
