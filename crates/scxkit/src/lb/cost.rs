//! What balancing costs, per level, measured as the RFC on propagating sched-domain
//! statistics did: attempts that found nothing to do, and the duration of those that worked.

use std::collections::VecDeque;

/// Durations kept for the summaries: the most recent attempts of each kind.
pub const COST_WINDOW: usize = 4096;

/// One level's attempts since the balancer was made (or reset): counts over its whole life,
/// durations over the last [`COST_WINDOW`] attempts.
#[derive(Debug, Clone, Default)]
pub struct LevelCost {
    /// Attempts (one per parent group per pass) that moved nothing.
    pub idle: u64,
    /// Attempts that moved at least one task.
    pub worked: u64,
    /// Durations of the recent attempts that moved at least one task, ns.
    pub worked_ns: VecDeque<u64>,
    /// Durations of the recent attempts, ns (idle ones included).
    pub all_ns: VecDeque<u64>,
}

/// min, avg, p99 and max of a set of durations, ns.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CostSummary {
    pub count: usize,
    pub min_ns: u64,
    pub avg_ns: f64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl CostSummary {
    pub fn of<'a>(durations: impl IntoIterator<Item = &'a u64>) -> CostSummary {
        let mut sorted: Vec<u64> = durations.into_iter().copied().collect();
        if sorted.is_empty() {
            return CostSummary::default();
        }
        sorted.sort_unstable();
        let p99_index = ((sorted.len() as f64 * 0.99).ceil() as usize).clamp(1, sorted.len()) - 1;
        CostSummary {
            count: sorted.len(),
            min_ns: sorted[0],
            avg_ns: sorted.iter().sum::<u64>() as f64 / sorted.len() as f64,
            p99_ns: sorted[p99_index],
            max_ns: *sorted.last().unwrap(),
        }
    }
}

impl LevelCost {
    pub fn record(&mut self, ns: u64, worked: bool) {
        push_recent(&mut self.all_ns, ns);
        if worked {
            self.worked += 1;
            push_recent(&mut self.worked_ns, ns);
        } else {
            self.idle += 1;
        }
    }

    pub fn attempts(&self) -> u64 {
        self.idle + self.worked
    }

    pub fn worked_costs(&self) -> CostSummary {
        CostSummary::of(&self.worked_ns)
    }

    pub fn all(&self) -> CostSummary {
        CostSummary::of(&self.all_ns)
    }
}

fn push_recent(window: &mut VecDeque<u64>, ns: u64) {
    if window.len() == COST_WINDOW {
        window.pop_front();
    }
    window.push_back(ns);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_durations() {
        let s = CostSummary::of(&(1..=100).collect::<Vec<u64>>());
        assert_eq!((s.count, s.min_ns, s.p99_ns, s.max_ns), (100, 1, 99, 100));
        assert_eq!(s.avg_ns, 50.5);
        assert_eq!(CostSummary::of(&[7]).p99_ns, 7);
        assert_eq!(CostSummary::of(&[]).count, 0);
        let mut long = LevelCost::default();
        for ns in 0..(COST_WINDOW as u64 + 10) {
            long.record(ns, true);
        }
        assert_eq!((long.worked, long.worked_ns.len()), (COST_WINDOW as u64 + 10, COST_WINDOW));
        assert_eq!(long.worked_costs().min_ns, 10, "the oldest durations leave the window");
        let mut level = LevelCost::default();
        level.record(10, false);
        level.record(30, true);
        assert_eq!((level.idle, level.attempts(), level.worked_costs().max_ns), (1, 2, 30));
    }
}
