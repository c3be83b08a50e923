//! scxkit-probe: what the guest's busybox cannot measure. `run-latency` times a command from
//! fork to exit, again and again, each in microseconds: the "short shell command" figure of
//! an interactive scheduler. `wakeup` is a request/response wakeup benchmark (schbench's
//! idea): wakeup latency percentiles and requests per second. `frames` is a game's frame
//! loop, and `build-jobs` a build's short-lived processes: a desktop under a build.
//! `sleepers` starts thousands of threads that only sleep: tasks for a scheduler to track.

mod build_jobs;
mod cpu_time;
mod frames;
mod hog;
mod sleepers;
mod wakeup;

use anyhow::{bail, Context, Result};
use clap::{Parser, Subcommand};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug, Parser)]
#[command(name = "scxkit-probe", version)]
struct Opts {
    #[command(subcommand)]
    probe: Probe,
}

#[derive(Debug, Subcommand)]
enum Probe {
    /// Runs COMMAND COUNT times, INTERVAL_MS apart, and prints how long each run took (fork,
    /// exec, exit), in microseconds, one per line.
    RunLatency {
        /// How many runs.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        count: u32,
        /// Pause between the end of a run and the start of the next, in milliseconds.
        #[arg(long, value_name = "MS", default_value_t = 0)]
        interval_ms: u64,
        /// The command and its arguments.
        #[arg(required = true, trailing_var_arg = true)]
        command: Vec<String>,
    },
    /// Message threads wake worker threads with requests and wait for their replies; prints
    /// "wakeup_p50_us N", "wakeup_p99_us N", "wakeup_p999_us N", "requests_per_s N", "samples N".
    Wakeup {
        /// Groups, each a message thread and its workers.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=256))]
        groups: u32,
        /// Workers per group.
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
        workers: u32,
        /// CPU time each request costs its worker, in microseconds.
        #[arg(long, value_name = "US", default_value_t = 200)]
        work_us: u64,
        /// How long to run, in seconds.
        #[arg(long, value_name = "S", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
        seconds: u64,
    },
    /// A frame loop: a frame released every PERIOD_US, each costing WORK_US of CPU time and
    /// due before the next release; prints "frames_fps N" (delivered on time per second),
    /// "frames_dropped_pct N", "frame_p50_ms N" and "frame_p99_ms N" (release to completion),
    /// and "frames_late INDEX:MS,..." (the first 16 late frames) or "frames_late none".
    Frames {
        /// Time between releases, in microseconds (16667: 60 Hz).
        #[arg(long, value_name = "US", default_value_t = 16_667, value_parser = clap::value_parser!(u64).range(1000..=1_000_000))]
        period_us: u64,
        /// CPU time per frame, in microseconds.
        #[arg(long, value_name = "US", default_value_t = 4000)]
        work_us: u64,
        /// How long to run, in seconds.
        #[arg(long, value_name = "S", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
        seconds: u64,
    },
    /// Short-lived processes (this program's `burn`), PARALLEL at a time, for SECONDS; prints
    /// "build_jobs_per_s N".
    BuildJobs {
        /// Jobs in flight.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=1024))]
        parallel: u32,
        /// CPU time per job, in milliseconds.
        #[arg(long, value_name = "MS", default_value_t = 20)]
        job_cpu_ms: u64,
        /// How long to run, in seconds.
        #[arg(long, value_name = "S", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
        seconds: u64,
    },
    /// Starts THREADS threads that only sleep (or spin, with --spin), prints
    /// "sleepers_started N" once all are started, and exits (with them) SECONDS later.
    Sleepers {
        /// The threads spin instead, all released together once started.
        #[arg(long)]
        spin: bool,
        /// Threads to start (about 32,000 at most per process: see sleepers.rs).
        #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=32_000))]
        threads: u32,
        /// How long they sleep, in seconds.
        #[arg(long, value_name = "S", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        seconds: u64,
    },
    /// Spins for SECONDS; prints "hog_cpu_ms N" (the CPU time it got), "hog_longest_wait_ms N"
    /// (the longest it went without running) and "hog_waits N".
    Hog {
        /// How long to spin, in seconds.
        #[arg(long, value_name = "S", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
        seconds: u64,
    },
    /// Uses CPU_MS of CPU time, then exits: one build job.
    Burn {
        #[arg(long, value_name = "MS", default_value_t = 20)]
        cpu_ms: u64,
    },
}

/// One run of `command`, its output discarded; how long it took.
fn time_one(command: &[String]) -> Result<Duration> {
    let start = Instant::now();
    let status = Command::new(&command[0])
        .args(&command[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .with_context(|| format!("running {}", command[0]))?;
    let took = start.elapsed();
    if !status.success() {
        bail!("{} failed: {status}", command[0]);
    }
    Ok(took)
}

fn main() -> Result<()> {
    match Opts::parse().probe {
        Probe::RunLatency { count, interval_ms, command } => {
            for run in 0..count {
                if run > 0 {
                    std::thread::sleep(Duration::from_millis(interval_ms));
                }
                println!("{}", time_one(&command)?.as_micros());
            }
        }
        Probe::Wakeup { groups, workers, work_us, seconds } => {
            let outcome = wakeup::run(wakeup::Setup {
                groups: groups as usize,
                workers_per_group: workers as usize,
                work: Duration::from_micros(work_us),
                duration: Duration::from_secs(seconds),
            });
            println!("wakeup_p50_us {:.1}", outcome.p50_us);
            println!("wakeup_p99_us {:.1}", outcome.p99_us);
            println!("wakeup_p999_us {:.1}", outcome.p999_us);
            println!("requests_per_s {:.1}", outcome.requests_per_s);
            println!("samples {}", outcome.samples);
        }
        Probe::Frames { period_us, work_us, seconds } => {
            let outcome = frames::run(frames::Setup {
                period: Duration::from_micros(period_us),
                work: Duration::from_micros(work_us),
                duration: Duration::from_secs(seconds),
            });
            println!("frames_fps {:.2}", outcome.delivered_per_s);
            println!("frames_dropped_pct {:.2}", outcome.dropped_pct);
            println!("frame_p50_ms {:.2}", outcome.response_p50_ms);
            println!("frame_p99_ms {:.2}", outcome.response_p99_ms);
            let late: Vec<String> = outcome.late_frames.iter().map(|(index, ms)| format!("{index}:{ms:.1}")).collect();
            println!("frames_late {}", if late.is_empty() { "none".to_string() } else { late.join(",") });
        }
        Probe::BuildJobs { parallel, job_cpu_ms, seconds } => {
            let probe = std::env::current_exe().context("finding this program to run its jobs")?;
            let setup = build_jobs::Setup { parallel, job_cpu: Duration::from_millis(job_cpu_ms), duration: Duration::from_secs(seconds) };
            println!("build_jobs_per_s {:.2}", build_jobs::run(&probe, setup)?);
        }
        Probe::Sleepers { spin, threads, seconds } => {
            sleepers::start(threads, if spin { sleepers::Work::Spin } else { sleepers::Work::Sleep })?;
            println!("sleepers_started {threads}");
            std::thread::sleep(Duration::from_secs(seconds));
        }
        Probe::Hog { seconds } => {
            let outcome = hog::run(Duration::from_secs(seconds));
            println!("hog_cpu_ms {}", outcome.cpu.as_millis());
            println!("hog_longest_wait_ms {}", outcome.longest_wait.as_millis());
            println!("hog_waits {}", outcome.waits);
        }
        Probe::Burn { cpu_ms } => cpu_time::burn_cpu(Duration::from_millis(cpu_ms)),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_a_command_and_refuses_a_failing_one() {
        let took = time_one(&["sleep".into(), "0.05".into()]).unwrap();
        assert!(took >= Duration::from_millis(50), "{took:?}");
        assert!(time_one(&["false".into()]).unwrap_err().to_string().contains("false failed"));
        assert!(time_one(&["/nonexistent".into()]).is_err());
    }
}
