//! scx_rustland: a sched_ext scheduler whose policy runs in this process, in Rust, on the
//! scxkit-userspace framework. The policy is in policy.rs; this file is its options.

mod policy;

use anyhow::{bail, Result};
use clap::Parser;
use policy::{Rustland, Settings};
use scxkit_userspace::upstream::{self, Instead::Nothing, Unsupported};
use scxkit_userspace::{FrameworkOpts, PolicyOptions};

const TROUBLESHOOTING: &str = "\
Troubleshooting:
  Audio crackles or a game stutters while the machine is busy:
    lower --slice-us (e.g. 5000) so that waiting tasks get a CPU sooner, and raise
    --slice-boost (e.g. 20) so that tasks that often sleep are favoured more; with dozens
    of tasks waiting per CPU, raise --crowd-tasks (or 0) to keep the slices short.
  A game or a player is not treated as interactive: run with --stats 1 --watch-pid PID
    to see its rate of voluntary switches, and set --nvcsw-threshold below it.
  Builds or other background work slow down too much: lower --slice-boost (1 turns the
    boost off) or raise --nvcsw-threshold.
  The desktop freezes for half a second now and then: the policy process was starved or
    stopped; the stats' \"fallback\" says how often BPF took over, and --fallback-after-ms
    how soon it does.";

/// Interactive tasks first, with the policy in userspace: weighted vruntime, and tasks that
/// often sleep of their own accord (games, audio, shells) are charged less of their runtime.
/// Upstream's spellings of these options are accepted too (README: "Upstream's options");
/// its options that scx_rustland does not implement are refused by name.
#[derive(Debug, Parser)]
#[command(name = "scx_rustland", after_help = TROUBLESHOOTING)]
struct Opts {
    /// Time slice when few tasks wait, in microseconds; it shrinks as more tasks wait per CPU,
    /// and in proportion to weight for tasks lighter than nice 0.
    #[arg(short = 's', long, value_name = "US", default_value_t = 20_000,
          value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    slice_us: u64,

    /// Smallest time slice of any task, however light, in microseconds; in a crowd the least
    /// slice of a nice-0 task grows (--crowd-tasks).
    #[arg(short = 'S', long, value_name = "US", default_value_t = 1_000,
          value_parser = clap::value_parser!(u64).range(50..=1_000_000))]
    slice_us_min: u64,

    /// In a crowd the least slice of a nice-0 task is --slice-us-min times the tasks waiting
    /// per CPU over this (whole), at most --slice-us, so it grows from twice this many: fewer
    /// switches, and a task that wakes another keeps as much of its slice (at most 20 ms)
    /// before that wakeup is served; 0 keeps it at --slice-us-min.
    #[arg(long, value_name = "TASKS", default_value_t = 8,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    crowd_tasks: u64,

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

/// Upstream's options (sched-ext/scx 1.1.2) that scx_rustland does not implement.
const UPSTREAM_ONLY: &[Unsupported] = &[
    Unsupported::flag("percpu-local", Some('l'), Nothing("per-CPU kernel threads go straight to their CPU; other tasks allowed on one CPU go through the policy")),
    Unsupported::flag("numa-local", Some('n'), Nothing("tasks are not placed by their preferred NUMA node")),
    Unsupported::flag("partial", Some('p'), Nothing("every task is switched to scx_rustland")),
];

impl Opts {
    /// Parses the command line, refusing upstream options scx_rustland does not implement.
    fn parse_from<I: IntoIterator<Item = String>>(args: I) -> Result<Opts, clap::Error> {
        upstream::try_parse_from(UPSTREAM_ONLY, args)
    }
}

impl PolicyOptions for Opts {
    fn framework(&self) -> &FrameworkOpts {
        &self.framework
    }

    /// Refuses options that contradict each other.
    fn check(&self) -> Result<()> {
        if self.slice_us_min > self.slice_us {
            bail!("--slice-us-min ({} us) must not exceed --slice-us ({} us)", self.slice_us_min, self.slice_us);
        }
        Ok(())
    }
}

fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if rate.is_finite() && rate >= 0.0 => Ok(rate),
        _ => Err(format!("'{text}' is not a rate per second (a number, 0 or more)")),
    }
}

fn settings(opts: &Opts) -> Settings {
    Settings {
        slice_ns: opts.slice_us * 1000,
        slice_min_ns: opts.slice_us_min * 1000,
        crowd_tasks: opts.crowd_tasks,
        nvcsw_threshold: opts.nvcsw_threshold,
        slice_boost: opts.slice_boost,
        watch: opts.watch_pid.clone(),
    }
}

fn main() -> Result<()> {
    let opts = Opts::parse_from(std::env::args()).unwrap_or_else(|e| e.exit());
    let settings = settings(&opts);
    scxkit_userspace::run("scx_rustland", &opts, |_| Ok(Rustland::new(settings.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option sets upstream's presets and documentation pass, with what each must give.
    const OPTION_SETS: &str = include_str!("../../../tests/fixtures/upstream-option-sets.txt");

    fn parse(args: &[&str]) -> Result<Opts, String> {
        let args = std::iter::once("scx_rustland").chain(args.iter().copied()).map(String::from);
        let opts = Opts::parse_from(args).map_err(|e| e.to_string())?;
        opts.check().map_err(|e| e.to_string())?;
        Ok(opts)
    }

    #[test]
    fn upstream_option_sets_are_accepted_or_refused_as_the_readme_says() {
        let wrong = upstream::mismatches(OPTION_SETS, "scx_rustland", |args| {
            parse(&args.iter().map(String::as_str).collect::<Vec<_>>()).map(|_| ())
        });
        assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    }

    #[test]
    fn the_readme_names_each_upstream_option_it_refuses() {
        let readme = include_str!("../../../README.md");
        let missing = upstream::undocumented(readme, "scx_rustland", UPSTREAM_ONLY);
        assert!(missing.is_empty(), "not in the README's table for scx_rustland: {missing:?}");
    }

    /// The slices a policy of `args` gives `tasks` of `weight` waiting, with `in_kernel`
    /// more queued in the kernel, on `nr_cpus` CPUs, in ms; and what a waker keeps then.
    fn crowd(args: &[&str], nr_cpus: usize, in_kernel: u64, tasks: i32, weight: u32) -> (Vec<u64>, u64) {
        use scxkit_userspace::{Dispatcher, KernelView, Policy, QueuedTask};
        let mut policy = Rustland::new(settings(&parse(args).unwrap()));
        for pid in 1..=tasks {
            policy.enqueue(QueuedTask::new(pid, weight, 0, 0));
        }
        let mut out = Dispatcher::recording(nr_cpus, KernelView { vtime_now: 0, nr_queued: in_kernel });
        policy.dispatch(&mut out);
        (out.recorded().iter().map(|d| d.2 / 1_000_000).collect(), scxkit_userspace::deferred_waker_slice_kept_ns(&policy))
    }

    fn crowd_slices_ms(args: &[&str], tasks: i32, weight: u32) -> Vec<u64> {
        crowd(args, 1, 0, tasks, weight).0
    }

    #[test]
    fn a_crowd_gets_longer_slices_a_desktop_background_keeps_the_minimum() {
        assert_eq!(crowd_slices_ms(&[], 9, 100), vec![2; 9], "9 waiting: 20 ms / 10, floor 1 ms");
        assert_eq!(crowd_slices_ms(&[], 16, 100), vec![2; 16], "16 waiting: a floor of 2 ms");
        assert_eq!(crowd_slices_ms(&[], 64, 100), vec![8; 64]);
        assert_eq!(crowd_slices_ms(&[], 200, 100), vec![20; 200], "200 waiting: up to --slice-us");
        assert_eq!(crowd_slices_ms(&["-s", "5000"], 200, 100), vec![5; 200]);
        assert_eq!(crowd_slices_ms(&["--crowd-tasks", "0"], 200, 100), vec![1; 200], "the minimum");
        assert_eq!(crowd_slices_ms(&[], 200, 1), vec![1; 200], "weight 1: --slice-us-min");
        assert_eq!(crowd(&[], 4, 252, 4, 100).0, vec![8; 4], "64 per CPU on 4 CPUs, most in the kernel");
    }

    #[test]
    fn a_waker_keeps_the_crowds_floor_at_most_20_ms_else_the_default() {
        use scxkit_userspace::DEFERRED_WAKER_SLICE_MAX_NS;
        assert_eq!(crowd(&[], 1, 0, 9, 100).1, 0, "a desktop's background: the framework's 1 ms");
        assert_eq!(crowd(&["-S", "5000"], 1, 0, 1, 100).1, 0, "no crowd: the default, whatever -S");
        assert_eq!(crowd(&[], 1, 0, 64, 100).1, 8_000_000);
        assert_eq!(crowd(&[], 4, 252, 4, 100).1, 8_000_000, "64 per CPU on 4 CPUs");
        assert_eq!(crowd(&["-s", "100000"], 1, 800, 0, 100).1, DEFERRED_WAKER_SLICE_MAX_NS);
    }

    #[test]
    fn upstream_spellings_set_the_same_settings() {
        let o = parse(&["-s", "5000", "-S", "500"]).unwrap();
        assert_eq!((o.slice_us, o.slice_us_min), (5000, 500));
        assert!(parse(&["-s", "500", "-S", "1000"]).unwrap_err().contains("must not exceed"));
    }
}
