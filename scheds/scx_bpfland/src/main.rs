//! scx_bpfland: an interactive-first sched_ext scheduler with a primary domain.
//! The policy is in src/bpf/; this file is its options and its loading.

scxkit_runtime::scheduler_modules!();
mod stats;
mod watch;

use anyhow::{bail, Context, Result};
use bpf_skel::MainSkelBuilder;
use clap::Parser;
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use scxkit::cpuset::resolve_cpu_set;
use scxkit::{Cpumask, Topology};
use scxkit_runtime::upstream::{Instead::{self, Nearest, Nothing}, Unsupported};
use scxkit_runtime::{Attempt, CommonOpts, ExitInfo, Jobs, SchedulerOptions, SchedulerSpec, Stats};
use std::mem::MaybeUninit;
use std::time::Duration;

const SPEC: SchedulerSpec = SchedulerSpec {
    name: "scx_bpfland",
    hotplug: scxkit_runtime::Hotplug::Follows,
    required_kfuncs: scxkit_runtime::spec::SELECT_CPU_AND_VTIME_KFUNCS,
    optional_kfuncs: &[
        ("scx_bpf_create_dsq", "both classes share the global FIFO, interactive tasks at its head, and CPUs outside the primary domain may take queued work"),
        ("scx_bpf_test_and_clear_cpu_idle", "the previous CPU is not tried before the kernel's own idle selection"),
        ("scx_bpf_task_set_slice", "the slice is written to the task directly"),
    ],
    metrics: &[stats::METRICS, scxkit::metrics::long_wait::LONG_WAIT_METRICS, scxkit::metrics::stranded::STRANDED_METRICS],
    log_line: stats::log_line,
};

/// An interactive-first scheduler: tasks that often block by themselves (games, audio, UI)
/// are served before CPU hogs, and work stays on the primary domain's cores until they are
/// all busy. Upstream's spellings of these options are accepted too (README: "Upstream's
/// options"); its options that scx_bpfland does not implement are refused by name.
#[derive(Debug, Parser)]
#[command(name = "scx_bpfland")]
struct Opts {
    /// Base time slice, in microseconds.
    #[arg(short = 's', long, value_name = "US", default_value_t = intf::BPFLAND_SLICE_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    slice_us: u64,

    /// Smallest slice a task is ever given, in microseconds.
    #[arg(short = 'L', long, visible_alias = "slice-us-min", value_name = "US",
          default_value_t = intf::BPFLAND_SLICE_MIN_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(SLICE_MIN_LEAST_US..=1_000_000))]
    slice_min_us: u64,

    /// Upstream's -S: with a value, its older spelling of --slice-min-us (scx_loader's
    /// lowlatency preset passes `-S 500`); alone, its newer --sticky-tasks (refused).
    #[arg(short = 'S', value_name = "US", num_args = 0..=1, hide = true, conflicts_with = "slice_min_us",
          value_parser = clap::value_parser!(u64).range(SLICE_MIN_LEAST_US..=1_000_000))]
    upstream_s: Option<Option<u64>>,

    /// Most unused (or overrun) slice carried to a task's next slice, and most vruntime
    /// credit a sleeper brings back, in microseconds. Five times it (at most 100 ms) is how
    /// much of what a task ran since it last slept counts in its place in the queue.
    #[arg(short = 'l', long, visible_alias = "slice-us-lag", value_name = "US",
          default_value_t = intf::BPFLAND_SLICE_LAG_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(0..=10_000_000))]
    slice_lag_us: u64,

    /// Regular tasks waiting per CPU for each minimum slice that a regular task is given at
    /// least: with 40 waiting and the default, 5 minimum slices (fewer switches in a crowd;
    /// at most --slice-us, and at most 500 ms for the whole crowd's round); 0 keeps the least
    /// slice at --slice-min-us whatever the crowd.
    #[arg(long, value_name = "TASKS", default_value_t = intf::BPFLAND_CROWD_TASKS_DEFAULT as u32,
          value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    crowd_tasks: u32,

    /// Voluntary context switches per second at or above which a task is interactive; 0:
    /// no task is (upstream's `-c 0`).
    #[arg(short = 'c', long, visible_alias = "nvcsw-max-thresh", value_name = "PER_S",
          default_value_t = intf::BPFLAND_NVCSW_THRESHOLD_DEFAULT as u64,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    nvcsw_threshold: u64,

    /// CPUs to keep work on until they are all busy: a hex cpumask (0x00fff, ff000) or
    /// all, performance (fastest cores), powersave (most efficient cores), auto
    /// (performance on hybrid machines, else all); none is all (upstream's "no preference").
    #[arg(short = 'm', long, value_name = "CPUMASK", default_value = "all", value_parser = parse_primary_domain)]
    primary_domain: String,

    /// How long every primary CPU must have been busy before work overflows to the other
    /// CPUs, in microseconds.
    #[arg(long, value_name = "US", default_value_t = intf::BPFLAND_OVERFLOW_DELAY_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    overflow_delay_us: u64,

    /// Dispatch per-CPU kernel threads straight to their CPU, ahead of everything queued.
    #[arg(short = 'k', long)]
    local_kthreads: bool,

    /// Never let a waking interactive task preempt a regular one.
    #[arg(long)]
    no_preempt: bool,

    /// With --stats, also show the class of these tasks (comma-separated PIDs).
    #[arg(long, value_name = "PID,...", value_delimiter = ',')]
    watch_pid: Vec<i32>,

    #[command(flatten)]
    common: CommonOpts,
}

/// The least --slice-min-us, in microseconds.
const SLICE_MIN_LEAST_US: u64 = 10;
/// What `--nvcsw-threshold 0` gives BPF: a rate no task reaches (BPF compares with four
/// times the threshold, so it must stay far below u64::MAX / 4).
const NVCSW_THRESHOLD_NEVER: u64 = 1 << 40;

/// Upstream's `-S` alone, and its long name.
const STICKY_TASKS: Unsupported = Unsupported::flag("sticky-tasks", Some('S'), Nothing("tasks are not kept on their CPU by their rate of enqueues"));
const TIMELY: Instead = Nothing("slices are fixed: --slice-us, with what is left or overrun carried over up to --slice-lag-us");

/// Upstream's options (sched-ext/scx 1.1.2 and the older ones presets still pass) that
/// scx_bpfland does not implement.
const UPSTREAM_ONLY: &[Unsupported] = &[
    Unsupported::value("throttle-us", Some('t'), Nothing("CPUs are never throttled")).same_as_scxkit_for(&["0"]),
    Unsupported::value("idle-resume-us", Some('I'), Nothing("the CPUs' idle QoS is left as it is")).same_as_scxkit_for(&["-1"]),
    Unsupported::flag("local-pcpu", Some('p'), Nothing("per-CPU tasks wait in the queues with the others (a task kept off the primary domain by its affinity waits on its own CPU)")),
    Unsupported::flag("no-wake-sync", Some('w'), Nothing("there is no direct dispatch on synchronous wakeups to turn off")),
    Unsupported { short: None, ..STICKY_TASKS },
    Unsupported::flag("preferred-idle-scan", Some('P'), Nothing("idle CPUs are tried in the kernel's order: the previous CPU, a whole idle core, the same cache, the same node")),
    Unsupported::flag("disable-smt", None, Nothing("a whole idle SMT core is always preferred")),
    Unsupported::flag("disable-numa", None, Nothing("an idle CPU of the same node is always preferred")),
    Unsupported::flag("cpufreq", Some('f'), Nothing("CPU frequency is left to the kernel's governor")),
    Unsupported::flag("timely", Some('T'), TIMELY),
    Unsupported::value("timely-tlow-us", None, TIMELY),
    Unsupported::value("timely-thigh-us", None, TIMELY),
    Unsupported::value("timely-gain-min", None, TIMELY),
    Unsupported::value("timely-gain-step", None, TIMELY),
    Unsupported::value("timely-hai-thresh", None, TIMELY),
    Unsupported::value("timely-hai-multiplier", None, TIMELY),
    Unsupported::value("timely-backoff-low", None, TIMELY),
    Unsupported::value("timely-backoff-high", None, TIMELY),
    Unsupported::value("timely-backoff-gradient", None, TIMELY),
    Unsupported::value("timely-gradient-margin-us", None, TIMELY),
    Unsupported::value("timely-control-interval-us", None, TIMELY),
    Unsupported::flag("debug", Some('d'), Nearest("-v/--verbose (debug logs and libbpf's messages; nothing goes to trace_pipe)")),
    Unsupported::flag("lowlatency", None, Nearest("a shorter slice, e.g. -s 5000 -l 5000 (what scx_loader's lowlatency preset passes now)")),
];

/// Upstream's "none" (no preferred CPUs) is scx_bpfland's "all".
fn parse_primary_domain(text: &str) -> Result<String, String> {
    Ok(if text.trim() == "none" { "all".into() } else { text.to_string() })
}

impl Opts {
    /// Parses the command line, refusing upstream options scx_bpfland does not implement.
    fn parse_from<I: IntoIterator<Item = String>>(args: I) -> Result<Opts, clap::Error> {
        scxkit_runtime::upstream::try_parse_from(UPSTREAM_ONLY, args)
    }

    fn slice_min_us(&self) -> u64 {
        self.upstream_s.flatten().unwrap_or(self.slice_min_us)
    }

    fn nvcsw_threshold(&self) -> u64 {
        if self.nvcsw_threshold == 0 { NVCSW_THRESHOLD_NEVER } else { self.nvcsw_threshold }
    }
}

impl SchedulerOptions for Opts {
    fn common(&self) -> &CommonOpts {
        &self.common
    }

    /// Refuses what the parser cannot see: options that contradict each other.
    fn check(&self) -> Result<()> {
        if self.upstream_s == Some(None) {
            bail!(STICKY_TASKS.refusal("scx_bpfland"));
        }
        if self.slice_min_us() > self.slice_us {
            bail!(
                "--slice-min-us ({}) must not exceed --slice-us ({}); the default --slice-min-us is {}",
                self.slice_min_us(),
                self.slice_us,
                intf::BPFLAND_SLICE_MIN_DEFAULT_US
            );
        }
        Ok(())
    }
}

fn main() -> Result<()> {
    let opts = Opts::parse_from(std::env::args()).unwrap_or_else(|e| e.exit());
    // Opened at the first attempt, after the runtime's info modes and option checks.
    let mut watch = None;
    scxkit_runtime::run(&SPEC, &opts, |attempt| {
        if watch.is_none() {
            watch = Some(watch::Watch::new(&opts.watch_pid)?);
        }
        run_once(&opts, watch.as_ref().expect("opened above"), attempt)
    })
}

/// The primary domain: the requested CPUs, offline ones included (BPF follows hotplug and
/// counts only the online ones; with none online, work goes to every CPU).
fn primary_domain(spec: &str, topo: &Topology) -> Result<Cpumask> {
    let requested = resolve_cpu_set(spec, topo).with_context(|| format!("--primary-domain '{spec}'"))?;
    if matches!(spec, "performance" | "powersave") && !topo.is_hybrid() {
        log::info!("--primary-domain {spec}: this machine's cores are all alike, so every CPU is primary");
    }
    let offline = requested.and_not(&topo.online);
    if offline == requested {
        log::warn!("every CPU of --primary-domain ({}) is offline: work goes to every CPU until one comes online", requested.to_list());
    } else if !offline.is_empty() {
        log::info!("CPUs {} of --primary-domain are offline: they join when they come online", offline.to_list());
    }
    Ok(requested)
}

/// Whether the primary domain is every CPU: a mask naming them all, or a named set (read
/// from the online CPUs) that holds every online one.
fn every_cpu(spec: &str, primary: &Cpumask, topo: &Topology) -> bool {
    let named = matches!(spec.trim(), "all" | "auto" | "performance" | "powersave");
    primary.and(&topo.possible) == topo.possible || (named && primary.and(&topo.online) == topo.online)
}

fn run_once(opts: &Opts, watch: &watch::Watch, attempt: &mut Attempt) -> Result<ExitInfo> {
    let topo = attempt.topology();
    if topo.nr_cpus > intf::BPFLAND_MAX_CPUS as usize {
        bail!("this machine has {} CPUs; scx_bpfland supports up to {}", topo.nr_cpus, intf::BPFLAND_MAX_CPUS);
    }
    let primary = primary_domain(&opts.primary_domain, topo)?;
    let all = every_cpu(&opts.primary_domain, &primary, topo);
    log::info!("primary domain: {} ({}){}", primary, primary.to_hex(), if all { ", every CPU" } else { "" });
    let mut storage = MaybeUninit::uninit();
    let mut open = MainSkelBuilder::default().open(&mut storage).context("opening the BPF object")?;
    scxkit_runtime::prepare_ops!(attempt, open.struct_ops.bpfland_ops_mut(), open.open_object_mut())?;
    let rodata = open.maps.rodata_data.as_deref_mut().context("no .rodata")?;
    rodata.slice_ns = opts.slice_us * 1000;
    rodata.slice_min_ns = opts.slice_min_us() * 1000;
    rodata.slice_lag_ns = opts.slice_lag_us * 1000;
    rodata.crowd_tasks = opts.crowd_tasks;
    rodata.run_cap_ns = run_cap_ns(opts.slice_lag_us);
    rodata.nvcsw_threshold = opts.nvcsw_threshold();
    rodata.overflow_delay_ns = opts.overflow_delay_us * 1000;
    rodata.local_kthreads = opts.local_kthreads;
    rodata.preempt_enabled = !opts.no_preempt;
    rodata.nr_cpus = topo.nr_cpus as u32;
    rodata.primary_all = all;
    for (dst, src) in rodata.primary_cpus.iter_mut().zip(primary.as_words()) {
        *dst = *src;
    }
    for (dst, src) in rodata.online_cpus.iter_mut().zip(topo.online.as_words()) {
        *dst = *src;
    }
    let mut skel = open.load().context("loading the BPF scheduler into the kernel")?;
    let link = skel.maps.bpfland_ops.attach_struct_ops().context("attaching the scheduler")?;
    let skel = &skel;
    let stats = Stats::new(|reading| {
        let nr_interactive = skel.maps.bss_data.as_deref().map_or(0, |bss| bss.nr_interactive);
        stats::read(reading, &skel.maps.stats, nr_interactive)
    });
    let mut jobs = Jobs::new();
    if let (Some(every_s), false) = (opts.common.stats, opts.watch_pid.is_empty()) {
        jobs = jobs.every("watch-pid", Duration::from_secs_f64(every_s), || {
            watch.report(&skel.maps.task_ctxs);
            Ok(())
        });
    }
    attempt.monitor(skel.object(), link, stats, jobs)
}

/// How much of what a task ran since it last slept counts in its place in the queue (see
/// task_deadline): five lags, at most 100 ms.
fn run_cap_ns(slice_lag_us: u64) -> u64 {
    let cap_ns = slice_lag_us * 1000 * intf::BPFLAND_RUN_CAP_LAGS as u64;
    cap_ns.min(intf::BPFLAND_RUN_CAP_MAX_MS as u64 * 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_cap_is_five_lags_at_most_100_ms() {
        assert_eq!(run_cap_ns(20_000), 100_000_000, "the default lag");
        assert_eq!(run_cap_ns(1_000), 5_000_000);
        assert_eq!(run_cap_ns(200_000), 100_000_000, "a large lag does not raise it");
        assert_eq!(run_cap_ns(10_000_000), 100_000_000);
    }

    /// The option sets upstream's presets and documentation pass, with what each must give.
    const OPTION_SETS: &str = include_str!("../../../tests/fixtures/upstream-option-sets.txt");

    fn parse(args: &[&str]) -> Result<Opts, String> {
        let args = std::iter::once("scx_bpfland").chain(args.iter().copied()).map(String::from);
        let opts = Opts::parse_from(args).map_err(|e| e.to_string())?;
        opts.check().map_err(|e| e.to_string())?;
        Ok(opts)
    }

    #[test]
    fn upstream_option_sets_are_accepted_or_refused_as_the_readme_says() {
        let wrong = scxkit_runtime::upstream::mismatches(OPTION_SETS, "scx_bpfland", |args| {
            parse(&args.iter().map(String::as_str).collect::<Vec<_>>()).map(|_| ())
        });
        assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    }

    #[test]
    fn the_readme_names_each_upstream_option_it_refuses() {
        let readme = include_str!("../../../README.md");
        let missing = scxkit_runtime::upstream::undocumented(readme, "scx_bpfland", UPSTREAM_ONLY);
        assert!(missing.is_empty(), "not in the README's table for scx_bpfland: {missing:?}");
    }

    #[test]
    fn upstream_spellings_set_the_same_settings() {
        let o = parse(&["-s", "5000", "-S", "500", "-l", "6000", "-m", "none", "-c", "0", "-k"]).unwrap();
        assert_eq!((o.slice_us, o.slice_min_us(), o.slice_lag_us), (5000, 500, 6000));
        assert_eq!((o.primary_domain.as_str(), o.nvcsw_threshold(), o.local_kthreads), ("all", NVCSW_THRESHOLD_NEVER, true));
        let o = parse(&["--slice-us-lag", "7000", "--slice-us-min", "700", "--nvcsw-max-thresh", "5"]).unwrap();
        assert_eq!((o.slice_lag_us, o.slice_min_us(), o.nvcsw_threshold()), (7000, 700, 5));
        assert_eq!(parse(&["-L", "300"]).unwrap().slice_min_us(), 300);
        assert!(parse(&["-L", "300", "-S", "400"]).unwrap_err().contains("cannot be used with"));
        assert!(parse(&["-S", "-m", "all"]).unwrap_err().contains("upstream's -S/--sticky-tasks"));
    }

    #[test]
    fn a_negative_value_is_refused_naming_its_option() {
        let err = parse(&["--crowd-tasks", "-1"]).unwrap_err();
        assert!(err.contains("'-1' for '--crowd-tasks <TASKS>'"), "{err}");
        assert!(parse(&["--slice-us", "-5"]).unwrap_err().contains("--slice-us"));
    }
}
