//! The metrics layer's pure part: what a statistic is, and readings of them. A scheduler
//! declares each statistic once, as a [`MetricDef`]; at run time, when it knows its NUMA
//! nodes and domains, it lays out the series it reports ([`Series`], a definition plus
//! labels such as `node="0"`), and every interval it reads all of them into a [`Snapshot`].
//! From that one reading the runtime (crates/scxkit-bpf) feeds every backend: the log line,
//! the monitor socket, Prometheus and StatsD. This crate does no I/O: the exporters live
//! with the runtime.
//!
//! Counters are raw monotonic counts read from BPF (`dispatched_tasks_total{type="local"}`);
//! ratios are left to query time. Gauges are instant values.

mod text;

use std::fmt::Write;
use std::sync::Arc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// Monotonic count since the scheduler was (re)started.
    Counter,
    /// An instant value.
    Gauge,
}

/// The unit of a statistic, as exporters name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Count,
    Nanoseconds,
    Seconds,
    Percent,
    Bytes,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Count => "count",
            Unit::Nanoseconds => "nanoseconds",
            Unit::Seconds => "seconds",
            Unit::Percent => "percent",
            Unit::Bytes => "bytes",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetricDef {
    pub name: &'static str,
    /// Fixed labels telling this series from others of the same name.
    pub labels: &'static [(&'static str, &'static str)],
    pub kind: MetricKind,
    pub unit: Unit,
    pub help: &'static str,
}

impl MetricDef {
    /// `name{key="value",...}` with the fixed labels, as Prometheus prints a series.
    pub fn series(&self) -> String {
        series_key(self.name, self.labels.iter().copied())
    }
}

/// One reported series: a declared statistic with all its labels, the fixed ones first,
/// then those known only at run time (node, domain, level).
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub def: &'static MetricDef,
    pub labels: Vec<(String, String)>,
}

impl Series {
    /// The series of a definition with its fixed labels only.
    pub fn of(def: &'static MetricDef) -> Series {
        Series::with(def, &[])
    }

    /// The series of a definition with run-time labels added after the fixed ones.
    pub fn with(def: &'static MetricDef, extra: &[(&str, String)]) -> Series {
        let fixed = def.labels.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        let extra = extra.iter().map(|(k, v)| (k.to_string(), v.clone()));
        Series { def, labels: fixed.chain(extra).collect() }
    }

    /// `name{key="value",...}`.
    pub fn key(&self) -> String {
        series_key(self.def.name, self.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// Whether every label of `filter` is one of this series'.
    fn has_labels(&self, filter: &[(&str, &str)]) -> bool {
        filter.iter().all(|(k, v)| self.labels.iter().any(|(sk, sv)| sk == k && sv == v))
    }

    fn label(&self, key: &str) -> Option<&str> {
        self.labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

fn series_key<'a>(name: &str, labels: impl Iterator<Item = (&'a str, &'a str)>) -> String {
    let labels: Vec<String> = labels.map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    if labels.is_empty() {
        return name.to_string();
    }
    format!("{name}{{{}}}", labels.join(","))
}

/// The series of a scheduler whose statistics all have fixed labels, in declaration order.
pub fn static_layout(defs: &'static [MetricDef]) -> Arc<[Series]> {
    defs.iter().map(Series::of).collect()
}

/// One reading of every series of a layout, in the layout's order.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub series: Arc<[Series]>,
    pub values: Vec<f64>,
}

impl Snapshot {
    /// An all-zero reading, the baseline before the first one (and after a restart).
    pub fn zero(series: Arc<[Series]>) -> Snapshot {
        let values = vec![0.0; series.len()];
        Snapshot { series, values }
    }

    fn find(&self, name: &str, labels: &[(&str, &str)]) -> Option<usize> {
        self.series
            .iter()
            .position(|s| s.def.name == name && s.labels.len() == labels.len() && s.has_labels(labels))
    }

    /// The value of the series with this name and exactly these labels; 0 if there is none.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.find(name, labels).map_or(0.0, |i| self.values[i])
    }

    /// How much a counter grew since `earlier` (its value if it was reset in between).
    pub fn delta(&self, earlier: &Snapshot, name: &str, labels: &[(&str, &str)]) -> f64 {
        counter_delta(earlier.get(name, labels), self.get(name, labels))
    }

    /// The sum over every series of this name carrying at least the labels of `filter`.
    pub fn sum(&self, name: &str, filter: &[(&str, &str)]) -> f64 {
        self.matching(name, filter).map(|i| self.values[i]).sum()
    }

    /// The growth of [`Snapshot::sum`] since `earlier`, series by series.
    pub fn sum_delta(&self, earlier: &Snapshot, name: &str, filter: &[(&str, &str)]) -> f64 {
        self.matching(name, filter)
            .map(|i| {
                let labels: Vec<(&str, &str)> =
                    self.series[i].labels.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
                counter_delta(earlier.get(name, &labels), self.values[i])
            })
            .sum()
    }

    /// The distinct values of label `key` among the series of this name, in layout order:
    /// the nodes, or the domains, a nested log line walks through.
    pub fn label_values(&self, name: &str, key: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in self.series.iter().filter(|s| s.def.name == name) {
            if let Some(v) = s.label(key) {
                if !out.iter().any(|o| o == v) {
                    out.push(v.to_string());
                }
            }
        }
        out
    }

    fn matching<'a>(&'a self, name: &'a str, filter: &'a [(&str, &str)]) -> impl Iterator<Item = usize> + 'a {
        (0..self.series.len()).filter(move |&i| self.series[i].def.name == name && self.series[i].has_labels(filter))
    }
}

/// A counter's growth from `then` to `now`; its value if it was reset in between.
pub fn counter_delta(then: f64, now: f64) -> f64 {
    if was_reset(then, now) { now } else { now - then }
}

/// Whether a counter read `now` after `then` was reset in between (a restart): counters only
/// grow.
pub fn was_reset(then: f64, now: f64) -> bool {
    now < then
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

pub use text::{parse_text, to_text};

#[cfg(test)]
mod tests;
