//! The loads of one pass, kept bottom-up: each leaf's load is summed from its tasks once,
//! each parent's from its children, and a migration adjusts exactly the two leaves and their
//! ancestors. In [`Mode::Rescan`] every read sums the tasks below the group again instead
//! (the slow way, kept to measure what the kept aggregates save and to check they decide
//! the same).

use super::hierarchy::{GroupId, Hierarchy};
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

pub(crate) struct PassState<'a> {
    pub h: &'a Hierarchy,
    pub tasks: &'a mut [Task],
    mode: Mode,
    /// (load, task index) of each domain's candidates for a move: its tasks but those that
    /// cannot move this pass; sorted once `sorted[d]`. The load is kept next to the index so
    /// that sorting and searching touch no task.
    members: Vec<Vec<(u64, u32)>>,
    /// Load of each domain's tasks that are no candidates: idle ones, those allowed nowhere
    /// else, those that moved in during this pass.
    fixed_load: Vec<u64>,
    sorted: Vec<bool>,
    pub moved: Vec<bool>,
    /// The kept load of every group.
    load: Vec<u64>,
}

impl<'a> PassState<'a> {
    pub fn new(h: &'a Hierarchy, tasks: &'a mut [Task], mode: Mode) -> PassState<'a> {
        let n = h.nr_domains();
        // Sized up front: growing the big domains' lists a push at a time cost more than
        // the rest of building the pass's state.
        let mut counts = vec![0usize; n];
        for t in tasks.iter().filter(|t| t.domain < n) {
            counts[t.domain] += 1;
        }
        let mut members: Vec<Vec<(u64, u32)>> = counts.iter().map(|&c| Vec::with_capacity(c)).collect();
        let mut fixed_load = vec![0u64; n];
        for (i, t) in tasks.iter().enumerate() {
            // A task in no domain of the hierarchy (stale after a hotplug) is left alone.
            if t.domain >= n {
                continue;
            }
            let pinned = t.allowed.as_ref().is_some_and(|m| m.iter().all(|d| d == t.domain));
            if t.load == 0 || pinned {
                fixed_load[t.domain] += t.load;
            } else {
                members[t.domain].push((t.load, i as u32));
            }
        }
        let mut state = PassState {
            h,
            mode,
            sorted: vec![false; n],
            moved: vec![false; tasks.len()],
            load: vec![0; h.groups.len()],
            tasks,
            members,
            fixed_load,
        };
        state.load = (0..h.groups.len()).map(|g| state.subtree_sum(g)).collect();
        state
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
        let mut load = vec![0u64; self.h.groups.len()];
        for g in (0..self.h.groups.len()).rev() {
            let group = &self.h.groups[g];
            load[g] = match group.domain {
                Some(d) => per_domain[d],
                None => group.children.iter().map(|&c| load[c]).sum(),
            };
        }
        load
    }

    /// Every task that may still move in this pass.
    #[cfg(test)]
    pub fn candidates(&self) -> Vec<usize> {
        self.members.iter().flatten().map(|&(_, i)| i as usize).collect()
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
        self.fixed_load[d] + self.members[d].iter().map(|&(load, _)| load).sum::<u64>()
    }

    /// Load per unit of capacity; a group without capacity (every CPU offline) counts as
    /// having one unit, so that whatever it holds looks overloaded.
    pub fn normalized(&self, g: GroupId) -> f64 {
        self.group_load(g) as f64 / self.h.groups[g].capacity.max(1) as f64
    }

    /// The tasks of `domain`, sorted by (load, index), sorted on first use in the pass.
    pub fn sorted_members(&mut self, domain: usize) -> &[(u64, u32)] {
        if !self.sorted[domain] {
            self.members[domain].sort_unstable();
            self.sorted[domain] = true;
        }
        &self.members[domain]
    }

    /// The tasks of `domain`, sorted when [`PassState::sorted_members`] was called in this pass.
    pub fn members(&self, domain: usize) -> &[(u64, u32)] {
        &self.members[domain]
    }

    /// Moves task `t` to `to`: its membership, and the kept load of the two leaves and of
    /// every ancestor (the common ones gain and lose the same, so they end unchanged).
    pub fn move_task(&mut self, t: usize, to: usize) {
        let from = self.tasks[t].domain;
        let key = (self.tasks[t].load, t as u32);
        let list = &mut self.members[from];
        let pos = if self.sorted[from] { list.binary_search(&key).ok() } else { list.iter().position(|&m| m == key) };
        list.remove(pos.expect("a moved task was a candidate of its domain"));
        // It cannot move again in this pass: no candidate any more.
        self.fixed_load[to] += key.0;
        let load = self.tasks[t].load;
        self.adjust_up(self.h.leaf_of_domain[from], |v| v - load);
        self.adjust_up(self.h.leaf_of_domain[to], |v| v + load);
        self.tasks[t].domain = to;
        self.moved[t] = true;
    }

    fn adjust_up(&mut self, leaf: GroupId, f: impl Fn(u64) -> u64) {
        let mut at = Some(leaf);
        while let Some(g) = at {
            self.load[g] = f(self.load[g]);
            at = self.h.groups[g].parent;
        }
    }
}
