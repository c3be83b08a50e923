//! Infeasible weights. A task can use at most one CPU; when its weight would entitle it to
//! more, proportional sharing by weight misplaces load (the balancer would try to give it
//! capacity it cannot use). Given each task's weight and duty cycle (the fraction of the time
//! it is runnable, in (0, 1]) and the number of CPUs, compute adjusted weights such that:
//!   - a task whose share would exceed one CPU (infeasible) gets exactly one CPU while it
//!     runs, that is its full duty cycle;
//!   - the others share the remaining capacity in proportion to their weights.
//!
//! While runnable, task i is entitled to e_i = C·w_i / Σ_j w_j·d_j CPUs (C CPUs, weights w,
//! duty cycles d). With I the infeasible set, λ = Σ_{j∉I} w_j·d_j / (C − Σ_{i∈I} d_i); task i
//! is infeasible exactly when w_i > λ, and its adjusted weight is λ, which makes e_i = 1 and
//! the total entitlement used Σ e_i·d_i = C. Taking tasks by decreasing weight, each removal
//! only lowers λ, so one pass after a sort finds I: O(n log n). Order by weight is kept,
//! since λ is above every feasible weight. When every task is infeasible (more CPUs than
//! demand), all get the λ of the last step and each is entitled to at least one CPU.

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TaskLoad {
    pub weight: f64,
    /// Fraction of one CPU the task runs, in (0, 1].
    pub duty_cycle: f64,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AdjustedWeights {
    /// One per input task, in input order.
    pub weights: Vec<f64>,
    /// Number of infeasible tasks.
    pub nr_infeasible: usize,
    /// Weighted load per CPU of the feasible tasks (the weight given to infeasible ones).
    pub lambda: f64,
}

pub fn adjust_weights(tasks: &[TaskLoad], nr_cpus: usize) -> AdjustedWeights {
    let load = |t: &TaskLoad| t.weight * t.duty_cycle;
    let mut order: Vec<usize> = (0..tasks.len()).collect();
    order.sort_by(|&a, &b| tasks[b].weight.total_cmp(&tasks[a].weight));

    let mut remaining_load: f64 = tasks.iter().map(load).sum();
    let mut remaining_capacity = nr_cpus as f64;
    let mut nr_infeasible = 0;
    let mut lambda = if remaining_capacity > 0.0 { remaining_load / remaining_capacity } else { 0.0 };
    for &i in &order {
        if remaining_capacity <= 0.0 || tasks[i].weight <= lambda {
            break;
        }
        nr_infeasible += 1;
        remaining_load -= load(&tasks[i]);
        remaining_capacity -= tasks[i].duty_cycle;
        if remaining_capacity > 0.0 && remaining_load > 0.0 {
            lambda = remaining_load / remaining_capacity;
        } else {
            break;
        }
    }
    let mut weights: Vec<f64> = tasks.iter().map(|t| t.weight).collect();
    for &i in order.iter().take(nr_infeasible) {
        weights[i] = lambda;
    }
    AdjustedWeights { weights, nr_infeasible, lambda }
}

#[cfg(test)]
mod tests;
