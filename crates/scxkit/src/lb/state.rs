//! The loads of one pass, kept bottom-up: each leaf's load is summed from its tasks once,
//! each parent's from its children, and a migration adjusts exactly the two leaves and their
//! ancestors. In [`Mode::Rescan`] every read sums the tasks below the group again instead
//! (the slow way, kept to measure what the kept aggregates save and to check they decide
//! the same).

use super::hierarchy::{GroupId, Hierarchy};
use super::candidate::{sort_by_load_then_index, Candidate};
use crate::cpumask::Cpumask;

/// A task as the balancer sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Duty cycle times weight, fixed point (see [`super::load`]).
    pub load: u64,
    /// The domain it runs in now; the balancer changes it.
    pub domain: usize,
    /// The domains it may run in (a mask over domain ids); `None`: every domain.
    pub allowed: Option<Cpumask>,
}

impl Task {
    pub fn may_run_in(&self, domain: usize) -> bool {
        self.allowed.as_ref().is_none_or(|m| m.test(domain))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Aggregates kept and updated on each migration.
    Propagate,
    /// Aggregates summed from the tasks at every read.
    Rescan,
}

/// The buffers of a pass, kept by the balancer from one pass to the next: allocated afresh,
/// the candidate lists of 100,000 tasks cost a millisecond of page faults at every pass.
#[derive(Default)]
pub(crate) struct PassBuffers {
    members: Vec<Vec<Candidate>>,
    fixed_load: Vec<u64>,
    sorted: Vec<bool>,
    load: Vec<u64>,
    sort_scratch: Vec<Candidate>,
}

pub(crate) struct PassState<'a> {
    pub h: &'a Hierarchy,
    pub tasks: &'a mut [Task],
    mode: Mode,
    /// Each domain's candidates for a move: its tasks but those that cannot move this pass;
    /// in index order until sorted by load (`sorted[d]`).
    members: Vec<Vec<Candidate>>,
    /// Load of each domain's tasks that are no candidates: idle ones, those allowed nowhere
    /// else, those that moved in during this pass.
    fixed_load: Vec<u64>,
    sorted: Vec<bool>,
    /// The kept load of every group.
    load: Vec<u64>,
    sort_scratch: Vec<Candidate>,
}

impl<'a> PassState<'a> {
    pub fn new(h: &'a Hierarchy, tasks: &'a mut [Task], mode: Mode, buffers: PassBuffers) -> PassState<'a> {
        let n = h.nr_domains();
        let PassBuffers { mut members, mut fixed_load, mut sorted, mut load, sort_scratch } = buffers;
        members.resize_with(n, Vec::new);
        members.truncate(n);
        members.iter_mut().for_each(Vec::clear);
        reserve_per_domain(&mut members, tasks);
        refill(&mut fixed_load, n, 0);
        refill(&mut sorted, n, false);
        let mut domain_load = vec![0u64; n];
        for (i, t) in tasks.iter().enumerate() {
            // A task in no domain of the hierarchy (stale after a hotplug) is left alone.
            if t.domain >= n {
                continue;
            }
            domain_load[t.domain] += t.load;
            let pinned = t.allowed.as_ref().is_some_and(|m| m.is_within(t.domain));
            if t.load == 0 || pinned {
                fixed_load[t.domain] += t.load;
            } else {
                members[t.domain].push(candidate(t, i));
            }
        }
        load.clear();
        load.extend(loads_from_domains(h, &domain_load));
        PassState { h, mode, sorted, load, tasks, members, fixed_load, sort_scratch }
    }

    /// The buffers, for the next pass.
    pub fn into_buffers(self) -> PassBuffers {
        let PassState { members, fixed_load, sorted, load, sort_scratch, .. } = self;
        PassBuffers { members, fixed_load, sorted, load, sort_scratch }
    }

    /// Every group's load summed from the tasks themselves, by the domain each is in now:
    /// what the kept loads must always equal.
    #[cfg(test)]
    pub fn full_rescan(&self) -> Vec<u64> {
        let n = self.h.nr_domains();
        let mut per_domain = vec![0u64; n];
        for t in self.tasks.iter().filter(|t| t.domain < n) {
            per_domain[t.domain] += t.load;
        }
        loads_from_domains(self.h, &per_domain)
    }

    /// Every task that may still move in this pass.
    #[cfg(test)]
    pub fn candidates(&self) -> Vec<usize> {
        self.members.iter().flatten().map(|c| c.index as usize).collect()
    }

    #[cfg(test)]
    pub fn kept_loads(&self) -> &[u64] {
        &self.load
    }

    pub fn group_load(&self, g: GroupId) -> u64 {
        match self.mode {
            Mode::Propagate => self.load[g],
            Mode::Rescan => self.subtree_sum(g),
        }
    }

    /// The load below `g` summed over its leaves' tasks.
    fn subtree_sum(&self, g: GroupId) -> u64 {
        self.h.leaves_under(g).iter().map(|&l| self.leaf_task_sum(l)).sum()
    }

    fn leaf_task_sum(&self, leaf: GroupId) -> u64 {
        let d = self.h.groups[leaf].domain.unwrap();
        self.fixed_load[d] + self.members[d].iter().map(|c| c.load).sum::<u64>()
    }

    /// Load per unit of capacity; a group without capacity (every CPU offline) counts as
    /// having one unit, so that whatever it holds looks overloaded.
    pub fn normalized(&self, g: GroupId) -> f64 {
        self.group_load(g) as f64 / self.h.groups[g].capacity.max(1) as f64
    }

    /// The tasks of `domain`, sorted by (load, index), sorted on first use in the pass.
    pub fn sorted_members(&mut self, domain: usize) -> &[Candidate] {
        if !self.sorted[domain] {
            sort_by_load_then_index(&mut self.members[domain], &mut self.sort_scratch);
            self.sorted[domain] = true;
        }
        &self.members[domain]
    }

    /// The tasks of `domain`, sorted when [`PassState::sorted_members`] was called in this pass.
    pub fn members(&self, domain: usize) -> &[Candidate] {
        &self.members[domain]
    }

    /// Moves task `t` to `to`: its membership, and the kept load of the two leaves and of
    /// every ancestor (the common ones gain and lose the same, so they end unchanged).
    pub fn move_task(&mut self, t: usize, to: usize) {
        let from = self.tasks[t].domain;
        let key = candidate(&self.tasks[t], t);
        let list = &mut self.members[from];
        let pos = if self.sorted[from] { list.binary_search(&key).ok() } else { list.iter().position(|&m| m == key) };
        list.remove(pos.expect("a moved task was a candidate of its domain"));
        // It cannot move again in this pass: no candidate any more.
        self.fixed_load[to] += key.load;
        let load = self.tasks[t].load;
        self.adjust_up(self.h.leaf_of_domain[from], |v| v - load);
        self.adjust_up(self.h.leaf_of_domain[to], |v| v + load);
        self.tasks[t].domain = to;
    }

    fn adjust_up(&mut self, leaf: GroupId, f: impl Fn(u64) -> u64) {
        let mut at = Some(leaf);
        while let Some(g) = at {
            self.load[g] = f(self.load[g]);
            at = self.h.groups[g].parent;
        }
    }
}

/// Room in each domain's list for its tasks, counted only when the lists have less room in
/// all than there are tasks (the first pass, or more tasks): growing the big domains' lists
/// a push at a time cost more than the rest of building the pass's state.
fn reserve_per_domain(members: &mut [Vec<Candidate>], tasks: &[Task]) {
    if members.iter().map(Vec::capacity).sum::<usize>() >= tasks.len() {
        return;
    }
    let mut counts = vec![0usize; members.len()];
    for t in tasks.iter().filter(|t| t.domain < members.len()) {
        counts[t.domain] += 1;
    }
    for (list, count) in members.iter_mut().zip(counts) {
        list.reserve(count);
    }
}

/// `v` as `len` copies of `value`, in the memory it already has.
fn refill<T: Copy>(v: &mut Vec<T>, len: usize, value: T) {
    v.clear();
    v.resize(len, value);
}

/// Every group's load from its domains' loads, bottom-up (a group's children come after it).
fn loads_from_domains(h: &Hierarchy, per_domain: &[u64]) -> Vec<u64> {
    let mut load = vec![0u64; h.groups.len()];
    for g in (0..h.groups.len()).rev() {
        let group = &h.groups[g];
        load[g] = match group.domain {
            Some(d) => per_domain[d],
            None => group.children.iter().map(|&c| load[c]).sum(),
        };
    }
    load
}

fn candidate(task: &Task, index: usize) -> Candidate {
    Candidate { load: task.load, index: index as u32, restricted: task.allowed.is_some() }
}
