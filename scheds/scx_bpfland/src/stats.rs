//! scx_bpfland's statistics, declared once for every backend.
//!
//! Every dispatch is counted once, by its path (`dispatched_tasks_total{type=...}`); calls of
//! ops.enqueue and placements outside the primary domain are counted apart. Each enqueue
//! dispatches by exactly one path other than `direct`, which the guest test checks.

use crate::intf;
use anyhow::Result;
use libbpf_rs::MapCore;
use scxkit::metrics::{MetricDef, MetricKind, Snapshot, Unit};

const fn counter(name: &'static str, labels: &'static [(&'static str, &'static str)], help: &'static str) -> MetricDef {
    MetricDef { name, labels, kind: MetricKind::Counter, unit: Unit::Count, help }
}

const DISPATCHED: &str = "dispatched_tasks_total";
/// The dispatch paths, in the order of `enum bpfland_stat_idx`.
const PATHS: [&str; 7] = ["direct", "idle", "preempt", "interactive", "regular", "kthread", "pinned"];

/// The per-CPU counters in the order of `enum bpfland_stat_idx` in intf.h, then the gauge.
pub static METRICS: &[MetricDef] = &[
    counter(DISPATCHED, &[("type", "direct")], "Waking tasks select_cpu put straight on an idle CPU."),
    counter(DISPATCHED, &[("type", "idle")], "Tasks enqueue put on an idle CPU."),
    counter(DISPATCHED, &[("type", "preempt")], "Waking interactive tasks put on a CPU running a regular task, preempting it."),
    counter(DISPATCHED, &[("type", "interactive")], "Tasks queued in the interactive queue."),
    counter(DISPATCHED, &[("type", "regular")], "Tasks queued in the regular queue."),
    counter(DISPATCHED, &[("type", "kthread")], "Per-CPU kthreads dispatched straight to their CPU (--local-kthreads)."),
    counter(DISPATCHED, &[("type", "pinned")], "Tasks whose affinity excludes the primary domain, queued on their own CPU."),
    counter("enqueues_total", &[], "Calls of ops.enqueue; each dispatches by exactly one path other than direct."),
    counter("overflow_placements_total", &[], "Tasks placed on, or taken by, a CPU outside the primary domain."),
    counter("long_waits_total", &[], "Regular tasks taken out of deadline order because they had waited 1 s (low weight behind many others)."),
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
    let by_path: Vec<f64> = PATHS.iter().map(|p| now.delta(previous, DISPATCHED, &[("type", p)])).collect();
    let total: f64 = by_path.iter().sum();
    let pct = |v: f64| if total == 0.0 { 0.0 } else { 100.0 * v / total };
    let paths: Vec<String> = PATHS.iter().zip(&by_path).map(|(p, &v)| format!("{p} {v} ({:.1}%)", pct(v))).collect();
    format!(
        "dispatched {total}: {} | enqueued {} | overflow {} | long waits {} | interactive tasks {}",
        paths.join(", "),
        now.delta(previous, "enqueues_total", &[]),
        now.delta(previous, "overflow_placements_total", &[]),
        now.delta(previous, "long_waits_total", &[]),
        now.get("interactive_tasks", &[]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use scxkit::metrics::static_layout;

    #[test]
    fn metrics_follow_the_bpf_counter_order() {
        assert_eq!(METRICS.len(), intf::BPFLAND_NR_STATS as usize + 1);
        for (i, path) in PATHS.iter().enumerate() {
            assert_eq!(METRICS[intf::BPFLAND_STAT_PATH_FIRST as usize + i].labels, &[("type", *path)]);
        }
        assert_eq!(PATHS.len(), (intf::BPFLAND_STAT_PATH_LAST - intf::BPFLAND_STAT_PATH_FIRST + 1) as usize);
        assert_eq!(METRICS[intf::BPFLAND_STAT_ENQUEUE as usize].name, "enqueues_total");
        assert_eq!(METRICS[intf::BPFLAND_STAT_OVERFLOW as usize].name, "overflow_placements_total");
        assert_eq!(METRICS[intf::BPFLAND_STAT_LONG_WAIT as usize].name, "long_waits_total");
    }

    #[test]
    fn line_partitions_the_dispatches_by_path() {
        let layout = static_layout(METRICS);
        let previous = Snapshot::zero(layout.clone());
        let now = Snapshot { series: layout, values: vec![40.0, 10.0, 2.0, 30.0, 8.0, 0.0, 10.0, 60.0, 4.0, 1.0, 3.0] };
        assert_eq!(
            log_line(&previous, &now),
            "dispatched 100: direct 40 (40.0%), idle 10 (10.0%), preempt 2 (2.0%), interactive 30 (30.0%), \
             regular 8 (8.0%), kthread 0 (0.0%), pinned 10 (10.0%) | enqueued 60 | overflow 4 | long waits 1 | interactive tasks 3"
        );
    }
}
