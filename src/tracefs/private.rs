//! A command's own instance: created for the run, removed on every way out.
//!
//! Private instances are named `tracectl-<what>-<pid>`, so that one left behind by a run
//! that was killed (SIGKILL gives no chance to clean up) can be told from every other
//! instance: its pid is gone. The next run that creates a private instance removes those
//! and says so; it never touches another tool's instance or one whose owner still runs.

use std::time::Duration;

use super::instance::Instance;
use super::{Tracefs, TracefsError};

/// An instance this command created; dropping it (success, error, panic, or the end of
/// a command stopped by [`stop_on_signals`](super::stop_on_signals)) removes it.
#[derive(Debug)]
pub struct PrivateInstance {
    inst: Instance,
    keep: bool,
    notes: Vec<String>,
}

impl PrivateInstance {
    /// Create `instances/tracectl-<what>-<pid>`, first removing the private instances of
    /// runs that are gone (see [`PrivateInstance::notes`]).
    pub fn create(t: &Tracefs, what: &str) -> Result<PrivateInstance, TracefsError> {
        let notes = remove_stale_instances(t);
        let name = format!("tracectl-{what}-{}", std::process::id());
        let mut p = PrivateInstance::create_named(t, &name)?;
        p.notes = notes;
        Ok(p)
    }

    /// Create `instances/NAME`, which must not exist yet, to be removed like a private
    /// one (`record -B NAME` with a new NAME).
    pub fn create_named(t: &Tracefs, name: &str) -> Result<PrivateInstance, TracefsError> {
        Ok(PrivateInstance {
            inst: t.make_instance(name, false)?,
            keep: false,
            notes: Vec::new(),
        })
    }

    /// The instance.
    pub fn instance(&self) -> &Instance {
        &self.inst
    }

    /// One line per stale private instance removed (or that could not be removed) when
    /// this one was created.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Leave the instance in place (`record -k`).
    pub fn keep(mut self) -> Instance {
        self.keep = true;
        self.inst.clone()
    }

    /// Remove the instance now, saying why it could not be.
    pub fn remove(mut self) -> Result<(), TracefsError> {
        self.keep = true;
        remove_instance(&self.inst)
    }
}

impl Drop for PrivateInstance {
    fn drop(&mut self) {
        if !self.keep {
            let _ = remove_instance(&self.inst);
        }
    }
}

/// Stop an instance and remove it; rmdir fails with EBUSY while a reader still holds one
/// of its files, so it is retried for about a second.
fn remove_instance(inst: &Instance) -> Result<(), TracefsError> {
    let Some(name) = inst.name() else {
        return Ok(());
    };
    // Disabling first lets rmdir succeed even if a reader lingers.
    let _ = inst.set_tracing_on(false);
    let _ = inst.disable_all_events();
    let mut last = None;
    for _ in 0..50 {
        match inst.tracefs().remove_instance(name) {
            Ok(()) | Err(TracefsError::NotFound { .. }) => return Ok(()),
            Err(e) => last = Some(e),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err(last.unwrap_or(TracefsError::NotFound {
        path: inst.path(""),
    }))
}

/// The pid in a private instance's name, `tracectl-<what>-<pid>`; `None` for any other
/// name.
pub fn private_owner(name: &str) -> Option<i32> {
    let (what, pid) = name.strip_prefix("tracectl-")?.rsplit_once('-')?;
    if what.is_empty() || !what.bytes().all(|b| b.is_ascii_lowercase()) {
        return None;
    }
    if pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // Zero and values past i32 are no pid (kill(2) would read them as process groups).
    pid.parse::<i32>().ok().filter(|p| *p > 0)
}

fn pid_alive(pid: i32) -> bool {
    // Signal 0 checks existence only; EPERM means it exists under another user.
    !matches!(
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None),
        Err(nix::errno::Errno::ESRCH)
    )
}

/// Remove every `instances/tracectl-<what>-<pid>` whose pid no longer runs, leaving
/// every other instance alone; returns one line per instance removed or left.
pub fn remove_stale_instances(t: &Tracefs) -> Vec<String> {
    let Ok(names) = t.instances() else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for name in names {
        let Some(pid) = private_owner(&name) else {
            continue;
        };
        if pid_alive(pid) {
            continue;
        }
        let Ok(inst) = t.instance(Some(&name)) else {
            continue;
        };
        notes.push(match remove_instance(&inst) {
            Ok(()) => format!(
                "removed instances/{name}, left behind by a tracectl run (pid {pid}) that is gone"
            ),
            Err(e) => format!(
                "could not remove instances/{name}, left behind by a tracectl run (pid {pid}) that is gone: {e}"
            ),
        });
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tracectl_names_with_a_pid_are_private() {
        assert_eq!(private_owner("tracectl-record-1234"), Some(1234));
        assert_eq!(private_owner("tracectl-stream-7"), Some(7));
        assert_eq!(private_owner("tracectl-record"), None);
        assert_eq!(private_owner("tracectl-record-12a"), None);
        assert_eq!(private_owner("tracectl--12"), None);
        assert_eq!(private_owner("tracectl-Rec-12"), None);
        assert_eq!(private_owner("tracectl-record-0"), None);
        assert_eq!(private_owner("tracectl-record-4294967295"), None);
        assert_eq!(private_owner("perf-record-1234"), None);
        assert_eq!(private_owner("mytracectl-record-1234"), None);
    }
}
