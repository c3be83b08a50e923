//! The life of a scheduler: checks before loading, then one attempt after another (each
//! reads the topology again and builds the whole scheduler anew), watching each one,
//! reading and publishing its statistics, running its periodic jobs, detaching on a signal,
//! explaining the exit, and starting again when the kernel asks (CPU hotplug) or when one
//! built for other CPUs is due (`Hotplug::RebuildsForNewCpus`).

use crate::backends;
use crate::cli::{exit_on_bad_options, CommonOpts, SchedulerOptions};
use crate::compat::KernelBtf;
use crate::exit_info::{dump_map_entries, ExitInfo, EXIT_DUMP_MAP};
use crate::hotplug::{self, HotplugNews, HotplugWatch};
use crate::jobs::{Deadline, Jobs};
use crate::load_priority::LoadPriority;
use crate::monitor::{run_monitor, StatsServer};
use crate::publisher::Publisher;
use crate::restart::{RestartPolicy, Verdict};
use crate::spec::SchedulerSpec;
use anyhow::{bail, Context, Result};
use libbpf_rs::{Link, Object, OpenObject};
use log::info;
use scxkit::metrics::{help_text, MetricKind, Snapshot};
use scxkit::Topology;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often an attached scheduler's exit info is looked at.
const EXIT_CHECK_INTERVAL: Duration = Duration::from_millis(100);
/// Test hook: wait this many ms between reading the topology and loading, so that a test
/// can hotplug a CPU in between (the kernel must then refuse the stale attach).
const TEST_DELAY_ENV: &str = "SCXKIT_TEST_DELAY_LOAD_MS";

/// Set once SIGINT, SIGTERM or SIGHUP arrives.
#[derive(Clone, Default)]
struct Shutdown(Arc<AtomicBool>);

impl Shutdown {
    fn install() -> Result<Shutdown> {
        let shutdown = Shutdown::default();
        let flag = shutdown.0.clone();
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
            .context("installing the SIGINT/SIGTERM handler")?;
        Ok(shutdown)
    }

    fn requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// What lives across attempts.
struct Session<'a> {
    spec: &'a SchedulerSpec,
    opts: &'a CommonOpts,
    shutdown: Shutdown,
    publisher: Publisher,
    server: StatsServer,
}

/// Runs a scheduler: logging, `--version`, `--help-stats`, `--monitor`, its option check
/// (a failure exits with status 2, as a malformed option does), the checks that refuse to
/// start (no sched_ext, another scheduler loaded, a required kfunc missing), the metrics
/// backends, then `attempt` (open, configure from [`Attempt::topology`], load, attach,
/// [`Attempt::monitor`] or [`Attempt::drive`]) again while the kernel asks for restarts.
/// Returns Ok only when a signal stopped the scheduler; any other end is an error.
pub fn run(spec: &SchedulerSpec, options: &impl SchedulerOptions, mut attempt: impl FnMut(&mut Attempt) -> Result<ExitInfo>) -> Result<()> {
    let opts = options.common();
    if let Some(done) = info_mode(spec, opts) {
        return done;
    }
    exit_on_bad_options(options.check());
    // Raised for the checks too (the kernel's BTF read in full), but not while the metrics
    // backends and the statistics server start threads, which would keep the priority.
    let checking = LoadPriority::raise();
    crate::preflight(spec.name)?;
    let btf = KernelBtf::from_vmlinux()?;
    btf.require_kfuncs(spec.required_kfuncs)?;
    btf.report_fallbacks(spec.optional_kfuncs);
    drop(checking);
    backends::install(&opts.metrics, spec.name)?;

    let mut session = Session {
        spec,
        opts,
        shutdown: Shutdown::install()?,
        publisher: Publisher::new(),
        server: StatsServer::start(spec.name)?,
    };
    let mut policy = RestartPolicy::default();
    loop {
        let mut current = Attempt::begin(&mut session, LoadPriority::raise())?;
        let info = attempt(&mut current)?;
        let attached = current.attached_for();
        match policy.after(&info, attached, session.shutdown.requested()) {
            Verdict::Restart if info.detached_by_runtime() => info!("{}: restarting: {info}", spec.name),
            Verdict::Restart => info!("{}: the kernel asked for a restart: {info}", spec.name),
            Verdict::Stopped => {
                info!("{} exited: {info}", spec.name);
                return Ok(());
            }
            Verdict::Failed(why) => {
                if !info.dump.is_empty() {
                    eprintln!("---- the kernel's debug dump ----\n{}\n---- end of dump ----", info.dump.trim_end());
                }
                bail!("{} {why}", spec.name);
            }
        }
    }
}

/// Runs `--version`, `--help-stats` or `--monitor` when asked: modes that load nothing, need
/// no root, and ignore the scheduler's own options.
fn info_mode(spec: &SchedulerSpec, opts: &CommonOpts) -> Option<Result<()>> {
    crate::logging::init(opts.verbose > 0);
    if opts.version {
        print!("{}", crate::version::report(spec, &crate::version::KernelFeatures::probe(spec)));
        return Some(Ok(()));
    }
    if opts.metrics.help_stats {
        for set in spec.metrics {
            print!("{}", help_text(set));
        }
        return Some(Ok(()));
    }
    opts.monitor.map(|interval_s| run_monitor(spec, interval_s))
}

/// The values the runtime puts in every scheduler's `struct sched_ext_ops` before load.
#[derive(Debug, Clone, Copy)]
pub struct OpsSettings {
    /// The kernel refuses to attach when a CPU went on or offline since this was read.
    pub hotplug_seq: u64,
    pub exit_dump_len: u32,
    pub timeout_ms: u32,
}

/// Sets the runtime's fields of a skeleton's `sched_ext_ops` and sizes its exit-dump map:
/// `scxkit_runtime::prepare_ops!(attempt, open.struct_ops.NAME_mut(), open.open_object_mut())?`.
#[macro_export]
macro_rules! prepare_ops {
    ($attempt:expr, $ops:expr, $object:expr) => {{
        let settings = $attempt.ops_settings();
        let ops = $ops;
        ops.hotplug_seq = settings.hotplug_seq;
        ops.exit_dump_len = settings.exit_dump_len;
        ops.timeout_ms = settings.timeout_ms;
        $attempt.prepare_object($object)
    }};
}

/// A scheduler's statistics for one attempt: the function that sets, every sample, the
/// series it has now into a fresh reading (`reading.set(&DEF, value)`, with labels that may
/// come from the topology; BPF counters with [`crate::maps::set_percpu_counters`]).
pub struct Stats<'a> {
    read: Box<dyn FnMut(&mut Snapshot) -> Result<()> + 'a>,
}

impl<'a> Stats<'a> {
    pub fn new(read: impl FnMut(&mut Snapshot) -> Result<()> + 'a) -> Stats<'a> {
        Stats { read: Box::new(read) }
    }

    pub(crate) fn sample(&mut self) -> Result<Snapshot> {
        let mut reading = Snapshot::new();
        (self.read)(&mut reading)?;
        Ok(reading)
    }
}

/// One attempt: the topology as it is now, and the attached scheduler's watch.
pub struct Attempt<'s, 'a> {
    session: &'s mut Session<'a>,
    topology: Topology,
    hotplug_seq: u64,
    /// The online CPU list when the topology was read.
    loaded_for: String,
    attached_at: Option<Instant>,
    detached_at: Option<Instant>,
    /// Held from before the topology is read until attached.
    loading: Option<LoadPriority>,
}

impl<'s, 'a> Attempt<'s, 'a> {
    /// Reads the hotplug sequence, then the topology: a CPU going on or offline after the
    /// first read makes the kernel refuse the attach and ask for a restart.
    fn begin(session: &'s mut Session<'a>, loading: LoadPriority) -> Result<Attempt<'s, 'a>> {
        let (hotplug_seq, topology) =
            hotplug::read_between_events(Topology::from_system).context("reading the CPU topology")?;
        session.publisher.reset_counters();
        if let Some(ms) = std::env::var(TEST_DELAY_ENV).ok().and_then(|v| v.parse::<u64>().ok()) {
            info!("{TEST_DELAY_ENV}: waiting {ms} ms before loading (hotplug seq {hotplug_seq})");
            std::thread::sleep(Duration::from_millis(ms));
        }
        let loaded_for = hotplug::online_cpu_list();
        Ok(Attempt { session, topology, hotplug_seq, loaded_for, attached_at: None, detached_at: None, loading: Some(loading) })
    }

    /// The machine's topology, read for this attempt.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }

    pub fn ops_settings(&self) -> OpsSettings {
        OpsSettings {
            hotplug_seq: self.hotplug_seq,
            exit_dump_len: self.session.opts.exit_dump_len,
            timeout_ms: self.session.opts.watchdog_timeout_ms,
        }
    }

    /// Sizes the exit-dump map to `--exit-dump-len`.
    pub fn prepare_object(&self, object: &mut OpenObject) -> Result<()> {
        let entries = dump_map_entries(self.session.opts.exit_dump_len);
        let mut map = object
            .maps_mut()
            .find(|m| m.name() == EXIT_DUMP_MAP)
            .with_context(|| format!("the BPF object has no '{EXIT_DUMP_MAP}' map (include scxkit/exit_info.bpf.h)"))?;
        map.set_max_entries(entries).context("sizing the exit dump map")
    }

    /// Watches an attached scheduler until the kernel ejects it or a signal asks to stop,
    /// sampling its statistics and running `jobs` on time; then detaches and says why it
    /// stopped.
    pub fn monitor(&mut self, object: &Object, link: Link, stats: Stats, jobs: Jobs) -> Result<ExitInfo> {
        self.drive(object, link, stats, jobs, |wait| {
            std::thread::sleep(wait);
            Ok(())
        })
    }

    /// Like [`Attempt::monitor`], for a scheduler that runs its own loop (a userspace
    /// policy): `step(wait)` is called over and over and may block up to `wait`, the time to
    /// the runtime's next duty (an exit check, a sample, a job). A failing step ends the
    /// attempt with its error, after detaching.
    pub fn drive(
        &mut self,
        object: &Object,
        link: Link,
        mut stats: Stats,
        mut jobs: Jobs,
        mut step: impl FnMut(Duration) -> Result<()>,
    ) -> Result<ExitInfo> {
        let (spec, opts) = (self.session.spec, self.session.opts);
        self.loading = None;
        let start = Instant::now();
        self.attached_at = Some(start);
        info!("{}: attached; sched_ext is on (Ctrl-C to stop)", spec.name);
        let mut exit_check = Deadline::new(EXIT_CHECK_INTERVAL, start);
        let mut sample = Deadline::new(Duration::from_secs_f64(opts.sample_interval_s()), start);
        let mut log = opts.stats.map(|s| Deadline::new(Duration::from_secs_f64(s), start));
        let mut hotplug = HotplugWatch::new(spec.hotplug, self.hotplug_seq, self.loaded_for.clone());
        let mut rebuild_for = None;
        let mut latest = Snapshot::new();
        let mut logged = latest.clone();
        let mut result = Ok(());
        while !self.session.shutdown.requested() {
            let now = Instant::now();
            if exit_check.fire(now) {
                if ExitInfo::has_exited_now(object)? {
                    break;
                }
                match hotplug.check(now) {
                    HotplugNews::Nothing => {}
                    HotplugNews::Followed(seq) => {
                        info!("{}: CPUs online now: {} (hotplug seq {seq}); followed without a restart", spec.name, hotplug::online_cpu_list())
                    }
                    HotplugNews::Rebuild(online) => {
                        rebuild_for = Some(online);
                        break;
                    }
                }
            }
            if sample.fire(now) {
                match stats.sample() {
                    Ok(snapshot) => latest = self.publish(snapshot),
                    Err(e) => log::warn!("reading stats: {e:#}"),
                }
            }
            if log.as_mut().is_some_and(|d| d.fire(now)) {
                info!("{}", (spec.log_line)(&logged, &latest));
                logged = latest.clone();
            }
            jobs.run_due(now);
            let next = [Some(exit_check.next()), Some(sample.next()), log.as_ref().map(Deadline::next), jobs.next_due()];
            let wait = next.into_iter().flatten().min().unwrap().saturating_duration_since(Instant::now());
            if let Err(e) = step(wait) {
                result = Err(e);
                break;
            }
        }
        // Dropping the link unregisters the scheduler; the kernel runs ops.exit before returning.
        drop(link);
        self.detached_at = Some(Instant::now());
        if opts.stats.is_some() {
            if let Ok(total) = stats.sample() {
                let total = with_gauges_of(total, &latest);
                info!("totals: {}", (spec.log_line)(&Snapshot::new(), &total));
            }
        }
        result.context("the scheduler's own loop failed")?;
        let info = ExitInfo::read(object)?;
        Ok(match rebuild_for {
            Some(online) => info.rebuilt_for_hotplug(&online),
            None => info,
        })
    }

    fn publish(&mut self, snapshot: Snapshot) -> Snapshot {
        self.session.publisher.publish(&snapshot);
        self.session.server.update(&snapshot);
        snapshot
    }

    /// Whether a signal asked the scheduler to stop: for a policy loop's own checks.
    pub fn stop_requested(&self) -> bool {
        self.session.shutdown.requested()
    }

    /// How long the scheduler stayed attached (zero if it never was).
    fn attached_for(&self) -> Duration {
        match (self.attached_at, self.detached_at) {
            (Some(a), Some(d)) => d - a,
            _ => Duration::ZERO,
        }
    }
}

/// Counters read after detaching are exact (no BPF program runs any more); gauges are not
/// (tasks left the scheduler on the way out): those keep the last reading while attached,
/// 0 if it had none.
fn with_gauges_of(after: Snapshot, attached: &Snapshot) -> Snapshot {
    let mut out = Snapshot::new();
    for (series, value) in after.iter() {
        let value = match series.def.kind {
            MetricKind::Gauge => attached.value_of(series).unwrap_or(0.0),
            MetricKind::Counter => value,
        };
        out.insert(series.clone(), value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use scxkit::metrics::fixture::{reading, INTERACTIVE_TASKS};
    use scxkit::metrics::Series;

    #[test]
    fn totals_take_counters_from_after_detaching_and_gauges_from_before() {
        let total = with_gauges_of(reading([6.0, 2.0, 0.0]), &reading([5.0, 1.0, 3.0]));
        assert_eq!(total.get("dispatched_tasks_total", &[("type", "local")]), 6.0);
        assert_eq!(total.get("interactive_tasks", &[]), 3.0);
        let total = with_gauges_of(reading([6.0, 2.0, 4.0]), &Snapshot::new());
        assert_eq!(total.value_of(&Series::of(&INTERACTIVE_TASKS)), Some(0.0), "no reading while attached");
    }
}
