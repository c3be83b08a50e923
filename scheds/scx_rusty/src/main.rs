//! scx_rusty: one scheduling domain per LLC, grouped by NUMA node, balanced from userspace.
//! The per-event policy is in src/bpf/; this file is its options, its domains and its jobs.

scxkit_runtime::scheduler_modules!();
mod balance;
mod bpf_io;
mod capacity;
mod control;
mod domains;
mod opts;
mod stats;
mod tuner;

use anyhow::{bail, Context, Result};
use balance::{LbJob, LbMaps, Shared};
use bpf_skel::MainSkelBuilder;
use control::{Control, TuneMap};
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use opts::Opts;
use scxkit::lb::{Balancer, Hierarchy, Mode};
use scxkit_runtime::{Attempt, ExitInfo, Jobs, SchedulerSpec, Stats};
use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::rc::Rc;
use std::time::Duration;
use tuner::Tuner;

const SPEC: SchedulerSpec = SchedulerSpec {
    name: "scx_rusty",
    // Its domains come from the CPUs online at load: it follows those going off and on, and is
    // rebuilt once a CPU it has no domain for comes online.
    hotplug: scxkit_runtime::Hotplug::RebuildsForNewCpus,
    required_kfuncs: scxkit_runtime::spec::SELECT_CPU_AND_VTIME_KFUNCS,
    optional_kfuncs: &[
        ("scx_bpf_create_dsq", "every domain shares the global FIFO: no per-domain queues, no stealing"),
        ("scx_bpf_dsq_nr_queued", "no greedy stealing (a queue's length cannot be read)"),
        ("scx_bpf_kick_cpu", "queued work does not wake idle CPUs (no kick greedy)"),
        ("scx_bpf_task_set_dsq_vtime", "vtime is written to the task directly"),
        ("scx_bpf_task_set_slice", "the slice is written to the task directly"),
    ],
    metrics: stats::METRIC_SETS,
    log_line: stats::log_line,
};

fn main() -> Result<()> {
    let opts = Opts::parse_from(std::env::args()).unwrap_or_else(|e| e.exit());
    scxkit_runtime::run(&SPEC, &opts, |attempt| run_once(&opts, attempt))
}

fn run_once(opts: &Opts, attempt: &mut Attempt) -> Result<ExitInfo> {
    let topo = attempt.topology().clone();
    if topo.nr_cpus > intf::RUSTY_MAX_CPUS as usize {
        bail!("this machine has {} CPUs; scx_rusty supports up to {}", topo.nr_cpus, intf::RUSTY_MAX_CPUS);
    }
    let doms = domains::build(opts, &topo)?;
    for line in doms.tree() {
        log::info!("{line}");
    }
    let mut hierarchy = Hierarchy::numa_domains(&topo, &doms).context("building the balancing hierarchy")?;
    hierarchy.policies = opts.lb_policies();

    let mut storage = MaybeUninit::uninit();
    let mut open = MainSkelBuilder::default().open(&mut storage).context("opening the BPF object")?;
    scxkit_runtime::prepare_ops!(attempt, open.struct_ops.rusty_ops_mut(), open.open_object_mut())?;
    let rodata = open.maps.rodata_data.as_deref_mut().context("no .rodata")?;
    rodata.nr_cpus = topo.nr_cpus as u32;
    rodata.nr_doms = doms.domains.len() as u32;
    for d in &doms.domains {
        rodata.dom_nodes[d.id] = d.node as u32;
        rodata.dom_nr_cpus[d.id] = d.cpus.weight() as u32;
        for cpu in d.cpus.iter() {
            rodata.cpu_doms[cpu] = d.id as u32;
        }
        for (dst, src) in rodata.dom_cpus[d.id].iter_mut().zip(d.cpus.as_words()) {
            *dst = *src;
        }
    }
    rodata.initial_slice_ns = opts.slice_us_underutil * 1000;
    rodata.load_half_life_ns = opts.half_life_ns();
    rodata.greedy_threshold = opts.greedy_threshold;
    rodata.greedy_threshold_x_numa = opts.greedy_threshold_x_numa;
    rodata.direct_greedy_numa = opts.direct_greedy_numa;
    rodata.new_task_spread = opts.new_task_spread;
    rodata.fifo = opts.fifo;
    open.maps.lb_requests.set_max_entries(bpf_io::request_map_entries()?).context("sizing the move request map")?;
    let mut skel = open.load().context("loading the BPF scheduler into the kernel")?;
    let link = skel.maps.rusty_ops.attach_struct_ops().context("attaching the scheduler")?;
    let task_iter = skel.progs.dump_tasks.attach().context("attaching the task iterator")?;
    let skel = &skel;

    let tuner = Tuner::new(opts.tuner_config(), doms.domains.iter().map(|d| d.cpus.clone()).collect());
    let tune = TuneMap::new(&skel.maps.tune, tuner.initial())?;
    let shared = Rc::new(RefCell::new(Shared { tuning: tune.tuning().clone(), ..Default::default() }));
    let lb = LbJob {
        balancer: Balancer::new(hierarchy.clone(), Mode::Propagate).with_max_moves_per_pass(opts.max_moves_per_pass as usize),
        maps: LbMaps { tasks: &task_iter, requests: &skel.maps.lb_requests, dom_stats: &skel.maps.dom_stats },
        half_life_ns: opts.half_life_ns(),
        nr_online: topo.nr_online(),
        capacity: capacity::OnlineCapacity::new(&topo, &doms),
        enabled: !opts.no_load_balance,
        shared: shared.clone(),
        last_pass_ns: 0,
    };
    let steps = Control::steps(Duration::from_secs_f64(opts.tune_interval), Duration::from_secs_f64(opts.interval));
    let jobs = Jobs::new().owned(Control { tuner, lb, tune }, &steps);
    let reader = stats::Reader::new(&skel.maps.stats, &hierarchy, &doms, shared);
    let stats = Stats::new(move |reading| reader.read(reading));
    attempt.monitor(skel.object(), link, stats, jobs)
}
