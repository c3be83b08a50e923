//! scx_simple's statistics, declared once for every backend.

use crate::intf;
use anyhow::Result;
use libbpf_rs::MapCore;
use scxkit::metrics::{MetricDef, MetricKind, Snapshot, Unit};

const LOCAL: &[(&str, &str)] = &[("type", "local")];
const SHARED: &[(&str, &str)] = &[("type", "shared")];

/// In the order of `enum simple_stat_idx` in intf.h, then the queue's vtime.
pub static METRICS: &[MetricDef] = &[
    MetricDef {
        name: "dispatched_tasks_total",
        labels: LOCAL,
        kind: MetricKind::Counter,
        unit: Unit::Count,
        help: "Tasks that woke up on an idle CPU and went straight to its local queue.",
    },
    MetricDef {
        name: "dispatched_tasks_total",
        labels: SHARED,
        kind: MetricKind::Counter,
        unit: Unit::Count,
        help: "Tasks that waited in the shared weighted-vtime queue.",
    },
    MetricDef {
        name: "queue_vtime_seconds",
        labels: &[],
        kind: MetricKind::Gauge,
        unit: Unit::Seconds,
        help: "Virtual time of the shared queue: grows at most as fast as the CPUs' time together for nice-0 tasks.",
    },
];

pub fn read(map: &dyn MapCore, vtime_now_ns: u64) -> Result<Vec<f64>> {
    let sums = scxkit_bpf::maps::percpu_u64_sums(map, intf::SIMPLE_NR_STATS)?;
    let mut values: Vec<f64> = sums.into_iter().map(|v| v as f64).collect();
    values.push(vtime_now_ns as f64 / 1e9);
    Ok(values)
}

pub fn log_line(previous: &Snapshot, now: &Snapshot) -> String {
    let local = now.delta(previous, "dispatched_tasks_total", LOCAL);
    let shared = now.delta(previous, "dispatched_tasks_total", SHARED);
    let total = local + shared;
    let pct_local = if total == 0.0 { 0.0 } else { 100.0 * local / total };
    let vtime_s = now.get("queue_vtime_seconds", &[]);
    format!("dispatched {total}: local {local} ({pct_local:.1}%), shared {shared} | vtime {vtime_s:.3} s")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_shows_per_interval_counts_and_percentages() {
        let layout = scxkit::metrics::static_layout(METRICS);
        let previous = Snapshot { series: layout.clone(), values: vec![10.0, 10.0, 1.0] };
        let now = Snapshot { series: layout, values: vec![11.0, 13.0, 2.5] };
        assert_eq!(log_line(&previous, &now), "dispatched 4: local 1 (25.0%), shared 3 | vtime 2.500 s");
        assert_eq!(log_line(&now, &now), "dispatched 0: local 0 (0.0%), shared 0 | vtime 2.500 s");
    }

    #[test]
    fn metrics_follow_the_bpf_counter_order() {
        assert_eq!(METRICS.len(), intf::SIMPLE_NR_STATS as usize + 1);
        assert_eq!(METRICS[intf::SIMPLE_STAT_LOCAL as usize].labels, LOCAL);
    }
}
