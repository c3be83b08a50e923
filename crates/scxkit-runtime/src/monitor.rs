//! `scx_<name> --monitor SECONDS`: the stats line of a running scheduler, printed live by a
//! second process.
//!
//! The running scheduler serves its latest reading on a Unix socket,
//! `/run/scxkit/<name>.sock` (`SCXKIT_RUN_DIR` moves it), as `series value` lines; the
//! monitor reads it every interval and prints the scheduler's own log line from two
//! readings. A local socket rather than the Prometheus endpoint: it needs no port and no
//! `--enable-prometheus`, is not reachable from the network, and its file mode (0666) lets
//! any local user watch without root, while the data it shows are counters anyone may see.

use crate::spec::SchedulerSpec;
use anyhow::{bail, Context, Result};
use scxkit::metrics::{parse_text, to_text, Snapshot};
use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Where schedulers put their monitor sockets unless `SCXKIT_RUN_DIR` says otherwise.
pub const RUN_DIR: &str = "/run/scxkit";
/// How long the monitor waits for the scheduler's answer.
const READ_TIMEOUT: Duration = Duration::from_secs(2);
/// How long the scheduler waits for a client to take its reading: well under READ_TIMEOUT, so
/// that a monitor queued behind a client that reads nothing is still answered.
const WRITE_TIMEOUT: Duration = Duration::from_millis(500);

pub fn socket_path(name: &str) -> PathBuf {
    let dir = std::env::var_os("SCXKIT_RUN_DIR").map_or_else(|| PathBuf::from(RUN_DIR), PathBuf::from);
    dir.join(format!("{name}.sock"))
}

/// The scheduler's side: serves the latest reading, numbered, to every connection.
pub struct StatsServer {
    path: PathBuf,
    latest: Arc<Mutex<(u64, String)>>,
}

impl StatsServer {
    pub fn start(name: &str) -> Result<StatsServer> {
        StatsServer::start_at(name, socket_path(name))
    }

    fn start_at(name: &str, path: PathBuf) -> Result<StatsServer> {
        let dir = path.parent().context("socket path has no directory")?;
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        if UnixStream::connect(&path).is_ok() {
            bail!("another {name} serves its stats on {}: is one already running?", path.display());
        }
        let listener = bind_for_everyone(&path)?;
        let latest = Arc::new(Mutex::new((0, String::new())));
        let shared = latest.clone();
        std::thread::Builder::new()
            .name("stats-socket".into())
            .spawn(move || serve(listener, shared))
            .context("starting the stats socket thread")?;
        Ok(StatsServer { path, latest })
    }

    pub fn update(&self, snapshot: &Snapshot) {
        let mut latest = self.latest.lock().unwrap();
        latest.0 += 1;
        latest.1 = format!("{SAMPLE_HEADER}{}\n{}", latest.0, to_text(snapshot));
    }
}

/// Binds a socket at `path` that every local user may connect to. Linux gives the socket file
/// the mode of bind() less the umask, and a chmod through the listener's descriptor changes
/// the socket's own inode, not the file; a chmod by path may follow a link another user put
/// there after the bind. So the socket is bound and opened up in a directory of our own next
/// to `path`, where nobody else can write, then renamed into place (replacing a socket left
/// by a scheduler that was killed).
fn bind_for_everyone(path: &Path) -> Result<UnixListener> {
    let name = path.file_name().context("socket path has no file name")?.to_string_lossy();
    let private = path.with_file_name(format!(".{name}.{}", std::process::id()));
    std::fs::DirBuilder::new()
        .mode(0o700)
        .create(&private)
        .with_context(|| format!("creating {}", private.display()))?;
    let staged = private.join("sock");
    let bound = bind_and_move(&staged, path);
    let _ = std::fs::remove_file(&staged);
    let _ = std::fs::remove_dir(&private);
    bound
}

fn bind_and_move(staged: &Path, path: &Path) -> Result<UnixListener> {
    let listener = UnixListener::bind(staged).with_context(|| format!("serving stats on {}", staged.display()))?;
    std::fs::set_permissions(staged, std::fs::Permissions::from_mode(0o666))
        .with_context(|| format!("opening {} to every user", staged.display()))?;
    std::fs::rename(staged, path).with_context(|| format!("serving stats on {}", path.display()))?;
    Ok(listener)
}

/// First line of what the socket serves: the number of the reading, so that a monitor
/// polling faster than the scheduler samples does not print the same reading twice.
const SAMPLE_HEADER: &str = "# sample ";

impl Drop for StatsServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Clients are served one at a time: one that reads nothing would hold up the others.
fn serve(listener: UnixListener, latest: Arc<Mutex<(u64, String)>>) {
    for mut stream in listener.incoming().flatten() {
        let text = latest.lock().unwrap().1.clone();
        if stream.set_write_timeout(Some(WRITE_TIMEOUT)).is_ok() {
            let _ = stream.write_all(text.as_bytes());
        }
    }
}

/// One reading: its number (0 before the scheduler's first sample) and the snapshot.
fn read_once(spec: &SchedulerSpec, path: &PathBuf) -> std::io::Result<Result<(u64, Snapshot)>> {
    let mut stream = UnixStream::connect(path)?;
    stream.set_read_timeout(Some(READ_TIMEOUT))?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    let seq = text.lines().next().and_then(|l| l.strip_prefix(SAMPLE_HEADER)).and_then(|n| n.parse().ok()).unwrap_or(0);
    Ok(parse_text(spec.metrics, &text).map(|snapshot| (seq, snapshot)))
}

/// Whether an error connecting means that nobody serves there any more.
fn is_gone(e: &std::io::Error) -> bool {
    matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused)
}

/// The monitor's side: prints the scheduler's log line for every new reading, polling every
/// `interval_s`, until the scheduler is gone. Fails at once when none is running; says so
/// while a running one does not answer (stopped, say) and goes on waiting.
pub fn run_monitor(spec: &SchedulerSpec, interval_s: f64) -> Result<()> {
    let path = socket_path(spec.name);
    let (mut seen, mut previous) = match read_once(spec, &path) {
        Ok(reading) => reading?,
        Err(e) => bail!("no {} is running: cannot read its stats from {} ({e})", spec.name, path.display()),
    };
    let mut silent = false;
    loop {
        std::thread::sleep(Duration::from_secs_f64(interval_s));
        match read_once(spec, &path) {
            Ok(reading) => {
                let (seq, now) = reading?;
                silent = false;
                if seq == seen {
                    continue;
                }
                // No line until there are two readings (the scheduler may not have sampled yet).
                if seen != 0 {
                    println!("{}", (spec.log_line)(&previous, &now));
                }
                (seen, previous) = (seq, now);
            }
            Err(e) if is_gone(&e) => break,
            Err(e) => {
                if !silent {
                    println!("{} does not answer ({e}); waiting", spec.name);
                    silent = true;
                }
            }
        }
    }
    println!("{} stopped ({} is gone)", spec.name, path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scxkit::metrics::fixture::{reading, DEFS, DISPATCHED_LOCAL};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    fn line(previous: &Snapshot, now: &Snapshot) -> String {
        format!("dispatched {}", now.delta(previous, "dispatched_tasks_total", &[("type", "local")]))
    }

    const SPEC: SchedulerSpec = SchedulerSpec {
        name: "scx_test_monitor",
        hotplug: crate::spec::Hotplug::Follows,
        required_kfuncs: &[],
        optional_kfuncs: &[],
        metrics: &[DEFS],
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
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["scx_test_monitor.sock"], "nothing but the socket is left in the run directory");
        let second = StatsServer::start(SPEC.name).err().expect("a second server is refused");
        assert!(second.to_string().contains("another scx_test_monitor serves"), "{second}");
        server.update(&reading([41.0, 0.0, 0.0]));
        server.update(&reading([42.0, 0.0, 0.0]));
        let (seq, got) = read_once(&SPEC, &socket_path(SPEC.name)).unwrap().unwrap();
        assert_eq!((seq, got.len()), (2, 3));
        assert_eq!(line(&Snapshot::new(), &got), "dispatched 42");
        drop(server);
        assert!(!socket_path(SPEC.name).exists(), "the socket goes with the scheduler");
        assert!(is_gone(&read_once(&SPEC, &socket_path(SPEC.name)).unwrap_err()));
    }

    #[test]
    fn a_client_that_never_reads_does_not_hold_up_the_next_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stuck.sock");
        let server = StatsServer::start_at(SPEC.name, path.clone()).unwrap();
        // About 2 MB, ten times a socket's default buffer: a write of it to a client that
        // reads nothing blocks.
        let cpus = 50_000;
        let mut per_cpu = Snapshot::new();
        for cpu in 0..cpus {
            per_cpu.set_with(&DISPATCHED_LOCAL, &[("cpu", &cpu.to_string())], 1.0);
        }
        server.update(&per_cpu);

        let _stuck = UnixStream::connect(&path).unwrap();
        let (seq, got) = read_once(&SPEC, &path)
            .expect("the second client is answered within its read timeout")
            .unwrap();
        assert_eq!((seq, got.len()), (1, cpus));
    }

    #[test]
    fn opening_the_socket_to_every_user_never_follows_a_link_put_in_its_place() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("raced.sock");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "private").unwrap();
        std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
        let mode = || std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777;
        // Another user swapping the socket's path for a link to their target, again and again.
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let (path, victim, stop) = (path.clone(), victim.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let _ = std::fs::remove_file(&path);
                    let _ = std::os::unix::fs::symlink(&victim, &path);
                }
            })
        };
        let (mut tries, mut bound) = (0, 0);
        let deadline = Instant::now() + Duration::from_secs(1);
        while Instant::now() < deadline && mode() == 0o600 {
            tries += 1;
            bound += bind_for_everyone(&path).is_ok() as usize;
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert_eq!(mode(), 0o600, "the link's target was opened to every user ({bound} binds in {tries} tries)");
        assert!(bound > 100, "only {bound} binds in {tries} tries: the race was hardly run");
    }
}
