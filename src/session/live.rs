//! Tracepoints enabled live in a private instance and read back as typed records: the
//! library's shortest path from "trace these events" to field values.
//!
//! ```no_run
//! use std::time::Duration;
//! use tracectl::session::LiveTrace;
//! use tracectl::tracefs::Tracefs;
//!
//! let mut trace = LiveTrace::start(&Tracefs::discover()?, &["sched:sched_switch"])?;
//! let mut next_tasks = std::collections::BTreeSet::new();
//! trace.read_for(Duration::from_secs(1), |ev| {
//!     next_tasks.extend(ev.str("next_comm"));
//! })?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::time::{Duration, Instant};

use crate::endian::Endianness;
use crate::event::{FieldValue, Record, Registry, RegistryError, Schema};
use crate::ring::{page_layout, CpuStream, Entry, LiveReader, Merge, PageLayout, RingError};
use crate::tracefs::{resolve_event, PrivateInstance, Tracefs, TracefsError};

/// Events enabled in an instance of their own (`instances/tracectl-live-PID`), removed
/// when this is dropped, whatever the way out.
pub struct LiveTrace {
    // Field order is drop order: the reader's files close before the instance goes.
    reader: LiveReader,
    instance: PrivateInstance,
    registry: Registry,
    layout: PageLayout,
    bufs: Vec<Vec<u8>>,
    cpus: Vec<u32>,
    lost: u64,
}

/// One record, with its schema: fields by name, typed as the `format` file declares them.
#[derive(Clone, Copy)]
pub struct LiveEvent<'a> {
    /// The CPU it was recorded on.
    pub cpu: u32,
    /// Its timestamp in the instance's trace clock.
    pub ts: u64,
    schema: &'a Schema,
    data: &'a [u8],
    endian: Endianness,
}

impl<'a> LiveEvent<'a> {
    /// `system:name` parts: the event's name.
    pub fn name(&self) -> &'a str {
        &self.schema.name
    }

    /// Its system (`sched`, `irq`, ...).
    pub fn system(&self) -> &'a str {
        &self.schema.system
    }

    /// Its schema (fields, offsets, the compiled `print fmt`).
    pub fn schema(&self) -> &'a Schema {
        self.schema
    }

    /// The payload as recorded (common fields first).
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// A field's value; None when the event has no such field.
    pub fn field(&self, name: &str) -> Option<FieldValue<'a>> {
        self.schema.field(name)?.value(self.data, self.endian)
    }

    /// A string field (a comm, a name) as text.
    pub fn str(&self, name: &str) -> Option<String> {
        match self.field(name)? {
            FieldValue::Str(b) => Some(String::from_utf8_lossy(b).into_owned()),
            _ => None,
        }
    }

    /// An integer field, signed or not, as i64 (unsigned values above `i64::MAX` wrap).
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.field(name)? {
            FieldValue::Int(v) => Some(v),
            FieldValue::UInt(v) => Some(v as i64),
            _ => None,
        }
    }

    /// The pid of the task that was running (`common_pid`).
    pub fn pid(&self) -> Option<i64> {
        self.int("common_pid")
    }
}

impl fmt::Debug for LiveEvent<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiveEvent")
            .field("cpu", &self.cpu)
            .field("ts", &self.ts)
            .field("event", &format_args!("{}:{}", self.system(), self.name()))
            .finish()
    }
}

/// Why a live trace could not start or be read.
#[derive(Debug)]
#[non_exhaustive]
pub enum LiveError {
    /// A tracefs file could not be read or written, or an event spec names nothing.
    Tracefs(TracefsError),
    /// The event formats could not be loaded.
    Registry(RegistryError),
    /// The ring buffer's layout or data could not be read.
    Ring(RingError),
    /// Reading `trace_pipe_raw` failed.
    Io(std::io::Error),
}

impl fmt::Display for LiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LiveError::Tracefs(e) => write!(f, "{e}"),
            LiveError::Registry(e) => write!(f, "{e}"),
            LiveError::Ring(e) => write!(f, "{e}"),
            LiveError::Io(e) => write!(f, "reading trace_pipe_raw: {e}"),
        }
    }
}

impl std::error::Error for LiveError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LiveError::Tracefs(e) => Some(e),
            LiveError::Registry(e) => Some(e),
            LiveError::Ring(e) => Some(e),
            LiveError::Io(e) => Some(e),
        }
    }
}

impl From<TracefsError> for LiveError {
    fn from(e: TracefsError) -> LiveError {
        LiveError::Tracefs(e)
    }
}

impl From<RingError> for LiveError {
    fn from(e: RingError) -> LiveError {
        LiveError::Ring(e)
    }
}

impl From<std::io::Error> for LiveError {
    fn from(e: std::io::Error) -> LiveError {
        LiveError::Io(e)
    }
}

impl LiveTrace {
    /// Create a private instance, enable `events` there (`system:event`, `system`, globs,
    /// as `tracectl record -e` takes them) and open its per-CPU `trace_pipe_raw` files.
    /// Every spec is resolved before anything is created, so a typo changes nothing and
    /// comes back with the closest names.
    pub fn start(t: &Tracefs, events: &[&str]) -> Result<LiveTrace, LiveError> {
        t.require_live("a live trace")?;
        let available = t.available_events()?;
        let targets = events
            .iter()
            .map(|spec| resolve_event(spec, &available))
            .collect::<Result<Vec<_>, _>>()?;
        let registry = Registry::from_source(t).map_err(LiveError::Registry)?;
        let mut layout = page_layout(t)?;
        let instance = PrivateInstance::create(t, "live")?;
        if let Ok(kb) = instance.instance().subbuf_size_kb() {
            layout.subbuf_size = kb as usize * 1024;
        }
        for target in &targets {
            instance.instance().set_target_enabled(target, true)?;
        }
        let reader = LiveReader::open(instance.instance(), &layout, None)?;
        let cpus = reader.cpus();
        Ok(LiveTrace {
            bufs: cpus.iter().map(|_| Vec::new()).collect(),
            cpus,
            reader,
            instance,
            registry,
            layout,
            lost: 0,
        })
    }

    /// Notes about stale private instances of killed runs removed on the way in.
    pub fn notes(&self) -> &[String] {
        self.instance.notes()
    }

    /// Events the kernel reported lost (overwritten before they were read) so far.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// Read for `duration`, handing each record to `f` in time order (per batch of
    /// sub-buffers read); returns the number of records. Records of events whose format
    /// does not parse are skipped.
    pub fn read_for(
        &mut self,
        duration: Duration,
        mut f: impl FnMut(&LiveEvent),
    ) -> Result<u64, LiveError> {
        let deadline = Instant::now() + duration;
        let mut n = 0;
        loop {
            let now = Instant::now();
            let done = now >= deadline;
            if !done {
                self.reader
                    .wait((deadline - now).min(Duration::from_millis(100)))?;
            }
            if self.reader.read_available(&mut self.bufs)? > 0 {
                n += self.decode(&mut f);
            }
            if done {
                return Ok(n);
            }
        }
    }

    fn decode(&mut self, f: &mut impl FnMut(&LiveEvent)) -> u64 {
        let endian = self.layout.endian;
        let streams: Vec<_> = self
            .bufs
            .iter()
            .zip(&self.cpus)
            .map(|(b, c)| CpuStream::new(self.layout, *c, b))
            .collect();
        let mut n = 0;
        for entry in Merge::new(streams) {
            match entry {
                Ok(Entry::Event(rec)) => {
                    let Record { cpu, ts, data } = rec;
                    if let Some(schema) = self.registry.of(&rec) {
                        f(&LiveEvent {
                            cpu,
                            ts,
                            schema,
                            data,
                            endian,
                        });
                        n += 1;
                    }
                }
                Ok(Entry::Lost { count, .. }) => self.lost += count.unwrap_or(0),
                Err(_) => {}
            }
        }
        for b in &mut self.bufs {
            b.clear();
        }
        n
    }
}
