//! scx_bpfland's statistics, declared once for every backend.
//!
//! Every dispatch is counted once, by its path (`dispatched_tasks_total{type=...}`); calls of
//! ops.enqueue and placements outside the primary domain are counted apart. Each enqueue
//! dispatches by exactly one path other than `direct`, which the guest test checks.

use crate::intf;
use anyhow::Result;
use libbpf_rs::MapCore;
use scxkit::metrics::long_wait as lw;
use scxkit::metrics::stranded;
use scxkit::metrics::{CounterSlot, MetricDef, MetricKind, Snapshot, Unit};

const fn dispatched(labels: &'static [(&'static str, &'static str)], help: &'static str) -> MetricDef {
    MetricDef::counter(DISPATCHED, labels, help)
}

const DISPATCHED: &str = "dispatched_tasks_total";
/// The dispatch paths, in the order the log line shows them.
const PATHS: [&str; 7] = ["direct", "idle", "preempt", "interactive", "regular", "kthread", "pinned"];

scxkit::metric_set! {
    pub static METRICS = [
        DIRECT = dispatched(&[("type", "direct")], "Waking tasks select_cpu put straight on an idle CPU."),
        IDLE = dispatched(&[("type", "idle")], "Tasks enqueue put on an idle CPU."),
        PREEMPT = dispatched(&[("type", "preempt")], "Waking interactive tasks put on a CPU running a regular task, preempting it."),
        INTERACTIVE = dispatched(&[("type", "interactive")], "Tasks queued in the interactive queue."),
        REGULAR = dispatched(&[("type", "regular")], "Tasks queued in the regular queue."),
        KTHREAD = dispatched(&[("type", "kthread")], "Per-CPU kthreads dispatched straight to their CPU (--local-kthreads)."),
        PINNED = dispatched(&[("type", "pinned")], "Tasks whose affinity excludes the primary domain, queued on their own CPU."),
        ENQUEUES = MetricDef::counter("enqueues_total", &[], "Calls of ops.enqueue; each dispatches by exactly one path other than direct."),
        OVERFLOW = MetricDef::counter("overflow_placements_total", &[], "Tasks placed on, or taken by, a CPU outside the primary domain."),
        LONG_WAITS = MetricDef::counter(
            "long_waits_total",
            &[],
            "Tasks taken out of deadline order because they had waited 1 s (low weight behind many others).",
        ),
        INTERACTIVE_TASKS = MetricDef {
            name: "interactive_tasks",
            labels: &[],
            kind: MetricKind::Gauge,
            unit: Unit::Count,
            help: "Tasks classified interactive now.",
        },
    ];
}

/// The per-CPU counters of the `stats` map, by `enum bpfland_stat_idx`.
static COUNTERS: &[CounterSlot] = &[
    (intf::BPFLAND_STAT_DIRECT, &DIRECT),
    (intf::BPFLAND_STAT_IDLE, &IDLE),
    (intf::BPFLAND_STAT_PREEMPT, &PREEMPT),
    (intf::BPFLAND_STAT_INTERACTIVE, &INTERACTIVE),
    (intf::BPFLAND_STAT_REGULAR, &REGULAR),
    (intf::BPFLAND_STAT_KTHREAD, &KTHREAD),
    (intf::BPFLAND_STAT_PINNED, &PINNED),
    (intf::BPFLAND_STAT_ENQUEUE, &ENQUEUES),
    (intf::BPFLAND_STAT_OVERFLOW, &OVERFLOW),
    (intf::BPFLAND_STAT_LONG_WAIT, &LONG_WAITS),
    (intf::BPFLAND_STAT_LONG_WAIT_WALKS, &lw::WALKS),
    (intf::BPFLAND_STAT_LONG_WAIT_WALKED_TASKS, &lw::WALKED_TASKS),
    (intf::BPFLAND_STAT_LONG_WAIT_WALK_NS, &lw::WALK_NS),
    (intf::BPFLAND_STAT_STRANDED_SCANS, &stranded::SCANS),
    (intf::BPFLAND_STAT_STRANDED_SCANNED_TASKS, &stranded::SCANNED_TASKS),
    (intf::BPFLAND_STAT_STRANDED_SCAN_NS, &stranded::SCAN_NS),
];

pub fn read(reading: &mut Snapshot, map: &dyn MapCore, nr_interactive: u64) -> Result<()> {
    scxkit_runtime::maps::set_percpu_counters(reading, map, COUNTERS)?;
    reading.set(&INTERACTIVE_TASKS, nr_interactive as f64);
    Ok(())
}

pub fn log_line(previous: &Snapshot, now: &Snapshot) -> String {
    let by_path: Vec<f64> = PATHS.iter().map(|p| now.delta(previous, DISPATCHED, &[("type", p)])).collect();
    let total: f64 = by_path.iter().sum();
    let pct = |v: f64| if total == 0.0 { 0.0 } else { 100.0 * v / total };
    let paths: Vec<String> = PATHS.iter().zip(&by_path).map(|(p, &v)| format!("{p} {v} ({:.1}%)", pct(v))).collect();
    format!(
        "dispatched {total}: {} | enqueued {} | overflow {} | long waits {} ({}) | interactive tasks {}{}",
        paths.join(", "),
        now.delta(previous, "enqueues_total", &[]),
        now.delta(previous, "overflow_placements_total", &[]),
        now.delta(previous, "long_waits_total", &[]),
        lw::walks_summary(previous, now),
        now.get("interactive_tasks", &[]),
        stranded::log_suffix(previous, now),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bpf_counter_is_bound_once() {
        assert_eq!(scxkit::metrics::misbound_slots(COUNTERS, intf::BPFLAND_NR_STATS), []);
    }

    #[test]
    fn line_partitions_the_dispatches_by_path() {
        let mut now = Snapshot::new();
        let paths = [&DIRECT, &IDLE, &PREEMPT, &INTERACTIVE, &REGULAR, &KTHREAD, &PINNED];
        for (def, n) in paths.into_iter().zip([40.0, 10.0, 2.0, 30.0, 8.0, 0.0, 10.0]) {
            now.set(def, n);
        }
        now.set(&ENQUEUES, 60.0);
        now.set(&OVERFLOW, 4.0);
        now.set(&LONG_WAITS, 1.0);
        now.set(&INTERACTIVE_TASKS, 3.0);
        assert_eq!(
            log_line(&Snapshot::new(), &now),
            "dispatched 100: direct 40 (40.0%), idle 10 (10.0%), preempt 2 (2.0%), interactive 30 (30.0%), \
             regular 8 (8.0%), kthread 0 (0.0%), pinned 10 (10.0%) | enqueued 60 | overflow 4 | long waits 1 (walks 0, 0 tasks, 0.0 ms) | interactive tasks 3"
        );
    }
}
