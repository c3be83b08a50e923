//! Per-CPU utilization from /proc/stat: each `cpuN` line's times, and the busy fraction of
//! each CPU between two readings.

use anyhow::{bail, Context, Result};
use std::collections::BTreeMap;

/// One CPU's times since boot, in USER_HZ ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CpuTimes {
    /// Every tick but idle and iowait.
    pub busy: u64,
    /// user + nice + system + idle + iowait + irq + softirq + steal (guest and guest_nice
    /// are already counted in user and nice).
    pub total: u64,
}

/// The `cpuN` lines of /proc/stat, by CPU id. Offline CPUs have no line, so ids may skip.
pub fn parse_proc_stat(text: &str) -> Result<BTreeMap<usize, CpuTimes>> {
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let Some(cpu) = fields.next().and_then(|name| name.strip_prefix("cpu")) else { continue };
        // The "cpu" line is the sum of all of them.
        if cpu.is_empty() {
            continue;
        }
        let id: usize = cpu.parse().with_context(|| format!("/proc/stat: bad CPU name in '{line}'"))?;
        let times = parse_times(fields).with_context(|| format!("/proc/stat: cpu{id}"))?;
        out.insert(id, times);
    }
    Ok(out)
}

/// busy and total from the tick counts after the CPU name.
fn parse_times<'a>(fields: impl Iterator<Item = &'a str>) -> Result<CpuTimes> {
    let ticks: Vec<u64> = fields
        .map(|f| f.parse().with_context(|| format!("'{f}' is not a tick count")))
        .collect::<Result<_>>()?;
    // user nice system idle iowait irq softirq steal (guest guest_nice); old kernels stop
    // earlier, but idle is always there.
    if ticks.len() < 4 {
        bail!("{} fields, at least 4 expected", ticks.len());
    }
    let total: u64 = ticks.iter().take(8).sum();
    let idle = ticks[3] + ticks.get(4).copied().unwrap_or(0);
    Ok(CpuTimes { busy: total - idle, total })
}

pub fn read_proc_stat() -> Result<BTreeMap<usize, CpuTimes>> {
    let text = std::fs::read_to_string("/proc/stat").context("reading /proc/stat")?;
    parse_proc_stat(&text)
}

/// Busy fraction (0..=1) of each CPU present in both readings between them; 0 when no tick
/// passed (or the counters went back, as after a CPU came back online).
pub fn utilization(earlier: &BTreeMap<usize, CpuTimes>, now: &BTreeMap<usize, CpuTimes>) -> BTreeMap<usize, f64> {
    now.iter()
        .filter_map(|(&cpu, n)| earlier.get(&cpu).map(|e| (cpu, busy_fraction(e, n))))
        .collect()
}

fn busy_fraction(earlier: &CpuTimes, now: &CpuTimes) -> f64 {
    let total_ticks = now.total.saturating_sub(earlier.total);
    let busy_ticks = now.busy.saturating_sub(earlier.busy);
    if total_ticks == 0 {
        return 0.0;
    }
    (busy_ticks as f64 / total_ticks as f64).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EARLIER: &str = "\
cpu  1000 20 300 5000 100 10 5 0 50 0
cpu0 600 10 200 2000 50 5 3 2 40 0
cpu1 400 10 100 3000 50 5 2 0 10 0
cpu3 0 0 0 100 0 0 0 0 0 0
intr 12345 0 0
ctxt 9999
btime 1700000000
processes 4242
procs_running 2
";

    const NOW: &str = "\
cpu  1200 20 400 5300 100 10 5 0 50 0
cpu0 700 10 250 2050 50 5 3 2 40 0
cpu1 500 10 150 3250 50 5 2 0 10 0
cpu2 1 1 1 1 1 1 1 1 0 0
cpu3 0 0 0 100 0 0 0 0 0 0
intr 12400 0 0
";

    #[test]
    fn parses_cpu_lines_only() {
        let stat = parse_proc_stat(EARLIER).unwrap();
        assert_eq!(stat.keys().copied().collect::<Vec<_>>(), vec![0, 1, 3]);
        // total = 600+10+200+2000+50+5+3+2, guest not added; busy = total - 2000 - 50.
        assert_eq!(stat[&0], CpuTimes { busy: 820, total: 2870 });
        assert_eq!(stat[&3], CpuTimes { busy: 0, total: 100 });
    }

    #[test]
    fn utilization_of_cpus_in_both_readings() {
        let util = utilization(&parse_proc_stat(EARLIER).unwrap(), &parse_proc_stat(NOW).unwrap());
        assert_eq!(util.keys().copied().collect::<Vec<_>>(), vec![0, 1, 3], "cpu2 came online in between");
        assert!((util[&0] - 150.0 / 200.0).abs() < 1e-12);
        assert!((util[&1] - 150.0 / 400.0).abs() < 1e-12);
        assert_eq!(util[&3], 0.0, "no tick passed");
    }

    #[test]
    fn short_lines_and_garbage() {
        let old = parse_proc_stat("cpu0 10 0 5 100\n").unwrap();
        assert_eq!(old[&0], CpuTimes { busy: 15, total: 115 });
        assert!(parse_proc_stat("cpu0 1 2\n").unwrap_err().to_string().contains("cpu0"));
        assert!(parse_proc_stat("cpu0 1 2 x 4\n").is_err());
        assert!(parse_proc_stat("cpuX 1 2 3 4\n").is_err());
    }

    #[test]
    fn reads_this_machine() {
        let stat = read_proc_stat().unwrap();
        assert!(!stat.is_empty());
        assert!(stat.values().all(|t| t.busy <= t.total));
    }
}
