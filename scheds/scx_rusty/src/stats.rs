//! scx_rusty's statistics, declared once for every backend (log line, Prometheus, StatsD).
//!
//! Every dispatch is counted once, by its path (`dispatched_tasks_total{type=...}`): the
//! select_cpu paths, then `pinned` and `queued` from enqueue. Which queue a CPU took work
//! from, the kicks, and the balancer's moves (requested by userspace, applied by BPF) are
//! counted apart. Per-domain, per-node and per-level series get their labels at run time.

use crate::balance::SharedRef;
use crate::intf;
use anyhow::Result;
use libbpf_rs::MapCore;
use scxkit::domains::Domains;
use scxkit::lb::{metrics as lbm, Hierarchy};
use scxkit::metrics::{MetricDef, MetricKind, Series, Snapshot, Unit};
use std::sync::Arc;

const fn def(name: &'static str, labels: &'static [(&'static str, &'static str)], kind: MetricKind, unit: Unit, help: &'static str) -> MetricDef {
    MetricDef { name, labels, kind, unit, help }
}

const fn counter(name: &'static str, labels: &'static [(&'static str, &'static str)], help: &'static str) -> MetricDef {
    def(name, labels, MetricKind::Counter, Unit::Count, help)
}

const DISPATCHED: &str = "dispatched_tasks_total";
/// The dispatch paths, in the order of `enum rusty_stat_idx`.
const PATHS: [&str; 7] = ["sync", "prev_idle", "home_idle", "direct_greedy", "direct_greedy_xnuma", "pinned", "queued"];
const LEVELS: [&str; 2] = ["node", "domain"];

/// The BPF counters in the order of `enum rusty_stat_idx`, then userspace's own figures, then
/// the per-domain series (labelled at run time). The balancer's per-level and per-group
/// series come from the library (scxkit::lb::metrics).
pub static METRICS: &[MetricDef] = &[
    counter(DISPATCHED, &[("type", "sync")], "Synchronous wakeups put on an idle CPU of the waker's domain."),
    counter(DISPATCHED, &[("type", "prev_idle")], "Waking tasks put back on their previous CPU, idle, in the home domain."),
    counter(DISPATCHED, &[("type", "home_idle")], "Waking tasks put on another idle CPU of the home domain."),
    counter(DISPATCHED, &[("type", "direct_greedy")], "Waking tasks put on an idle CPU of an underused domain of the same node."),
    counter(DISPATCHED, &[("type", "direct_greedy_xnuma")], "Waking tasks put on an idle CPU of an underused domain of another node (--direct-greedy-numa)."),
    counter(DISPATCHED, &[("type", "pinned")], "Tasks that could not migrate at the time, put on their CPU's local queue."),
    counter(DISPATCHED, &[("type", "queued")], "Tasks queued on their home domain's queue."),
    counter("taken_tasks_total", &[("from", "home")], "Tasks a CPU took from its own domain's queue."),
    counter("taken_tasks_total", &[("from", "node")], "Tasks a CPU stole from another domain of its node (--greedy-threshold)."),
    counter("taken_tasks_total", &[("from", "xnuma")], "Tasks a CPU stole from a domain of another node (--greedy-threshold-x-numa)."),
    counter("taken_tasks_total", &[("from", "unserved")], "Tasks a CPU took from a domain whose own CPUs had not served its queue for 100 ms (as when they are all going offline)."),
    counter("taken_tasks_total", &[("from", "long_wait")], "Tasks a CPU took from its own domain's queue out of vtime order, queued 1 s before."),
    counter("kicks_total", &[("to", "home")], "Idle CPUs of the home domain woken for queued work."),
    counter("kicks_total", &[("to", "greedy")], "Idle CPUs of an underused domain woken to steal queued work (--kick-greedy-under)."),
    counter("enqueues_total", &[], "Calls of ops.enqueue; each dispatches as pinned or queued."),
    counter("lb_moves_applied_total", &[("level", "node")], "Moves between nodes that the BPF side applied."),
    counter("lb_moves_applied_total", &[("level", "domain")], "Moves between domains of a node that the BPF side applied."),
    counter("lb_moves_refused_total", &[], "Requested moves the task's affinity no longer allowed when applied."),
    counter("affinity_rehomes_total", &[], "Tasks given a new home because their affinity left the old one."),
    counter("untracked_tasks_total", &[], "Tasks without state (the task map was full), run from the global queue."),
    // Userspace.
    counter("lb_moves_requested_total", &[("level", "node")], "Moves between nodes written for the BPF side to apply."),
    counter("lb_moves_requested_total", &[("level", "domain")], "Moves between domains of a node written for the BPF side to apply."),
    counter("lb_moves_expired_total", &[("task", "ran")], "Requested moves whose task ran after the request, yet did not take it up before the next pass."),
    counter("lb_moves_expired_total", &[("task", "not_run")], "Requested moves whose task did not run before the next pass (asleep, queued, or exited)."),
    def("userspace_cpu_seconds_total", &[], MetricKind::Counter, Unit::Seconds, "CPU time used by scx_rusty's userspace (balancer, tuner, stats)."),
    def("fully_utilized", &[], MetricKind::Gauge, Unit::Count, "1 while the CPUs are at least 95% busy: loads are then weighted (infeasible weights adjusted) and the short slice used."),
    def("slice_us", &[], MetricKind::Gauge, Unit::Count, "The time slice, in microseconds, the tuner chose."),
    def("tracked_tasks", &[], MetricKind::Gauge, Unit::Count, "Tasks in the BPF task map at the last balancing pass."),
    // Per domain (labels node, domain).
    def("domain_util", &[], MetricKind::Gauge, Unit::Percent, "A domain's CPU utilization over the last tuning interval."),
    def("domain_load", &[], MetricKind::Gauge, Unit::Count, "A domain's load as the BPF side keeps it (decaying average of its runnable weight), in busy nice-0 tasks."),
];
const NR_FIXED: usize = METRICS.len() - NR_PER_DOMAIN;

/// Every definition scx_rusty publishes: its own, then the balancer's from the library.
pub static METRIC_SETS: &[&[MetricDef]] = &[METRICS, lbm::LB_METRICS, lbm::GROUP_METRICS];
const NR_PER_DOMAIN: usize = 2;

/// Reads every series of one attempt.
pub struct Reader<'a> {
    counters: &'a dyn MapCore,
    shared: SharedRef,
    hierarchy: Hierarchy,
    dom_labels: Vec<[(&'static str, String); 2]>,
}

impl<'a> Reader<'a> {
    pub fn new(counters: &'a dyn MapCore, hierarchy: &Hierarchy, doms: &Domains, shared: SharedRef) -> Reader<'a> {
        let dom_labels = doms.domains.iter().map(|d| [("node", d.node.to_string()), ("domain", d.id.to_string())]).collect();
        Reader { counters, shared, hierarchy: hierarchy.clone(), dom_labels }
    }

    pub fn layout(&self) -> Arc<[Series]> {
        layout(&self.hierarchy, &self.dom_labels)
    }

    pub fn read(&self) -> Result<Vec<f64>> {
        let mut values: Vec<f64> = scxkit_bpf::maps::percpu_u64_sums(self.counters, intf::RUSTY_NR_STATS)?.into_iter().map(|v| v as f64).collect();
        let s = self.shared.borrow();
        values.extend([s.requested[0], s.requested[1], s.expired.ran, s.expired.not_run].map(|v| v as f64));
        values.extend([userspace_cpu_s(), s.tuning.fully_utilized as u8 as f64, (s.tuning.slice_ns / 1000) as f64, s.nr_tasks as f64]);
        for d in 0..self.dom_labels.len() {
            values.push(100.0 * s.tuning.dom_util.get(d).copied().unwrap_or(0.0));
            values.push(s.dom_loads_bpf.get(d).copied().unwrap_or(0.0));
        }
        values.extend(s.cost_values.iter().copied());
        if s.cost_values.is_empty() {
            values.extend(std::iter::repeat_n(0.0, lbm::layout(&self.hierarchy).len()));
        }
        match &s.last_report {
            Some(report) => values.extend(lbm::group_values(&self.hierarchy, report)),
            None => values.extend(std::iter::repeat_n(0.0, lbm::group_layout(&self.hierarchy).len())),
        }
        Ok(values)
    }
}

/// Every series of one attempt: the fixed ones, per domain, then the balancer's per level
/// and per group.
fn layout(hierarchy: &Hierarchy, dom_labels: &[[(&'static str, String); 2]]) -> Arc<[Series]> {
    let fixed = METRICS[..NR_FIXED].iter().map(Series::of);
    let per_dom = dom_labels.iter().flat_map(|labels| METRICS[NR_FIXED..].iter().map(move |d| Series::with(d, labels)));
    fixed.chain(per_dom).chain(lbm::layout(hierarchy)).chain(lbm::group_layout(hierarchy)).collect()
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
    format!(
        "dispatched {total}: {} | took home {}, stole node {} xnuma {} unserved {} long-wait {} | kicks home {} greedy {} | \
         moves node/domain requested {} applied {} refused {} expired ran/not-run {}/{} | slice {} us{} | domains (util, load): {}",
        paths.join(", "),
        d("taken_tasks_total", &[("from", "home")]),
        d("taken_tasks_total", &[("from", "node")]),
        d("taken_tasks_total", &[("from", "xnuma")]),
        d("taken_tasks_total", &[("from", "unserved")]),
        d("taken_tasks_total", &[("from", "long_wait")]),
        d("kicks_total", &[("to", "home")]),
        d("kicks_total", &[("to", "greedy")]),
        per_level("lb_moves_requested_total"),
        per_level("lb_moves_applied_total"),
        d("lb_moves_refused_total", &[]),
        d("lb_moves_expired_total", &[("task", "ran")]),
        d("lb_moves_expired_total", &[("task", "not_run")]),
        now.get("slice_us", &[]),
        if now.get("fully_utilized", &[]) > 0.0 { ", fully utilized" } else { "" },
        domains.join(", "),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_monitor_parses_every_published_series() {
        let topo = scxkit::Topology::from_sysfs(std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures/sysfs/epyc-7702p-nps4"))).unwrap();
        let doms = Domains::per_llc(&topo);
        let h = Hierarchy::numa_domains(&topo, &doms).unwrap();
        let labels: Vec<_> = doms.domains.iter().map(|d| [("node", d.node.to_string()), ("domain", d.id.to_string())]).collect();
        let series = layout(&h, &labels);
        let snap = Snapshot { values: (0..series.len()).map(|i| i as f64).collect(), series };
        let back = scxkit::metrics::parse_text(METRIC_SETS, &scxkit::metrics::to_text(&snap)).unwrap();
        assert_eq!(back.values, snap.values);
        assert_eq!(back.get("lb_load", &[("node", "3"), ("domain", "15")]), snap.get("lb_load", &[("node", "3"), ("domain", "15")]));
    }

    #[test]
    fn metrics_follow_the_bpf_counter_order() {
        for (i, path) in PATHS.iter().enumerate() {
            assert_eq!(METRICS[intf::RUSTY_STAT_PATH_FIRST as usize + i].labels, &[("type", *path)]);
        }
        assert_eq!(PATHS.len(), (intf::RUSTY_STAT_PATH_LAST - intf::RUSTY_STAT_PATH_FIRST + 1) as usize);
        assert_eq!(METRICS[intf::RUSTY_STAT_ENQUEUE as usize].name, "enqueues_total");
        assert_eq!(METRICS[intf::RUSTY_STAT_MOVE_APPLIED_DOMAIN as usize].labels, &[("level", "domain")]);
        assert_eq!(METRICS[intf::RUSTY_STAT_NO_CTX as usize].name, "untracked_tasks_total");
        assert_eq!(METRICS[intf::RUSTY_NR_STATS as usize].name, "lb_moves_requested_total");
    }
}
