//! The tuner: every --tune-interval, the CPUs' utilization from /proc/stat decides which
//! domains are underused (the direct-greedy and kick-greedy sets), whether the machine is
//! fully utilized (the balancer then weighs load by weight, infeasible weights adjusted),
//! and the slice (short when fully utilized, so that queued tasks wait less).

use crate::intf::tune_input;
use scxkit::procstat::{utilization, CpuTimes};
use scxkit::Cpumask;
use std::collections::BTreeMap;

/// Average utilization of the online CPUs at or above which the machine is fully utilized.
pub const FULLY_UTILIZED_RATIO: f64 = 0.95;

#[derive(Debug, Clone)]
pub struct TunerConfig {
    pub direct_greedy_under: f64,
    pub kick_greedy_under: f64,
    pub slice_underutil_ns: u64,
    pub slice_overutil_ns: u64,
}

/// What one tuning step decided.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Tuning {
    /// Each domain's average CPU utilization, 0..=1.
    pub dom_util: Vec<f64>,
    pub fully_utilized: bool,
    pub direct_greedy_doms: u64,
    pub kick_greedy_doms: u64,
    pub slice_ns: u64,
}

impl Tuning {
    pub fn to_input(&self, lb_seq: u64) -> tune_input {
        tune_input {
            slice_ns: self.slice_ns,
            direct_greedy_doms: self.direct_greedy_doms,
            kick_greedy_doms: self.kick_greedy_doms,
            lb_seq,
        }
    }
}

pub struct Tuner {
    config: TunerConfig,
    doms: Vec<Cpumask>,
    previous: Option<BTreeMap<usize, CpuTimes>>,
}

impl Tuner {
    pub fn new(config: TunerConfig, doms: Vec<Cpumask>) -> Tuner {
        Tuner { config, doms, previous: None }
    }

    /// The starting point, before any utilization is known: underutilized, no greedy sets.
    pub fn initial(&self) -> Tuning {
        Tuning { dom_util: vec![0.0; self.doms.len()], slice_ns: self.config.slice_underutil_ns, ..Default::default() }
    }

    /// One step from a new reading of /proc/stat; None on the first (no interval yet).
    pub fn step(&mut self, now: BTreeMap<usize, CpuTimes>) -> Option<Tuning> {
        let tuning = self.previous.as_ref().map(|earlier| decide(&self.config, &self.doms, &utilization(earlier, &now)));
        self.previous = Some(now);
        tuning
    }
}

/// The tuning for per-CPU utilization `util` (CPUs missing from it are offline).
pub fn decide(config: &TunerConfig, doms: &[Cpumask], util: &BTreeMap<usize, f64>) -> Tuning {
    let dom_util: Vec<f64> = doms.iter().map(|d| average(d.iter().filter_map(|c| util.get(&c).copied()))).collect();
    let fully_utilized = average(util.values().copied()) >= FULLY_UTILIZED_RATIO;
    // A limit of 100% takes every domain (upstream's "100 enables always").
    let under = |limit: f64| {
        dom_util.iter().enumerate().filter(|(_, &u)| u < limit || limit >= 1.0).fold(0u64, |set, (d, _)| set | 1 << d)
    };
    Tuning {
        direct_greedy_doms: under(config.direct_greedy_under),
        kick_greedy_doms: under(config.kick_greedy_under),
        slice_ns: if fully_utilized { config.slice_overutil_ns } else { config.slice_underutil_ns },
        fully_utilized,
        dom_util,
    }
}

fn average(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> TunerConfig {
        TunerConfig { direct_greedy_under: 0.9, kick_greedy_under: 0.5, slice_underutil_ns: 20_000_000, slice_overutil_ns: 1_000_000 }
    }

    fn doms() -> Vec<Cpumask> {
        vec![Cpumask::parse_list("0-1", 4).unwrap(), Cpumask::parse_list("2-3", 4).unwrap()]
    }

    #[test]
    fn underused_domains_and_the_slice() {
        let util = BTreeMap::from([(0, 1.0), (1, 1.0), (2, 0.6), (3, 0.2)]);
        let t = decide(&config(), &doms(), &util);
        assert_eq!(t.dom_util, vec![1.0, 0.4]);
        assert_eq!((t.direct_greedy_doms, t.kick_greedy_doms), (0b10, 0b10));
        assert!(!t.fully_utilized);
        assert_eq!(t.slice_ns, 20_000_000);
    }

    #[test]
    fn fully_utilized_shortens_the_slice_and_empties_the_sets() {
        let util = BTreeMap::from([(0, 1.0), (1, 0.99), (2, 0.97), (3, 0.96)]);
        let t = decide(&config(), &doms(), &util);
        assert!(t.fully_utilized);
        assert_eq!((t.direct_greedy_doms, t.kick_greedy_doms, t.slice_ns), (0, 0, 1_000_000));
    }

    #[test]
    fn a_limit_of_100_percent_takes_every_domain() {
        let util = BTreeMap::from([(0, 1.0), (1, 1.0), (2, 0.6), (3, 0.2)]);
        let t = decide(&TunerConfig { kick_greedy_under: 1.0, ..config() }, &doms(), &util);
        assert_eq!((t.direct_greedy_doms, t.kick_greedy_doms), (0b10, 0b11));
    }

    #[test]
    fn offline_cpus_do_not_count() {
        let util = BTreeMap::from([(0, 1.0), (2, 0.0), (3, 0.0)]);
        let t = decide(&config(), &doms(), &util);
        assert_eq!(t.dom_util, vec![1.0, 0.0]);
        assert_eq!(t.kick_greedy_doms, 0b10);
    }
}
