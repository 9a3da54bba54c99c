//! The event model seen through [`Catalog`]: schemas from a trace.dat's format texts,
//! kallsyms and printk formats from its sections.

use crate::dat::{DatFile, DatFormats, TracingData};
use crate::endian::Endianness;
use crate::event::KallsymsSource;
use crate::event::{Kallsyms, PrintEnv, PrintStyle, PrintkFormats, Record, Registry, Schema};
use crate::render::plugins::FunctionMap;

use super::{Catalog, FieldSpec};

/// Events, symbols and print settings of one trace.dat file.
pub struct DatCatalog {
    registry: Registry,
    ids: Vec<(u16, String, String)>,
    /// Built from `functions_source` on first use.
    functions: std::sync::OnceLock<FunctionMap>,
    /// Where the function map's kallsyms text comes from.
    functions_source: Option<KallsymsSource>,
    /// Set by the first [`DatCatalog::claim_functions`].
    functions_claimed: std::sync::atomic::AtomicBool,
    /// Set by the first lookup of an address or a name; see [`DatCatalog::functions_used`].
    functions_used: std::sync::atomic::AtomicBool,
    /// Only for the kernel's text (`--json`, `--style kernel`): see
    /// [`DatCatalog::load_kallsyms`].
    kallsyms: std::sync::OnceLock<Kallsyms>,
    printk: PrintkFormats,
    long_size: usize,
    endian: Endianness,
    /// Formats without a name or ID: `(system, reason)`; see [`DatCatalog::format_errors`].
    early_errors: Vec<(String, String)>,
}

impl DatCatalog {
    /// Build the catalog from the metadata sections of `dat`. Formats are parsed when
    /// their event is first met, and trace-cmd's function map of the file's kallsyms when
    /// a record first needs a symbol (a file of sched events never does), so that
    /// decoding can start at once.
    pub fn from_dat(dat: &DatFile) -> DatCatalog {
        let mut c = DatCatalog::formats(
            &DatFormats::of_dat(dat),
            dat.printk_formats(),
            dat.long_size(),
            dat.endian(),
        );
        c.functions_source = Some(dat.kallsyms_source());
        c
    }

    /// The catalog of a tracing data block (a perf.data's TRACING_DATA feature), with
    /// libtraceevent's function map of `kallsyms` (the block's own, or the one perf
    /// would use for the file), built when a format first needs a symbol.
    pub fn from_tracing_data(td: &TracingData, kallsyms: KallsymsSource) -> DatCatalog {
        let mut c = DatCatalog::formats(
            &DatFormats::of_metadata(&td.sections),
            &td.sections.printk_formats,
            td.long_size(),
            td.endian,
        );
        c.functions_source = Some(kallsyms);
        c
    }

    /// The catalog of metadata read from a live tracefs (`stream` in trace-cmd's style),
    /// with the function map of `kallsyms` built when a format first needs a symbol.
    pub fn from_metadata(
        meta: &crate::dat::Metadata,
        long_size: usize,
        endian: Endianness,
        kallsyms: KallsymsSource,
    ) -> DatCatalog {
        let mut c = DatCatalog::formats(
            &DatFormats::of_metadata(meta),
            &meta.printk_formats,
            long_size,
            endian,
        );
        c.functions_source = Some(kallsyms);
        c
    }

    /// Build the kernel's symbol table too, for [`DatCatalog::print_env`] in
    /// [`PrintStyle::Kernel`] (trace-cmd's text resolves symbols with the function map).
    pub fn load_kallsyms(&self, dat: &DatFile) -> Result<(), crate::dat::DatError> {
        let text = dat.kallsyms()?;
        self.kallsyms.get_or_init(|| Kallsyms::parse(text));
        Ok(())
    }

    /// Whether records of event `id` may print a kernel function name: its print fmt
    /// has a `%pS`-like conversion, or trace-cmd's plugin for it resolves an address
    /// field. A hint for building the function map early; a miss only builds it later.
    pub fn may_print_functions(&self, id: u16) -> bool {
        let Some(s) = self.registry.get(id) else {
            return false;
        };
        let fmt = s.print_fmt.as_bytes();
        let conversion = fmt
            .windows(3)
            .any(|w| w[0] == b'%' && w[1] == b'p' && b"sSfFB".contains(&w[2]));
        conversion
            || s.fields
                .iter()
                .any(|f| matches!(f.name.as_str(), "call_site" | "function" | "ip" | "func"))
    }

    /// True for the first caller only: that caller then builds the function map with
    /// [`DatCatalog::build_functions`] (on a thread of its own, while records are read).
    pub fn claim_functions(&self) -> bool {
        self.functions_source.is_some()
            && !self
                .functions_claimed
                .swap(true, std::sync::atomic::Ordering::Relaxed)
    }

    /// Build the function map now if it is not built (a caller that needs it meanwhile
    /// waits for it).
    pub fn build_functions(&self) {
        let _ = self.functions();
    }

    /// Whether a record looked up a function (so that a kallsyms text that could not be
    /// read changed what was printed; building the map early looks nothing up).
    pub fn functions_used(&self) -> bool {
        self.functions_used
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The function map for a lookup.
    fn functions_for_lookup(&self) -> &FunctionMap {
        if !self.functions_used() {
            self.functions_used
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.functions()
    }

    /// The function map (built on first use), or an empty one when there are no symbols.
    fn functions(&self) -> &FunctionMap {
        static EMPTY: std::sync::OnceLock<FunctionMap> = std::sync::OnceLock::new();
        if let Some(src) = &self.functions_source {
            return self.functions.get_or_init(|| FunctionMap::of_source(src));
        }
        self.functions
            .get()
            .unwrap_or_else(|| EMPTY.get_or_init(FunctionMap::new))
    }

    /// The catalog without its symbol tables.
    fn formats(
        formats: &DatFormats,
        printk: &str,
        long_size: usize,
        endian: Endianness,
    ) -> DatCatalog {
        // The source's listing cannot fail.
        let registry = Registry::from_source_as(formats, long_size, endian)
            .unwrap_or_else(|_| Registry::new(long_size, endian));
        // Formats without a name or ID are never indexed: parsed here for their error.
        let format_errors = formats
            .unnamed()
            .filter_map(|(system, text)| {
                let e = Schema::parse(system, text, long_size).err()?;
                Some((system.to_string(), e.to_string()))
            })
            .collect();
        let ids: Vec<(u16, String, String)> = registry
            .events()
            .filter_map(|(s, n, id)| Some((id?, s.to_string(), n.to_string())))
            .collect();
        DatCatalog {
            registry,
            ids,
            functions: std::sync::OnceLock::new(),
            functions_source: None,
            functions_claimed: Default::default(),
            functions_used: Default::default(),
            kallsyms: std::sync::OnceLock::new(),
            printk: PrintkFormats::parse(printk),
            long_size,
            endian,
            early_errors: format_errors,
        }
    }

    /// Formats that did not parse, as `(system, reason)`: those without a name or ID, and
    /// those parsed so far (formats are parsed when their event is first met). Their
    /// records print as unknown events.
    pub fn format_errors(&self) -> Vec<(String, String)> {
        let mut v = self.early_errors.clone();
        v.extend(self.registry.failed_formats());
        v
    }

    /// The event registry.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The print settings of this file in `style`.
    pub fn print_env(&self, style: PrintStyle) -> PrintEnv<'_> {
        PrintEnv {
            style,
            ..self.env()
        }
    }

    fn schema(&self, rec: &Record) -> Option<&Schema> {
        let id = rec.event_id(self.endian)?;
        self.registry.get(id)
    }

    fn env(&self) -> PrintEnv<'_> {
        PrintEnv {
            kallsyms: self.kallsyms.get(),
            // The catalog itself, so that a lazily built function map is only built when
            // a format resolves an address.
            functions: Some(self),
            printk: Some(&self.printk),
            endian: self.endian,
            long_size: self.long_size,
            hz: None,
            style: PrintStyle::TraceCmd,
            // The file's clock decides; the kernel style's caller sets it.
            time_in_ns: true,
        }
    }
}

impl Catalog for DatCatalog {
    fn events(&self) -> Vec<(u16, &str, &str)> {
        self.ids
            .iter()
            .map(|(id, s, n)| (*id, s.as_str(), n.as_str()))
            .collect()
    }

    fn event(&self, id: u16) -> Option<(&str, &str)> {
        let s = self.registry.get(id)?;
        Some((s.system.as_str(), s.name.as_str()))
    }

    fn field(&self, id: u16, name: &str) -> Option<FieldSpec> {
        Some(self.registry.get(id)?.field(name)?.spec(self.long_size))
    }

    fn first_field(&self, id: u16) -> Option<FieldSpec> {
        let schema = self.registry.get(id)?;
        let f = schema
            .fields
            .iter()
            .find(|f| !f.name.starts_with("common_"))?;
        Some(f.spec(self.long_size))
    }

    fn function(&self, addr: u64) -> Option<(&str, u64)> {
        self.functions_for_lookup().find(addr)
    }

    fn write_info(&self, rec: &Record, out: &mut Vec<u8>) {
        if let Some(s) = self.schema(rec) {
            if s.tracecmd_fails() {
                crate::bytes::put(out, b"[FAILED TO PARSE]");
                s.write_fields_tracecmd(rec, &self.env(), out);
            } else {
                s.write_text(rec, &self.env(), out);
            }
        }
    }

    fn write_fields(&self, rec: &Record, out: &mut Vec<u8>) {
        if let Some(s) = self.schema(rec) {
            s.write_fields_tracecmd(rec, &self.env(), out);
        }
    }

    fn endian(&self) -> Endianness {
        self.endian
    }

    fn long_size(&self) -> usize {
        self.long_size
    }

    fn may_print_functions(&self, id: u16) -> bool {
        DatCatalog::may_print_functions(self, id)
    }

    fn functions_pending(&self) -> bool {
        self.functions_claimed
            .load(std::sync::atomic::Ordering::Relaxed)
            && self.functions.get().is_none()
    }
}

impl crate::event::FunctionLookup for DatCatalog {
    fn function(&self, addr: u64) -> Option<(&str, u64)> {
        crate::event::FunctionLookup::function(self.functions_for_lookup(), addr)
    }

    fn address_of(&self, name: &str) -> Option<u64> {
        crate::event::FunctionLookup::address_of(self.functions_for_lookup(), name)
    }

    fn table_id(&self) -> u64 {
        crate::event::FunctionLookup::table_id(self.functions_for_lookup())
    }
}

impl std::fmt::Debug for DatCatalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DatCatalog")
            .field("events", &self.ids.len())
            .field("long_size", &self.long_size)
            .field("endian", &self.endian)
            .finish_non_exhaustive()
    }
}
