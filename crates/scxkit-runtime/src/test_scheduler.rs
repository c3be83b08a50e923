//! A test scheduler's statistics, written the way every scheduler writes them: definitions
//! in a [`scxkit::metric_set!`], BPF per-CPU counters bound to theirs by slot, the rest set
//! by a reader every sample. `QUEUE_DEPTH` stands for a statistic added to it: its
//! definition and its one setter are all it took to reach `--help-stats`, Prometheus, the
//! monitor's text and, once the log line names it, the log line.

use crate::publisher::tests::render_prometheus;
use crate::runner::Stats;
use crate::spec::{Hotplug, SchedulerSpec};
use anyhow::Result;
use scxkit::metrics::{help_text, parse_text, set_counters, to_text, CounterSlot, MetricDef, MetricKind, Snapshot, Unit};

scxkit::metric_set! {
    static METRICS = [
        DISPATCHED = MetricDef::counter("dispatched_tasks_total", &[("type", "local")], "Tasks dispatched to an idle CPU."),
        ENQUEUES = MetricDef::counter("enqueues_total", &[], "Calls of ops.enqueue."),
        CGROUP_WEIGHT = MetricDef { name: "cgroup_weight", labels: &[], kind: MetricKind::Gauge, unit: Unit::Count, help: "A cgroup's weight." },
        // The added statistic's definition.
        QUEUE_DEPTH = MetricDef { name: "queue_depth", labels: &[], kind: MetricKind::Gauge, unit: Unit::Count, help: "Tasks in the shared queue now." },
    ];
}

/// The slots of the BPF side's `enum test_stat_idx`.
const TEST_STAT_ENQUEUE: u32 = 0;
const TEST_STAT_DISPATCHED: u32 = 1;
static COUNTERS: &[CounterSlot] = &[(TEST_STAT_DISPATCHED, &DISPATCHED), (TEST_STAT_ENQUEUE, &ENQUEUES)];

/// What the test scheduler's BPF side holds at one instant.
#[derive(Default)]
struct Bpf {
    counters: [u64; 2],
    cgroups: Vec<(&'static str, f64)>,
    queued: u64,
}

fn read(bpf: &Bpf, reading: &mut Snapshot) -> Result<()> {
    set_counters(reading, COUNTERS, |slot| Ok(bpf.counters[slot as usize]))?;
    for &(cgroup, weight) in &bpf.cgroups {
        reading.set_with(&CGROUP_WEIGHT, &[("cgroup", cgroup)], weight);
    }
    // The added statistic's setter.
    reading.set(&QUEUE_DEPTH, bpf.queued as f64);
    Ok(())
}

fn log_line(previous: &Snapshot, now: &Snapshot) -> String {
    let cgroups: Vec<String> = now
        .label_values("cgroup_weight", "cgroup")
        .iter()
        .map(|c| format!("{c} {}", now.get("cgroup_weight", &[("cgroup", c)])))
        .collect();
    format!(
        "dispatched {} enqueued {} | queued {} | cgroups: {}",
        now.delta(previous, "dispatched_tasks_total", &[("type", "local")]),
        now.delta(previous, "enqueues_total", &[]),
        now.get("queue_depth", &[]),
        cgroups.join(", "),
    )
}

const SPEC: SchedulerSpec = SchedulerSpec {
    name: "scx_test_stats",
    hotplug: Hotplug::Follows,
    required_kfuncs: &[],
    optional_kfuncs: &[],
    metrics: &[METRICS],
    log_line,
};

/// Two samples of the test scheduler through the runtime's [`Stats`], the BPF side as given.
fn two_samples(first: Bpf, second: Bpf) -> (Snapshot, Snapshot) {
    let bpf = std::cell::RefCell::new(first);
    let mut stats = Stats::new(|reading| read(&bpf.borrow(), reading));
    let earlier = stats.sample().unwrap();
    *bpf.borrow_mut() = second;
    (earlier, stats.sample().unwrap())
}

/// The log line as the monitor computes it, from the two readings served as text.
fn monitor_line(earlier: &Snapshot, now: &Snapshot) -> String {
    let back = |s: &Snapshot| parse_text(SPEC.metrics, &to_text(s)).unwrap();
    (SPEC.log_line)(&back(earlier), &back(now))
}

#[test]
fn an_added_statistic_reaches_every_exporter() {
    let (earlier, now) = two_samples(
        Bpf { counters: [3, 10], queued: 2, ..Default::default() },
        Bpf { counters: [7, 15], queued: 5, ..Default::default() },
    );
    assert!(help_text(SPEC.metrics[0]).contains("queue_depth"), "--help-stats");
    let prometheus = render_prometheus(&[earlier.clone(), now.clone()], None);
    assert!(prometheus.contains("# HELP queue_depth Tasks in the shared queue now."), "{prometheus}");
    assert!(prometheus.contains("queue_depth{scheduler=\"test\"} 5"), "{prometheus}");
    assert!(prometheus.contains("enqueues_total{scheduler=\"test\"} 7"), "{prometheus}");
    assert!(prometheus.contains("dispatched_tasks_total{scheduler=\"test\",type=\"local\"} 15"), "{prometheus}");
    assert!(to_text(&now).contains("queue_depth 5\n"), "monitor socket");
    let line = log_line(&earlier, &now);
    assert_eq!(line, "dispatched 5 enqueued 4 | queued 5 | cgroups: ");
    assert_eq!(monitor_line(&earlier, &now), line, "the monitor prints the same line");
}

#[test]
fn a_series_may_vanish_between_samples() {
    let (earlier, now) = two_samples(
        Bpf { cgroups: vec![("a", 100.0), ("b", 50.0)], ..Default::default() },
        Bpf { counters: [1, 1], cgroups: vec![("b", 60.0), ("c", 10.0)], ..Default::default() },
    );
    assert_eq!(now.label_values("cgroup_weight", "cgroup"), ["b", "c"]);
    assert!(!to_text(&now).contains("cgroup=\"a\""), "{}", to_text(&now));
    let line = log_line(&earlier, &now);
    assert_eq!(line, "dispatched 1 enqueued 1 | queued 0 | cgroups: b 60, c 10");
    assert_eq!(monitor_line(&earlier, &now), line);
    let prometheus = render_prometheus(&[earlier, now], None);
    assert!(prometheus.contains("cgroup_weight{scheduler=\"test\",cgroup=\"c\"} 10"), "{prometheus}");
}
