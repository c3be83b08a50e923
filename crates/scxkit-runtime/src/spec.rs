//! What the runtime needs to know about a scheduler: its name, what it requires of the
//! kernel, its statistics and its log line. The runner, the monitor and `--version` read it.

use scxkit::metrics::{MetricSet, Snapshot};

/// What the runtime needs to know about a scheduler, declared once in its main.rs.
pub struct SchedulerSpec {
    /// Binary name, e.g. `scx_simple`.
    pub name: &'static str,
    /// How it meets a CPU going on or offline.
    pub hotplug: Hotplug,
    /// Kfuncs it cannot do without; it refuses to start where one is not callable.
    pub required_kfuncs: &'static [&'static str],
    /// Kfuncs its BPF side replaces where they are not callable, each with the fallback.
    pub optional_kfuncs: &'static [(&'static str, &'static str)],
    /// Every statistic it may report (what `--help-stats` prints and `--monitor` accepts):
    /// its own definitions, then any it publishes from the library (the balancer's).
    pub metrics: &'static [MetricSet],
    /// The log line for `--stats` and `--monitor`, from the previous reading and this one.
    pub log_line: fn(&Snapshot, &Snapshot) -> String,
}

/// What a scheduler needs of the kernel when it picks idle CPUs with `scx_bpf_select_cpu_and`,
/// orders its queues by vtime and reads a task's CPU: scx_bpfland's and scx_rusty's
/// [`SchedulerSpec::required_kfuncs`].
pub const SELECT_CPU_AND_VTIME_KFUNCS: &[&str] = &[
    "scx_bpf_select_cpu_and",
    "scx_bpf_dsq_insert",
    "scx_bpf_dsq_insert_vtime",
    "scx_bpf_dsq_move_to_local",
    "scx_bpf_task_cpu",
];

/// How a scheduler meets a CPU going on or offline. Either way its BPF side implements
/// `ops.cpu_online` and `ops.cpu_offline`, so the kernel never ejects it for hotplug: that
/// restart runs the whole unload inside the hotplug, and on 6.19 it can starve the RCU
/// grace period the unload waits for, leaving the scheduler half-unloaded for good (under a storm of
/// hotplug events with scx_rusty under load, tests/guest/hotplug.sh).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hotplug {
    /// Its state follows the online CPUs: no restart, ever.
    Follows,
    /// Its state (scx_rusty's domains) is built from the CPUs online when it was loaded. It
    /// follows a CPU of those going offline and coming back for as long as it stays loaded:
    /// a reload leaves every task on the default scheduler meanwhile, where beside a few
    /// hundred CPU hogs a nice-19 kernel thread preempted in an RCU read section waits long
    /// enough for an RCU stall, and the reload itself, and the hotplug, then wait for that
    /// grace period. Only once a CPU it has no place for (offline at load) has come online,
    /// and none has gone on or offline for [`REBUILD_AFTER_QUIET`], the runtime detaches it
    /// and loads it again for the CPUs online then, from userspace.
    RebuildsForNewCpus,
}

/// How long the online CPUs must stay as they are before a [`Hotplug::RebuildsForNewCpus`]
/// scheduler is loaded again for them.
pub const REBUILD_AFTER_QUIET: std::time::Duration = std::time::Duration::from_secs(2);
