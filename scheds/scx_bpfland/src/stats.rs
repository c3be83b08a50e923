//! scx_bpfland's statistics, declared once for every backend.

use crate::intf;
use anyhow::Result;
use libbpf_rs::MapCore;
use metrics::Unit;
use scxkit::metrics::{MetricDef, MetricKind, Snapshot};

const fn dispatch(kind: &'static [(&'static str, &'static str)], help: &'static str) -> MetricDef {
    MetricDef { name: "dispatched_tasks_total", labels: kind, kind: MetricKind::Counter, unit: Unit::Count, help }
}

const DIRECT: &[(&str, &str)] = &[("type", "direct")];
const INTERACTIVE: &[(&str, &str)] = &[("type", "interactive")];
const REGULAR: &[(&str, &str)] = &[("type", "regular")];
const OVERFLOW: &[(&str, &str)] = &[("type", "overflow")];
const KTHREAD: &[(&str, &str)] = &[("type", "kthread")];
const PINNED: &[(&str, &str)] = &[("type", "pinned")];

/// The per-CPU counters in the order of `enum bpfland_stat_idx` in intf.h, then the gauges.
pub static METRICS: &[MetricDef] = &[
    dispatch(DIRECT, "Tasks that woke up on an idle CPU and went straight to it."),
    dispatch(INTERACTIVE, "Tasks queued in the interactive queue."),
    dispatch(REGULAR, "Tasks queued in the regular queue."),
    dispatch(OVERFLOW, "Tasks placed on a CPU outside the primary domain."),
    MetricDef {
        name: "preemptions_total",
        labels: &[],
        kind: MetricKind::Counter,
        unit: Unit::Count,
        help: "Waking interactive tasks that preempted a regular task.",
    },
    dispatch(KTHREAD, "Per-CPU kthreads dispatched straight to their CPU."),
    dispatch(PINNED, "Tasks whose affinity excludes the primary domain, queued on their own CPU."),
    MetricDef {
        name: "interactive_tasks",
        labels: &[],
        kind: MetricKind::Gauge,
        unit: Unit::Count,
        help: "Tasks classified interactive now.",
    },
];

pub fn read(map: &dyn MapCore, nr_interactive: u64) -> Result<Vec<f64>> {
    let sums = scxkit_bpf::maps::percpu_u64_sums(map, intf::BPFLAND_NR_STATS)?;
    let mut values: Vec<f64> = sums.into_iter().map(|v| v as f64).collect();
    values.push(nr_interactive as f64);
    Ok(values)
}

pub fn log_line(previous: &Snapshot, now: &Snapshot) -> String {
    let d = |labels| now.delta(previous, "dispatched_tasks_total", labels);
    let (direct, interactive, regular, overflow) = (d(DIRECT), d(INTERACTIVE), d(REGULAR), d(OVERFLOW));
    let (kthread, pinned) = (d(KTHREAD), d(PINNED));
    let total = direct + interactive + regular + kthread + pinned;
    let pct = |v: f64| if total == 0.0 { 0.0 } else { 100.0 * v / total };
    format!(
        "dispatched {total}: direct {:.1}%, interactive {:.1}%, regular {:.1}%, kthread {:.1}%, pinned {:.1}% | overflow {overflow} | preempted {} | interactive tasks {}",
        pct(direct),
        pct(interactive),
        pct(regular),
        pct(kthread),
        pct(pinned),
        now.delta(previous, "preemptions_total", &[]),
        now.get("interactive_tasks", &[]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metrics_follow_the_bpf_counter_order() {
        assert_eq!(METRICS.len(), intf::BPFLAND_NR_STATS as usize + 1);
        assert_eq!(METRICS[intf::BPFLAND_STAT_OVERFLOW as usize].labels, OVERFLOW);
        assert_eq!(METRICS[intf::BPFLAND_STAT_PREEMPT as usize].name, "preemptions_total");
        assert_eq!(METRICS[intf::BPFLAND_STAT_KTHREAD as usize].labels, KTHREAD);
        assert_eq!(METRICS[intf::BPFLAND_STAT_PINNED as usize].labels, PINNED);
    }

    #[test]
    fn line_shows_shares_of_the_interval() {
        let previous = Snapshot::zero(METRICS);
        let now = Snapshot { defs: METRICS, values: vec![50.0, 30.0, 10.0, 4.0, 2.0, 0.0, 10.0, 3.0] };
        assert_eq!(
            log_line(&previous, &now),
            "dispatched 100: direct 50.0%, interactive 30.0%, regular 10.0%, kthread 0.0%, pinned 10.0% | overflow 4 | preempted 2 | interactive tasks 3"
        );
    }
}
