//! A snapshot as text, one `series value` line each (`name{k="v"} 12`): what a running
//! scheduler serves on its monitor socket and `--monitor` reads back. The reader maps each
//! line to the scheduler's own declarations, so the monitor computes the very same log line.

use super::{MetricSet, Series, Snapshot};
use anyhow::{bail, Context, Result};
use std::fmt::Write;

pub fn to_text(snapshot: &Snapshot) -> String {
    let mut out = String::new();
    for (series, value) in snapshot.iter() {
        let _ = writeln!(out, "{} {value}", series.key());
    }
    out
}

/// Parses [`to_text`]'s output (lines starting with '#' are comments); each series must match
/// a definition of one of `def_sets` by name and fixed labels (a monitor of another scheduler, or of another version, is refused).
pub fn parse_text(def_sets: &[MetricSet], text: &str) -> Result<Snapshot> {
    let mut snapshot = Snapshot::new();
    for line in text.lines().filter(|l| !l.trim().is_empty() && !l.starts_with('#')) {
        let (key, value) = line.rsplit_once(' ').with_context(|| format!("no value in '{line}'"))?;
        let value: f64 = value.parse().with_context(|| format!("bad value in '{line}'"))?;
        let (name, labels) = parse_key(key).with_context(|| format!("bad series '{key}'"))?;
        let def = def_sets
            .iter()
            .flat_map(|set| set.iter().copied())
            .find(|d| d.name == name && d.labels.iter().all(|(k, v)| labels.iter().any(|(lk, lv)| lk == k && lv == v)))
            .with_context(|| format!("series '{key}' is not one this scheduler declares"))?;
        snapshot.insert(Series { def, labels }, value);
    }
    Ok(snapshot)
}

fn parse_key(key: &str) -> Result<(&str, Vec<(String, String)>)> {
    let Some((name, rest)) = key.split_once('{') else { return Ok((key, Vec::new())) };
    let body = rest.strip_suffix('}').context("missing '}'")?;
    let mut labels = Vec::new();
    for pair in body.split(',').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').context("a label without '='")?;
        let v = v.strip_prefix('"').and_then(|v| v.strip_suffix('"'));
        let Some(v) = v else { bail!("label '{k}' is not quoted") };
        labels.push((k.to_string(), v.to_string()));
    }
    Ok((name, labels))
}
