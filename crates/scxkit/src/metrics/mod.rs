//! The metrics layer's pure part: what a statistic is, and readings of them. A scheduler
//! declares each statistic once, as a named [`MetricDef`] in a [`metric_set!`]; every
//! interval it sets the value of each series it has now into a fresh [`Snapshot`], by
//! definition (`reading.set(&DISPATCHED_LOCAL, n)`) with any labels known only at run time
//! (`reading.set_with(&DOMAIN_LOAD, &[("node", "0"), ("domain", "1")], load)`), so series
//! may come and go from one reading to the next. BPF per-CPU counters are bound to their
//! definitions once, by their index in the BPF enum ([`CounterSlot`], [`set_counters`]).
//! From that one reading the runtime (crates/scxkit-runtime) feeds every backend: the log line,
//! the monitor socket, Prometheus and StatsD. This crate does no I/O: the exporters live
//! with the runtime.
//!
//! Counters are raw monotonic counts read from BPF (`dispatched_tasks_total{type="local"}`);
//! ratios are left to query time. Gauges are instant values.

#[cfg(any(test, feature = "fixtures"))]
pub mod fixture;
pub mod long_wait;
mod snapshot;
pub mod stranded;
mod text;

use std::fmt::Write;

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
    /// A count with these fixed labels, the most common statistic.
    pub const fn counter(name: &'static str, labels: &'static [(&'static str, &'static str)], help: &'static str) -> MetricDef {
        MetricDef { name, labels, kind: MetricKind::Counter, unit: Unit::Count, help }
    }

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
    pub fn with(def: &'static MetricDef, extra: &[(&str, &str)]) -> Series {
        let fixed = def.labels.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        let extra = extra.iter().map(|(k, v)| (k.to_string(), v.to_string()));
        Series { def, labels: fixed.chain(extra).collect() }
    }

    /// `name{key="value",...}`.
    pub fn key(&self) -> String {
        series_key(self.def.name, self.labels.iter().map(|(k, v)| (k.as_str(), v.as_str())))
    }

    /// Whether every label of `filter` is one of this series'.
    pub(crate) fn has_labels(&self, filter: &[(&str, &str)]) -> bool {
        filter.iter().all(|(k, v)| self.labels.iter().any(|(sk, sv)| sk == k && sv == v))
    }

    pub(crate) fn label(&self, key: &str) -> Option<&str> {
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

/// A counter's growth from `then` to `now`; its value if it was reset in between.
pub fn counter_delta(then: f64, now: f64) -> f64 {
    if was_reset(then, now) { now } else { now - then }
}

/// Whether a counter read `now` after `then` was reset in between (a restart): counters only
/// grow.
pub fn was_reset(then: f64, now: f64) -> bool {
    now < then
}

/// Declares a scheduler's statistics once: a `static` of each definition, named for the
/// setters (`reading.set(&NAME, value)`), and the set of them all, in this order, for
/// `--help-stats` and the monitor.
///
/// ```
/// use scxkit::metrics::{MetricDef, MetricKind, Unit};
/// scxkit::metric_set! {
///     pub static METRICS = [
///         ENQUEUES = MetricDef::counter("enqueues_total", &[], "Calls of ops.enqueue."),
///     ];
/// }
/// assert_eq!(METRICS[0].name, ENQUEUES.name);
/// ```
#[macro_export]
macro_rules! metric_set {
    ($(#[$set_meta:meta])* $vis:vis static $set:ident = [ $( $(#[$meta:meta])* $name:ident = $def:expr ),* $(,)? ];) => {
        $( $(#[$meta])* $vis static $name: $crate::metrics::MetricDef = $def; )*
        $(#[$set_meta])*
        $vis static $set: $crate::metrics::MetricSet = &[ $( &$name ),* ];
    };
}

/// A scheduler's statistics, declared with [`metric_set!`].
pub type MetricSet = &'static [&'static MetricDef];

/// Every statistic with its kind, unit and description: what `--help-stats` prints.
pub fn help_text(defs: &[&MetricDef]) -> String {
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

pub use snapshot::{misbound_slots, set_counters, CounterSlot, Snapshot};
pub use text::{parse_text, to_text};

#[cfg(test)]
mod tests;
