//! A recording: a sampling session's records written into a perf.data file, after the
//! side-band records of what already runs, until the command ends, every sampled task
//! has ended, or a stop is asked; then the features perf needs (build ids of the files
//! the samples hit, host facts, tracing data) and the count of what the kernel dropped.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::bpf_progs::{loaded_program, BpfPrograms, BpfReadStop, BpfSideBand};
use super::buildid_cache::{add_objects, CacheWarning};
use super::data::abi::{record as rec, sample};
use super::data::compressed::RecordCompressor;
use super::data::host::host_features;
use super::data::{Compressed, PerfData, PerfDataWriter};
use super::machine::recorded_objects;
use super::record::RecordSession;
use super::ring::RecordBytes;
use super::switch_output::{
    stamped, take_signal, timestamp_now, Rotation, SwitchOutput, SwitchTrigger,
};
use super::synth::{all_pids, Synth};
use super::sys::{ChildExit, GatedChild};

/// The COMPRESSED feature's type for zstd.
const ZSTD: u32 = 1;

/// Which running processes get synthesized COMM/FORK/MMAP2 records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Running {
    /// The forked command only (its COMM; the kernel reports its exec and maps).
    Command(i32),
    /// Every process (`-a`, `-C`).
    All,
    /// These processes (`-p`).
    Processes(Vec<i32>),
}

/// What a recording does with the build ids of the files its samples hit, as perf
/// record's options say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BuildIds {
    /// List them (BUILD_ID) and add the files to the build-id cache at this directory
    /// (perf's default).
    Cache(PathBuf),
    /// List them only (`-N`, `--no-buildid-cache`).
    NoCache,
    /// Neither (`-B`, `--no-buildid`): the file has no BUILD_ID section.
    Skip,
}

/// What to record and where.
#[derive(Debug)]
pub struct Recording<'a> {
    /// The output file; an existing one is renamed to `<file>.old` first.
    pub output: &'a Path,
    /// Whose side-band records to synthesize.
    pub running: Running,
    /// The forked command, if any: perf gives it a COMM (and NAMESPACES) of its own
    /// after the records of the tasks it walks, whatever the scope.
    pub workload: Option<i32>,
    /// The "tracing data" block of the recorded tracepoints, if any.
    pub tracing_data: Option<Vec<u8>>,
    /// The command line stored in the file (CMDLINE).
    pub cmdline: Vec<String>,
    /// The writing tool's version (VERSION).
    pub version: String,
    /// The build ids of the files the samples hit: listed, and cached.
    pub build_ids: BuildIds,
    /// `--buildid-all`: the build ids of every object the records map, hit or not.
    pub all_build_ids: bool,
    /// `-k`: the samples' clock, read against the time of day as the events start
    /// (CLOCKID and CLOCK_DATA).
    pub clockid: Option<i32>,
    /// `--buildid-mmap`: the map records carry the build ids (the kernel's, as it reports
    /// maps, and the synthesized ones); the caller also skips the BUILD_ID feature.
    pub buildid_mmap: bool,
    /// `--namespaces`: a NAMESPACES record for each thread given a COMM.
    pub namespaces: bool,
    /// `--all-cgroups`: a CGROUP record for each cgroup that exists.
    pub cgroups: bool,
    /// Told when the events of a delayed recording (`-D`) wait and when they start.
    pub on_delay: Notify<'a, DelayNotice>,
    /// The BPF programs loaded at the start get their BPF_EVENT records and their info
    /// in the header, besides their KSYMBOL records (off with `--no-bpf-event`).
    pub bpf_events: bool,
    /// `-z`: the ring data goes in COMPRESSED records (the side-band records
    /// synthesized at the start, FINISHED_ROUND and LOST_SAMPLES stay as they are).
    pub compression: Option<Compression>,
    /// `--mmap-flush`: a ring is read once it holds this many bytes (all of them are
    /// read at the end); 1 reads every ring at each wake-up.
    pub mmap_flush: u64,
    /// `--tail-synthesize` (and `--overwrite`): the records of what exists (the
    /// counters' ids, the kernel's maps, the BPF programs, the cgroups, the tasks) are
    /// synthesized at the end, after the rings' records, as perf does; only the forked
    /// command's COMM stays at the start.
    pub tail_synthesize: bool,
    /// `--switch-output` (and `--timestamp-filename`): the recording goes on in a new
    /// file at each trigger, every finished file renamed `<output>.<timestamp>`, the last
    /// one too.
    pub switch_output: Option<SwitchOutput>,
    /// Told of each switch (the CLI prints perf's lines for them).
    pub on_switch: Notify<'a, SwitchNotice>,
    /// `--max-size`: the recording stops (and the command gets SIGTERM) once the records
    /// written reach this many bytes, as perf stops after the write that reaches it.
    pub max_size: Option<u64>,
}

/// How `-z` compresses, and what the COMPRESSED feature says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Compression {
    /// The zstd level, 1 to 22.
    pub level: u32,
    /// Bytes of each ring's mapping, its control page included (perf's `mmap_len`).
    pub mmap_len: u32,
}

/// What compression did to the ring data.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CompressionSummary {
    /// Bytes read from the rings.
    pub transferred: u64,
    /// Ring bytes over the bytes of the COMPRESSED records (0 when nothing was read).
    pub ratio: f32,
}

/// What a delayed recording reports (perf's "Events disabled" and "Events enabled").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayNotice {
    /// The command runs; the events wait.
    Disabled,
    /// The delay is over: the events are enabled.
    Enabled,
}

/// The caller's function for a recording's notices ([`DelayNotice`]s,
/// [`SwitchNotice`]s): the library never prints, the CLI does.
pub struct Notify<'a, N>(pub Option<&'a dyn Fn(N)>);

impl<N> Clone for Notify<'_, N> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<N> Copy for Notify<'_, N> {}

impl<N> Default for Notify<'_, N> {
    fn default() -> Self {
        Notify(None)
    }
}

impl<N> std::fmt::Debug for Notify<'_, N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Notify(set)"
        } else {
            "Notify(none)"
        })
    }
}

impl<N> Notify<'_, N> {
    fn tell(&self, n: N) {
        if let Some(f) = self.0 {
            f(n);
        }
    }
}

/// A switch to a new file (`--switch-output`), as perf reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwitchNotice {
    /// The reader woke this many times since the last switch (perf's `dump data`).
    Woken(u64),
    /// The finished file, renamed.
    Dumped(PathBuf),
}

/// What a recording wrote.
#[derive(Debug, Default)]
pub struct RecordSummary {
    /// File size in bytes.
    pub bytes: u64,
    /// Samples written.
    pub samples: u64,
    /// Samples (and side-band records) the kernel dropped.
    pub lost: u64,
    /// PERF_RECORD_LOST records the rings carried.
    pub lost_records: u64,
    /// Times the reader woke, counted as perf counts them (the end's wake-up too).
    pub wakeups: u64,
    /// How the command ended, when there was one and it ended.
    pub exit: Option<ChildExit>,
    /// The files that could not be added to the build-id cache (the recording is
    /// complete without them).
    pub cache_warnings: Vec<CacheWarning>,
    /// Why the BPF programs loaded at the start were not all synthesized (the recording
    /// has those before it).
    pub bpf_stop: Option<BpfReadStop>,
    /// Why the cgroups were not all synthesized (`--all-cgroups`; the recording has
    /// those found before).
    pub cgroup_error: Option<io::Error>,
    /// With `-z`: what the compression did.
    pub compression: Option<CompressionSummary>,
    /// `--max-size` stopped the recording: the bytes of records written then.
    pub size_limit: Option<u64>,
    /// With `--switch-output` or `--timestamp-filename`: the last file, renamed (its
    /// size is `bytes`; `wakeups` counts since the last switch).
    pub dumped: Option<PathBuf>,
    /// The old files `--switch-max-files` could not remove, with why.
    pub rotation_errors: Vec<(PathBuf, io::Error)>,
}

/// A recording that failed: what was being done, and why.
#[derive(Debug)]
#[non_exhaustive]
pub struct RecordError {
    /// What was being done (`writing perf.data`, `starting the command`, ...).
    pub what: String,
    /// The cause.
    pub source: io::Error,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.what, self.source)
    }
}

impl std::error::Error for RecordError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

fn ctx<T>(r: io::Result<T>, what: &str) -> Result<T, RecordError> {
    r.map_err(|source| RecordError {
        what: what.to_string(),
        source,
    })
}

/// What the records written so far tell: samples and their time span.
#[derive(Default)]
struct Seen {
    samples: u64,
    first_time: Option<u64>,
    last_time: u64,
}

impl Seen {
    fn note(&mut self, r: &RecordBytes<'_>, time_off: Option<usize>) {
        if r.kind() != rec::SAMPLE {
            return;
        }
        self.samples += 1;
        if let Some(t) = time_off.and_then(|o| r.u64_at(o)) {
            // Rings are read one after the other: the first in the file is not always
            // the earliest.
            let first = self.first_time.get_or_insert(t);
            *first = (*first).min(t);
            self.last_time = self.last_time.max(t);
        }
    }
}

fn rename_old(path: &Path) -> io::Result<()> {
    if path.exists() {
        let mut old = path.as_os_str().to_owned();
        old.push(".old");
        std::fs::rename(path, &old).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!(
                    "cannot rename {} to {}: {e}",
                    path.display(),
                    Path::new(&old).display()
                ),
            )
        })?;
    }
    Ok(())
}

/// What perf synthesizes of what exists when it looks (its `record__synthesize`: at the
/// start, or at the end with `--tail-synthesize`), with what the BPF programs and the
/// cgroups gave.
struct Synthesized {
    records: Vec<Vec<u8>>,
    bpf: BpfPrograms,
    bpf_stop: Option<BpfReadStop>,
    cgroup_error: Option<io::Error>,
}

/// perf's order: the counters' ids first, then the kernel's maps, the threads and CPUs
/// the counters are on, the BPF programs, the cgroups and the tasks.
fn synthesize(session: &RecordSession, rec: &Recording<'_>, synth: &Synth) -> Synthesized {
    let kallsyms = std::fs::read_to_string("/proc/kallsyms").unwrap_or_default();
    let modules = std::fs::read_to_string("/proc/modules").unwrap_or_default();
    let mut side = super::synth::id_index(session.id_slots());
    side.extend(synth.kernel_maps(&kallsyms, &modules));
    drop(kallsyms);
    side.push(super::synth::thread_map(session.threads()));
    side.push(super::synth::cpu_map(session.cpus()));
    // The BPF programs loaded now: a KSYMBOL per function and a BPF_EVENT each, as perf
    // synthesizes them after the kernel's maps; their info and BTF go in the features.
    let (mut bpf, bpf_stop) = BpfPrograms::loaded();
    for (&id, p) in &bpf.programs {
        for f in bpf.symbols(id) {
            side.push(synth.ksymbol(f.addr, f.len, &f.name));
        }
        if rec.bpf_events {
            side.push(synth.bpf_prog_load(id, p.tag));
        }
    }
    if !rec.bpf_events {
        // As perf with --no-bpf-event: the programs' symbols only, none of their info.
        bpf = BpfPrograms::default();
    }
    // The cgroups, as perf synthesizes them between the BPF programs and the tasks.
    let mut cgroup_error = None;
    if rec.cgroups {
        let (cgroups, error) = super::cgroup::all_records();
        side.extend(cgroups.iter().map(|c| synth.cgroup(c.id, &c.path)));
        cgroup_error = error;
    }
    match &rec.running {
        Running::Command(_) => {}
        Running::All => {
            for pid in all_pids() {
                side.extend(synth.process(pid, session.maps_data()));
            }
        }
        Running::Processes(pids) => {
            for &pid in pids {
                let (records, complete) = synth.given_process(pid, session.maps_data());
                side.extend(records);
                if !complete {
                    break;
                }
            }
        }
    }
    Synthesized {
        records: side,
        bpf,
        bpf_stop,
        cgroup_error,
    }
}

/// The forked command's COMM as it is now (`perf-exec` before its exec), then its
/// NAMESPACES with `namespaces`: what perf writes for it before starting it.
fn workload_comm(synth: &Synth, pid: i32, namespaces: bool) -> Vec<Vec<u8>> {
    let comm =
        std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_else(|_| "perf-exec".into());
    let mut v = vec![synth.comm(pid, pid, comm.trim_end_matches('\n'))];
    // perf's order for the tasks it is given: the COMM, then the namespaces.
    if namespaces {
        v.push(synth.namespaces(pid, pid));
    }
    v
}

/// The records of [`synthesize`] written to `out`, the BPF programs found joining `bpf`
/// (none with `--no-bpf-event`); returns why some were not synthesized.
fn write_synthesized(
    out: &mut PerfDataWriter,
    session: &RecordSession,
    rec: &Recording<'_>,
    synth: &Synth,
    bpf: &mut BpfPrograms,
) -> io::Result<(Option<BpfReadStop>, Option<io::Error>)> {
    let found = synthesize(session, rec, synth);
    for r in &found.records {
        out.record(&[r])?;
    }
    if rec.bpf_events {
        bpf.programs.extend(found.bpf.programs);
        bpf.btfs.extend(found.bpf.btfs);
    } else {
        *bpf = BpfPrograms::default();
    }
    Ok((found.bpf_stop, found.cgroup_error))
}

/// What finishing a file gave.
struct FileEnd {
    bytes: u64,
    compression: Option<CompressionSummary>,
    cache_warnings: Vec<CacheWarning>,
}

/// Write the features of the file at `rec.output` and its header: as perf, the records
/// are read back for the objects the samples hit (their build ids listed and cached).
fn finish_file(
    mut out: PerfDataWriter,
    rec: &Recording<'_>,
    session: &RecordSession,
    seen: &Seen,
    bpf: &BpfPrograms,
    clock: Option<super::clockid::ClockReference>,
    compressor: Option<&RecordCompressor>,
) -> Result<FileEnd, RecordError> {
    let mut features = host_features(rec.cmdline.clone(), &rec.version);
    let (mut compression, mut cache_warnings) = (None, Vec::new());
    // As perf: the records are read back from the file for the objects the samples hit.
    ctx(out.write_header_so_far(), "writing perf.data")?;
    let objects = if rec.build_ids == BuildIds::Skip {
        features.no_build_id = true;
        Vec::new()
    } else {
        let file = PerfData::open(rec.output).map_err(|e| RecordError {
            what: "reading perf.data back for its build ids".into(),
            source: io::Error::new(io::ErrorKind::InvalidData, e.to_string()),
        })?;
        recorded_objects(&file, rec.all_build_ids).map_err(|e| RecordError {
            what: "reading perf.data back for its build ids".into(),
            source: io::Error::new(io::ErrorKind::InvalidData, e.to_string()),
        })?
    };
    features.build_ids = objects.iter().map(|(e, _)| e.clone()).collect();
    features.tracing_data = rec.tracing_data.clone();
    features.groups = session.groups();
    // perf notes the samples' times as it reads the file back for the build ids: without
    // them, it stores zeros.
    features.sample_time = match rec.build_ids {
        BuildIds::Skip => Some((0, 0)),
        _ => seen.first_time.map(|f| (f, seen.last_time)),
    };
    features.clock = clock;
    features.bpf = Some((bpf.prog_info_feature(), bpf.btf_feature()));
    if let (Some(c), Some(z)) = (rec.compression, compressor) {
        let ratio = z.ratio();
        // perf stores the ratio rounded to a whole number.
        features.compressed = Some(Compressed {
            version: 0,
            type_: ZSTD,
            level: c.level,
            ratio: (ratio + 0.5) as u32,
            mmap_len: c.mmap_len,
        });
        compression = Some(CompressionSummary {
            transferred: z.transferred(),
            ratio,
        });
    }
    let bytes = ctx(out.finish(&features), "finishing perf.data")?;
    // The recording is complete: perf fills the cache as it writes the list.
    if let BuildIds::Cache(dir) = &rec.build_ids {
        cache_warnings = add_objects(dir, &objects);
    }
    Ok(FileEnd {
        bytes,
        compression,
        cache_warnings,
    })
}

/// Rename the finished file at `path` to `path.<timestamp>`, as perf names it.
fn stamp_file(path: &Path) -> io::Result<PathBuf> {
    let to = stamped(path, &timestamp_now());
    std::fs::rename(path, &to).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot rename {} to {}: {e}", path.display(), to.display()),
        )
    })?;
    Ok(to)
}

/// Synthesize the side-band records, start the events (or the command, whose exec starts
/// them), and write every record until the command ends, every sampled task has, or
/// `stop` is set. `child` is the gated command the session was opened for, if any.
pub fn record(
    mut session: RecordSession,
    rec: &Recording<'_>,
    mut child: Option<&mut GatedChild>,
    stop: &AtomicBool,
) -> Result<RecordSummary, RecordError> {
    let synth = Synth {
        trailer: sample::id_trailer_size(session.sample_type()),
        build_ids: rec.buildid_mmap,
        namespaces: rec.namespaces,
    };
    // The forked command's COMM (perf-exec until its exec), at the start in any case.
    let workload = match rec.running {
        Running::Command(pid) => Some(pid),
        _ => rec.workload,
    };
    let mut side = Vec::new();
    let mut bpf = BpfPrograms::default();
    let (mut bpf_stop, mut cgroup_error) = (None, None);
    if !rec.tail_synthesize {
        let at_start = synthesize(&session, rec, &synth);
        side = at_start.records;
        (bpf, bpf_stop, cgroup_error) = (at_start.bpf, at_start.bpf_stop, at_start.cgroup_error);
    }
    if let Some(pid) = workload {
        side.extend(workload_comm(&synth, pid, rec.namespaces));
    }
    // As perf: the synthesized records end here, before any the kernel writes (with
    // --tail-synthesize, after the kernel's).
    if !rec.tail_synthesize {
        side.push(super::synth::finished_init());
    }

    // Programs loaded anywhere from now on, as perf's side band sees them (none when
    // the kernel refuses it: those the recorded tasks load still come in their rings).
    let mut side_band = super::online_cpus()
        .and_then(|cpus| BpfSideBand::open(&cpus))
        .ok();

    // Everything is ready: now the file.
    ctx(rename_old(rec.output), "keeping the old perf.data")?;
    let mut out = ctx(
        PerfDataWriter::create(rec.output, session.attrs().to_vec()),
        "creating perf.data",
    )?;
    let mut seen = Seen::default();
    for r in &side {
        seen.note(&RecordBytes::Whole(r), None);
        ctx(out.record(&[r]), "writing perf.data")?;
    }
    let st = session.sample_type();
    let time_off = (st & sample::TIME != 0).then(|| {
        8 + [sample::IDENTIFIER, sample::IP, sample::TID]
            .iter()
            .filter(|&&b| st & b != 0)
            .count()
            * 8
    });

    let clock = rec.clockid.and_then(super::clockid::ClockReference::now);
    let delay = session.delay();
    if !delay.is_delayed() && (child.is_none() || !matches!(rec.running, Running::Command(_))) {
        ctx(session.enable(), "enabling the events")?;
    }
    if let Some(c) = child.as_mut() {
        ctx(c.release(), "starting the command")?;
    }
    if delay.is_delayed() {
        rec.on_delay.tell(DelayNotice::Disabled);
    }
    // -D MS: the events start MS after the command (only the tracking dummy runs before).
    if delay.wait_from(std::time::Instant::now(), stop) {
        ctx(session.enable(), "enabling the events")?;
        rec.on_delay.tell(DelayNotice::Enabled);
    }
    let mut summary = RecordSummary {
        bpf_stop,
        cgroup_error,
        ..RecordSummary::default()
    };
    // --tail-synthesize: the forked command (with no other target) gets a COMM at the
    // end too, from /proc, read before it is reaped.
    let tail_workload_pid = match rec.running {
        Running::Command(pid) if rec.tail_synthesize && child.is_some() => Some(pid),
        _ => None,
    };
    let mut tail_workload: Option<Vec<Vec<u8>>> = None;
    let trigger = rec.switch_output.as_ref().and_then(|so| so.trigger);
    let mut rotation = Rotation::new(rec.switch_output.as_ref().map_or(0, |so| so.max_files));
    let mut last_switch = std::time::Instant::now();
    let mut compressor = match rec.compression {
        Some(c) => Some(ctx(
            RecordCompressor::new(c.level),
            "starting the zstd compression",
        )?),
        None => None,
    };
    let mut ring_data = Vec::new();
    let drain = |session: &mut RecordSession,
                 out: &mut PerfDataWriter,
                 seen: &mut Seen,
                 bpf: &mut BpfPrograms,
                 compressor: &mut Option<RecordCompressor>,
                 ring_data: &mut Vec<u8>,
                 min_bytes: u64|
     -> io::Result<()> {
        let before = out.data_size();
        let mut err = None;
        ring_data.clear();
        let mut take = |r: RecordBytes<'_>| {
            if err.is_some() {
                return;
            }
            seen.note(&r, time_off);
            // A program loaded while recording: its info is read now, while it is
            // loaded (perf reads it as its side-band thread sees the event).
            if let Some(id) = loaded_program(&r) {
                bpf.add(id);
            }
            let (a, b) = r.parts();
            if compressor.is_some() {
                ring_data.extend_from_slice(a);
                ring_data.extend_from_slice(b);
            } else if let Err(e) = out.record(&[a, b]) {
                err = Some(e);
            }
        };
        // --overwrite: the rings are read once, at the end (a min_bytes of 0).
        let waiting = match (session.overwrite(), min_bytes) {
            (true, 0) => {
                session.read_overwritten(&mut take);
                false
            }
            (true, _) => false,
            (false, _) => session.drain_at_least(min_bytes.max(1), &mut take).1,
        };
        if let Some(e) = err {
            return Err(e);
        }
        if let Some(c) = compressor.as_mut() {
            c.compress(ring_data, |r| out.record(&[r]))?;
        }
        // A ring left waiting (--mmap-flush) may hold records older than those
        // written now: no round ends until it is read, lest a reader sort them out of
        // order.
        if out.data_size() > before && !waiting {
            out.finished_round()?;
        }
        Ok(())
    };
    loop {
        let polled = ctx(session.poll(100), "waiting for samples")?;
        if let Some(sb) = side_band.as_mut() {
            sb.drain(&mut bpf);
        }
        // perf counts each return of its poll: the rings' wake-ups, and the last one, which
        // the end brings (the command's exit or hang-up, or a signal), counted as the loop
        // ends below. A size limit ends perf's loop outside its poll, uncounted.
        summary.wakeups += u64::from(polled.woken && !polled.hung_up);
        if let Err(e) = drain(
            &mut session,
            &mut out,
            &mut seen,
            &mut bpf,
            &mut compressor,
            &mut ring_data,
            rec.mmap_flush,
        ) {
            session.disable().ok();
            return ctx(Err(e), "writing perf.data");
        }
        let switch_now = match trigger {
            Some(SwitchTrigger::Signal) => take_signal(),
            Some(SwitchTrigger::Size(n)) => n > 0 && out.data_size() >= n,
            Some(SwitchTrigger::Time(t)) => t > 0 && last_switch.elapsed().as_secs() >= t,
            None => false,
        };
        if switch_now {
            // perf's signal (SIGUSR2, or its alarm for a time) ends its poll: a wake-up.
            summary.wakeups += u64::from(!matches!(trigger, Some(SwitchTrigger::Size(_))));
            rec.on_switch.tell(SwitchNotice::Woken(summary.wakeups));
            summary.wakeups = 0;
            if rec.tail_synthesize {
                // As at the end: FINISHED_INIT, the rest, and the command's COMM.
                ctx(
                    out.record(&[&super::synth::finished_init()]),
                    "writing perf.data",
                )?;
                ctx(
                    write_synthesized(&mut out, &session, rec, &synth, &mut bpf),
                    "writing perf.data",
                )?;
                if let Some(pid) = tail_workload_pid {
                    for r in synth.given_process(pid, session.maps_data()).0 {
                        ctx(out.record(&[&r]), "writing perf.data")?;
                    }
                }
            }
            let end = finish_file(out, rec, &session, &seen, &bpf, clock, compressor.as_ref())?;
            summary.cache_warnings.extend(end.cache_warnings);
            let path = ctx(stamp_file(rec.output), "renaming perf.data")?;
            out = ctx(
                PerfDataWriter::create(rec.output, session.attrs().to_vec()),
                "creating perf.data",
            )?;
            if !rec.tail_synthesize {
                // perf's start of each new file: the records of what exists, the forked
                // command's (its COMM and maps, from /proc), then FINISHED_INIT.
                ctx(
                    write_synthesized(&mut out, &session, rec, &synth, &mut bpf),
                    "writing perf.data",
                )?;
                if let Running::Command(pid) = rec.running {
                    for r in synth.given_process(pid, session.maps_data()).0 {
                        ctx(out.record(&[&r]), "writing perf.data")?;
                    }
                }
                ctx(
                    out.record(&[&super::synth::finished_init()]),
                    "writing perf.data",
                )?;
            }
            rec.on_switch.tell(SwitchNotice::Dumped(path.clone()));
            summary.rotation_errors.extend(rotation.add(path));
            seen = Seen::default();
            last_switch = std::time::Instant::now();
        }
        if rec.max_size.is_some_and(|m| out.data_size() >= m) {
            summary.size_limit = Some(out.data_size());
            if let Some(c) = child.as_ref() {
                // As perf: the command is ended with the session.
                ctx(c.terminate(), "ending the command")?;
            }
            break;
        }
        if let Some(c) = child.as_mut() {
            // A hang-up comes as the task exits, a moment before it can be reaped.
            let wait = Duration::from_millis(if polled.hung_up { 20 } else { 0 });
            if ctx(c.exited(wait), "waiting for the command")? {
                // Its comm as perf reads it at the end, from the zombie's /proc.
                if let Some(pid) = tail_workload_pid {
                    tail_workload = Some(synth.given_process(pid, session.maps_data()).0);
                }
                summary.exit = Some(ctx(c.wait(), "waiting for the command")?);
                summary.wakeups += 1;
                break;
            }
        }
        // Without a command, the end of every sampled task ends the recording, as in perf.
        if stop.load(Ordering::SeqCst) || (child.is_none() && polled.all_hung_up) {
            summary.wakeups += 1;
            break;
        }
    }
    session.disable().ok();
    let overwrite = session.overwrite();
    if let Some(sb) = side_band.as_mut() {
        sb.drain(&mut bpf);
    }
    ctx(
        drain(
            &mut session,
            &mut out,
            &mut seen,
            &mut bpf,
            &mut compressor,
            &mut ring_data,
            // With --overwrite, the rings' records now.
            u64::from(!overwrite),
        ),
        "writing perf.data",
    )?;
    if rec.tail_synthesize {
        // perf's order at the end: FINISHED_INIT after the rings' records, the command's
        // COMM (if it is still there, read now), the lost samples, then the rest.
        ctx(
            out.record(&[&super::synth::finished_init()]),
            "writing perf.data",
        )?;
        if let Some(pid) = tail_workload_pid.filter(|_| tail_workload.is_none()) {
            if child.as_ref().is_some_and(|c| c.pid() > 0) {
                tail_workload = Some(synth.given_process(pid, session.maps_data()).0);
            }
        }
        for r in tail_workload.iter().flatten() {
            ctx(out.record(&[r]), "writing perf.data")?;
        }
    }
    // What the kernel dropped, counted by each event (its LOST records in the rings may
    // miss the last ones), stored as perf stores it: one LOST_SAMPLES record per event.
    let lost_read = ctx(session.lost_per_event(), "reading the events' lost samples")?;
    for (a, lost) in session.attrs().iter().zip(&lost_read) {
        if let Some(n) = lost.filter(|&n| n > 0) {
            let own = crate::perf::data::Attr::from_native_bytes(&a.attr)
                .map_or(st, |attr| attr.sample_type);
            let id =
                sample::id_trailer_offset(own).and_then(|at| Some((a.ids.first().copied()?, at)));
            let own_synth = Synth {
                trailer: sample::id_trailer_size(own),
                ..synth
            };
            ctx(
                out.record(&[&own_synth.lost_samples(n, id)]),
                "writing perf.data",
            )?;
        }
    }
    if rec.tail_synthesize {
        (summary.bpf_stop, summary.cgroup_error) = ctx(
            write_synthesized(&mut out, &session, rec, &synth, &mut bpf),
            "writing perf.data",
        )?;
    }
    if let Some(c) = child.as_mut() {
        if summary.exit.is_none() {
            // Interrupted: the command got the same signal; wait for it briefly.
            summary.exit = c.wait_timeout(Duration::from_secs(1)).ok().flatten();
        }
    }

    let end = finish_file(out, rec, &session, &seen, &bpf, clock, compressor.as_ref())?;
    summary.bytes = end.bytes;
    summary.compression = end.compression;
    summary.cache_warnings.extend(end.cache_warnings);
    if rec.switch_output.is_some() {
        // As perf's last switch: the file takes its time stamp, counted among those kept.
        let path = ctx(stamp_file(rec.output), "renaming perf.data")?;
        summary.rotation_errors.extend(rotation.add(path.clone()));
        summary.dumped = Some(path);
    }
    summary.samples = seen.samples;
    let stats = session.ring_stats();
    summary.lost_records = stats.lost_records;
    summary.lost = if lost_read.iter().all(Option::is_some) {
        lost_read.iter().flatten().sum()
    } else {
        stats.lost_samples
    };
    Ok(summary)
}
