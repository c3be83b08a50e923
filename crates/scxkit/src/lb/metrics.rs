//! The balancer's statistics as metrics, one series per level (`level="node"`, ...): what a
//! scheduler built on it publishes, defined once here.

use super::cost::LevelCost;
use super::hierarchy::Hierarchy;
use crate::metrics::{MetricDef, MetricKind, Series, Unit};
use std::sync::Arc;

const fn def(name: &'static str, labels: &'static [(&'static str, &'static str)], kind: MetricKind, unit: Unit, help: &'static str) -> MetricDef {
    MetricDef { name, labels, kind, unit, help }
}

/// Per level, in this order.
pub static LB_METRICS: &[MetricDef] = &[
    def("lb_attempts_total", &[("result", "idle")], MetricKind::Counter, Unit::Count, "Balancing attempts of a level that moved nothing."),
    def("lb_attempts_total", &[("result", "worked")], MetricKind::Counter, Unit::Count, "Balancing attempts of a level that moved tasks."),
    def("lb_migrations_total", &[], MetricKind::Counter, Unit::Count, "Tasks a level decided to move."),
    def("lb_attempt_min_ns", &[], MetricKind::Gauge, Unit::Nanoseconds, "Shortest of a level's recent attempts that moved tasks."),
    def("lb_attempt_avg_ns", &[], MetricKind::Gauge, Unit::Nanoseconds, "Average duration of a level's recent attempts that moved tasks."),
    def("lb_attempt_p99_ns", &[], MetricKind::Gauge, Unit::Nanoseconds, "99th percentile duration of a level's recent attempts that moved tasks."),
    def("lb_attempt_max_ns", &[], MetricKind::Gauge, Unit::Nanoseconds, "Longest of a level's recent attempts that moved tasks."),
];

/// The series of a hierarchy's levels: every metric of [`LB_METRICS`] once per level.
pub fn layout(h: &Hierarchy) -> Vec<Series> {
    h.policies
        .iter()
        .flat_map(|p| LB_METRICS.iter().map(move |d| Series::with(d, &[("level", p.name.to_string())])))
        .collect()
}

/// Values for [`layout`]: each level's costs and the migrations it decided so far.
pub fn values(costs: &[LevelCost], migrations: &[u64]) -> Vec<f64> {
    costs
        .iter()
        .zip(migrations)
        .flat_map(|(c, &moved)| {
            let w = c.worked_costs();
            [c.idle as f64, c.worked as f64, moved as f64, w.min_ns as f64, w.avg_ns, w.p99_ns as f64, w.max_ns as f64]
        })
        .collect()
}

/// [`layout`] as the shared list a scheduler's stats hold.
pub fn shared_layout(h: &Hierarchy) -> Arc<[Series]> {
    layout(h).into()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::{Balancer, LeafSpec, LevelPolicy, Mode, Task};
    use crate::metrics::Snapshot;

    #[test]
    fn one_series_per_level_with_the_costs() {
        let leaves: Vec<LeafSpec> = (0..4).map(|d| LeafSpec { domain: d, path: vec![d / 2], capacity: 1024 }).collect();
        let h = Hierarchy::build(&leaves, vec![LevelPolicy::node(), LevelPolicy::domain()]).unwrap();
        let mut tasks: Vec<Task> = (0..8).map(|_| Task { load: 1024, domain: 0, allowed: None }).collect();
        let mut lb = Balancer::new(h.clone(), Mode::Propagate);
        let report = lb.pass(&mut tasks);
        let snap = Snapshot { series: shared_layout(&h), values: values(lb.costs(), &report.moved_per_level.iter().map(|&m| m as u64).collect::<Vec<_>>()) };
        assert_eq!(snap.series.len(), 2 * LB_METRICS.len());
        assert_eq!(snap.get("lb_migrations_total", &[("level", "node")]), 4.0);
        assert_eq!(snap.get("lb_migrations_total", &[("level", "domain")]), 2.0);
        assert_eq!(snap.get("lb_attempts_total", &[("result", "worked"), ("level", "node")]), 1.0);
        assert!(snap.get("lb_attempt_max_ns", &[("level", "node")]) > 0.0);
        assert_eq!(snap.label_values("lb_attempts_total", "level"), ["node", "domain"]);
    }
}
