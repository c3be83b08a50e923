//! What balancing costs, per level, measured as the RFC on propagating sched-domain
//! statistics did: attempts that found nothing to do, and the duration of those that worked.

/// One level's attempts since the balancer was made (or reset).
#[derive(Debug, Clone, Default)]
pub struct LevelCost {
    /// Attempts (one per parent group per pass) that found the level balanced.
    pub idle: u64,
    /// Durations of the attempts that moved at least one task, ns.
    pub worked_ns: Vec<u64>,
    /// Durations of every attempt, ns (idle ones included).
    pub all_ns: Vec<u64>,
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
    pub fn of(durations: &[u64]) -> CostSummary {
        if durations.is_empty() {
            return CostSummary::default();
        }
        let mut sorted = durations.to_vec();
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
        self.all_ns.push(ns);
        if worked {
            self.worked_ns.push(ns);
        } else {
            self.idle += 1;
        }
    }

    pub fn attempts(&self) -> u64 {
        self.all_ns.len() as u64
    }

    pub fn worked(&self) -> CostSummary {
        CostSummary::of(&self.worked_ns)
    }

    pub fn all(&self) -> CostSummary {
        CostSummary::of(&self.all_ns)
    }
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
        let mut level = LevelCost::default();
        level.record(10, false);
        level.record(30, true);
        assert_eq!((level.idle, level.attempts(), level.worked().max_ns), (1, 2, 30));
    }
}
