//! Hands readings to whatever recorder the `metrics` facade has (the global one the backends
//! installed, or a local one in tests): counters as increments of their totals, gauges as
//! values. Series are told apart by their full key, so the series may change from one reading
//! to the next (a restart after hotplug may find other domains).

use metrics::Label;
use scxkit::metrics::{was_reset, MetricKind, Series, Snapshot, Unit};
use std::collections::{HashMap, HashSet};

#[derive(Default)]
pub struct Publisher {
    /// Each counter's total so far, by series key.
    counters: HashMap<String, CounterTotal>,
    /// Metric names already described to the recorder.
    described: HashSet<&'static str>,
}

impl Publisher {
    pub fn new() -> Publisher {
        Publisher::default()
    }

    /// The BPF side starts counting again from zero after a restart; the totals go on.
    pub fn reset_counters(&mut self) {
        self.counters.values_mut().for_each(CounterTotal::end_run);
    }

    pub fn publish(&mut self, snapshot: &Snapshot) {
        for (series, now) in snapshot.iter() {
            self.describe(series);
            let labels: Vec<Label> = series.labels.iter().map(|(k, v)| Label::new(k.clone(), v.clone())).collect();
            match series.def.kind {
                MetricKind::Counter => {
                    let increment = self.counters.entry(series.key()).or_default().read(now);
                    metrics::counter!(series.def.name, labels).increment(increment);
                }
                MetricKind::Gauge => metrics::gauge!(series.def.name, labels).set(now),
            }
        }
    }

    fn describe(&mut self, series: &Series) {
        let def = series.def;
        if !self.described.insert(def.name) {
            return;
        }
        let unit = facade_unit(def.unit);
        match def.kind {
            MetricKind::Counter => metrics::describe_counter!(def.name, unit, def.help),
            MetricKind::Gauge => metrics::describe_gauge!(def.name, unit, def.help),
        }
    }
}

/// A counter's total across the BPF side's restarts, and how much of it was published. The
/// recorder's counters take whole numbers, so a fraction (of a second, say) waits until it
/// adds up to one: the published total is always the whole part of the true one.
#[derive(Default)]
struct CounterTotal {
    /// What the BPF counter had counted when its earlier runs ended.
    earlier_runs: f64,
    /// Its last reading in the current run.
    reading: f64,
    published: u64,
}

impl CounterTotal {
    /// Takes a reading; returns what to add to the published total.
    fn read(&mut self, now: f64) -> u64 {
        if was_reset(self.reading, now) {
            self.end_run();
        }
        self.reading = now;
        let whole = (self.earlier_runs + now).floor() as u64;
        let increment = whole.saturating_sub(self.published);
        self.published += increment;
        increment
    }

    fn end_run(&mut self) {
        self.earlier_runs += self.reading;
        self.reading = 0.0;
    }
}

fn facade_unit(unit: Unit) -> metrics::Unit {
    match unit {
        Unit::Count => metrics::Unit::Count,
        Unit::Nanoseconds => metrics::Unit::Nanoseconds,
        Unit::Seconds => metrics::Unit::Seconds,
        Unit::Percent => metrics::Unit::Percent,
        Unit::Bytes => metrics::Unit::Bytes,
    }
}

#[cfg(test)]
pub(crate) mod tests;
