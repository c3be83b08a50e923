//! scx_rusty's statistics, declared once for every backend (log line, Prometheus, StatsD).
//!
//! Every dispatch is counted once, by its path (`dispatched_tasks_total{type=...}`): the
//! select_cpu paths, then `pinned` and `queued` from enqueue. Which queue a CPU took work
//! from, the kicks, and the balancer's moves (requested by userspace, applied by BPF) are
//! counted apart. Per-domain, per-node and per-level series get their labels at run time.
//! The log line ends with the balancer's outcomes per level and, on the lines after it, the
//! last pass's hierarchy (load, imbalance and delta of each node, then of its domains).

use crate::balance::{Shared, SharedRef};
use crate::intf;
use anyhow::Result;
use libbpf_rs::MapCore;
use scxkit::domains::Domains;
use scxkit::lb::{metrics as lbm, Hierarchy};
use scxkit::metrics::long_wait::{self as lw, LONG_WAIT_METRICS};
use scxkit::metrics::stranded;
use scxkit::metrics::{CounterSlot, MetricDef, MetricKind, MetricSet, Snapshot, Unit};

const fn def(name: &'static str, labels: &'static [(&'static str, &'static str)], kind: MetricKind, unit: Unit, help: &'static str) -> MetricDef {
    MetricDef { name, labels, kind, unit, help }
}

const fn counter(name: &'static str, labels: &'static [(&'static str, &'static str)], help: &'static str) -> MetricDef {
    MetricDef::counter(name, labels, help)
}

const DISPATCHED: &str = "dispatched_tasks_total";
/// The dispatch paths, in the order the log line shows them.
const PATHS: [&str; 8] = ["sync", "prev_idle", "home_idle", "direct_greedy", "direct_greedy_xnuma", "new_task_spread", "pinned", "queued"];
const LEVELS: [&str; 2] = ["node", "domain"];

scxkit::metric_set! {
    /// scx_rusty's own statistics: BPF's counters, userspace's figures, then the per-domain
    /// series (labelled at run time). The balancer's per-level and per-group series come
    /// from the library (scxkit::lb::metrics).
    pub static METRICS = [
        SYNC = counter(DISPATCHED, &[("type", "sync")], "Synchronous wakeups put on an idle CPU of the waker's domain."),
        PREV_IDLE = counter(DISPATCHED, &[("type", "prev_idle")], "Waking tasks put back on their previous CPU, idle, in the home domain."),
        HOME_IDLE = counter(DISPATCHED, &[("type", "home_idle")], "Waking tasks put on another idle CPU of the home domain."),
        DIRECT_GREEDY = counter(DISPATCHED, &[("type", "direct_greedy")], "Waking tasks put on an idle CPU of an underused domain of the same node."),
        DIRECT_GREEDY_XNUMA = counter(DISPATCHED, &[("type", "direct_greedy_xnuma")], "Waking tasks put on an idle CPU of an underused domain of another node (--direct-greedy-numa)."),
        NEW_TASK_SPREAD = counter(DISPATCHED, &[("type", "new_task_spread")], "New tasks with no idle CPU on their node put on an idle CPU of another domain, their home from then on (--new-task-spread)."),
        PINNED = counter(DISPATCHED, &[("type", "pinned")], "Tasks that could not migrate at the time, put on their CPU's local queue."),
        QUEUED = counter(DISPATCHED, &[("type", "queued")], "Tasks queued on their home domain's queue."),
        TAKE_HOME = counter("taken_tasks_total", &[("from", "home")], "Tasks a CPU took from its own domain's queue."),
        STEAL_NODE = counter("taken_tasks_total", &[("from", "node")], "Tasks a CPU stole from another domain of its node (--greedy-threshold)."),
        STEAL_XNUMA = counter("taken_tasks_total", &[("from", "xnuma")], "Tasks a CPU stole from a domain of another node (--greedy-threshold-x-numa)."),
        TAKE_UNSERVED = counter("taken_tasks_total", &[("from", "unserved")], "Tasks a CPU took from a domain whose own CPUs had not served its queue for 100 ms (as when they are all going offline)."),
        TAKE_LONG_WAIT = counter("taken_tasks_total", &[("from", "long_wait")], "Tasks a CPU took from its own domain's queue out of vtime order, queued 1 s before."),
        KICK_HOME = counter("kicks_total", &[("to", "home")], "Idle CPUs of the home domain woken for queued work."),
        KICK_GREEDY = counter("kicks_total", &[("to", "greedy")], "Idle CPUs of an underused domain woken to steal queued work (--kick-greedy-under)."),
        ENQUEUES = counter("enqueues_total", &[], "Calls of ops.enqueue; each dispatches as pinned or queued."),
        MOVES_APPLIED_NODE = counter("lb_moves_applied_total", &[("level", "node")], "Moves between nodes that the BPF side applied."),
        MOVES_APPLIED_DOMAIN = counter("lb_moves_applied_total", &[("level", "domain")], "Moves between domains of a node that the BPF side applied."),
        MOVES_REFUSED = counter("lb_moves_refused_total", &[], "Requested moves the task's affinity no longer allowed when applied."),
        AFFINITY_REHOMES = counter("affinity_rehomes_total", &[], "Tasks given a new home because their affinity left the old one."),
        UNTRACKED_TASKS = counter("untracked_tasks_total", &[], "Tasks whose state could not be allocated (out of memory), run from the global queue."),
        // Userspace.
        MOVES_REQUESTED_NODE = counter("lb_moves_requested_total", &[("level", "node")], "Moves between nodes written for the BPF side to apply."),
        MOVES_REQUESTED_DOMAIN = counter("lb_moves_requested_total", &[("level", "domain")], "Moves between domains of a node written for the BPF side to apply."),
        MOVES_EXPIRED_RAN = counter("lb_moves_expired_total", &[("task", "ran")], "Requested moves (per level) whose task ran after the request, yet did not take it up before the next pass."),
        MOVES_EXPIRED_NOT_RUN = counter("lb_moves_expired_total", &[("task", "not_run")], "Requested moves (per level) whose task did not run before the next pass (asleep, queued, or exited)."),
        USERSPACE_CPU_SECONDS = def("userspace_cpu_seconds_total", &[], MetricKind::Counter, Unit::Seconds, "CPU time used by scx_rusty's userspace (balancer, tuner, stats)."),
        FULLY_UTILIZED = def("fully_utilized", &[], MetricKind::Gauge, Unit::Count, "1 while the CPUs are at least 95% busy: loads are then weighted (infeasible weights adjusted) and the short slice used."),
        SLICE_US = def("slice_us", &[], MetricKind::Gauge, Unit::Count, "The time slice, in microseconds, the tuner chose."),
        TRACKED_TASKS = def("tracked_tasks", &[], MetricKind::Gauge, Unit::Count, "Tasks with state at the last balancing pass: the tasks it balanced."),
        LEFT_OUT_TASKS = def("left_out_tasks", &[], MetricKind::Gauge, Unit::Count, "Tasks without state at the last balancing pass, left out of balancing (0 unless memory ran out)."),
        // Per domain (labels node, domain).
        DOMAIN_UTIL = def("domain_util", &[], MetricKind::Gauge, Unit::Percent, "A domain's CPU utilization over the last tuning interval."),
        DOMAIN_LOAD = def("domain_load", &[], MetricKind::Gauge, Unit::Count, "A domain's load as the BPF side keeps it (decaying average of its runnable weight), in busy nice-0 tasks."),
    ];
}

/// The per-CPU counters of the `stats` map, by `enum rusty_stat_idx`.
static COUNTERS: &[CounterSlot] = &[
    (intf::RUSTY_STAT_SYNC, &SYNC),
    (intf::RUSTY_STAT_PREV_IDLE, &PREV_IDLE),
    (intf::RUSTY_STAT_HOME_IDLE, &HOME_IDLE),
    (intf::RUSTY_STAT_DIRECT_GREEDY, &DIRECT_GREEDY),
    (intf::RUSTY_STAT_DIRECT_GREEDY_XNUMA, &DIRECT_GREEDY_XNUMA),
    (intf::RUSTY_STAT_NEW_TASK_SPREAD, &NEW_TASK_SPREAD),
    (intf::RUSTY_STAT_PINNED, &PINNED),
    (intf::RUSTY_STAT_QUEUED, &QUEUED),
    (intf::RUSTY_STAT_TAKE_HOME, &TAKE_HOME),
    (intf::RUSTY_STAT_STEAL_NODE, &STEAL_NODE),
    (intf::RUSTY_STAT_STEAL_XNUMA, &STEAL_XNUMA),
    (intf::RUSTY_STAT_TAKE_UNSERVED, &TAKE_UNSERVED),
    (intf::RUSTY_STAT_TAKE_LONG_WAIT, &TAKE_LONG_WAIT),
    (intf::RUSTY_STAT_LONG_WAIT_WALKS, &lw::WALKS),
    (intf::RUSTY_STAT_LONG_WAIT_WALKED_TASKS, &lw::WALKED_TASKS),
    (intf::RUSTY_STAT_LONG_WAIT_WALK_NS, &lw::WALK_NS),
    (intf::RUSTY_STAT_STRANDED_SCANS, &stranded::SCANS),
    (intf::RUSTY_STAT_STRANDED_SCANNED_TASKS, &stranded::SCANNED_TASKS),
    (intf::RUSTY_STAT_STRANDED_SCAN_NS, &stranded::SCAN_NS),
    (intf::RUSTY_STAT_KICK_HOME, &KICK_HOME),
    (intf::RUSTY_STAT_KICK_GREEDY, &KICK_GREEDY),
    (intf::RUSTY_STAT_ENQUEUE, &ENQUEUES),
    (intf::RUSTY_STAT_MOVE_APPLIED_NODE, &MOVES_APPLIED_NODE),
    (intf::RUSTY_STAT_MOVE_APPLIED_DOMAIN, &MOVES_APPLIED_DOMAIN),
    (intf::RUSTY_STAT_MOVE_REFUSED, &MOVES_REFUSED),
    (intf::RUSTY_STAT_REHOME_AFFINITY, &AFFINITY_REHOMES),
    (intf::RUSTY_STAT_NO_CTX, &UNTRACKED_TASKS),
];

/// Every definition scx_rusty publishes: its own, then the balancer's from the library.
pub static METRIC_SETS: &[MetricSet] = &[METRICS, LONG_WAIT_METRICS, stranded::STRANDED_METRICS, lbm::LB_METRICS, lbm::GROUP_METRICS];

/// Reads every series of one attempt.
pub struct Reader<'a> {
    counters: &'a dyn MapCore,
    shared: SharedRef,
    figures: Figures,
}

impl<'a> Reader<'a> {
    pub fn new(counters: &'a dyn MapCore, hierarchy: &Hierarchy, doms: &Domains, shared: SharedRef) -> Reader<'a> {
        Reader { counters, shared, figures: Figures::new(hierarchy, doms) }
    }

    pub fn read(&self, reading: &mut Snapshot) -> Result<()> {
        scxkit_runtime::maps::set_percpu_counters(reading, self.counters, COUNTERS)?;
        self.figures.set(reading, &self.shared.borrow(), userspace_cpu_s());
        Ok(())
    }
}

/// Sets what userspace knows: its own figures, per domain, then the balancer's per level
/// and, once it has run, per group.
struct Figures {
    hierarchy: Hierarchy,
    /// Each domain's (node, domain) labels, by domain id.
    dom_labels: Vec<[String; 2]>,
}

impl Figures {
    fn new(hierarchy: &Hierarchy, doms: &Domains) -> Figures {
        let dom_labels = doms.domains.iter().map(|d| [d.node.to_string(), d.id.to_string()]).collect();
        Figures { hierarchy: hierarchy.clone(), dom_labels }
    }

    fn set(&self, reading: &mut Snapshot, s: &Shared, cpu_s: f64) {
        reading.set(&MOVES_REQUESTED_NODE, s.requested[0] as f64);
        reading.set(&MOVES_REQUESTED_DOMAIN, s.requested[1] as f64);
        for (i, level) in LEVELS.iter().enumerate() {
            reading.set_with(&MOVES_EXPIRED_RAN, &[("level", level)], s.expired.ran[i] as f64);
            reading.set_with(&MOVES_EXPIRED_NOT_RUN, &[("level", level)], s.expired.not_run[i] as f64);
        }
        reading.set(&USERSPACE_CPU_SECONDS, cpu_s);
        reading.set(&FULLY_UTILIZED, s.tuning.fully_utilized as u8 as f64);
        reading.set(&SLICE_US, (s.tuning.slice_ns / 1000) as f64);
        reading.set(&TRACKED_TASKS, s.nr_tasks as f64);
        reading.set(&LEFT_OUT_TASKS, s.left_out_tasks as f64);
        for (d, [node, dom]) in self.dom_labels.iter().enumerate() {
            let labels = [("node", node.as_str()), ("domain", dom.as_str())];
            reading.set_with(&DOMAIN_UTIL, &labels, 100.0 * s.tuning.dom_util.get(d).copied().unwrap_or(0.0));
            reading.set_with(&DOMAIN_LOAD, &labels, s.dom_loads_bpf.get(d).copied().unwrap_or(0.0));
        }
        lbm::set_levels(reading, &self.hierarchy, &s.costs, &s.outcomes);
        if let Some(report) = &s.last_report {
            lbm::set_groups(reading, &self.hierarchy, report);
        }
    }
}

/// CPU time this process used, user and system, in seconds.
fn userspace_cpu_s() -> f64 {
    // SAFETY: getrusage fills the struct it is given.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(usage.ru_utime) + tv(usage.ru_stime)
}

pub fn log_line(previous: &Snapshot, now: &Snapshot) -> String {
    let d = |name: &str, labels: &[(&str, &str)]| now.delta(previous, name, labels);
    let by_path: Vec<f64> = PATHS.iter().map(|p| d(DISPATCHED, &[("type", p)])).collect();
    let total: f64 = by_path.iter().sum();
    let paths: Vec<String> = PATHS.iter().zip(&by_path).map(|(p, v)| format!("{p} {v}")).collect();
    let per_level = |name: &str| LEVELS.map(|l| d(name, &[("level", l)]).to_string()).join("/");
    let domains: Vec<String> = now
        .label_values("domain_util", "domain")
        .iter()
        .map(|dom| {
            let f = &[("domain", dom.as_str())];
            format!("d{dom} {:.0}% {:.2}", now.sum("domain_util", f), now.sum("domain_load", f))
        })
        .collect();
    let outcomes = [
        ("balanced", "lb_balanced_total"),
        ("no-busier", "lb_no_busier_group_total"),
        ("no-idler", "lb_no_idler_group_total"),
        ("no-task", "lb_no_task_total"),
        ("capped", "lb_capped_total"),
    ]
    .map(|(label, name)| format!("{label} {}", per_level(name)))
    .join(" ");
    let mut line = format!(
        "dispatched {total}: {} | took home {}, stole node {} xnuma {} unserved {} long-wait {} ({}) | kicks home {} greedy {} | \
         moves node/domain requested {} applied {} refused {} expired ran/not-run {}/{} (node {}/{}) | lb node/domain {outcomes} | \
         slice {} us{} | domains (util, load): {}",
        paths.join(", "),
        d("taken_tasks_total", &[("from", "home")]),
        d("taken_tasks_total", &[("from", "node")]),
        d("taken_tasks_total", &[("from", "xnuma")]),
        d("taken_tasks_total", &[("from", "unserved")]),
        d("taken_tasks_total", &[("from", "long_wait")]),
        lw::walks_summary(previous, now),
        d("kicks_total", &[("to", "home")]),
        d("kicks_total", &[("to", "greedy")]),
        per_level("lb_moves_requested_total"),
        per_level("lb_moves_applied_total"),
        d("lb_moves_refused_total", &[]),
        now.sum_delta(previous, "lb_moves_expired_total", &[("task", "ran")]),
        now.sum_delta(previous, "lb_moves_expired_total", &[("task", "not_run")]),
        d("lb_moves_expired_total", &[("task", "ran"), ("level", "node")]),
        d("lb_moves_expired_total", &[("task", "not_run"), ("level", "node")]),
        now.get("slice_us", &[]),
        if now.get("fully_utilized", &[]) > 0.0 { ", fully utilized" } else { "" },
        domains.join(", "),
    );
    line.push_str(&stranded::log_suffix(previous, now));
    // The last pass's hierarchy, as the balancer saw it: each node, then its domains.
    for group in lbm::hierarchy_lines(now) {
        line.push_str("\n  ");
        line.push_str(&group);
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use scxkit::lb::{Balancer, Mode, Task};

    #[test]
    fn the_monitor_parses_every_published_series() {
        let topo = scxkit::Topology::from_sysfs(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/sysfs/epyc-7702p-nps4"))).unwrap();
        let doms = Domains::per_llc(&topo);
        let h = Hierarchy::numa_domains(&topo, &doms).unwrap();
        let mut balancer = Balancer::new(h.clone(), Mode::Propagate);
        let mut tasks: Vec<Task> = (0..32).map(|i| Task { load: 1024, domain: i % 3, allowed: None }).collect();
        let report = balancer.pass(&mut tasks);
        let shared = Shared { costs: balancer.costs().to_vec(), outcomes: balancer.outcomes().to_vec(), last_report: Some(report), ..Default::default() };
        let mut snap = Snapshot::new();
        Figures::new(&h, &doms).set(&mut snap, &shared, 0.5);
        let back = scxkit::metrics::parse_text(METRIC_SETS, &scxkit::metrics::to_text(&snap)).unwrap();
        let pairs = |s: &Snapshot| s.iter().map(|(series, v)| (series.key(), v)).collect::<Vec<_>>();
        assert_eq!(pairs(&back), pairs(&snap));
        assert_ne!(snap.get("lb_load", &[("node", "0"), ("domain", "0")]), 0.0);
        assert_eq!(back.get("lb_load", &[("node", "3"), ("domain", "15")]), snap.get("lb_load", &[("node", "3"), ("domain", "15")]));
        assert_eq!(back.label_values("domain_util", "domain").len(), doms.domains.len());
        let line = log_line(&Snapshot::new(), &back);
        assert!(line.contains(" | lb node/domain balanced "), "{line}");
        let tree: Vec<&str> = line.lines().skip(1).collect();
        assert_eq!(tree.len(), 4 + 16, "each node, then its domains: {line}");
        assert!(tree[0].starts_with("  NODE[00] load ") && tree[1].starts_with("    DOMAIN[00] load "), "{line}");
    }

    #[test]
    fn the_balancer_series_appear_once_it_has_run() {
        let topo = scxkit::Topology::from_sysfs(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/sysfs/epyc-7702p-nps4"))).unwrap();
        let doms = Domains::per_llc(&topo);
        let h = Hierarchy::numa_domains(&topo, &doms).unwrap();
        let mut snap = Snapshot::new();
        Figures::new(&h, &doms).set(&mut snap, &Shared::default(), 0.0);
        assert_eq!(snap.label_values("lb_load", "node"), Vec::<String>::new());
        assert_eq!(snap.get("slice_us", &[]), 0.0);
    }

    #[test]
    fn every_bpf_counter_is_bound_once() {
        assert_eq!(scxkit::metrics::misbound_slots(COUNTERS, intf::RUSTY_NR_STATS), []);
    }
}
