//! A tracefs root as the event model's source of format texts.

use super::{Tracefs, TracefsError};
use crate::formats::{FormatSource, SourceError};

impl FormatSource for Tracefs {
    fn header_page(&self) -> Result<String, SourceError> {
        Ok(self.read_string("events/header_page")?)
    }

    /// The directories under `events/<system>/`, sorted by system and name.
    fn events(&self) -> Result<Vec<(String, String)>, SourceError> {
        let dir = self.path("events");
        let systems = std::fs::read_dir(&dir).map_err(|e| TracefsError::from_io(&dir, e))?;
        let mut names: Vec<(String, String)> = Vec::new();
        for sys in systems.flatten() {
            if !sys.file_type().is_ok_and(|t| t.is_dir()) {
                continue;
            }
            let Ok(events) = std::fs::read_dir(sys.path()) else {
                continue;
            };
            let system = sys.file_name().to_string_lossy().into_owned();
            for ev in events.flatten() {
                if ev.file_type().is_ok_and(|t| t.is_dir()) {
                    names.push((
                        system.clone(),
                        ev.file_name().to_string_lossy().into_owned(),
                    ));
                }
            }
        }
        names.sort();
        Ok(names)
    }

    fn id(&self, system: &str, name: &str) -> Option<u16> {
        self.read_string(format!("events/{system}/{name}/id"))
            .ok()
            .and_then(|s| s.trim().parse::<u16>().ok())
    }

    fn format(&self, system: &str, name: &str) -> Result<String, SourceError> {
        Ok(self.read_string(format!("events/{system}/{name}/format"))?)
    }

    fn printk_formats(&self) -> Option<String> {
        self.read_string("printk_formats").ok()
    }

    /// A tree's `host/kallsyms.zst` or `host/kallsyms`; `/proc/kallsyms` for a live root
    /// (one without `host/`).
    fn kallsyms(&self) -> Option<String> {
        if let Ok(z) = std::fs::read(self.path("host/kallsyms.zst")) {
            let text = zstd::decode_all(&z[..]).ok()?;
            return Some(String::from_utf8_lossy(&text).into_owned());
        }
        if let Ok(text) = std::fs::read_to_string(self.path("host/kallsyms")) {
            return Some(text);
        }
        if self.path("host").exists() {
            return None;
        }
        std::fs::read_to_string("/proc/kallsyms").ok()
    }

    /// A tree's `host/config` or `host/config.gz`; `/proc/config.gz` for a live root.
    fn kernel_config(&self) -> Option<String> {
        if let Ok(s) = std::fs::read_to_string(self.path("host/config")) {
            return Some(s);
        }
        let gz = if self.path("host").exists() {
            self.path("host/config.gz")
        } else {
            "/proc/config.gz".into()
        };
        let bytes = std::fs::read(gz).ok()?;
        let mut s = String::new();
        std::io::Read::read_to_string(&mut flate2::read::GzDecoder::new(&bytes[..]), &mut s)
            .ok()?;
        Some(s)
    }
}
