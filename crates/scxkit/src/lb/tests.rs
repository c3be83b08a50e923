//! Balancer tests: the worked example of the module docs, properties on random hierarchies,
//! and the real machines' fixtures.

use super::*;
use crate::cpumask::Cpumask;
use crate::domains::Domains;
use crate::topology::fixture;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const BUSY: u64 = load::LOAD_NICE0_BUSY;

fn task(load: u64, domain: usize) -> Task {
    Task { load, domain, allowed: None }
}

/// Two nodes of two 4-CPU domains: domains 0 and 1 on node 0, 2 and 3 on node 1.
fn two_by_two() -> Hierarchy {
    grid(2, 2, |_| 4096)
}

/// `counts[d]` busy nice-0 tasks in domain d.
fn busy_per_domain(counts: &[usize]) -> Vec<Task> {
    counts.iter().enumerate().flat_map(|(d, &n)| (0..n).map(move |_| task(BUSY, d))).collect()
}

fn count_per_domain(tasks: &[Task], n: usize) -> Vec<usize> {
    (0..n).map(|d| tasks.iter().filter(|t| t.domain == d).count()).collect()
}

#[test]
fn worked_example() {
    let mut tasks = busy_per_domain(&[6, 4, 1, 1]);
    let mut lb = Balancer::new(two_by_two(), Mode::Propagate);
    let report = lb.pass(&mut tasks);
    assert_eq!(report.moved_per_level, vec![4, 0]);
    assert_eq!(count_per_domain(&tasks, 4), vec![3, 3, 3, 3]);
    assert!(report.moves.iter().all(|m| m.from < 2 && m.to >= 2 && m.depth == 1));
    assert_eq!(report.imbalance_after, 0.0);
    assert_eq!(lb.costs()[0].worked_ns.len(), 1);
    assert_eq!(lb.costs()[1].idle, 2, "both nodes' domain attempts found nothing to do");
    assert_eq!(lb.pass(&mut tasks).moves, vec![], "a balanced machine stays put");
}

#[test]
fn capacity_decides_what_balanced_means() {
    // One node, two domains: 8 CPUs and 2 CPUs (or a hybrid pair). 10 busy tasks settle at
    // 8 and 2, not 5 and 5.
    let leaves = [LeafSpec { domain: 0, path: vec![0], capacity: 8 * 1024 }, LeafSpec { domain: 1, path: vec![0], capacity: 2 * 1024 }];
    let h = Hierarchy::build(&leaves, vec![LevelPolicy::node(), LevelPolicy::domain()]).unwrap();
    let mut tasks: Vec<Task> = (0..10).map(|i| task(BUSY, if i < 5 { 0 } else { 1 })).collect();
    let mut lb = Balancer::new(h, Mode::Propagate);
    for _ in 0..5 {
        lb.pass(&mut tasks);
    }
    assert_eq!(count_per_domain(&tasks, 2), vec![8, 2]);
}

#[test]
fn a_task_that_may_not_move_stays_and_another_goes() {
    let mut tasks = vec![task(BUSY, 0), task(BUSY, 0), task(BUSY, 0), task(BUSY, 0)];
    let mut only0 = Cpumask::new(4);
    only0.set(0);
    tasks[0].allowed = Some(only0.clone());
    tasks[1].allowed = Some(only0);
    let report = Balancer::new(two_by_two(), Mode::Propagate).pass(&mut tasks);
    assert!(!report.moves.is_empty());
    assert_eq!((tasks[0].domain, tasks[1].domain), (0, 0));
}

#[test]
fn kept_aggregates_equal_a_full_rescan_after_any_moves() {
    let mut rng = StdRng::seed_from_u64(7);
    for _ in 0..50 {
        let (h, mut tasks) = random_case(&mut rng);
        let n = h.nr_domains();
        let mut state = state::PassState::new(&h, &mut tasks, Mode::Propagate);
        for _ in 0..200 {
            let candidates = state.candidates();
            if candidates.is_empty() {
                break;
            }
            let t = candidates[rng.random_range(0..candidates.len())];
            let to = rng.random_range(0..n);
            if rng.random_bool(0.5) {
                let d = state.tasks[t].domain;
                state.sorted_members(d);
            }
            state.move_task(t, to);
            assert_eq!(state.kept_loads(), state.full_rescan().as_slice());
        }
    }
}

/// A random hierarchy (2 or 3 levels, uneven capacities, some empty) with random tasks, a
/// skewed placement and some restricted affinities.
fn random_case(rng: &mut StdRng) -> (Hierarchy, Vec<Task>) {
    let depth = rng.random_range(2..=3);
    let nr_domains = rng.random_range(2..=12);
    let leaves: Vec<LeafSpec> = (0..nr_domains)
        .map(|d| {
            let path = (0..depth - 1).map(|_| rng.random_range(0..3)).collect();
            LeafSpec { domain: d, path, capacity: rng.random_range(0..=8) * 512 }
        })
        .collect();
    let mut policies = vec![LevelPolicy::node(), LevelPolicy::domain()];
    if depth == 3 {
        policies.insert(0, LevelPolicy::with_threshold("package", 0.25));
    }
    let h = Hierarchy::build(&leaves, policies).unwrap();
    let nr_tasks = rng.random_range(0..200);
    let tasks = (0..nr_tasks)
        .map(|_| {
            let skewed = rng.random_range(0..nr_domains).min(rng.random_range(0..nr_domains));
            let mut t = task(rng.random_range(0..4 * BUSY), skewed);
            if rng.random_bool(0.1) {
                let mut m = Cpumask::new(nr_domains);
                m.set(skewed);
                m.set(rng.random_range(0..nr_domains));
                t.allowed = Some(m);
            }
            t
        })
        .collect();
    (h, tasks)
}

/// Σ L²/C − (ΣL)²/ΣC over the domains: the capacity-weighted variance of their load per unit
/// of capacity (times the total capacity). Zero when perfectly balanced.
fn weighted_variance(h: &Hierarchy, tasks: &[Task]) -> f64 {
    let n = h.nr_domains();
    let mut load = vec![0f64; n];
    for t in tasks {
        load[t.domain] += t.load as f64;
    }
    let cap = |d: usize| h.groups[h.leaf_of_domain[d]].capacity.max(1) as f64;
    let total_cap: f64 = (0..n).map(cap).sum();
    (0..n).map(|d| load[d] * load[d] / cap(d)).sum::<f64>() - load.iter().sum::<f64>().powi(2) / total_cap
}

#[test]
fn properties_on_random_hierarchies() {
    let mut rng = StdRng::seed_from_u64(42);
    for case in 0..300 {
        let (h, mut tasks) = random_case(&mut rng);
        let original = tasks.clone();
        let mut rescanned = tasks.clone();
        let mut lb = Balancer::new(h.clone(), Mode::Propagate);
        let mut slow = Balancer::new(h.clone(), Mode::Rescan);
        let mut converged = false;
        for _ in 0..20 {
            let variance_before = weighted_variance(&h, &tasks);
            let report = lb.pass(&mut tasks);
            assert_eq!(slow.pass(&mut rescanned).moves, report.moves, "case {case}: the modes decide alike");
            let variance_after = weighted_variance(&h, &tasks);
            assert!(variance_after <= variance_before * (1.0 + 1e-12) + 1e-6, "case {case}: imbalance grew: {variance_before} -> {variance_after}");
            let mut seen = std::collections::HashSet::new();
            for m in &report.moves {
                assert!(seen.insert(m.task), "case {case}: task {} moved twice in a pass", m.task);
                assert!(original[m.task].may_run_in(m.to), "case {case}: task {} put where it may not run", m.task);
            }
            if report.moves.is_empty() {
                converged = true;
                break;
            }
        }
        assert!(converged, "case {case}: a static load did not converge in 20 passes");
    }
}

#[test]
fn nothing_crosses_nodes_below_the_node_threshold() {
    let mut rng = StdRng::seed_from_u64(3);
    for _ in 0..200 {
        // Node 0 a little heavier than node 1 (under 17%), its domains very uneven.
        let per_node = rng.random_range(100..200u64);
        let extra = rng.random_range(0..per_node * 15 / 100);
        let mut tasks: Vec<Task> = (0..per_node + extra).map(|_| task(BUSY, 0)).collect();
        tasks.extend((0..per_node).map(|i| task(BUSY, 2 + (i % 2) as usize)));
        let report = Balancer::new(two_by_two(), Mode::Propagate).pass(&mut tasks);
        assert_eq!(report.moved_per_level[0], 0);
        assert!(report.moved_per_level[1] > 0, "the domains inside node 0 still balance");
        assert!(report.moves.iter().all(|m| m.from / 2 == m.to / 2));
    }
}

// The next two tests pin the rule that decides when a pair of sibling groups is worked
// (balance.rs): the difference of their loads per capacity, as a fraction of their parent's
// average, against the level's threshold. A rule comparing each group's deviation from that
// average with the threshold would need twice the difference between two groups: nodes
// whose loads differ by 17% to 34% of the average (domains: 5% to 10%) balance under the
// rule of today and would not under that one. A change of rule must change these tests.

#[test]
fn nodes_17_to_34_percent_apart_balance_under_the_pair_rule() {
    // 10 and 8 busy tasks: 2/9 = 22% apart, each 1/9 = 11% from the average of 9. One task
    // crosses, from node 0's busiest domain to node 1's first, and leaves 5 and 4 in each
    // node, which one task cannot even out. (The deviation rule would move nothing between
    // the nodes, and then one task between node 0's domains: 5, 5, 4, 4.)
    let mut tasks = busy_per_domain(&[6, 4, 4, 4]);
    let report = Balancer::new(two_by_two(), Mode::Propagate).pass(&mut tasks);
    assert_eq!(report.moved_per_level, vec![1, 0]);
    assert_eq!(count_per_domain(&tasks, 4), vec![5, 4, 5, 4]);
    // 13 and 10: 3/11.5 = 26% apart, 1.5/11.5 = 13% from the average. One task crosses; at
    // 12 and 11 (9% apart) the pair is within the threshold.
    let mut tasks = busy_per_domain(&[7, 6, 5, 5]);
    let report = Balancer::new(two_by_two(), Mode::Propagate).pass(&mut tasks);
    assert_eq!(report.moved_per_level, vec![1, 0]);
    assert_eq!(count_per_domain(&tasks, 4), vec![6, 6, 6, 5]);
}

#[test]
fn domains_5_to_10_percent_apart_balance_under_the_pair_rule() {
    // One node's two domains with 40 and 38 busy tasks: 2/39 = 5.1% apart, 1/39 = 2.6% from
    // the average. One task moves and evens them out.
    let mut tasks = busy_per_domain(&[40, 38]);
    let report = Balancer::new(grid(1, 2, |_| 4096), Mode::Propagate).pass(&mut tasks);
    assert_eq!(report.moved_per_level, vec![0, 1]);
    assert_eq!(count_per_domain(&tasks, 2), vec![39, 39]);
}

#[test]
fn real_machines_converge_with_every_move_allowed() {
    for name in ["xeon-gold-6138-2s", "epyc-7702p-nps4", "big-1024"] {
        let topo = fixture(name);
        let domains = Domains::per_llc(&topo);
        let h = Hierarchy::numa_domains(&topo, &domains).unwrap();
        let n = h.nr_domains();
        let mut rng = StdRng::seed_from_u64(11);
        // Everything starts on the first node's domains.
        let first_node: Vec<usize> = domains.domains.iter().filter(|d| d.node == domains.domains[0].node).map(|d| d.id).collect();
        let mut tasks: Vec<Task> = (0..topo.nr_online() * 2)
            .map(|_| task(rng.random_range(BUSY / 4..=BUSY), first_node[rng.random_range(0..first_node.len())]))
            .collect();
        let mut lb = Balancer::new(h, Mode::Propagate);
        let first = lb.pass(&mut tasks);
        assert!(first.moved_per_level[0] > 0, "{name}: load leaves the first node");
        let mut passes = 1;
        while !lb.pass(&mut tasks).moves.is_empty() {
            passes += 1;
            assert!(passes <= 30, "{name}: no convergence in 30 passes");
        }
        let used = count_per_domain(&tasks, n).iter().filter(|&&c| c > 0).count();
        assert_eq!(used, n, "{name}: every domain gets work ({passes} passes)");
    }
}

/// A hierarchy of `nodes` x `per_node` domains with the given capacity per domain.
fn grid(nodes: usize, per_node: usize, capacity: impl Fn(usize) -> u64) -> Hierarchy {
    let leaves: Vec<LeafSpec> =
        (0..nodes * per_node).map(|d| LeafSpec { domain: d, path: vec![d / per_node], capacity: capacity(d) }).collect();
    Hierarchy::build(&leaves, vec![LevelPolicy::node(), LevelPolicy::domain()]).unwrap()
}

#[test]
fn a_domain_or_node_without_capacity_never_receives() {
    // Domain 3 (every CPU offline) next to a loaded domain 2 of the same node.
    let mut tasks: Vec<Task> = (0..3).map(|_| task(BUSY, 2)).chain((0..6).map(|_| task(1, 2))).collect();
    let report = Balancer::new(grid(2, 2, |d| if d == 3 { 0 } else { 4096 }), Mode::Propagate).pass(&mut tasks);
    assert!(report.moves.iter().all(|m| m.to != 3), "{:?}", report.moves);
    // A whole node offline.
    let mut tasks: Vec<Task> = (0..16).map(|_| task(BUSY, 0)).chain((0..6).map(|_| task(1, 0))).collect();
    let report = Balancer::new(grid(2, 2, |d| if d >= 2 { 0 } else { 4096 }), Mode::Propagate).pass(&mut tasks);
    assert!(report.moves.iter().all(|m| m.to < 2), "{:?}", report.moves);
}

#[test]
fn a_receiver_is_filled_up_to_the_average_not_beyond() {
    // Everything on node 0 of 4: each other node should end near the average (a quarter),
    // not take half of node 0 and pass it on next time.
    let mut tasks: Vec<Task> = (0..400).map(|i| task(BUSY, i % 4)).collect();
    let h = grid(4, 4, |_| 4096);
    let report = Balancer::new(h, Mode::Propagate).pass(&mut tasks);
    let per_node: Vec<usize> = (0..4).map(|n| tasks.iter().filter(|t| t.domain / 4 == n).count()).collect();
    assert!(report.moved_per_level[0] > 0);
    for (n, &count) in per_node.iter().enumerate().skip(1) {
        assert!(count <= 101, "node {n} received {count} tasks, over the average of 100: {per_node:?}");
    }
}

#[test]
fn the_transfer_share_sets_how_much_a_pair_moves_per_pass() {
    let moved = |share: f64| {
        let mut policy = LevelPolicy::domain();
        policy.transfer_share = share;
        let leaves = [LeafSpec { domain: 0, path: vec![0], capacity: 4096 }, LeafSpec { domain: 1, path: vec![0], capacity: 4096 }];
        let h = Hierarchy::build(&leaves, vec![LevelPolicy::node(), policy]).unwrap();
        let mut tasks: Vec<Task> = (0..100).map(|_| task(BUSY, 0)).collect();
        Balancer::new(h, Mode::Propagate).pass(&mut tasks).moves.len()
    };
    // At 0.5, 49 moves: at 51 against 49 the pair is within the 5% threshold.
    assert_eq!((moved(0.5), moved(0.25), moved(0.1)), (49, 25, 10));
}

#[test]
fn many_domains_that_cannot_be_evened_out_move_nothing() {
    // One node of 128 domains, one task each, loads slightly different: over the threshold
    // pairwise, but no move reduces an imbalance. Every pair is looked at once.
    let leaves: Vec<LeafSpec> = (0..128).map(|d| LeafSpec { domain: d, path: vec![0], capacity: 1024 }).collect();
    let h = Hierarchy::build(&leaves, vec![LevelPolicy::node(), LevelPolicy::domain()]).unwrap();
    let mut tasks: Vec<Task> = (0..128).map(|d| task(1000 + 20 * d as u64, d)).collect();
    let report = Balancer::new(h, Mode::Propagate).pass(&mut tasks);
    assert_eq!(report.moves, vec![]);
}
