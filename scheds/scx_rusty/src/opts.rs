//! scx_rusty's options and the checks that refuse bad or contradictory ones before anything
//! is loaded.

use crate::intf;
use crate::tuner::TunerConfig;
use anyhow::{bail, Result};
use clap::Parser;
use scxkit::lb::{policy, LevelPolicy};
use scxkit_runtime::upstream::{Instead::{Nearest, Nothing}, Unsupported};
use scxkit_runtime::{CommonOpts, SchedulerOptions};

/// A scheduler for machines with several caches and NUMA nodes: one scheduling domain per
/// last-level cache, a queue per domain, and a load balancer in userspace that moves tasks
/// between nodes (only for a bigger imbalance) and then between the domains of a node.
/// Upstream's spellings of these options are accepted too (README: "Upstream's options");
/// its options that scx_rusty does not implement are refused by name.
#[derive(Debug, Parser)]
#[command(name = "scx_rusty")]
pub struct Opts {
    /// Make one domain per cache of this level (2: L2) instead of one per last-level cache.
    #[arg(short = 'c', long, value_name = "LEVEL", conflicts_with = "cpumasks",
          value_parser = clap::value_parser!(u32).range(1..=4))]
    pub cache_level: Option<u32>,

    /// Make a domain of these CPUs, a hex cpumask (one per domain: `-C 0x0f -C 0xf0` or
    /// `-C 0x0f 0xf0`; every online CPU in exactly one, no domain across NUMA nodes).
    /// Default: one domain per last-level cache.
    #[arg(short = 'C', long = "cpumasks", value_name = "MASK", num_args = 1.., action = clap::ArgAction::Append)]
    pub cpumasks: Vec<String>,

    /// Serve each domain's queue first in, first out instead of by weighted vruntime.
    #[arg(short = 'f', long, visible_alias = "fifo-sched")]
    pub fifo: bool,

    /// Let a waking task take an idle CPU of another domain whose utilization is under this,
    /// in percent (0 to 100, fractions allowed; 0 turns direct greedy off, 100 allows any).
    #[arg(short = 'D', long, value_name = "PCT", default_value_t = intf::RUSTY_DIRECT_GREEDY_UNDER_DEFAULT_PCT as f64,
          value_parser = parse_percent)]
    pub direct_greedy_under: f64,

    /// Let direct greedy cross NUMA nodes (off by default: a task then runs far from its memory).
    #[arg(short = 'r', long)]
    pub direct_greedy_numa: bool,

    /// Start a new task on an idle CPU of any other domain, another node's included, when
    /// its parent's domain and node have none; that domain becomes its home (by default it
    /// waits in its parent's domain for a CPU there, or for the balancer).
    #[arg(long)]
    pub new_task_spread: bool,

    /// Let an idle CPU steal from a domain of its node that has at least this many queued
    /// tasks (0 turns stealing off).
    #[arg(short = 'g', long, value_name = "TASKS", default_value_t = intf::RUSTY_GREEDY_THRESHOLD_DEFAULT as u32,
          value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub greedy_threshold: u32,

    /// Let an idle CPU steal from a domain of another node that has at least this many queued
    /// tasks (0, the default, turns cross-node stealing off).
    #[arg(long, value_name = "TASKS", default_value_t = 0,
          value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub greedy_threshold_x_numa: u32,

    /// Wake an idle CPU of another domain whose utilization is under this, in percent, to
    /// steal queued work when the home domain has no idle CPU (0 to 100, fractions allowed;
    /// 0 turns it off, 100, upstream's default too, wakes one of any domain).
    #[arg(short = 'K', long, value_name = "PCT", default_value_t = intf::RUSTY_KICK_GREEDY_UNDER_DEFAULT_PCT as f64,
          value_parser = parse_percent)]
    pub kick_greedy_under: f64,

    /// Half-life of the tasks' duty cycles and the domains' loads, in seconds
    /// (0.001 to 10).
    #[arg(short = 'l', long, value_name = "SECONDS", default_value_t = 1.0)]
    pub load_half_life: f64,

    /// Load balancing interval, in seconds (0.1 to 3600).
    #[arg(short = 'i', long, value_name = "SECONDS", default_value_t = 2.0)]
    pub interval: f64,

    /// Keep the load balancer's statistics but move no task.
    #[arg(long)]
    pub no_load_balance: bool,

    /// A NUMA node takes part in balancing when its load per CPU differs from the nodes'
    /// average by more than this, in percent of that average (0 to 99, fractions allowed).
    #[arg(long, value_name = "PCT", default_value_t = policy::NODE_IMBALANCE_PCT)]
    pub node_imbalance_pct: f64,

    /// A domain takes part in balancing within its node when its load per CPU differs from
    /// the average of the node's domains by more than this, in percent of that average
    /// (0 to 99, fractions allowed).
    #[arg(long, value_name = "PCT", default_value_t = policy::DOMAIN_IMBALANCE_PCT)]
    pub domain_imbalance_pct: f64,

    /// Most moves one balancing pass decides (1 to 1000000); a pile-up that needs more is
    /// spread over the next passes, each of bounded cost.
    #[arg(long, value_name = "MOVES", default_value_t = scxkit::lb::DEFAULT_MAX_MOVES_PER_PASS as u32,
          value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_moves_per_pass: u32,

    /// Tuning interval (utilization, greedy domains, slice), in seconds (0.1 to 60).
    #[arg(short = 'I', long, value_name = "SECONDS", default_value_t = 0.1)]
    pub tune_interval: f64,

    /// Time slice while the machine has spare CPU time, in microseconds.
    #[arg(short = 'u', long, value_name = "US", default_value_t = intf::RUSTY_SLICE_UNDERUTIL_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    pub slice_us_underutil: u64,

    /// Time slice while every CPU is busy, in microseconds.
    #[arg(short = 'o', long, value_name = "US", default_value_t = intf::RUSTY_SLICE_OVERUTIL_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    pub slice_us_overutil: u64,

    #[command(flatten)]
    pub common: CommonOpts,
}

/// Upstream's options (sched-ext/scx 1.1.2, and older ones its example configuration still
/// passes) that scx_rusty does not implement.
pub const UPSTREAM_ONLY: &[Unsupported] = &[
    Unsupported::value("slice-us", Some('s'), Nearest("-u/--slice-us-underutil and -o/--slice-us-overutil, the slices while CPUs are spare and while all are busy")),
    Unsupported::flag("kthreads-local", Some('k'), Nothing("per-CPU kernel threads are queued in their domain like any task")),
    Unsupported::flag("balanced-kworkers", Some('b'), Nothing("kworkers are balanced like any task")),
    Unsupported::flag("partial", Some('p'), Nothing("every task is switched to scx_rusty")),
    Unsupported::flag("mempolicy-affinity", None, Nothing("a task's home domain does not follow its memory policy")),
    Unsupported::value("perf", None, Nothing("CPU frequency is left to the kernel's governor")),
];

/// A percentage, 0 to 100, as upstream writes it (`90.0`) or as an integer.
fn parse_percent(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(pct) if (0.0..=100.0).contains(&pct) => Ok(pct),
        _ => Err(format!("expected a percentage from 0 to 100, got '{text}'")),
    }
}

fn check_range(option: &str, value: f64, min: f64, max: f64) -> Result<()> {
    check_range_of("seconds", option, value, min, max)
}

/// A threshold of 100% or more would let no group below the average take part (none is
/// more than 100% below it): balancing would stop without saying so.
fn check_imbalance_pct(option: &str, value: f64) -> Result<()> {
    check_range_of("a percentage", option, value, 0.0, 99.0)
}

fn check_range_of(unit: &str, option: &str, value: f64, min: f64, max: f64) -> Result<()> {
    if !value.is_finite() || value < min || value > max {
        bail!("--{option} {value}: expected {unit} from {min} to {max}");
    }
    Ok(())
}

impl Opts {
    /// Parses the command line, refusing upstream options scx_rusty does not implement.
    pub fn parse_from<I: IntoIterator<Item = String>>(args: I) -> Result<Opts, clap::Error> {
        scxkit_runtime::upstream::try_parse_from(UPSTREAM_ONLY, args)
    }

    pub fn half_life_ns(&self) -> u64 {
        (self.load_half_life * 1e9).round() as u64
    }

    /// The balancer's policies: between nodes, then between the domains of a node.
    pub fn lb_policies(&self) -> Vec<LevelPolicy> {
        vec![
            LevelPolicy::with_threshold("node", self.node_imbalance_pct / 100.0),
            LevelPolicy::with_threshold("domain", self.domain_imbalance_pct / 100.0),
        ]
    }

    pub fn tuner_config(&self) -> TunerConfig {
        TunerConfig {
            direct_greedy_under: self.direct_greedy_under / 100.0,
            kick_greedy_under: self.kick_greedy_under / 100.0,
            slice_underutil_ns: self.slice_us_underutil * 1000,
            slice_overutil_ns: self.slice_us_overutil * 1000,
        }
    }
}

impl SchedulerOptions for Opts {
    fn common(&self) -> &CommonOpts {
        &self.common
    }

    /// Refuses values out of range and options that contradict each other.
    fn check(&self) -> Result<()> {
        check_range("load-half-life", self.load_half_life, 0.001, 10.0)?;
        check_range("interval", self.interval, 0.1, 3600.0)?;
        // /proc/stat counts in 10 ms ticks: a shorter interval reads busy CPUs as idle.
        check_range("tune-interval", self.tune_interval, 0.1, 60.0)?;
        check_imbalance_pct("node-imbalance-pct", self.node_imbalance_pct)?;
        check_imbalance_pct("domain-imbalance-pct", self.domain_imbalance_pct)?;
        if self.direct_greedy_numa && self.direct_greedy_under == 0.0 {
            bail!("--direct-greedy-numa needs direct greedy, which --direct-greedy-under 0 turns off");
        }
        if self.greedy_threshold_x_numa > 0 && self.greedy_threshold == 0 {
            bail!("--greedy-threshold-x-numa {} needs stealing within a node first, which --greedy-threshold 0 turns off", self.greedy_threshold_x_numa);
        }
        if self.slice_us_overutil > self.slice_us_underutil {
            bail!(
                "--slice-us-overutil ({}) must not exceed --slice-us-underutil ({}): a busy machine gets the shorter slice",
                self.slice_us_overutil,
                self.slice_us_underutil
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option sets upstream's presets and documentation pass, with what each must give.
    const OPTION_SETS: &str = include_str!("../../../tests/fixtures/upstream-option-sets.txt");

    fn parse(args: &[&str]) -> Result<Opts> {
        let opts = Opts::parse_from(std::iter::once("scx_rusty").chain(args.iter().copied()).map(String::from))?;
        opts.check()?;
        Ok(opts)
    }

    #[test]
    fn upstream_option_sets_are_accepted_or_refused_as_the_readme_says() {
        let wrong = scxkit_runtime::upstream::mismatches(OPTION_SETS, "scx_rusty", |args| {
            parse(&args.iter().map(String::as_str).collect::<Vec<_>>()).map(|_| ()).map_err(|e| e.to_string())
        });
        assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    }

    #[test]
    fn the_readme_names_each_upstream_option_it_refuses() {
        let readme = include_str!("../../../README.md");
        let missing = scxkit_runtime::upstream::undocumented(readme, "scx_rusty", UPSTREAM_ONLY);
        assert!(missing.is_empty(), "not in the README's table for scx_rusty: {missing:?}");
    }

    #[test]
    fn upstream_spellings_set_the_same_settings() {
        let o = parse(&["-C", "0x0f", "0xf0", "-D", "90.0", "-K", "50", "-f", "-r", "-g", "2"]).unwrap();
        assert_eq!(o.cpumasks, ["0x0f", "0xf0"]);
        assert_eq!((o.direct_greedy_under, o.kick_greedy_under, o.fifo, o.direct_greedy_numa, o.greedy_threshold), (90.0, 50.0, true, true, 2));
        let o = parse(&["-C", "0x3", "--cpumasks", "0xc", "--fifo-sched", "-u", "30000", "-o", "2000", "-i", "1", "-I", "0.5", "-l", "2"]).unwrap();
        assert_eq!((o.cpumasks.len(), o.fifo, o.slice_us_underutil, o.slice_us_overutil), (2, true, 30000, 2000));
        assert_eq!((o.interval, o.tune_interval, o.load_half_life), (1.0, 0.5, 2.0));
        assert_eq!(parse(&["-c", "2"]).unwrap().cache_level, Some(2));
    }

    #[test]
    fn defaults_are_valid() {
        let o = parse(&[]).unwrap();
        assert_eq!((o.interval, o.tune_interval, o.greedy_threshold, o.greedy_threshold_x_numa), (2.0, 0.1, 1, 0));
        assert_eq!(o.half_life_ns(), 1_000_000_000);
        assert_eq!((o.direct_greedy_under, o.kick_greedy_under), (90.0, 100.0), "upstream's defaults");
        assert_eq!(o.lb_policies(), vec![LevelPolicy::node(), LevelPolicy::domain()], "the library's policies");
        assert_eq!(o.max_moves_per_pass as usize, scxkit::lb::DEFAULT_MAX_MOVES_PER_PASS);
    }

    #[test]
    fn bad_and_contradictory_options_are_refused() {
        let err = |args: &[&str]| parse(args).unwrap_err().to_string();
        assert!(err(&["--interval", "0"]).contains("--interval 0: expected seconds from 0.1"));
        assert!(err(&["--load-half-life", "nan"]).contains("--load-half-life"));
        assert!(err(&["--direct-greedy-numa", "--direct-greedy-under", "0"]).contains("--direct-greedy-numa needs"));
        assert!(err(&["--greedy-threshold", "0", "--greedy-threshold-x-numa", "2"]).contains("needs stealing within a node"));
        assert!(err(&["--slice-us-overutil", "30000"]).contains("must not exceed --slice-us-underutil"));
        assert!(err(&["--cache-level", "2", "-C", "0x3"]).contains("cannot be used with"));
        assert!(err(&["--direct-greedy-under", "101"]).contains("101"));
        assert!(err(&["--node-imbalance-pct", "100"]).contains("--node-imbalance-pct 100: expected a percentage from 0 to 99"));
        assert!(err(&["--domain-imbalance-pct=-1"]).contains("--domain-imbalance-pct -1"));
        assert!(err(&["--node-imbalance-pct", "-1"]).contains("--node-imbalance-pct -1"), "a negative value apart, as a value");
        assert!(err(&["--interval", "-2"]).contains("--interval -2"));
        assert!(err(&["--domain-imbalance-pct", "nan"]).contains("--domain-imbalance-pct NaN"));
        assert!(err(&["--max-moves-per-pass", "0"]).contains("0"));
        let o = parse(&["--node-imbalance-pct", "25", "--domain-imbalance-pct", "2.5", "--max-moves-per-pass", "64"]).unwrap();
        assert_eq!(o.lb_policies()[0].imbalance_threshold, 0.25);
        assert_eq!(o.lb_policies()[1].imbalance_threshold, 0.025);
        assert_eq!(o.max_moves_per_pass, 64);
    }
}
