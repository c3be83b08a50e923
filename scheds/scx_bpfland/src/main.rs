//! scx_bpfland: an interactive-first sched_ext scheduler with a primary domain.
//! The policy is in src/bpf/; this file is its options and its loading.

scxkit_bpf::scheduler_modules!();
mod stats;
mod watch;

use anyhow::{bail, Context, Result};
use bpf_skel::MainSkelBuilder;
use clap::Parser;
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use scxkit::cpuset::resolve_cpu_set;
use scxkit::{Cpumask, Topology};
use scxkit::metrics::static_layout;
use scxkit_bpf::{Attempt, CommonOpts, ExitInfo, Jobs, SchedulerSpec, Stats};
use std::mem::MaybeUninit;
use std::time::Duration;

const SPEC: SchedulerSpec = SchedulerSpec {
    name: "scx_bpfland",
    follows_hotplug: true,
    required_kfuncs: &[
        "scx_bpf_select_cpu_and",
        "scx_bpf_dsq_insert",
        "scx_bpf_dsq_insert_vtime",
        "scx_bpf_dsq_move_to_local",
        "scx_bpf_task_cpu",
    ],
    optional_kfuncs: &[
        ("scx_bpf_create_dsq", "both classes share the global FIFO, interactive tasks at its head, and CPUs outside the primary domain may take queued work"),
        ("scx_bpf_test_and_clear_cpu_idle", "the previous CPU is not tried before the kernel's own idle selection"),
        ("scx_bpf_task_set_dsq_vtime", "vtime is written to the task directly"),
        ("scx_bpf_task_set_slice", "the slice is written to the task directly"),
    ],
    metrics: &[stats::METRICS],
    log_line: stats::log_line,
};

/// An interactive-first scheduler: tasks that often block by themselves (games, audio, UI)
/// are served before CPU hogs, and work stays on the primary domain's cores until they are
/// all busy.
#[derive(Debug, Parser)]
#[command(name = "scx_bpfland", version)]
struct Opts {
    /// Base time slice, in microseconds.
    #[arg(long, value_name = "US", default_value_t = intf::BPFLAND_SLICE_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    slice_us: u64,

    /// Smallest slice a task is ever given, in microseconds.
    #[arg(long, value_name = "US", default_value_t = intf::BPFLAND_SLICE_MIN_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(10..=1_000_000))]
    slice_min_us: u64,

    /// Most unused (or overrun) slice carried to a task's next slice, and most vruntime
    /// credit a sleeper brings back, in microseconds.
    #[arg(long, value_name = "US", default_value_t = intf::BPFLAND_SLICE_LAG_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(0..=10_000_000))]
    slice_lag_us: u64,

    /// Voluntary context switches per second at or above which a task is interactive.
    #[arg(long, value_name = "PER_S", default_value_t = intf::BPFLAND_NVCSW_THRESHOLD_DEFAULT as u64,
          value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    nvcsw_threshold: u64,

    /// CPUs to keep work on until they are all busy: a hex cpumask (0x00fff, ff000) or
    /// all, performance (fastest cores), powersave (most efficient cores), auto
    /// (performance on hybrid machines, else all).
    #[arg(long, value_name = "CPUMASK", default_value = "all")]
    primary_domain: String,

    /// How long every primary CPU must have been busy before work overflows to the other
    /// CPUs, in microseconds.
    #[arg(long, value_name = "US", default_value_t = intf::BPFLAND_OVERFLOW_DELAY_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    overflow_delay_us: u64,

    /// Dispatch per-CPU kernel threads straight to their CPU, ahead of everything queued.
    #[arg(long)]
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

fn main() -> Result<()> {
    let opts = scxkit_bpf::parse::<Opts>();
    if let Some(done) = scxkit_bpf::info_mode(&SPEC, &opts.common) {
        return done;
    }
    if opts.slice_min_us > opts.slice_us {
        bail!(
            "--slice-min-us ({}) must not exceed --slice-us ({}); the default --slice-min-us is {}",
            opts.slice_min_us,
            opts.slice_us,
            intf::BPFLAND_SLICE_MIN_DEFAULT_US
        );
    }
    let watch = watch::Watch::new(&opts.watch_pid)?;
    scxkit_bpf::run(&SPEC, &opts.common, |attempt| run_once(&opts, &watch, attempt))
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
    scxkit_bpf::prepare_ops!(attempt, open.struct_ops.bpfland_ops_mut(), open.open_object_mut())?;
    let rodata = open.maps.rodata_data.as_deref_mut().context("no .rodata")?;
    rodata.slice_ns = opts.slice_us * 1000;
    rodata.slice_min_ns = opts.slice_min_us * 1000;
    rodata.slice_lag_ns = opts.slice_lag_us * 1000;
    rodata.nvcsw_threshold = opts.nvcsw_threshold;
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
    let stats = Stats::new(static_layout(stats::METRICS), || {
        let nr_interactive = skel.maps.bss_data.as_deref().map_or(0, |bss| bss.nr_interactive);
        stats::read(&skel.maps.stats, nr_interactive)
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
