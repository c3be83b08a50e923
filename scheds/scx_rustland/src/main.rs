//! scx_rustland: a sched_ext scheduler whose policy runs in this process, in Rust, on the
//! scxkit-userspace framework. The policy is in policy.rs; this file is its options.

mod policy;

use anyhow::{bail, Result};
use clap::Parser;
use policy::{Rustland, Settings};
use scxkit_userspace::FrameworkOpts;

const TROUBLESHOOTING: &str = "\
Troubleshooting:
  Audio crackles or a game stutters while the machine is busy:
    lower --slice-us (e.g. 5000) so that waiting tasks get a CPU sooner, and raise
    --slice-boost (e.g. 20) so that tasks that often sleep are favoured more.
  A game or a player is not treated as interactive: run with --stats 1 --watch-pid PID
    to see its rate of voluntary switches, and set --nvcsw-threshold below it.
  Builds or other background work slow down too much: lower --slice-boost (1 turns the
    boost off) or raise --nvcsw-threshold.
  The desktop freezes for half a second now and then: the policy process was starved or
    stopped; the stats' \"fallback\" says how often BPF took over, and --fallback-after-ms
    how soon it does.";

/// Interactive tasks first, with the policy in userspace: weighted vruntime, and tasks that
/// often sleep of their own accord (games, audio, shells) are charged less of their runtime.
#[derive(Debug, Parser)]
#[command(name = "scx_rustland", version, after_help = TROUBLESHOOTING)]
struct Opts {
    /// Time slice when few tasks wait, in microseconds; it shrinks as more tasks wait per CPU,
    /// and in proportion to weight for tasks lighter than nice 0.
    #[arg(long, value_name = "US", default_value_t = 20_000,
          value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    slice_us: u64,

    /// Smallest time slice, however many tasks wait and however light the task, in microseconds.
    #[arg(long, value_name = "US", default_value_t = 1_000,
          value_parser = clap::value_parser!(u64).range(50..=1_000_000))]
    slice_us_min: u64,

    /// Voluntary context switches per second (a decaying average) at or above which a task
    /// is interactive.
    #[arg(long, value_name = "PER_S", default_value_t = 10.0, value_parser = parse_rate)]
    nvcsw_threshold: f64,

    /// An interactive task is charged its runtime divided by this (1 turns the boost off).
    #[arg(long, value_name = "FACTOR", default_value_t = 10,
          value_parser = clap::value_parser!(u64).range(1..=1000))]
    slice_boost: u64,

    /// Log how these tasks are classed, once a second each (comma-separated pids).
    #[arg(long, value_name = "PIDS", value_delimiter = ',')]
    watch_pid: Vec<i32>,

    #[command(flatten)]
    framework: FrameworkOpts,
}

fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate >= 0.0 => Ok(rate),
        _ => Err(format!("'{text}' is not a rate per second (a number, 0 or more)")),
    }
}

fn main() -> Result<()> {
    let opts = scxkit_bpf::parse::<Opts>();
    if opts.slice_us_min > opts.slice_us {
        bail!("--slice-us-min ({} us) must not exceed --slice-us ({} us)", opts.slice_us_min, opts.slice_us);
    }
    let settings = Settings {
        slice_ns: opts.slice_us * 1000,
        slice_min_ns: opts.slice_us_min * 1000,
        nvcsw_threshold: opts.nvcsw_threshold,
        slice_boost: opts.slice_boost,
        watch: opts.watch_pid.clone(),
    };
    scxkit_userspace::run("scx_rustland", &opts.framework, |_| Ok(Rustland::new(settings.clone())))
}
