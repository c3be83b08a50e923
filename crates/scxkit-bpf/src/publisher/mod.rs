//! Hands readings to whatever recorder the `metrics` facade has (the global one the backends
//! installed, or a local one in tests): counters as increments since the last reading,
//! gauges as values. Series are told apart by their full key, so a layout may change from
//! one attempt to the next (a restart after hotplug may find other domains).

use metrics::Label;
use scxkit::metrics::{counter_delta, MetricKind, Series, Snapshot, Unit};
use std::collections::{HashMap, HashSet};

#[derive(Default)]
pub struct Publisher {
    /// The last value published of each counter, by series key.
    last: HashMap<String, f64>,
    /// Metric names already described to the recorder.
    described: HashSet<&'static str>,
}

impl Publisher {
    pub fn new() -> Publisher {
        Publisher::default()
    }

    /// Forgets the counters' last values: the BPF side starts again from zero after a restart.
    pub fn reset_counters(&mut self) {
        self.last.clear();
    }

    pub fn publish(&mut self, snapshot: &Snapshot) {
        for (series, &now) in snapshot.series.iter().zip(&snapshot.values) {
            self.describe(series);
            let labels: Vec<Label> = series.labels.iter().map(|(k, v)| Label::new(k.clone(), v.clone())).collect();
            match series.def.kind {
                MetricKind::Counter => {
                    let last = self.last.entry(series.key()).or_insert(0.0);
                    metrics::counter!(series.def.name, labels).increment(counter_delta(*last, now) as u64);
                    *last = now;
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
mod tests;
