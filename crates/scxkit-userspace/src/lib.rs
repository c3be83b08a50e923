//! scxkit-userspace: a framework for sched_ext schedulers whose policy runs in an ordinary
//! Rust process.
//!
//! The framework owns a small generic BPF part (src/bpf/): it hands each task that needs a
//! CPU to the policy through a ring buffer (pid, previous CPU, allowed CPUs, weight, time it
//! ran, voluntary switches, enqueue flags) and applies the decisions that come back (CPU or
//! any, slice, vtime). It dispatches a few tasks itself: the policy process first of all,
//! per-CPU kernel threads and memory-reclaim threads, wakeups on an idle CPU while the
//! policy holds nothing, and every task when the ring buffer is full. If the policy process
//! stops answering (SIGSTOP, a debugger, a stall), BPF schedules on its own, FIFO, until it
//! is back; if it is killed, the kernel goes back to its default scheduler.
//!
//! A scheduler is a [`Policy`] and a `main`:
//!
//! ```ignore
//! let opts = Opts::parse(); // with `#[command(flatten)] framework: FrameworkOpts`, and PolicyOptions
//! scxkit_userspace::run("scx_mine", &opts, |topology| Ok(MyPolicy::new(topology)))
//! ```
//!
//! The runtime (scxkit-runtime) does the rest: checks before loading, statistics (log line,
//! Prometheus, StatsD, `--monitor`), signals, restarts on CPU hotplug (with a new policy).

scxkit_runtime::scheduler_modules!();
pub mod memory;
mod opts;
mod policy;
mod session;
pub mod stats;

pub use opts::{FrameworkOpts, PolicyOptions};
pub use policy::{
    deferred_waker_slice_kept_ns, Decision, Dispatcher, KernelView, Policy, QueuedTask, Target, WakeGrant,
    DEFERRED_WAKER_SLICE_DEFAULT_NS, DEFERRED_WAKER_SLICE_MAX_NS,
};
/// Upstream's option names, for a scheduler that shares its name with an upstream one.
pub use scxkit_runtime::upstream;
/// Weight of a nice-0 task, what [`QueuedTask`]'s weight is measured against.
pub use scxkit::weight::NICE0_WEIGHT;

use anyhow::Result;
use scxkit::metrics::MetricSet;
use scxkit::Topology;
use scxkit_runtime::SchedulerSpec;

const REQUIRED_KFUNCS: &[&str] = &[
    "scx_bpf_select_cpu_dfl",
    "scx_bpf_dsq_insert",
    "scx_bpf_dsq_insert_vtime",
    "scx_bpf_dsq_move_to_local",
    "scx_bpf_task_cpu",
];

const OPTIONAL_KFUNCS: &[(&str, &str)] = &[
    ("scx_bpf_create_dsq", "decisions for any CPU wait in the built-in global FIFO, not in the policy's vtime order"),
    ("scx_bpf_pick_idle_cpu", "a decision for any CPU waits for the next CPU to look for work, not for an idle one"),
    ("scx_bpf_kick_cpu", "while the policy is stopped, the tasks it held wait until a CPU finds the global queue empty and asks for work: with every task held and every CPU idle, or hogs queued there, that can take seconds"),
    ("scx_bpf_dsq_nr_queued", "the policy does not see how many tasks wait in the kernel's queue (scx_rustland's slice does not shrink with them)"),
];

static METRIC_SETS: &[MetricSet] = &[stats::METRICS, scxkit::metrics::long_wait::LONG_WAIT_METRICS, scxkit::metrics::stranded::STRANDED_METRICS];

/// Runs the scheduler `name` with the policy `make_policy` builds for each attempt (again
/// after a CPU hotplug, from the new topology). Returns when a signal stopped it; any other
/// end is an error. The runtime checks `options` (the framework's, then the scheduler's own)
/// before anything loads.
pub fn run<P: Policy>(name: &'static str, options: &impl PolicyOptions, mut make_policy: impl FnMut(&Topology) -> Result<P>) -> Result<()> {
    let spec: &'static SchedulerSpec = Box::leak(Box::new(SchedulerSpec {
        name,
        hotplug: scxkit_runtime::Hotplug::Follows,
        required_kfuncs: REQUIRED_KFUNCS,
        optional_kfuncs: OPTIONAL_KFUNCS,
        metrics: METRIC_SETS,
        log_line: stats::log_line,
    }));
    let opts = options.framework();
    // Before the runtime starts any thread: threads inherit the memory policy.
    scxkit_runtime::logging::init(opts.common.verbose > 0);
    memory::opt_out_of_numa_balancing();
    let mut resident = false;
    scxkit_runtime::run(spec, &opts::Checked(options), |attempt| {
        if !resident {
            memory::keep_resident();
            resident = true;
        }
        let mut policy = make_policy(attempt.topology())?;
        session::run_once(name, opts, &mut policy, attempt)
    })
}

#[cfg(test)]
mod weight_tests {
    #[test]
    fn rust_nice0_weight_is_the_bpf_one() {
        assert_eq!(crate::NICE0_WEIGHT, crate::intf::SCXK_NICE0_WEIGHT);
    }
}
