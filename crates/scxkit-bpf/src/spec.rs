//! What the runtime needs to know about a scheduler: its name, what it requires of the
//! kernel, its statistics and its log line. The runner, the monitor and `--version` read it.

use scxkit::metrics::{MetricDef, Snapshot};

/// What the runtime needs to know about a scheduler, declared once in its main.rs.
pub struct SchedulerSpec {
    /// Binary name, e.g. `scx_simple`.
    pub name: &'static str,
    /// Whether its BPF side implements `ops.cpu_online` and `ops.cpu_offline`, so that a CPU
    /// going on or offline needs no restart (the kernel ejects a scheduler without them).
    pub follows_hotplug: bool,
    /// Kfuncs it cannot do without; it refuses to start where one is not callable.
    pub required_kfuncs: &'static [&'static str],
    /// Kfuncs its BPF side replaces where they are not callable, each with the fallback.
    pub optional_kfuncs: &'static [(&'static str, &'static str)],
    /// Every statistic it may report (what `--help-stats` prints and `--monitor` accepts):
    /// its own definitions, then any it publishes from the library (the balancer's).
    pub metrics: &'static [&'static [MetricDef]],
    /// The log line for `--stats` and `--monitor`, from the previous reading and this one.
    pub log_line: fn(&Snapshot, &Snapshot) -> String,
}
