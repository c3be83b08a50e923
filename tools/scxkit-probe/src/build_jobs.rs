//! A build's shape: short-lived processes, each forked and exec'd, costing a fixed amount of
//! CPU time, a fixed number of them in flight. The figure: jobs completed per second.

use anyhow::{bail, Context, Result};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct Setup {
    pub parallel: u32,
    pub job_cpu: Duration,
    pub duration: Duration,
}

/// Runs `probe burn --cpu-ms N` jobs, `parallel` at a time, for `duration`; returns the jobs
/// completed per second.
pub fn run(probe: &Path, setup: Setup) -> Result<f64> {
    let completed = AtomicU64::new(0);
    let deadline = Instant::now() + setup.duration;
    let cpu_ms = setup.job_cpu.as_millis().to_string();
    std::thread::scope(|scope| {
        let streams: Vec<_> = (0..setup.parallel)
            .map(|_| scope.spawn(|| job_stream(probe, &cpu_ms, deadline, &completed)))
            .collect();
        streams.into_iter().try_for_each(|s| s.join().expect("a job stream panicked"))
    })?;
    Ok(completed.load(Ordering::Relaxed) as f64 / setup.duration.as_secs_f64())
}

/// One job after another until `deadline`; a job still running then is not counted.
fn job_stream(probe: &Path, cpu_ms: &str, deadline: Instant, completed: &AtomicU64) -> Result<()> {
    while Instant::now() < deadline {
        let status = Command::new(probe)
            .args(["burn", "--cpu-ms", cpu_ms])
            .stdout(Stdio::null())
            .status()
            .with_context(|| format!("running {}", probe.display()))?;
        if !status.success() {
            bail!("a build job failed: {status}");
        }
        if Instant::now() <= deadline {
            completed.fetch_add(1, Ordering::Relaxed);
        }
    }
    Ok(())
}
