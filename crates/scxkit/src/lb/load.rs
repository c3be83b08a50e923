//! A task's load for the balancer, in fixed point so that sums are exact.
//!
//! While the machine has spare CPUs, a weight does not change how much a task runs (every
//! runnable task gets a CPU): its load is its duty cycle alone. Only when the machine is
//! fully utilized do weights share the CPUs out, and then the load is duty cycle times
//! weight, the weights first adjusted for infeasibility (a task cannot use more than one
//! CPU, whatever its weight).

use crate::infeasible::{adjust_weights, TaskLoad};

/// Load of a nice-0 task (weight 100) that is runnable all the time.
pub const LOAD_NICE0_BUSY: u64 = 1024;
/// Weight of a nice-0 task (sched_ext's p->scx.weight), as a float for the load arithmetic.
pub const WEIGHT_NICE0: f64 = crate::weight::NICE0_WEIGHT as f64;

/// Loads of `tasks` (weights and duty cycles in [0, 1]) on `nr_cpus` CPUs: duty x
/// [`LOAD_NICE0_BUSY`] when not `fully_utilized`, else duty x adjusted weight / 100 x
/// [`LOAD_NICE0_BUSY`].
pub fn task_loads(tasks: &[TaskLoad], nr_cpus: usize, fully_utilized: bool) -> Vec<u64> {
    let weights: Vec<f64> = if fully_utilized {
        adjust_weights(tasks, nr_cpus).weights
    } else {
        vec![WEIGHT_NICE0; tasks.len()]
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
    fn loads_follow_duty_with_spare_cpus_and_weight_when_fully_utilized() {
        let t = |weight, duty_cycle| TaskLoad { weight, duty_cycle };
        let tasks = [t(100.0, 1.0), t(100.0, 0.5), t(10000.0, 1.0), t(50.0, 0.25)];
        // Spare CPUs: the weight changes nothing, the duty cycle is the load.
        assert_eq!(task_loads(&tasks, 2, false), vec![1024, 512, 1024, 256]);
        let tasks = &tasks[..3];
        // Fully utilized on 2 CPUs: the heavy task can use one CPU only; its weight drops to
        // the others' load per remaining CPU (150), so it no longer looks like 100 tasks.
        let adjusted = task_loads(tasks, 2, true);
        assert_eq!(&adjusted[..2], &[1024, 512]);
        assert_eq!(adjusted[2], 1536);
        // Feasible weights count as they are: a nice-0 task weighs twice a weight-50 one.
        assert_eq!(task_loads(&[t(50.0, 1.0), t(100.0, 1.0), t(100.0, 1.0)], 2, true), vec![512, 1024, 1024]);
    }
}
