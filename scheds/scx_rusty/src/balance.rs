//! The balancing job: every --interval, the tasks' loads read from BPF go through the
//! library's hierarchical balancer (nodes, then the domains of each node), and its moves are
//! written back for the BPF side to apply (home.bpf.h). With --no-load-balance the pass
//! still runs, for its statistics, and nothing is written.

use crate::bpf_io::{clear_requests, monotonic_ns, Expired, read_dom_loads, read_tasks, write_requests, TaskView};
use crate::capacity::OnlineCapacity;
use crate::intf::RUSTY_NR_LB_LEVELS;
use crate::tuner::Tuning;
use anyhow::Result;
use libbpf_rs::{Link, MapCore};
use scxkit::infeasible::TaskLoad;
use scxkit::lb::load::task_loads;
use scxkit::lb::{metrics as lbm, Balancer, LevelCost, LevelOutcomes, PassReport, Task};
use scxkit::metrics::Snapshot;
use scxkit::Cpumask;
use scxkit_runtime::hotplug::online_cpu_list;
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

/// What the jobs found, for the statistics.
#[derive(Debug, Default)]
pub struct Shared {
    pub tuning: Tuning,
    /// Moves written for BPF to apply, per level.
    pub requested: [u64; RUSTY_NR_LB_LEVELS as usize],
    /// Requests no task took up before the next pass.
    pub expired: Expired,
    pub nr_tasks: usize,
    /// Tasks the last pass found without state, left out of balancing (bpf_io::TaskDump).
    pub left_out_tasks: usize,
    /// Each domain's load as the BPF side keeps it, busy nice-0 tasks.
    pub dom_loads_bpf: Vec<f64>,
    pub last_report: Option<PassReport>,
    /// The balancer's costs and outcomes per level (scxkit::lb::metrics::set_levels).
    pub costs: Vec<LevelCost>,
    pub outcomes: Vec<LevelOutcomes>,
}

pub type SharedRef = Rc<RefCell<Shared>>;

/// The BPF maps the balancer reads and writes.
pub struct LbMaps<'a> {
    /// The task iterator's link (bpf_io::read_tasks).
    pub tasks: &'a Link,
    pub requests: &'a dyn MapCore,
    pub dom_stats: &'a dyn MapCore,
}

pub struct LbJob<'a> {
    pub balancer: Balancer,
    pub maps: LbMaps<'a>,
    pub half_life_ns: u64,
    pub nr_online: usize,
    /// Sets the balancer's capacities for the CPUs online now.
    pub capacity: OnlineCapacity,
    pub enabled: bool,
    /// What the statistics read.
    pub shared: SharedRef,
    /// When the previous pass read the tasks (0: none yet).
    pub last_pass_ns: u64,
}

impl LbJob<'_> {
    /// One pass, with loads weighted when the machine is `fully_utilized`. Ok(true) when it
    /// wrote the pass's requests: the tune map's pass number must then move on.
    pub fn run(&mut self, fully_utilized: bool) -> Result<bool> {
        if let Some(nr_online) = self.capacity.follow(&online_cpu_list(), &mut self.balancer.hierarchy) {
            self.nr_online = nr_online;
        }
        let now = monotonic_ns();
        let dump = read_tasks(self.maps.tasks, now, self.half_life_ns)?;
        let views = dump.tasks;
        let nr_doms = self.balancer.hierarchy.nr_domains();
        let dom_loads = read_dom_loads(self.maps.dom_stats, nr_doms, now, self.half_life_ns)?;
        let mut shared = self.shared.borrow_mut();
        let previous_pass_ns = self.last_pass_ns;
        let mut tasks = balancer_tasks(&views, nr_doms, self.nr_online, fully_utilized, previous_pass_ns);
        self.last_pass_ns = now;
        let report = self.balancer.pass(&mut tasks);
        let moves: Vec<(i32, usize, usize)> = report.moves.iter().map(|m| (views[m.task].pid, m.to, m.depth)).collect();
        // The library counts each level's moves (index: level - 1).
        if self.enabled {
            for (level, &moved) in report.moved_per_level.iter().enumerate() {
                shared.requested[level] += moved as u64;
            }
        }
        if self.enabled {
            // The previous pass wrote its requests right after reading the tasks.
            let ran: HashSet<i32> = views.iter().filter(|v| v.last_ran_ns > previous_pass_ns).map(|v| v.pid).collect();
            let expired = clear_requests(self.maps.requests, |pid| ran.contains(&pid))?;
            shared.expired.add(&expired);
            write_requests(self.maps.requests, &moves)?;
        }
        if log::log_enabled!(log::Level::Debug) {
            log_pass(&self.balancer, &report);
        }
        shared.nr_tasks = views.len();
        shared.left_out_tasks = dump.left_out;
        shared.dom_loads_bpf = dom_loads;
        shared.last_report = Some(report);
        shared.costs = self.balancer.costs().to_vec();
        shared.outcomes = self.balancer.outcomes().to_vec();
        Ok(self.enabled)
    }

    /// Hands the tuner's decisions to the statistics.
    pub fn publish_tuning(&self, tuning: &Tuning) {
        self.shared.borrow_mut().tuning = tuning.clone();
    }
}

/// At debug level, each pass: its moves per level, whether it reached its cap, and the
/// hierarchy it balanced.
fn log_pass(balancer: &Balancer, report: &PassReport) {
    let mut groups = Snapshot::new();
    lbm::set_groups(&mut groups, &balancer.hierarchy, report);
    log::debug!(
        "balancer: moves node/domain {:?}{}, domain spread {:.2} -> {:.2}",
        report.moved_per_level,
        if report.capped { " (capped)" } else { "" },
        report.imbalance_before,
        report.imbalance_after
    );
    for line in lbm::hierarchy_lines(&groups) {
        log::debug!("balancer:   {line}");
    }
}

/// The balancer's view of the tasks: their loads (weighted only when the machine is fully
/// utilized) and the domains they may be moved to: those their affinity allows, and only
/// their own for a task that has not run since `last_pass_ns`. The BPF side applies a move
/// when the task next runs, and clears what is left at the next pass: a sleeper's move
/// would only expire, while its load, still counted where it is, would be taken as moved.
fn balancer_tasks(views: &[TaskView], nr_doms: usize, nr_online: usize, fully_utilized: bool, last_pass_ns: u64) -> Vec<Task> {
    let demand: Vec<TaskLoad> = views.iter().map(|v| TaskLoad { weight: v.weight as f64, duty_cycle: v.duty }).collect();
    let loads = task_loads(&demand, nr_online, fully_utilized);
    views
        .iter()
        .zip(loads)
        .map(|(v, load)| {
            let active = v.runnable || v.last_ran_ns >= last_pass_ns;
            let dom_mask = if active { v.dom_mask } else { 1 << v.dom };
            Task { load, domain: v.dom, allowed: allowed_doms(dom_mask, nr_doms) }
        })
        .collect()
}

/// The domains of `dom_mask` as a mask over domain ids; None when every domain is allowed.
fn allowed_doms(dom_mask: u64, nr_doms: usize) -> Option<Cpumask> {
    let all = if nr_doms >= 64 { u64::MAX } else { (1u64 << nr_doms) - 1 };
    if dom_mask & all == all {
        return None;
    }
    Some(Cpumask::from_cpus(nr_doms, (0..nr_doms).filter(|d| dom_mask >> d & 1 == 1)).expect("domain ids are below nr_doms"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use scxkit::lb::{Hierarchy, LeafSpec, LevelPolicy, Mode};

    #[test]
    fn affinity_becomes_allowed_domains() {
        assert_eq!(allowed_doms(0b1111, 4), None);
        assert_eq!(allowed_doms(0b0111, 4).unwrap().to_list(), "0-2");
        assert_eq!(allowed_doms(u64::MAX, 64), None);
    }

    #[test]
    fn loads_are_weighted_only_when_fully_utilized() {
        let view = |weight, duty| TaskView { pid: 1, dom: 0, dom_mask: 0b11, weight, duty, runnable: true, last_ran_ns: 0 };
        let views = [view(100, 1.0), view(200, 0.5)];
        let spare: Vec<u64> = balancer_tasks(&views, 2, 4, false, 0).iter().map(|t| t.load).collect();
        assert_eq!(spare, vec![1024, 512]);
        let full: Vec<u64> = balancer_tasks(&views, 2, 1, true, 0).iter().map(|t| t.load).collect();
        assert_eq!(full, vec![1024, 1024]);
    }

    #[test]
    fn a_task_idle_since_the_last_pass_stays_where_it_is() {
        let view = |runnable, last_ran_ns| TaskView { pid: 1, dom: 1, dom_mask: 0b111, weight: 100, duty: 0.5, runnable, last_ran_ns };
        let views = [view(false, 900), view(false, 1_100), view(true, 900)];
        let movable: Vec<Option<String>> =
            balancer_tasks(&views, 3, 4, false, 1_000).iter().map(|t| t.allowed.as_ref().map(|m| m.to_list())).collect();
        assert_eq!(movable, vec![Some("1".to_string()), None, None]);
    }

    #[test]
    fn a_sleeper_is_not_picked_to_even_out_a_busy_task() {
        // Domain 0: a CPU-bound task and a sleeper that last ran before the previous pass;
        // domain 1 is empty. Moving the busy task only swaps the imbalance; the sleeper's
        // move is the one the balancer would pick, and it would only expire.
        let busy = TaskView { pid: 1, dom: 0, dom_mask: 0b11, weight: 100, duty: 1.0, runnable: true, last_ran_ns: 5_000 };
        let sleeper = TaskView { pid: 2, dom: 0, dom_mask: 0b11, weight: 100, duty: 0.3, runnable: false, last_ran_ns: 10 };
        let mut tasks = balancer_tasks(&[busy, sleeper], 2, 2, false, 1_000);
        let leaves: Vec<LeafSpec> = (0..2).map(|domain| LeafSpec { domain, path: vec![0], capacity: 1024 }).collect();
        let hierarchy = Hierarchy::build(&leaves, vec![LevelPolicy::node(), LevelPolicy::domain()]).unwrap();
        let report = Balancer::new(hierarchy, Mode::Propagate).pass(&mut tasks);
        assert!(report.moves.iter().all(|m| m.task != 1), "moved the sleeper: {:?}", report.moves);
    }
}
