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

    /// A tree's `host/kallsyms.zst` or `host/kallsyms`; `/proc/kallsyms` for a live
    /// root. A tree never reads the host's (see [`Tracefs::host`]).
    fn kallsyms(&self) -> Option<String> {
        self.host().kallsyms()
    }

    /// A tree's `host/config` or `host/config.gz`; `/proc/config.gz` for a live root.
    fn kernel_config(&self) -> Option<String> {
        self.host().config()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_gives_its_own_texts_and_never_the_hosts() {
        let dir = tempfile::tempdir().unwrap();
        let t = Tracefs::at(dir.path());
        std::fs::create_dir_all(dir.path().join("events/demo/hello")).unwrap();
        std::fs::write(dir.path().join("events/demo/hello/id"), "42\n").unwrap();
        std::fs::write(dir.path().join("events/demo/hello/format"), "name: hello\n").unwrap();
        std::fs::write(dir.path().join("events/header_page"), "x").unwrap();
        assert_eq!(t.events().unwrap(), [("demo".into(), "hello".into())]);
        assert_eq!(t.id("demo", "hello"), Some(42));
        assert_eq!(t.format("demo", "hello").unwrap(), "name: hello\n");
        assert!(t
            .format("demo", "nosuch")
            .unwrap_err()
            .to_string()
            .contains("nosuch"));
        // No host/ directory: a copy on disk still does not read /proc.
        assert_eq!(t.kallsyms(), None);
        assert_eq!(t.kernel_config(), None);
        std::fs::create_dir(dir.path().join("host")).unwrap();
        std::fs::write(
            dir.path().join("host/kallsyms"),
            "ffffffff81000000 T _text\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("host/config"), "CONFIG_HZ=250\n").unwrap();
        assert_eq!(t.kallsyms().as_deref(), Some("ffffffff81000000 T _text\n"));
        assert_eq!(t.kernel_config().as_deref(), Some("CONFIG_HZ=250\n"));
    }
}
