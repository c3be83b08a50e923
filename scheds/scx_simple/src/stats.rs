//! scx_simple's statistics, declared once for every backend.

use crate::intf;
use anyhow::Result;
use libbpf_rs::MapCore;
use scxkit::metrics::{CounterSlot, MetricDef, MetricKind, Snapshot, Unit};

const LOCAL: &[(&str, &str)] = &[("type", "local")];
const SHARED: &[(&str, &str)] = &[("type", "shared")];

scxkit::metric_set! {
    pub static METRICS = [
        DISPATCHED_LOCAL = MetricDef::counter(
            "dispatched_tasks_total",
            LOCAL,
            "Tasks that woke up on an idle CPU and went straight to its local queue.",
        ),
        DISPATCHED_SHARED = MetricDef::counter("dispatched_tasks_total", SHARED, "Tasks that waited in the shared weighted-vtime queue."),
        QUEUE_VTIME = MetricDef {
            name: "queue_vtime_seconds",
            labels: &[],
            kind: MetricKind::Gauge,
            unit: Unit::Seconds,
            help: "Virtual time of the shared queue: grows at most as fast as the CPUs' time together for nice-0 tasks.",
        },
    ];
}

/// The per-CPU counters of the `stats` map, by `enum simple_stat_idx`.
static COUNTERS: &[CounterSlot] = &[(intf::SIMPLE_STAT_LOCAL, &DISPATCHED_LOCAL), (intf::SIMPLE_STAT_GLOBAL, &DISPATCHED_SHARED)];

pub fn read(reading: &mut Snapshot, map: &dyn MapCore, vtime_now_ns: u64) -> Result<()> {
    scxkit_runtime::maps::set_percpu_counters(reading, map, COUNTERS)?;
    reading.set(&QUEUE_VTIME, vtime_now_ns as f64 / 1e9);
    Ok(())
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

    fn reading(local: f64, shared: f64, vtime_s: f64) -> Snapshot {
        let mut reading = Snapshot::new();
        reading.set(&DISPATCHED_LOCAL, local);
        reading.set(&DISPATCHED_SHARED, shared);
        reading.set(&QUEUE_VTIME, vtime_s);
        reading
    }

    #[test]
    fn line_shows_per_interval_counts_and_percentages() {
        let previous = reading(10.0, 10.0, 1.0);
        let now = reading(11.0, 13.0, 2.5);
        assert_eq!(log_line(&previous, &now), "dispatched 4: local 1 (25.0%), shared 3 | vtime 2.500 s");
        assert_eq!(log_line(&now, &now), "dispatched 0: local 0 (0.0%), shared 0 | vtime 2.500 s");
    }

    #[test]
    fn every_bpf_counter_is_bound_once() {
        assert_eq!(scxkit::metrics::misbound_slots(COUNTERS, intf::SIMPLE_NR_STATS), []);
    }
}
