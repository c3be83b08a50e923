//! A task's load for the balancer: its duty cycle times its weight, in fixed point so that
//! sums are exact. When the machine is fully utilized, weights are first adjusted for
//! infeasibility (a task cannot use more than one CPU, whatever its weight).

use crate::infeasible::{adjust_weights, TaskLoad};

/// Load of a nice-0 task (weight 100) that is runnable all the time.
pub const LOAD_NICE0_BUSY: u64 = 1024;
/// Weight of a nice-0 task (sched_ext's p->scx.weight).
pub const WEIGHT_NICE0: f64 = 100.0;

/// Loads of `tasks` (weights and duty cycles in [0, 1]) on `nr_cpus` CPUs.
pub fn task_loads(tasks: &[TaskLoad], nr_cpus: usize, fully_utilized: bool) -> Vec<u64> {
    let weights = if fully_utilized {
        adjust_weights(tasks, nr_cpus).weights
    } else {
        tasks.iter().map(|t| t.weight).collect()
    };
    tasks
        .iter()
        .zip(weights)
        .map(|(t, w)| (t.duty_cycle.clamp(0.0, 1.0) * w / WEIGHT_NICE0 * LOAD_NICE0_BUSY as f64).round() as u64)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_follow_weight_and_duty_and_cap_infeasible_weights() {
        let t = |weight, duty_cycle| TaskLoad { weight, duty_cycle };
        let tasks = [t(100.0, 1.0), t(100.0, 0.5), t(10000.0, 1.0)];
        assert_eq!(task_loads(&tasks, 2, false), vec![1024, 512, 102400]);
        // Fully utilized on 2 CPUs: the heavy task can use one CPU only; its weight drops to
        // the others' load per remaining CPU (150), so it no longer looks like 100 tasks.
        let adjusted = task_loads(&tasks, 2, true);
        assert_eq!(&adjusted[..2], &[1024, 512]);
        assert_eq!(adjusted[2], 1536);
    }
}
