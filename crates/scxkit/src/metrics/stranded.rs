//! The statistics of the scans for stranded tasks (`scxk_rescue_stranded`,
//! `bpf/include/scxkit/stranded.bpf.h`): tasks that only a CPU on its way offline can run,
//! handed to it from a timer while some CPU may be inactive (going offline or coming up).

use super::long_wait::walk_set_summary;
use super::{MetricDef, MetricKind, Snapshot, Unit};

crate::metric_set! {
    /// How often the queues were scanned for stranded tasks, and what the scans cost.
    pub static STRANDED_METRICS = [
        SCANS = MetricDef::counter("stranded_scans_total", &[], "Scans of the queues for tasks only a CPU on its way offline can run, while some CPU may be inactive (at most 1,024 tasks a queue)."),
        SCANNED_TASKS = MetricDef::counter("stranded_scanned_tasks_total", &[], "Queued tasks those scans looked at."),
        SCAN_NS = MetricDef { name: "stranded_scan_nanoseconds_total", labels: &[], kind: MetricKind::Counter, unit: Unit::Nanoseconds, help: "Time those scans took, in a timer's softirq." },
    ];
}

/// The scans between two readings, for a log line: "scans 12, 3400 tasks, 1.5 ms".
pub fn scans_summary(previous: &Snapshot, now: &Snapshot) -> String {
    walk_set_summary("scans", [&SCANS, &SCANNED_TASKS, &SCAN_NS], previous, now)
}

/// " | stranded scans 12, 3400 tasks, 1.5 ms" for a log line, or nothing when there was no
/// scan (no CPU may be inactive: the usual case).
pub fn log_suffix(previous: &Snapshot, now: &Snapshot) -> String {
    if now.delta(previous, SCANS.name, &[]) > 0.0 { format!(" | stranded {}", scans_summary(previous, now)) } else { String::new() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_the_scans_since_the_last_reading() {
        let mut before = Snapshot::new();
        before.set(&SCANS, 3.0);
        before.set(&SCANNED_TASKS, 100.0);
        before.set(&SCAN_NS, 1e6);
        let mut now = Snapshot::new();
        now.set(&SCANS, 7.0);
        now.set(&SCANNED_TASKS, 4196.0);
        now.set(&SCAN_NS, 3.5e6);
        assert_eq!(scans_summary(&before, &now), "scans 4, 4096 tasks, 2.5 ms");
        assert_eq!(log_suffix(&before, &now), " | stranded scans 4, 4096 tasks, 2.5 ms");
    }

    #[test]
    fn the_log_line_leaves_out_a_time_without_scans() {
        let mut reading = Snapshot::new();
        reading.set(&SCANS, 3.0);
        assert_eq!(log_suffix(&reading, &reading), "");
    }
}
