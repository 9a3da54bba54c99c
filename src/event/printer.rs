//! The event model as the renderers' [`EventFormatter`]: a registry plus the symbol
//! tables of the same root.

use super::{Kallsyms, PrintEnv, PrintStyle, PrintkFormats, Record, Registry, RegistryError};
use crate::render::EventFormatter;
use crate::tracefs::Tracefs;

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
}

impl EventPrinter {
    /// Load the registry (lazily), `printk_formats` and kallsyms of a tracefs root. A live
    /// root (one without `host/`) reads `/proc/kallsyms`; symbols that cannot be read are
    /// left out (addresses then print in hex) rather than failing.
    pub fn from_tracefs(t: &Tracefs) -> Result<EventPrinter, RegistryError> {
        let registry = Registry::from_tracefs(t)?;
        let printk = t
            .read_string("printk_formats")
            .ok()
            .map(|s| PrintkFormats::parse(&s));
        let kallsyms = load_kallsyms(t);
        let hz = load_hz(t);
        Ok(EventPrinter {
            registry,
            kallsyms,
            printk,
            hz,
            style: PrintStyle::Kernel,
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
        }
    }
}

fn load_kallsyms(t: &Tracefs) -> Option<Kallsyms> {
    if let Ok(z) = std::fs::read(t.path("host/kallsyms.zst")) {
        let text = zstd::decode_all(&z[..]).ok()?;
        return Some(Kallsyms::parse(&String::from_utf8_lossy(&text)));
    }
    if let Ok(text) = std::fs::read_to_string(t.path("host/kallsyms")) {
        return Some(Kallsyms::parse(&text));
    }
    if t.path("host").exists() {
        return None;
    }
    let k = Kallsyms::parse(&std::fs::read_to_string("/proc/kallsyms").ok()?);
    (!k.is_empty()).then_some(k)
}

/// `CONFIG_HZ` from the tree's `host/config(.gz)`, or `/proc/config.gz` for a live root.
fn load_hz(t: &Tracefs) -> Option<u32> {
    let text = if let Ok(s) = std::fs::read_to_string(t.path("host/config")) {
        s
    } else {
        let gz = if t.path("host").exists() {
            t.path("host/config.gz")
        } else {
            "/proc/config.gz".into()
        };
        let bytes = std::fs::read(gz).ok()?;
        let mut s = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut s)
            .ok()?;
        s
    };
    parse_config_hz(&text)
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
