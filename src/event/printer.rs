//! The event model as the renderers' [`EventFormatter`]: a registry plus the symbol
//! tables of the same root.

use super::{Kallsyms, PrintEnv, PrintStyle, PrintkFormats, Record, Registry, RegistryError};
use crate::formats::FormatSource;

/// Writes what an event prints after the context columns of a `trace` line.
///
/// For a tracepoint that is `name: ` and the text of its `print fmt`; the ftrace-internal
/// events (`print`, `bprint`, `function`, ...) print without their name, like the kernel.
/// [`EventPrinter`] implements it with the event model; `render::FieldPairs` prints
/// `field=value` pairs alone.
pub trait EventFormatter {
    /// Append the event's text to `out`; false when the event id is unknown (then a
    /// placeholder naming the id was written).
    fn write_event(&self, rec: &Record, out: &mut Vec<u8>) -> bool;
}

/// Everything needed to print events of one kernel as its `trace` file does: the schemas,
/// `printk_formats` and kallsyms.
#[derive(Debug)]
pub struct EventPrinter {
    /// Schemas by id.
    pub registry: Registry,
    /// Kernel symbols (`host/kallsyms.zst` or `host/kallsyms` of a fixture tree, or
    /// `/proc/kallsyms` for a live root); None prints addresses in hex.
    pub kallsyms: Option<Kallsyms>,
    /// The root's `printk_formats`.
    pub printk: Option<PrintkFormats>,
    /// The kernel's HZ, for `jiffies_to_msecs()`.
    pub hz: Option<u32>,
    /// Whose text to reproduce (the kernel's by default).
    pub style: PrintStyle,
    /// The trace clock counts nanoseconds (times inside event texts print as
    /// `sec.usec`); true unless set.
    pub time_in_ns: bool,
}

impl EventPrinter {
    /// Load the registry (lazily), `printk_formats`, kallsyms and HZ of a source (a
    /// tracefs root: a live root reads `/proc/kallsyms`); symbols that cannot be read are
    /// left out (addresses then print in hex) rather than failing.
    pub fn from_source<S: FormatSource + Clone + 'static>(
        source: &S,
    ) -> Result<EventPrinter, RegistryError> {
        let registry = Registry::from_source(source)?;
        let printk = source.printk_formats().map(|s| PrintkFormats::parse(&s));
        let kallsyms = source
            .kallsyms()
            .map(|text| Kallsyms::parse(&text))
            .filter(|k| !k.is_empty());
        let hz = source.kernel_config().and_then(|c| parse_config_hz(&c));
        Ok(EventPrinter {
            registry,
            kallsyms,
            printk,
            hz,
            style: PrintStyle::Kernel,
            time_in_ns: true,
        })
    }

    /// The environment to pass to [`super::Schema::write_text`].
    pub fn env(&self) -> PrintEnv<'_> {
        PrintEnv {
            kallsyms: self.kallsyms.as_ref(),
            functions: None,
            printk: self.printk.as_ref(),
            endian: self.registry.endian(),
            long_size: self.registry.long_size(),
            hz: self.hz,
            style: self.style,
            time_in_ns: self.time_in_ns,
        }
    }
}

/// The value of `CONFIG_HZ=` in a kernel config.
pub(crate) fn parse_config_hz(config: &str) -> Option<u32> {
    config
        .lines()
        .find_map(|l| l.strip_prefix("CONFIG_HZ="))
        .and_then(|v| v.trim().parse().ok())
        .filter(|&hz| hz > 0)
}

impl EventFormatter for EventPrinter {
    /// `name: text` as the kernel prints it, or the text alone for syscalls and ftrace
    /// events; false for an unknown id or a `field=value` fallback.
    fn write_event(&self, rec: &Record, out: &mut Vec<u8>) -> bool {
        self.registry.write_event(rec, &self.env(), out)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn config_hz() {
        assert_eq!(
            super::parse_config_hz("# CONFIG_HZ_100 is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n"),
            Some(250)
        );
        assert_eq!(super::parse_config_hz("CONFIG_HZ_PERIODIC=y\n"), None);
    }
}
