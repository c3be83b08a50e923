use super::*;
use rand::{Rng, SeedableRng};

const EPS: f64 = 1e-9;

/// CPUs each task is entitled to while it runs.
fn entitlements(tasks: &[TaskLoad], weights: &[f64], nr_cpus: usize) -> Vec<f64> {
    let total: f64 = tasks.iter().zip(weights).map(|(t, w)| w * t.duty_cycle).sum();
    weights.iter().map(|w| nr_cpus as f64 * w / total).collect()
}

/// Tries every set of infeasible tasks and returns the adjusted weights of the one that is
/// self-consistent (its members above λ, the rest at or below), if any set but "all" is.
fn brute_force(tasks: &[TaskLoad], nr_cpus: usize) -> Option<Vec<f64>> {
    let n = tasks.len();
    for set in 0u32..(1 << n) {
        let inside = |i: usize| set & (1 << i) != 0;
        if set.count_ones() as usize == n {
            continue;
        }
        let capacity = nr_cpus as f64 - (0..n).filter(|&i| inside(i)).map(|i| tasks[i].duty_cycle).sum::<f64>();
        if capacity <= 0.0 {
            continue;
        }
        let lambda = (0..n).filter(|&i| !inside(i)).map(|i| tasks[i].weight * tasks[i].duty_cycle).sum::<f64>() / capacity;
        let consistent = (0..n).all(|i| if inside(i) { tasks[i].weight > lambda } else { tasks[i].weight <= lambda });
        if consistent {
            return Some((0..n).map(|i| if inside(i) { lambda } else { tasks[i].weight }).collect());
        }
    }
    None
}

fn random_tasks(rng: &mut impl Rng, n: usize) -> Vec<TaskLoad> {
    (0..n)
        .map(|_| TaskLoad {
            // Nice-like weights spread over three orders of magnitude, duty cycles in (0, 1].
            weight: 10f64.powf(rng.random_range(0.0..3.5)),
            duty_cycle: rng.random_range(0.01..=1.0),
        })
        .collect()
}

#[test]
fn hand_worked_example() {
    // 2 CPUs; one task of weight 10000 and two of 100, all running flat out. By weight alone
    // the big one would get 1.96 CPUs; it can use one, the other two share the second.
    let tasks = [
        TaskLoad { weight: 10000.0, duty_cycle: 1.0 },
        TaskLoad { weight: 100.0, duty_cycle: 1.0 },
        TaskLoad { weight: 100.0, duty_cycle: 1.0 },
    ];
    let out = adjust_weights(&tasks, 2);
    assert_eq!(out.nr_infeasible, 1);
    assert!((out.lambda - 200.0).abs() < EPS);
    let s = entitlements(&tasks, &out.weights, 2);
    assert!((s[0] - 1.0).abs() < EPS && (s[1] - 0.5).abs() < EPS && (s[2] - 0.5).abs() < EPS, "{s:?}");
}

#[test]
fn nothing_changes_when_all_is_feasible() {
    let tasks = [TaskLoad { weight: 100.0, duty_cycle: 1.0 }, TaskLoad { weight: 120.0, duty_cycle: 0.5 }];
    let out = adjust_weights(&tasks, 1);
    assert_eq!(out.nr_infeasible, 0);
    assert_eq!(out.weights, vec![100.0, 120.0]);
}

#[test]
fn matches_brute_force_on_small_cases() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let mut compared = 0;
    for _ in 0..3000 {
        let n = rng.random_range(1..=8);
        let cpus = rng.random_range(1..=4);
        let tasks = random_tasks(&mut rng, n);
        let out = adjust_weights(&tasks, cpus);
        if let Some(expected) = brute_force(&tasks, cpus) {
            for (got, want) in out.weights.iter().zip(&expected) {
                assert!((got - want).abs() <= EPS * want.abs().max(1.0), "{tasks:?} on {cpus}: {:?} vs {expected:?}", out.weights);
            }
            compared += 1;
        }
    }
    assert!(compared > 1000, "only {compared} cases had a feasible solution to compare");
}

#[test]
fn properties_on_random_cases() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let mut with_infeasible = 0;
    for _ in 0..300 {
        let n = rng.random_range(1..=400);
        let cpus = rng.random_range(1..=64);
        let tasks = random_tasks(&mut rng, n);
        let out = adjust_weights(&tasks, cpus);
        let e = entitlements(&tasks, &out.weights, cpus);
        let infeasible: Vec<usize> = (0..n).filter(|&i| out.weights[i] != tasks[i].weight).collect();
        assert!(infeasible.len() <= out.nr_infeasible);
        if out.nr_infeasible < n {
            // No task above one CPU; the infeasible ones get exactly one while they run.
            assert!(e.iter().all(|&x| x <= 1.0 + 1e-9), "an entitlement above one CPU");
            assert!(infeasible.iter().all(|&i| (e[i] - 1.0).abs() < 1e-9));
            // The whole capacity is handed out.
            let used: f64 = (0..n).map(|i| e[i] * tasks[i].duty_cycle).sum();
            assert!((used - cpus as f64).abs() < 1e-6, "used {used} of {cpus}");
        } else {
            assert!(e.iter().all(|&x| x >= 1.0 - 1e-9), "all infeasible: each gets a full CPU");
        }
        // Order by weight kept; weights only ever lowered.
        let mut by_weight: Vec<usize> = (0..n).collect();
        by_weight.sort_by(|&a, &b| tasks[a].weight.total_cmp(&tasks[b].weight));
        assert!(by_weight.windows(2).all(|p| out.weights[p[0]] <= out.weights[p[1]] + 1e-9));
        assert!((0..n).all(|i| out.weights[i] <= tasks[i].weight + 1e-9));
        with_infeasible += usize::from(out.nr_infeasible > 0 && out.nr_infeasible < n);
    }
    assert!(with_infeasible > 30, "too few random cases exercised infeasible tasks: {with_infeasible}");
}
