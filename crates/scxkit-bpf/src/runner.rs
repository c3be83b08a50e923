//! The life of a loaded scheduler: watch it, report stats, detach on a signal, explain the
//! exit, start again when the kernel asks for a restart.

use crate::cli::CommonOpts;
use crate::exit_info::ExitInfo;
use anyhow::{bail, Context, Result};
use libbpf_rs::{Link, Object};
use log::{info, warn};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the monitor looks at the exit info and the shutdown flag.
const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// Restarts allowed in a row before giving up (a scheduler that keeps failing at start).
const MAX_RESTARTS: u32 = 16;

/// Set once SIGINT, SIGTERM or SIGHUP arrives.
#[derive(Clone, Default)]
pub struct Shutdown(Arc<AtomicBool>);

impl Shutdown {
    fn install() -> Result<Shutdown> {
        let shutdown = Shutdown::default();
        let flag = shutdown.0.clone();
        ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst))
            .context("installing the SIGINT/SIGTERM handler")?;
        Ok(shutdown)
    }

    pub fn requested(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}

/// Runs `attempt` (open, load, attach, [`monitor`]) and repeats it while the kernel asks for a
/// restart. Returns an error when the scheduler was ejected by an error.
pub fn run(name: &str, mut attempt: impl FnMut(&Shutdown) -> Result<ExitInfo>) -> Result<()> {
    let shutdown = Shutdown::install()?;
    for restarts in 0.. {
        let info = attempt(&shutdown)?;
        if info.restart && !shutdown.requested() && restarts < MAX_RESTARTS {
            info!("{name}: the kernel asked for a restart: {info}");
            continue;
        }
        if info.is_error() {
            bail!("{name} was ejected by the kernel: {info}");
        }
        info!("{name} exited: {info}");
        return Ok(());
    }
    unreachable!()
}

/// Watches an attached scheduler until the kernel ejects it or a signal asks to stop, printing
/// `report()` every `--stats` interval; detaches and returns why it stopped.
pub fn monitor(
    name: &str,
    object: &Object,
    link: Link,
    opts: &CommonOpts,
    shutdown: &Shutdown,
    mut report: impl FnMut() -> Result<String>,
) -> Result<ExitInfo> {
    info!("{name}: attached; sched_ext is on (Ctrl-C to stop)");
    let interval = opts.stats.map(Duration::from_secs_f64);
    let mut next_report = Instant::now() + interval.unwrap_or(Duration::MAX / 4);
    while !shutdown.requested() && !ExitInfo::read(object)?.has_exited() {
        std::thread::sleep(POLL_INTERVAL);
        if let (Some(every), true) = (interval, Instant::now() >= next_report) {
            match report() {
                Ok(line) => info!("{line}"),
                Err(e) => warn!("reading stats: {e:#}"),
            }
            next_report += every;
        }
    }
    // Dropping the link unregisters the scheduler; the kernel runs ops.exit before returning.
    drop(link);
    ExitInfo::read(object)
}
