//! The one push/pull algorithm, applied at every level with that level's policy.
//!
//! For each parent group, its children are ordered by load per unit of capacity. The most
//! loaded child that may still push is paired with the least loaded one; while their
//! difference exceeds the level's threshold (a fraction of the parent's average), tasks move
//! from the leaves below the pusher to the least loaded leaf below the puller that each task
//! may use. The victim is the task whose load is closest to what the pair still has to
//! transfer, among those that strictly reduce the pair's imbalance, may run in the target and
//! have not moved in this pass. A pair is worked until it is balanced, its transfer is done,
//! the pusher reached its push cap, or no task fits; then the next pair.

use super::hierarchy::GroupId;
use super::policy::LevelPolicy;
use super::state::PassState;

/// A decided migration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Move {
    pub task: usize,
    pub from: usize,
    pub to: usize,
    /// The depth of the level that decided it (1: between nodes, 2: between domains).
    pub depth: usize,
}

/// Balances the children of `parent`; returns whether any task moved. Pairs are taken once
/// each, the most loaded pusher first with the least loaded puller first, as ordered when the
/// attempt starts; a pair still over the threshold when its turn comes is worked.
pub(crate) fn balance_children(state: &mut PassState, parent: GroupId, policy: &LevelPolicy, moves: &mut Vec<Move>) -> bool {
    let children = state.h.groups[parent].children.clone();
    if children.len() < 2 {
        return false;
    }
    let capacity: u64 = children.iter().map(|&c| state.h.groups[c].capacity).sum();
    let average = state.group_load(parent) as f64 / capacity.max(1) as f64;
    if average <= 0.0 {
        return false;
    }
    let mut budget: Vec<f64> = children.iter().map(|&c| policy.push_cap * state.group_load(c) as f64).collect();
    let mut order: Vec<(f64, usize)> = (0..children.len()).map(|i| (state.normalized(children[i]), i)).collect();
    order.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut worked = false;
    for &(_, a) in &order {
        for &(_, b) in order.iter().rev() {
            if a == b || budget[a] <= 0.0 {
                break;
            }
            let (pusher, puller) = (children[a], children[b]);
            // A group without capacity (every CPU offline) never receives.
            let over = (state.normalized(pusher) - state.normalized(puller)) / average > policy.imbalance_threshold;
            if over && state.h.groups[puller].capacity > 0 {
                worked |= work_pair(state, pusher, puller, &mut budget[a], average, policy, moves);
            }
        }
    }
    worked
}

/// The load that would equalize a and b per unit of capacity (negative when b is heavier).
fn equalizing_load(state: &PassState, a: GroupId, b: GroupId) -> f64 {
    let (la, lb) = (state.group_load(a) as f64, state.group_load(b) as f64);
    let (ca, cb) = (state.h.groups[a].capacity.max(1) as f64, state.h.groups[b].capacity.max(1) as f64);
    (la * cb - lb * ca) / (ca + cb)
}

fn work_pair(
    state: &mut PassState,
    a: GroupId,
    b: GroupId,
    budget: &mut f64,
    average: f64,
    policy: &LevelPolicy,
    moves: &mut Vec<Move>,
) -> bool {
    // What brings a down to the parent's average or b up to it, whichever is less: a pair
    // evened out between itself would overshoot, and the load hop on to a third group later.
    let (ca, cb) = (state.h.groups[a].capacity.max(1) as f64, state.h.groups[b].capacity as f64);
    let excess = state.group_load(a) as f64 - average * ca;
    let deficit = average * cb - state.group_load(b) as f64;
    let transfer = policy.transfer_share * 2.0 * excess.min(deficit);
    let mut sent = 0.0;
    let mut moved = false;
    while (state.normalized(a) - state.normalized(b)) / average > policy.imbalance_threshold {
        let want = (transfer - sent).min(*budget);
        let max_reducing = 2.0 * equalizing_load(state, a, b);
        if want <= 0.0 {
            break;
        }
        let Some((task, to)) = find_victim(state, a, b, want, max_reducing, *budget) else { break };
        let load = state.tasks[task].load as f64;
        moves.push(Move { task, from: state.tasks[task].domain, to, depth: state.h.groups[a].depth });
        state.move_task(task, to);
        sent += load;
        *budget -= load;
        moved = true;
    }
    moved
}

/// The unmoved task below `a` whose load is closest to `want`, strictly under `max_load`
/// (heavier would not reduce the imbalance) and at most `budget` (the push cap), with the
/// least loaded leaf below `b` it may run in.
fn find_victim(state: &mut PassState, a: GroupId, b: GroupId, want: f64, max_load: f64, budget: f64) -> Option<(usize, usize)> {
    let mut sources = state.h.leaves_under(a);
    sources.sort_by(|&x, &y| state.normalized(y).total_cmp(&state.normalized(x)).then(x.cmp(&y)));
    let mut targets = state.h.leaves_under(b);
    targets.retain(|&t| state.h.groups[t].capacity > 0);
    targets.sort_by(|&x, &y| state.normalized(x).total_cmp(&state.normalized(y)).then(x.cmp(&y)));
    let target_domains: Vec<usize> = targets.iter().map(|&t| state.h.groups[t].domain.unwrap()).collect();
    let source_domains: Vec<usize> = sources.iter().map(|&l| state.h.groups[l].domain.unwrap()).collect();
    for &d in &source_domains {
        state.sorted_members(d);
    }

    let state = &*state;
    let targets_room = TargetsRoom::of(state, &targets);
    let mut best: Option<(f64, usize, usize)> = None;
    for &domain in &source_domains {
        let source_leaf = state.h.leaf_of_domain[domain];
        // Heavier than this, a task would fit no target (or break the push cap): the scans
        // start below it instead of skipping such tasks one by one.
        let limit = max_load.min(room_bound(state, source_leaf, &targets_room));
        let members = state.members(domain);
        // want never exceeds the budget: the lighter side is within it.
        let below = members.partition_point(|&(load, _)| (load as f64) < want.min(limit));
        let above = members.partition_point(|&(load, _)| (load as f64) < want);
        let fit = Fit { source: domain, targets: &target_domains, limit, budget };
        let lighter = fit.first(state, members[..below].iter().rev());
        let heavier = fit.first(state, members[above..].iter());
        for (task, to) in [lighter, heavier].into_iter().flatten() {
            let distance = (state.tasks[task].load as f64 - want).abs();
            if best.is_none_or(|(d, _, _)| distance < d) {
                best = Some((distance, task, to));
            }
        }
    }
    best.map(|(_, task, to)| (task, to))
}

/// What bounds the load any of the targets can take from a source: the least load per
/// capacity among them and the largest capacity.
struct TargetsRoom {
    least_normalized: f64,
    largest_capacity: f64,
}

impl TargetsRoom {
    fn of(state: &PassState, targets: &[GroupId]) -> TargetsRoom {
        TargetsRoom {
            least_normalized: targets.iter().map(|&t| state.normalized(t)).fold(f64::INFINITY, f64::min),
            largest_capacity: targets.iter().map(|&t| state.h.groups[t].capacity as f64).fold(0.0, f64::max),
        }
    }
}

/// An upper bound of 2 x equalizing_load(source, t) over the targets t: the load a move
/// must stay under to reduce the imbalance with some target. x = Cs·Ct/(Cs+Ct) · (ns − nt)
/// grows with Ct and falls with nt, so the bound takes the largest Ct with the least nt
/// (exact when the targets' capacities are equal). Only a scan bound: each target is still
/// checked exactly.
fn room_bound(state: &PassState, source: GroupId, room: &TargetsRoom) -> f64 {
    let cs = state.h.groups[source].capacity.max(1) as f64;
    let ct = room.largest_capacity;
    if ct <= 0.0 {
        return 0.0;
    }
    (2.0 * cs * ct / (cs + ct) * (state.normalized(source) - room.least_normalized)).max(0.0)
}

/// Where a victim comes from, where it may go, and how heavy it may be.
struct Fit<'t> {
    source: usize,
    /// Candidate domains, least loaded first.
    targets: &'t [usize],
    /// Loads from this one up fit nowhere (exclusive).
    limit: f64,
    /// What the pusher may still give up (inclusive).
    budget: f64,
}

impl Fit<'_> {
    /// The first task of `candidates` (walked away from the wanted load) that may move, with
    /// the first target it may run in whose imbalance with the source leaf the move also
    /// reduces: so the spread of the domains never grows.
    fn first<'a>(&self, state: &PassState, candidates: impl Iterator<Item = &'a (u64, u32)>) -> Option<(usize, usize)> {
        let h = state.h;
        let source_leaf = h.leaf_of_domain[self.source];
        for &(load, i) in candidates {
            let (t, load) = (i as usize, load as f64);
            if load >= self.limit || load > self.budget {
                // Only the upward walk meets these, and every later task is heavier still.
                return None;
            }
            if state.moved[t] || load <= 0.0 {
                continue;
            }
            let fits = |&&d: &&usize| {
                state.tasks[t].may_run_in(d) && load < 2.0 * equalizing_load(state, source_leaf, h.leaf_of_domain[d])
            };
            if let Some(&to) = self.targets.iter().find(fits) {
                return Some((t, to));
            }
        }
        None
    }
}
