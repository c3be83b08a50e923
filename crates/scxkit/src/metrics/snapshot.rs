//! One reading of a scheduler's statistics: whatever series it set in that sample, each by
//! its definition and labels, in the order they were set (the order exporters show).

use super::{counter_delta, MetricDef, Series};
use anyhow::Result;
use std::collections::HashMap;

/// A BPF per-CPU counter bound to the statistic it counts: its slot in the counters' array
/// map (the value of the BPF side's `enum ..._stat_idx`) and its definition.
pub type CounterSlot = (u32, &'static MetricDef);

/// The series set in one sample and their values. Setting a series again replaces its value.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    entries: Vec<(Series, f64)>,
    /// Where each series key is in `entries`.
    by_key: HashMap<String, usize>,
}

impl Snapshot {
    /// An empty reading: the baseline before the first one, against which every counter
    /// counts from 0.
    pub fn new() -> Snapshot {
        Snapshot::default()
    }

    /// Sets the series of `def` with its fixed labels only.
    pub fn set(&mut self, def: &'static MetricDef, value: f64) {
        self.insert(Series::of(def), value);
    }

    /// Sets the series of `def` with labels known only at run time (node, domain, level).
    pub fn set_with(&mut self, def: &'static MetricDef, labels: &[(&str, &str)], value: f64) {
        self.insert(Series::with(def, labels), value);
    }

    /// Sets a series built elsewhere (read back from text, say).
    pub fn insert(&mut self, series: Series, value: f64) {
        let key = series.key();
        match self.by_key.get(&key) {
            Some(&i) => self.entries[i].1 = value,
            None => {
                self.by_key.insert(key, self.entries.len());
                self.entries.push((series, value));
            }
        }
    }

    /// Every series with its value, in the order they were first set.
    pub fn iter(&self) -> impl Iterator<Item = (&Series, f64)> {
        self.entries.iter().map(|(s, v)| (s, *v))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value of a series with this very key, if this reading has it.
    pub fn value_of(&self, series: &Series) -> Option<f64> {
        self.by_key.get(&series.key()).map(|&i| self.entries[i].1)
    }

    /// The value of the series with this name and exactly these labels; 0 if there is none.
    pub fn get(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        self.entries
            .iter()
            .find(|(s, _)| s.def.name == name && s.labels.len() == labels.len() && s.has_labels(labels))
            .map_or(0.0, |(_, v)| *v)
    }

    /// How much a counter grew since `earlier` (its value if it was reset in between, or if
    /// `earlier` did not have it).
    pub fn delta(&self, earlier: &Snapshot, name: &str, labels: &[(&str, &str)]) -> f64 {
        counter_delta(earlier.get(name, labels), self.get(name, labels))
    }

    /// The sum over every series of this name carrying at least the labels of `filter`.
    pub fn sum(&self, name: &str, filter: &[(&str, &str)]) -> f64 {
        self.matching(name, filter).map(|(_, v)| v).sum()
    }

    /// The growth of [`Snapshot::sum`] since `earlier`, series by series.
    pub fn sum_delta(&self, earlier: &Snapshot, name: &str, filter: &[(&str, &str)]) -> f64 {
        self.matching(name, filter).map(|(s, now)| counter_delta(earlier.value_of(s).unwrap_or(0.0), now)).sum()
    }

    /// The distinct values of label `key` among the series of this name, in the order they
    /// were set: the nodes, or the domains, a nested log line walks through.
    pub fn label_values(&self, name: &str, key: &str) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (s, _) in self.entries.iter().filter(|(s, _)| s.def.name == name) {
            if let Some(v) = s.label(key) {
                if !out.iter().any(|o| o == v) {
                    out.push(v.to_string());
                }
            }
        }
        out
    }

    fn matching<'a>(&'a self, name: &'a str, filter: &'a [(&str, &str)]) -> impl Iterator<Item = (&'a Series, f64)> + 'a {
        self.iter().filter(move |(s, _)| s.def.name == name && s.has_labels(filter))
    }
}

/// Sets each bound counter to what `read_slot` reads from its slot.
pub fn set_counters(reading: &mut Snapshot, slots: &[CounterSlot], mut read_slot: impl FnMut(u32) -> Result<u64>) -> Result<()> {
    for &(slot, def) in slots {
        reading.set(def, read_slot(slot)? as f64);
    }
    Ok(())
}

/// The slots below `nr_slots` that no statistic is bound to exactly once: a scheduler's test
/// that each of its BPF counters reaches the exporters expects none.
pub fn misbound_slots(slots: &[CounterSlot], nr_slots: u32) -> Vec<u32> {
    (0..nr_slots).filter(|&slot| slots.iter().filter(|(s, _)| *s == slot).count() != 1).collect()
}
