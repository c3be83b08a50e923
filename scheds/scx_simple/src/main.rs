//! scx_simple: a minimal weighted-vtime sched_ext scheduler built on the scxkit runtime.
//! The policy is in src/bpf/main.bpf.c; this file is its options and its loading.

scxkit_runtime::scheduler_modules!();
mod stats;

use anyhow::{Context, Result};
use bpf_skel::MainSkelBuilder;
use clap::Parser;
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use scxkit_runtime::{Attempt, CommonOpts, ExitInfo, Jobs, SchedulerOptions, SchedulerSpec, Stats};
use std::mem::MaybeUninit;

const SPEC: SchedulerSpec = SchedulerSpec {
    name: "scx_simple",
    hotplug: scxkit_runtime::Hotplug::Follows,
    required_kfuncs: &[
        "scx_bpf_select_cpu_dfl",
        "scx_bpf_dsq_insert",
        "scx_bpf_dsq_insert_vtime",
        "scx_bpf_dsq_move_to_local",
    ],
    optional_kfuncs: &[
        ("scx_bpf_create_dsq", "tasks wait in the built-in global FIFO instead of a vtime queue"),
        ("scx_bpf_task_set_dsq_vtime", "vtime is written to the task directly"),
    ],
    metrics: &[stats::METRICS],
    log_line: stats::log_line,
};

/// A minimal sched_ext scheduler: idle CPUs first, then one queue ordered by weighted vtime.
#[derive(Debug, Parser)]
#[command(name = "scx_simple")]
struct Opts {
    /// Time slice of every task, in microseconds.
    #[arg(long, value_name = "US", default_value_t = intf::SIMPLE_SLICE_DEFAULT_US as u64,
          value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    slice_us: u64,

    #[command(flatten)]
    common: CommonOpts,
}

impl SchedulerOptions for Opts {
    fn common(&self) -> &CommonOpts {
        &self.common
    }

    /// Its one option is checked by its parser.
    fn check(&self) -> Result<()> {
        Ok(())
    }
}

fn main() -> Result<()> {
    let opts = scxkit_runtime::parse::<Opts>();
    scxkit_runtime::run(&SPEC, &opts, |attempt| run_once(&opts, attempt))
}

fn run_once(opts: &Opts, attempt: &mut Attempt) -> Result<ExitInfo> {
    let mut storage = MaybeUninit::uninit();
    let mut open = MainSkelBuilder::default().open(&mut storage).context("opening the BPF object")?;
    scxkit_runtime::prepare_ops!(attempt, open.struct_ops.simple_ops_mut(), open.open_object_mut())?;
    open.maps.rodata_data.as_deref_mut().context("no .rodata")?.slice_ns = opts.slice_us * 1000;
    let mut skel = open.load().context("loading the BPF scheduler into the kernel")?;
    let link = skel.maps.simple_ops.attach_struct_ops().context("attaching the scheduler")?;
    let stats = Stats::new(|reading| {
        let vtime_now_ns = skel.maps.bss_data.as_deref().map_or(0, |bss| bss.vtime_now);
        stats::read(reading, &skel.maps.stats, vtime_now_ns)
    });
    attempt.monitor(skel.object(), link, stats, Jobs::new())
}
