//! The framework's statistics, declared once for every backend: what every userspace-policy
//! scheduler reports, whatever its policy.

use crate::intf;
use crate::memory::Usage;
use scxkit::metrics::{MetricDef, MetricKind, Snapshot, Unit};

const fn def(name: &'static str, labels: &'static [(&'static str, &'static str)], kind: MetricKind, unit: Unit, help: &'static str) -> MetricDef {
    MetricDef { name, labels, kind, unit, help }
}

const fn dispatched(labels: &'static [(&'static str, &'static str)], help: &'static str) -> MetricDef {
    def("dispatched_tasks_total", labels, MetricKind::Counter, Unit::Count, help)
}

const USER: &[(&str, &str)] = &[("type", "user")];
const IDLE: &[(&str, &str)] = &[("type", "idle")];
const KTHREAD: &[(&str, &str)] = &[("type", "kthread")];
const SELF: &[(&str, &str)] = &[("type", "self")];
const CONGESTION: &[(&str, &str)] = &[("type", "congestion")];
const FALLBACK: &[(&str, &str)] = &[("type", "fallback")];

/// In the order [`values`] returns them.
pub static METRICS: &[MetricDef] = &[
    def("tasks_running", &[], MetricKind::Gauge, Unit::Count, "CPUs running a task of this scheduler."),
    def("tasks_queued", &[], MetricKind::Gauge, Unit::Count, "Tasks handed to the policy and not yet taken by it (in the ring buffer)."),
    def("tasks_waiting_user", &[], MetricKind::Gauge, Unit::Count, "Tasks the policy holds, not yet dispatched."),
    dispatched(USER, "Tasks dispatched as the policy decided."),
    dispatched(IDLE, "Dispatched by BPF: woke up on an idle CPU while the policy held nothing."),
    dispatched(KTHREAD, "Dispatched by BPF: per-CPU kernel threads and memory-reclaim threads."),
    dispatched(SELF, "Dispatched by BPF: the policy process itself, ahead of every other task."),
    dispatched(CONGESTION, "Dispatched by BPF because the ring buffer to the policy was full."),
    dispatched(FALLBACK, "Dispatched by BPF while the policy process was silent."),
    def("tasks_sent_total", &[], MetricKind::Counter, Unit::Count, "Tasks handed to the policy."),
    def("tasks_sent_deferred_total", &[], MetricKind::Counter, Unit::Count, "Tasks handed to the policy without waking it, where waking it would have preempted a task: it reads them with others at a CPU's next scheduling point (also counted in tasks_sent_total)."),
    def("policy_turns_total", &[], MetricKind::Counter, Unit::Count, "Turns of the policy's loop: each reads the tasks handed over and decides (a round trip through userspace)."),
    def("custody_full_total", &[], MetricKind::Counter, Unit::Count, "Hand-overs refused because BPF's record of the tasks the policy holds (for the fallback) was full: BPF dispatched the task itself (also counted as congestion)."),
    def("custody_lost_total", &[], MetricKind::Counter, Unit::Count, "Tasks the policy held that dropped out of BPF's record, so the fallback would not find them: never expected."),
    def("decisions_cancelled_total", &[], MetricKind::Counter, Unit::Count, "Decisions dropped: the task was enqueued again, dequeued or gone since it was handed over."),
    def("decisions_replaced_total", &[], MetricKind::Counter, Unit::Count, "Decisions naming a CPU the task may not use: sent to any CPU instead."),
    def("policy_nudges_total", &[], MetricKind::Counter, Unit::Count, "Wake-up calls to the policy: a CPU had nothing to run while the policy held tasks."),
    def("fallback_seconds_total", &[], MetricKind::Counter, Unit::Seconds, "Time BPF scheduled on its own because the policy process was silent."),
    def("fallback_entries_total", &[], MetricKind::Counter, Unit::Count, "Times the policy went silent and BPF took over."),
    def("page_faults_total", &[], MetricKind::Counter, Unit::Count, "Page faults the policy loop takes while it reads tasks and decides (minor and major; statistics work excluded): none once it runs steadily."),
    def("scheduler_cpu_seconds_total", &[], MetricKind::Counter, Unit::Seconds, "CPU time the policy process used (user and system)."),
];

/// The framework's state in the BPF object's .bss, read at one instant.
#[derive(Debug, Clone, Copy, Default)]
pub struct BssReading {
    pub nr_sent: u64,
    pub user_received: u64,
    pub user_held: u64,
    pub fallback_total_ns: u64,
    pub fallback_since_ns: u64,
    pub fallback_entries: u64,
    /// Turns of the policy's loop (its heartbeat).
    pub user_heartbeat: u64,
}

/// The values of [`METRICS`]: `counters` are the per-CPU counters summed (indexed by
/// `enum usched_stat_idx`), `now_ns` is the monotonic clock (an ongoing fallback counts).
pub fn values(counters: &[u64], bss: &BssReading, usage: Usage, now_ns: u64) -> Vec<f64> {
    let c = |idx: u32| counters.get(idx as usize).copied().unwrap_or(0) as f64;
    let ongoing_ns = if bss.fallback_since_ns == 0 { 0 } else { now_ns.saturating_sub(bss.fallback_since_ns) };
    vec![
        c(intf::USCHED_STAT_RUNNING),
        bss.nr_sent.saturating_sub(bss.user_received) as f64,
        bss.user_held as f64,
        c(intf::USCHED_STAT_USER),
        c(intf::USCHED_STAT_IDLE),
        c(intf::USCHED_STAT_KTHREAD),
        c(intf::USCHED_STAT_SELF),
        c(intf::USCHED_STAT_CONGESTION),
        c(intf::USCHED_STAT_FALLBACK),
        c(intf::USCHED_STAT_SENT),
        c(intf::USCHED_STAT_DEFERRED),
        bss.user_heartbeat as f64,
        c(intf::USCHED_STAT_CUSTODY_FULL),
        c(intf::USCHED_STAT_CUSTODY_LOST),
        c(intf::USCHED_STAT_CANCELLED),
        c(intf::USCHED_STAT_REPLACED),
        c(intf::USCHED_STAT_NUDGE),
        (bss.fallback_total_ns + ongoing_ns) as f64 / 1e9,
        bss.fallback_entries as f64,
        usage.page_faults as f64,
        usage.cpu_s,
    ]
}

pub fn log_line(previous: &Snapshot, now: &Snapshot) -> String {
    let d = |name: &str, labels: &[(&str, &str)]| now.delta(previous, name, labels);
    let paths = [("user", USER), ("idle", IDLE), ("kthread", KTHREAD), ("self", SELF), ("congestion", CONGESTION), ("fallback", FALLBACK)];
    let total: f64 = paths.iter().map(|(_, l)| d("dispatched_tasks_total", l)).sum();
    let by_path: Vec<String> = paths.iter().map(|(name, l)| format!("{name} {}", d("dispatched_tasks_total", l))).collect();
    format!(
        "running {} queued {} held {} | dispatched {total}: {} | sent {} deferred {} turns {} | cancelled {} replaced {} nudges {} | custody full {} lost {} | fallback {:.1} s ({} entries) | faults {} | cpu {:.0} ms",
        now.get("tasks_running", &[]),
        now.get("tasks_queued", &[]),
        now.get("tasks_waiting_user", &[]),
        by_path.join(" "),
        d("tasks_sent_total", &[]),
        d("tasks_sent_deferred_total", &[]),
        d("policy_turns_total", &[]),
        d("decisions_cancelled_total", &[]),
        d("decisions_replaced_total", &[]),
        d("policy_nudges_total", &[]),
        d("custody_full_total", &[]),
        d("custody_lost_total", &[]),
        now.get("fallback_seconds_total", &[]),
        now.get("fallback_entries_total", &[]),
        d("page_faults_total", &[]),
        d("scheduler_cpu_seconds_total", &[]) * 1000.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use scxkit::metrics::static_layout;

    fn counters(pairs: &[(u32, u64)]) -> Vec<u64> {
        let mut c = vec![0; intf::USCHED_NR_STATS as usize];
        for &(idx, v) in pairs {
            c[idx as usize] = v;
        }
        c
    }

    #[test]
    fn values_follow_the_declarations() {
        let bss = BssReading { nr_sent: 10, user_received: 7, user_held: 2, fallback_total_ns: 1_500_000_000, fallback_since_ns: 0, fallback_entries: 1, user_heartbeat: 40 };
        let v = values(&counters(&[(intf::USCHED_STAT_RUNNING, 3), (intf::USCHED_STAT_USER, 8)]), &bss, Usage { page_faults: 4, cpu_s: 0.25 }, 0);
        assert_eq!(v.len(), METRICS.len());
        let snap = Snapshot { series: static_layout(METRICS), values: v };
        assert_eq!(snap.get("tasks_running", &[]), 3.0);
        assert_eq!(snap.get("tasks_queued", &[]), 3.0, "sent minus received");
        assert_eq!(snap.get("tasks_waiting_user", &[]), 2.0);
        assert_eq!(snap.get("dispatched_tasks_total", USER), 8.0);
        assert_eq!(snap.get("fallback_seconds_total", &[]), 1.5);
        assert_eq!(snap.get("page_faults_total", &[]), 4.0);
        assert_eq!(snap.get("policy_turns_total", &[]), 40.0);
    }

    #[test]
    fn an_ongoing_fallback_counts_up_to_now() {
        let bss = BssReading { fallback_total_ns: 1_000_000_000, fallback_since_ns: 5_000_000_000, ..Default::default() };
        let v = values(&counters(&[]), &bss, Usage::default(), 7_000_000_000);
        let snap = Snapshot { series: static_layout(METRICS), values: v };
        assert_eq!(snap.get("fallback_seconds_total", &[]), 3.0);
    }

    #[test]
    fn line_shows_each_path_per_interval() {
        let layout = static_layout(METRICS);
        let before = Snapshot { series: layout.clone(), values: values(&counters(&[(intf::USCHED_STAT_USER, 5)]), &BssReading::default(), Usage::default(), 0) };
        let after_counters = counters(&[(intf::USCHED_STAT_USER, 9), (intf::USCHED_STAT_FALLBACK, 2), (intf::USCHED_STAT_CANCELLED, 1), (intf::USCHED_STAT_SENT, 7), (intf::USCHED_STAT_DEFERRED, 5)]);
        let after = Snapshot { series: layout, values: values(&after_counters, &BssReading::default(), Usage { page_faults: 0, cpu_s: 0.002 }, 0) };
        let line = log_line(&before, &after);
        assert!(line.contains("dispatched 6: user 4 idle 0 kthread 0 self 0 congestion 0 fallback 2"), "{line}");
        assert!(line.contains("sent 7 deferred 5 turns 0 | cancelled 1 replaced 0 nudges 0 | custody full 0 lost 0"), "{line}");
        assert!(line.contains("cpu 2 ms"), "{line}");
    }
}
