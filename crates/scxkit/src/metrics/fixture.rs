//! A small test scheduler's statistics, for the tests of this crate and of the runtime's
//! exporters (feature `fixtures`).

use super::{MetricDef, MetricKind, Snapshot, Unit};

crate::metric_set! {
    pub static DEFS = [
        DISPATCHED_LOCAL = MetricDef::counter("dispatched_tasks_total", &[("type", "local")], "Tasks dispatched to an idle CPU's local queue."),
        DISPATCHED_SHARED = MetricDef::counter("dispatched_tasks_total", &[("type", "shared")], "Tasks dispatched through the shared queue."),
        INTERACTIVE_TASKS = MetricDef { name: "interactive_tasks", labels: &[], kind: MetricKind::Gauge, unit: Unit::Count, help: "Tasks classified interactive now." },
    ];
}

crate::metric_set! {
    /// A load per domain, labelled at run time with its node and domain.
    pub static DOMAIN_DEFS = [
        DOMAIN_LOAD = MetricDef { name: "domain_load", labels: &[], kind: MetricKind::Gauge, unit: Unit::Count, help: "Load of a domain." },
    ];
}

/// A reading of [`DEFS`]: local and shared dispatches, interactive tasks.
pub fn reading([local, shared, interactive]: [f64; 3]) -> Snapshot {
    let mut reading = Snapshot::new();
    reading.set(&DISPATCHED_LOCAL, local);
    reading.set(&DISPATCHED_SHARED, shared);
    reading.set(&INTERACTIVE_TASKS, interactive);
    reading
}

/// Domain loads, labelled at run time: (node, domain, load) each.
pub fn domain_loads(loads: &[(&str, &str, f64)]) -> Snapshot {
    let mut reading = Snapshot::new();
    for &(node, domain, load) in loads {
        reading.set_with(&DOMAIN_LOAD, &[("node", node), ("domain", domain)], load);
    }
    reading
}
