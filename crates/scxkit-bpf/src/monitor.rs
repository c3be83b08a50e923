//! `scx_<name> --monitor SECONDS`: the stats line of a running scheduler, printed live by a
//! second process.
//!
//! The running scheduler serves its latest reading on a Unix socket,
//! `/run/scxkit/<name>.sock` (`SCXKIT_RUN_DIR` moves it), as `series value` lines; the
//! monitor reads it every interval and prints the scheduler's own log line from two
//! readings. A local socket rather than the Prometheus endpoint: it needs no port and no
//! `--enable-prometheus`, is not reachable from the network, and its file mode (0666) lets
//! any local user watch without root, while the data it shows are counters anyone may see.

use crate::runner::SchedulerSpec;
use anyhow::{bail, Context, Result};
use scxkit::metrics::{parse_text, to_text, Snapshot};
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where schedulers put their monitor sockets unless `SCXKIT_RUN_DIR` says otherwise.
pub const RUN_DIR: &str = "/run/scxkit";
/// Failed reads in a row after which the monitor says the scheduler has gone.
const MAX_MISSED_READS: u32 = 3;
/// How long the monitor waits for the scheduler's answer.
const READ_TIMEOUT: Duration = Duration::from_secs(2);

pub fn socket_path(name: &str) -> PathBuf {
    let dir = std::env::var_os("SCXKIT_RUN_DIR").map_or_else(|| PathBuf::from(RUN_DIR), PathBuf::from);
    dir.join(format!("{name}.sock"))
}

/// The scheduler's side: serves the latest reading to every connection.
pub struct StatsServer {
    path: PathBuf,
    latest: Arc<Mutex<String>>,
}

impl StatsServer {
    pub fn start(name: &str) -> Result<StatsServer> {
        let path = socket_path(name);
        let dir = path.parent().context("socket path has no directory")?;
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        // A socket left by a scheduler that was killed: preflight saw that none is loaded.
        let _ = std::fs::remove_file(&path);
        let listener = UnixListener::bind(&path).with_context(|| format!("serving stats on {}", path.display()))?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666))
            .with_context(|| format!("opening {} to every user", path.display()))?;
        let latest = Arc::new(Mutex::new(String::new()));
        let shared = latest.clone();
        std::thread::Builder::new()
            .name("stats-socket".into())
            .spawn(move || serve(listener, shared))
            .context("starting the stats socket thread")?;
        Ok(StatsServer { path, latest })
    }

    pub fn update(&self, snapshot: &Snapshot) {
        *self.latest.lock().unwrap() = to_text(snapshot);
    }
}

impl Drop for StatsServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn serve(listener: UnixListener, latest: Arc<Mutex<String>>) {
    for stream in listener.incoming().flatten() {
        let text = latest.lock().unwrap().clone();
        let mut stream = stream;
        let _ = stream.write_all(text.as_bytes());
    }
}

fn read_once(spec: &SchedulerSpec, path: &PathBuf) -> Result<Snapshot> {
    let mut stream = UnixStream::connect(path)?;
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    parse_text(spec.metrics, &text)
}

/// The monitor's side: prints the scheduler's log line every `interval_s` until the
/// scheduler goes. Fails at once when none is running.
pub fn run_monitor(spec: &SchedulerSpec, interval_s: f64) -> Result<()> {
    let path = socket_path(spec.name);
    let mut previous = match read_once(spec, &path) {
        Ok(snapshot) => snapshot,
        Err(e) => bail!("no {} is running: cannot read its stats from {} ({e:#})", spec.name, path.display()),
    };
    let mut missed = 0;
    while missed < MAX_MISSED_READS {
        std::thread::sleep(Duration::from_secs_f64(interval_s));
        match read_once(spec, &path) {
            Ok(now) => {
                missed = 0;
                // No line until there are two readings (the scheduler may not have sampled yet).
                if !previous.values.is_empty() && !now.values.is_empty() {
                    println!("{}", (spec.log_line)(&previous, &now));
                }
                previous = now;
            }
            Err(_) => missed += 1,
        }
    }
    println!("{} is not running any more ({} is gone)", spec.name, path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scxkit::metrics::{static_layout, MetricDef, MetricKind, Unit};

    static DEFS: &[MetricDef] = &[MetricDef {
        name: "dispatched_tasks_total",
        labels: &[],
        kind: MetricKind::Counter,
        unit: Unit::Count,
        help: "Tasks dispatched.",
    }];

    fn line(previous: &Snapshot, now: &Snapshot) -> String {
        format!("dispatched {}", now.delta(previous, "dispatched_tasks_total", &[]))
    }

    const SPEC: SchedulerSpec = SchedulerSpec {
        name: "scx_test_monitor",
        required_kfuncs: &[],
        optional_kfuncs: &[],
        metrics: DEFS,
        log_line: line,
    };

    #[test]
    fn a_monitor_reads_what_the_scheduler_serves() {
        let dir = tempfile::tempdir().unwrap();
        std::env::set_var("SCXKIT_RUN_DIR", dir.path());
        let err = run_monitor(&SPEC, 0.1).unwrap_err();
        assert!(format!("{err:#}").contains("no scx_test_monitor is running"), "{err:#}");

        let server = StatsServer::start(SPEC.name).unwrap();
        let mode = std::fs::metadata(socket_path(SPEC.name)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o666, "any user may connect");
        server.update(&Snapshot { series: static_layout(DEFS), values: vec![42.0] });
        let got = read_once(&SPEC, &socket_path(SPEC.name)).unwrap();
        assert_eq!(got.values, vec![42.0]);
        assert_eq!(line(&Snapshot::zero(got.series.clone()), &got), "dispatched 42");
        drop(server);
        assert!(!socket_path(SPEC.name).exists(), "the socket goes with the scheduler");
    }
}
