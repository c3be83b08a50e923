//! scx_simple's statistics: how tasks were dispatched, per interval.

use crate::intf;
use anyhow::Result;
use libbpf_rs::MapCore;

/// Totals seen at the previous report, to print per-interval deltas.
#[derive(Default)]
pub struct Counters {
    local: u64,
    global: u64,
}

impl Counters {
    pub fn report(&mut self, map: &dyn MapCore) -> Result<String> {
        let sums = scxkit_bpf::maps::percpu_u64_sums(map, intf::SIMPLE_NR_STATS)?;
        let (local, global) = (sums[intf::SIMPLE_STAT_LOCAL as usize], sums[intf::SIMPLE_STAT_GLOBAL as usize]);
        let line = format_line(local - self.local, global - self.global);
        (self.local, self.global) = (local, global);
        Ok(line)
    }
}

fn format_line(local: u64, global: u64) -> String {
    let total = local + global;
    let pct_local = if total == 0 { 0.0 } else { 100.0 * local as f64 / total as f64 };
    format!("dispatched {total}: local {local} ({pct_local:.1}%), global {global}")
}

#[cfg(test)]
mod tests {
    #[test]
    fn line_shows_percentages() {
        assert_eq!(super::format_line(1, 3), "dispatched 4: local 1 (25.0%), global 3");
        assert_eq!(super::format_line(0, 0), "dispatched 0: local 0 (0.0%), global 0");
    }
}
