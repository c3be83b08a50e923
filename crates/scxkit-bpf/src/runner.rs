//! The life of a scheduler: checks before loading, then watch it, read and publish its
//! statistics, detach on a signal, explain the exit, start again when the kernel asks.

use crate::cli::CommonOpts;
use crate::compat::KernelBtf;
use crate::exit_info::ExitInfo;
use anyhow::{bail, Context, Result};
use libbpf_rs::{Link, Object};
use log::{info, warn};
use scxkit::metrics::{backends, help_text, MetricDef, Publisher, Snapshot};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the monitor looks at the exit info and the shutdown flag.
const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// Restarts allowed in a row before giving up (a scheduler that keeps failing at start).
const MAX_RESTARTS: u32 = 16;

/// What the runtime needs to know about a scheduler, declared once in its main.rs.
pub struct SchedulerSpec {
    /// Binary name, e.g. `scx_simple`.
    pub name: &'static str,
    /// Kfuncs it cannot do without; it refuses to start where one is not callable.
    pub required_kfuncs: &'static [&'static str],
    /// Kfuncs its BPF side replaces where they are not callable, each with the fallback.
    pub optional_kfuncs: &'static [(&'static str, &'static str)],
    /// Every statistic it reports, in the order its reader returns them.
    pub metrics: &'static [MetricDef],
    /// The log line for `--stats`, from the previous reading and this one.
    pub log_line: fn(&Snapshot, &Snapshot) -> String,
}

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

/// State that lives across restarts, handed to each attempt.
pub struct Session<'a> {
    spec: &'a SchedulerSpec,
    opts: &'a CommonOpts,
    shutdown: Shutdown,
    publisher: Publisher,
    previous: Snapshot,
}

/// Runs a scheduler: logging, `--help-stats`, the checks that refuse to start (no sched_ext,
/// another scheduler loaded, a required kfunc missing), the metrics backends, then `attempt`
/// (open, load, attach, [`Session::monitor`]) again while the kernel asks for restarts.
/// Returns an error when the scheduler was ejected by an error.
pub fn run(spec: &SchedulerSpec, opts: &CommonOpts, mut attempt: impl FnMut(&mut Session) -> Result<ExitInfo>) -> Result<()> {
    crate::logging::init(opts.verbose);
    if opts.metrics.help_stats {
        print!("{}", help_text(spec.metrics));
        return Ok(());
    }
    crate::preflight(spec.name)?;
    let btf = KernelBtf::from_vmlinux()?;
    btf.require_kfuncs(spec.required_kfuncs)?;
    btf.report_fallbacks(spec.optional_kfuncs);
    backends::install(&opts.metrics, spec.name)?;

    let mut session = Session {
        spec,
        opts,
        shutdown: Shutdown::install()?,
        publisher: Publisher::new(spec.metrics),
        previous: Snapshot::zero(spec.metrics),
    };
    for restarts in 0.. {
        let info = attempt(&mut session)?;
        if info.restart && !session.shutdown.requested() && restarts < MAX_RESTARTS {
            info!("{}: the kernel asked for a restart: {info}", spec.name);
            continue;
        }
        if info.is_error() {
            bail!("{} was ejected by the kernel: {info}", spec.name);
        }
        info!("{} exited: {info}", spec.name);
        return Ok(());
    }
    unreachable!()
}

impl Session<'_> {
    /// Watches an attached scheduler until the kernel ejects it or a signal asks to stop.
    /// Every sample interval it reads the statistics with `read` (values in the order of the
    /// spec's metrics), publishes them and prints the log line; then it detaches and returns
    /// why the scheduler stopped.
    pub fn monitor(&mut self, object: &Object, link: Link, mut read: impl FnMut() -> Result<Vec<f64>>) -> Result<ExitInfo> {
        info!("{}: attached; sched_ext is on (Ctrl-C to stop)", self.spec.name);
        let interval = self.opts.sample_interval_s().map(Duration::from_secs_f64);
        let mut next_sample = Instant::now() + interval.unwrap_or(Duration::MAX / 4);
        while !self.shutdown.requested() && !ExitInfo::read(object)?.has_exited() {
            std::thread::sleep(POLL_INTERVAL);
            if let (Some(every), true) = (interval, Instant::now() >= next_sample) {
                if let Err(e) = read().map(|values| self.record(values)) {
                    warn!("reading stats: {e:#}");
                }
                next_sample += every;
            }
        }
        // Dropping the link unregisters the scheduler; the kernel runs ops.exit before returning.
        drop(link);
        ExitInfo::read(object)
    }

    fn record(&mut self, values: Vec<f64>) {
        self.publisher.publish(&values);
        let now = Snapshot { defs: self.spec.metrics, values };
        if self.opts.stats.is_some() {
            info!("{}", (self.spec.log_line)(&self.previous, &now));
        }
        self.previous = now;
    }
}
