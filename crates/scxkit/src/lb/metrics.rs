//! The balancer's statistics as metrics, defined once here for every scheduler built on it:
//! its costs and outcomes, one series per level (`level="node"`, ...), and the last pass's
//! figures, one series per group (`node="0"`, then `node="0",domain="1"`, ...), which
//! [`hierarchy_lines`] prints as a tree.

use super::cost::LevelCost;
use super::outcome::LevelOutcomes;
use super::hierarchy::{GroupId, Hierarchy};
use super::load::LOAD_NICE0_BUSY;
use super::PassReport;
use crate::metrics::{MetricDef, MetricKind, Snapshot, Unit};

const fn def(name: &'static str, labels: &'static [(&'static str, &'static str)], kind: MetricKind, unit: Unit, help: &'static str) -> MetricDef {
    MetricDef { name, labels, kind, unit, help }
}

const fn attempt_ns(name: &'static str, help: &'static str) -> MetricDef {
    def(name, &[], MetricKind::Gauge, Unit::Nanoseconds, help)
}

crate::metric_set! {
    /// Per level (label `level`).
    pub static LB_METRICS = [
        LB_ATTEMPTS_IDLE = MetricDef::counter("lb_attempts_total", &[("result", "idle")], "Balancing attempts of a level that moved nothing."),
        LB_ATTEMPTS_WORKED = MetricDef::counter("lb_attempts_total", &[("result", "worked")], "Balancing attempts of a level that moved tasks."),
        LB_MIGRATIONS = MetricDef::counter("lb_migrations_total", &[], "Tasks a level decided to move (the moves it requested)."),
        LB_BALANCED = MetricDef::counter("lb_balanced_total", &[], "Attempts of a level that found every group within its threshold of the average."),
        LB_NO_BUSIER_GROUP = MetricDef::counter("lb_no_busier_group_total", &[], "Attempts of a level that found a group below the threshold but none above it to push."),
        LB_NO_IDLER_GROUP = MetricDef::counter("lb_no_idler_group_total", &[], "Attempts of a level that found a group above the threshold but none below it to pull."),
        LB_NO_TASK = MetricDef::counter("lb_no_task_total", &[], "Pairs of groups a level worked that had no task whose move reduces their imbalance."),
        LB_CAPPED = MetricDef::counter("lb_capped_total", &[], "Attempts of a level cut short or left for the next pass at the pass's move cap."),
        LB_ATTEMPT_MIN = attempt_ns("lb_attempt_min_ns", "Shortest of a level's recent attempts that moved tasks."),
        LB_ATTEMPT_AVG = attempt_ns("lb_attempt_avg_ns", "Average duration of a level's recent attempts that moved tasks."),
        LB_ATTEMPT_P99 = attempt_ns("lb_attempt_p99_ns", "99th percentile duration of a level's recent attempts that moved tasks."),
        LB_ATTEMPT_MAX = attempt_ns("lb_attempt_max_ns", "Longest of a level's recent attempts that moved tasks."),
    ];
}

/// Sets the series of each level of `h`: its costs and what its attempts found.
pub fn set_levels(reading: &mut Snapshot, h: &Hierarchy, costs: &[LevelCost], outcomes: &[LevelOutcomes]) {
    for ((policy, c), o) in h.policies.iter().zip(costs).zip(outcomes) {
        let level = [("level", policy.name)];
        let w = c.worked_costs();
        reading.set_with(&LB_ATTEMPTS_IDLE, &level, c.idle as f64);
        reading.set_with(&LB_ATTEMPTS_WORKED, &level, c.worked as f64);
        reading.set_with(&LB_MIGRATIONS, &level, o.moves as f64);
        reading.set_with(&LB_BALANCED, &level, o.balanced as f64);
        reading.set_with(&LB_NO_BUSIER_GROUP, &level, o.no_busier_group as f64);
        reading.set_with(&LB_NO_IDLER_GROUP, &level, o.no_idler_group as f64);
        reading.set_with(&LB_NO_TASK, &level, o.no_task as f64);
        reading.set_with(&LB_CAPPED, &level, o.capped as f64);
        reading.set_with(&LB_ATTEMPT_MIN, &level, w.min_ns as f64);
        reading.set_with(&LB_ATTEMPT_AVG, &level, w.avg_ns);
        reading.set_with(&LB_ATTEMPT_P99, &level, w.p99_ns as f64);
        reading.set_with(&LB_ATTEMPT_MAX, &level, w.max_ns as f64);
    }
}

crate::metric_set! {
    /// Per group but the root. Loads count busy nice-0 tasks (load / [`LOAD_NICE0_BUSY`]).
    pub static GROUP_METRICS = [
        LB_LOAD = def("lb_load", &[], MetricKind::Gauge, Unit::Count, "A group's load after the last balancing pass, in busy nice-0 tasks."),
        LB_IMBALANCE = def(
            "lb_imbalance",
            &[],
            MetricKind::Gauge,
            Unit::Percent,
            "A group's load per capacity before the last pass, relative to its parent's average (signed; +100: twice the average).",
        ),
        LB_DELTA = def("lb_delta", &[], MetricKind::Gauge, Unit::Count, "Load the last pass moved into a group (signed, in busy nice-0 tasks)."),
    ];
}

/// Sets the series of every group but the root, in [`GroupId`] order, from a pass of a
/// balancer over `h`. A group is labelled with its ancestors' keys and its own, each under
/// its level's policy name: in [`Hierarchy::numa_domains`], a node `node="N"`, a domain
/// `node="N",domain="D"`.
pub fn set_groups(reading: &mut Snapshot, h: &Hierarchy, report: &PassReport) {
    for g in 1..h.groups.len() {
        let owned = group_labels(h, g);
        let labels: Vec<(&str, &str)> = owned.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let stat = &report.groups[g];
        let delta = stat.load_after as f64 - stat.load_before as f64;
        reading.set_with(&LB_LOAD, &labels, busy_tasks(stat.load_after as f64));
        reading.set_with(&LB_IMBALANCE, &labels, 100.0 * report.group_imbalance(h, g));
        reading.set_with(&LB_DELTA, &labels, busy_tasks(delta));
    }
}

/// (level name, key) from the outermost level down to `g` itself.
fn group_labels(h: &Hierarchy, g: GroupId) -> Vec<(&'static str, String)> {
    let mut labels = Vec::new();
    let mut at = g;
    while let Some(parent) = h.groups[at].parent {
        let group = &h.groups[at];
        labels.push((h.policies[group.depth - 1].name, group.key.to_string()));
        at = parent;
    }
    labels.reverse();
    labels
}

fn busy_tasks(load: f64) -> f64 {
    load / LOAD_NICE0_BUSY as f64
}

/// The last pass's figures as a tree, one line per group, each under its parent and
/// indented by depth: `NODE[00] load 10.00 imbal +66.7% delta -2.00` (loads in busy nice-0
/// tasks, the imbalance before the pass against the siblings' average). Empty until a pass
/// has set the series.
pub fn hierarchy_lines(reading: &Snapshot) -> Vec<String> {
    let mut groups: Vec<Vec<(String, String)>> =
        reading.iter().filter(|(s, _)| s.def.name == LB_LOAD.name).map(|(s, _)| s.labels.clone()).collect();
    let order = |labels: &Vec<(String, String)>| labels.iter().map(|(_, v)| v.parse::<u64>().unwrap_or(u64::MAX)).collect::<Vec<_>>();
    groups.sort_by_key(order);
    groups
        .iter()
        .filter_map(|labels| {
            let (kind, key) = labels.last()?;
            let filter: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            let key: u64 = key.parse().ok()?;
            Some(format!(
                "{:indent$}{}[{key:02}] load {:.2} imbal {:+.1}% delta {:+.2}",
                "",
                kind.to_uppercase(),
                reading.get(LB_LOAD.name, &filter),
                reading.get(LB_IMBALANCE.name, &filter),
                reading.get(LB_DELTA.name, &filter),
                indent = 2 * (labels.len() - 1),
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lb::{Balancer, LeafSpec, LevelPolicy, Mode, Task};

    #[test]
    fn one_series_per_group_with_the_pass_figures() {
        // The worked example of the module docs: node 0 holds 6 + 4 tasks, node 1 1 + 1.
        let leaves: Vec<LeafSpec> = (0..4).map(|d| LeafSpec { domain: d, path: vec![d / 2], capacity: 4096 }).collect();
        let h = Hierarchy::build(&leaves, vec![LevelPolicy::node(), LevelPolicy::domain()]).unwrap();
        let mut tasks: Vec<Task> =
            [(0, 6), (1, 4), (2, 1), (3, 1)].iter().flat_map(|&(d, n)| (0..n).map(move |_| Task { load: 1024, domain: d, allowed: None })).collect();
        let report = Balancer::new(h.clone(), Mode::Propagate).pass(&mut tasks);
        let mut snap = Snapshot::new();
        set_groups(&mut snap, &h, &report);
        assert_eq!(snap.len(), 6 * GROUP_METRICS.len());
        let node = |n: &'static str| [("node", n)];
        let dom = |n: &'static str, d: &'static str| [("node", n), ("domain", d)];
        assert_eq!(snap.get("lb_load", &node("0")), 8.0);
        assert_eq!(snap.get("lb_load", &node("1")), 4.0);
        assert_eq!(snap.get("lb_delta", &node("1")), 2.0);
        assert_eq!(snap.get("lb_delta", &dom("0", "0")), -2.0);
        assert_eq!(snap.get("lb_delta", &dom("0", "1")), 0.0);
        assert_eq!(snap.get("lb_delta", &dom("1", "3")), 1.0);
        // Node 0: 10 tasks on 8192 against the machine's 12 on 16384: +66.7%.
        assert!((snap.get("lb_imbalance", &node("0")) - 100.0 * (10.0 / 6.0 - 1.0)).abs() < 1e-9);
        // Domain 0: 6 on 4096 against node 0's 10 on 8192: +20%.
        assert!((snap.get("lb_imbalance", &dom("0", "0")) - 20.0).abs() < 1e-9);
        assert!((snap.get("lb_imbalance", &dom("1", "2")) - 0.0).abs() < 1e-9);
        assert_eq!(snap.label_values("lb_load", "domain"), ["0", "1", "2", "3"]);
        assert_eq!(report.groups[0], crate::lb::GroupStat { load_before: 12 * 1024, load_after: 12 * 1024, capacity: 16384 });
    }

    #[test]
    fn the_hierarchy_prints_each_node_then_its_domains() {
        let leaves: Vec<LeafSpec> = [(0, 1), (1, 0), (2, 1), (3, 0)].iter().map(|&(domain, node)| LeafSpec { domain, path: vec![node], capacity: 4096 }).collect();
        let h = Hierarchy::build(&leaves, vec![LevelPolicy::node(), LevelPolicy::domain()]).unwrap();
        let mut tasks: Vec<Task> = (0..12).map(|i| Task { load: 1024, domain: if i < 10 { 1 } else { 0 }, allowed: None }).collect();
        let report = Balancer::new(h.clone(), Mode::Propagate).pass(&mut tasks);
        let mut snap = Snapshot::new();
        assert_eq!(hierarchy_lines(&snap), Vec::<String>::new());
        set_groups(&mut snap, &h, &report);
        let lines = hierarchy_lines(&snap);
        assert_eq!(
            lines,
            [
                "NODE[00] load 8.00 imbal +66.7% delta -2.00",
                "  DOMAIN[01] load 6.00 imbal +100.0% delta -4.00",
                "  DOMAIN[03] load 2.00 imbal -100.0% delta +2.00",
                "NODE[01] load 4.00 imbal -66.7% delta +2.00",
                "  DOMAIN[00] load 2.00 imbal +100.0% delta +0.00",
                "  DOMAIN[02] load 2.00 imbal -100.0% delta +2.00",
            ]
        );
    }

    #[test]
    fn both_modes_report_the_same_group_figures() {
        let leaves: Vec<LeafSpec> = (0..6).map(|d| LeafSpec { domain: d, path: vec![d / 3], capacity: 1024 * (1 + d as u64 % 2) }).collect();
        let h = Hierarchy::build(&leaves, vec![LevelPolicy::node(), LevelPolicy::domain()]).unwrap();
        let tasks: Vec<Task> = (0..40).map(|i| Task { load: 100 + 37 * i as u64, domain: i % 2, allowed: None }).collect();
        let fast = Balancer::new(h.clone(), Mode::Propagate).pass(&mut tasks.clone());
        let slow = Balancer::new(h, Mode::Rescan).pass(&mut tasks.clone());
        assert_eq!(fast.moves, slow.moves);
        assert_eq!(fast.groups, slow.groups);
    }

    #[test]
    fn one_series_per_level_with_the_costs() {
        let leaves: Vec<LeafSpec> = (0..4).map(|d| LeafSpec { domain: d, path: vec![d / 2], capacity: 1024 }).collect();
        let h = Hierarchy::build(&leaves, vec![LevelPolicy::node(), LevelPolicy::domain()]).unwrap();
        let mut tasks: Vec<Task> = (0..8).map(|_| Task { load: 1024, domain: 0, allowed: None }).collect();
        let mut lb = Balancer::new(h.clone(), Mode::Propagate);
        let report = lb.pass(&mut tasks);
        let mut snap = Snapshot::new();
        assert!(!report.capped);
        set_levels(&mut snap, &h, lb.costs(), lb.outcomes());
        assert_eq!(snap.len(), 2 * LB_METRICS.len());
        assert_eq!(snap.get("lb_migrations_total", &[("level", "node")]), 2.0);
        assert_eq!(snap.get("lb_migrations_total", &[("level", "domain")]), 2.0);
        assert_eq!(snap.get("lb_balanced_total", &[("level", "domain")]), 1.0, "node 1's domains got one task each");
        assert_eq!(snap.get("lb_attempts_total", &[("result", "worked"), ("level", "node")]), 1.0);
        while !lb.pass(&mut tasks).moves.is_empty() {}
        set_levels(&mut snap, &h, lb.costs(), lb.outcomes());
        assert_eq!(snap.get("lb_balanced_total", &[("level", "node")]), 1.0, "the last pass found the nodes balanced");
        assert!(snap.get("lb_no_task_total", &[("level", "domain")]) > 0.0, "3 and 2 on a node cannot be evened out");
        assert!(snap.get("lb_attempt_max_ns", &[("level", "node")]) > 0.0);
        assert_eq!(snap.label_values("lb_attempts_total", "level"), ["node", "domain"]);
    }
}
