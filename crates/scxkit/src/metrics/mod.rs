//! The metrics layer. A scheduler declares each statistic once, as a [`MetricDef`]; every
//! interval it reads all of them into a list of values in the same order. From that one
//! reading the layer feeds every backend: the scheduler's log line (which prints the
//! percentages), and through the `metrics` facade a Prometheus endpoint and StatsD
//! ([`backends`]). Adding a backend touches only [`backends`], never a scheduler.
//!
//! Counters are raw monotonic counts read from BPF (`dispatched_tasks_total{type="local"}`);
//! ratios are left to query time. Gauges are instant values.

pub mod backends;

use metrics::{Label, Unit};
use std::fmt::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// Monotonic count since the scheduler started (restarts start again from zero).
    Counter,
    /// An instant value.
    Gauge,
}

#[derive(Debug, Clone, Copy)]
pub struct MetricDef {
    pub name: &'static str,
    /// Fixed labels telling this series from others of the same name.
    pub labels: &'static [(&'static str, &'static str)],
    pub kind: MetricKind,
    pub unit: Unit,
    pub help: &'static str,
}

impl MetricDef {
    /// `name{key="value",...}`, as Prometheus prints a series.
    pub fn series(&self) -> String {
        if self.labels.is_empty() {
            return self.name.to_string();
        }
        let labels: Vec<String> = self.labels.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
        format!("{}{{{}}}", self.name, labels.join(","))
    }

    fn metric_labels(&self) -> Vec<Label> {
        self.labels.iter().map(|(k, v)| Label::new(*k, *v)).collect()
    }
}

/// One reading of every metric, in the order of the definitions.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub defs: &'static [MetricDef],
    pub values: Vec<f64>,
}

impl Snapshot {
    /// An all-zero reading, the baseline before the first one.
    pub fn zero(defs: &'static [MetricDef]) -> Snapshot {
        Snapshot { defs, values: vec![0.0; defs.len()] }
    }

    /// The value of the series with this name and labels; 0 if there is none.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.defs
            .iter()
            .position(|d| d.name == name && d.labels == labels)
            .map_or(0.0, |i| self.values[i])
    }

    /// How much a counter grew since `earlier` (its value if it was reset in between).
    pub fn delta(&self, earlier: &Snapshot, name: &str, labels: &[(&str, &str)]) -> f64 {
        let (now, then) = (self.get(name, labels), earlier.get(name, labels));
        if now >= then { now - then } else { now }
    }
}

/// Every statistic with its kind, unit and description: what `--help-stats` prints.
pub fn help_text(defs: &[MetricDef]) -> String {
    let mut out = String::new();
    for d in defs {
        let kind = match d.kind {
            MetricKind::Counter => "counter",
            MetricKind::Gauge => "gauge",
        };
        let _ = writeln!(out, "{:<48} {:<8} {:<12} {}", d.series(), kind, d.unit.as_str(), d.help);
    }
    out
}

/// Hands readings to whatever recorder the `metrics` facade has (the global one, or a local
/// one in tests): counters as increments since the last reading, gauges as values.
pub struct Publisher {
    defs: &'static [MetricDef],
    last: Vec<f64>,
    described: bool,
}

impl Publisher {
    pub fn new(defs: &'static [MetricDef]) -> Publisher {
        Publisher { defs, last: vec![0.0; defs.len()], described: false }
    }

    pub fn publish(&mut self, values: &[f64]) {
        if !self.described {
            self.describe();
        }
        for ((def, &now), last) in self.defs.iter().zip(values).zip(self.last.iter_mut()) {
            match def.kind {
                MetricKind::Counter => {
                    // A smaller value means the scheduler restarted and its counters with it.
                    let delta = if now >= *last { now - *last } else { now };
                    metrics::counter!(def.name, def.metric_labels()).increment(delta as u64);
                }
                MetricKind::Gauge => metrics::gauge!(def.name, def.metric_labels()).set(now),
            }
            *last = now;
        }
    }

    fn describe(&mut self) {
        for (i, def) in self.defs.iter().enumerate() {
            if self.defs[..i].iter().any(|d| d.name == def.name) {
                continue;
            }
            match def.kind {
                MetricKind::Counter => metrics::describe_counter!(def.name, def.unit, def.help),
                MetricKind::Gauge => metrics::describe_gauge!(def.name, def.unit, def.help),
            }
        }
        self.described = true;
    }
}

#[cfg(test)]
mod tests;
