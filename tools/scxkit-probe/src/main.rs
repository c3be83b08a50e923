//! scxkit-probe: what the guest's busybox cannot measure. `run-latency` times a command from
//! fork to exit, again and again, each in microseconds: the "short shell command" figure of
//! an interactive scheduler.

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
