//! The statistics of the walks for a long-waiting task (`bpf/include/scxkit/long_wait.bpf.h`),
//! shared by every scheduler that bounds a task's wait that way. Each binds the three BPF
//! counters its ON_WALKED hook adds to, and puts [`LONG_WAIT_METRICS`] among its sets.

use super::{MetricDef, MetricKind, Snapshot, Unit};

crate::metric_set! {
    /// How often queues were walked for a task waiting too long, and what the walks cost.
    pub static LONG_WAIT_METRICS = [
        WALKS = MetricDef::counter("long_wait_walks_total", &[], "Walks of a queue for the task that has waited longest, if long enough to be taken out of order (at most 1,024 tasks a pass; a second pass moves the task found)."),
        WALKED_TASKS = MetricDef::counter("long_wait_walked_tasks_total", &[], "Queued tasks those walks looked at, both passes counted."),
        WALK_NS = MetricDef { name: "long_wait_walk_nanoseconds_total", labels: &[], kind: MetricKind::Counter, unit: Unit::Nanoseconds, help: "Time those walks took, with a runqueue lock held and interrupts off." },
    ];
}

/// The walks between two readings, for a log line: "walks 12, 3400 tasks, 1.5 ms".
pub fn walks_summary(previous: &Snapshot, now: &Snapshot) -> String {
    walk_set_summary("walks", [&WALKS, &WALKED_TASKS, &WALK_NS], previous, now)
}

/// Walks of queues between two readings, from their three counters (walks, tasks looked at,
/// nanoseconds), for a log line: "`noun` 12, 3400 tasks, 1.5 ms".
pub(super) fn walk_set_summary(noun: &str, [walks, tasks, ns]: [&MetricDef; 3], previous: &Snapshot, now: &Snapshot) -> String {
    let d = |def: &MetricDef| now.delta(previous, def.name, &[]);
    format!("{noun} {}, {} tasks, {:.1} ms", d(walks), d(tasks), d(ns) / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_the_walks_since_the_last_reading() {
        let mut before = Snapshot::new();
        before.set(&WALKS, 10.0);
        before.set(&WALKED_TASKS, 1000.0);
        before.set(&WALK_NS, 2e6);
        let mut now = Snapshot::new();
        now.set(&WALKS, 12.0);
        now.set(&WALKED_TASKS, 3048.0);
        now.set(&WALK_NS, 3.5e6);
        assert_eq!(walks_summary(&before, &now), "walks 2, 2048 tasks, 1.5 ms");
    }
}
