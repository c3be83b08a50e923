//! The framework's statistics, declared once for every backend: what every userspace-policy
//! scheduler reports, whatever its policy.

use crate::intf;
use crate::memory::Usage;
use scxkit::metrics::long_wait as lw;
use scxkit::metrics::stranded;
use scxkit::metrics::{CounterSlot, MetricDef, MetricKind, Snapshot, Unit};

const fn def(name: &'static str, labels: &'static [(&'static str, &'static str)], kind: MetricKind, unit: Unit, help: &'static str) -> MetricDef {
    MetricDef { name, labels, kind, unit, help }
}

const fn gauge(name: &'static str, help: &'static str) -> MetricDef {
    def(name, &[], MetricKind::Gauge, Unit::Count, help)
}

const fn dispatched(labels: &'static [(&'static str, &'static str)], help: &'static str) -> MetricDef {
    MetricDef::counter("dispatched_tasks_total", labels, help)
}

const USER: &[(&str, &str)] = &[("type", "user")];
const GRANTED: &[(&str, &str)] = &[("type", "granted")];
const IDLE: &[(&str, &str)] = &[("type", "idle")];
const KTHREAD: &[(&str, &str)] = &[("type", "kthread")];
const SELF: &[(&str, &str)] = &[("type", "self")];
const CONGESTION: &[(&str, &str)] = &[("type", "congestion")];
const FALLBACK: &[(&str, &str)] = &[("type", "fallback")];

scxkit::metric_set! {
    pub static METRICS = [
        TASKS_RUNNING = gauge("tasks_running", "CPUs running a task of this scheduler."),
        TASKS_QUEUED = gauge("tasks_queued", "Tasks handed to the policy and not yet taken by it (in the ring buffer)."),
        TASKS_WAITING_USER = gauge("tasks_waiting_user", "Tasks the policy holds, not yet dispatched."),
        DISPATCHED_USER = dispatched(USER, "Tasks dispatched as the policy decided."),
        DISPATCHED_GRANTED = dispatched(GRANTED, "Dispatched by BPF as the policy decided ahead (a wake grant): a wakeup queued without a round trip through the policy."),
        DISPATCHED_IDLE = dispatched(IDLE, "Dispatched by BPF: woke up on an idle CPU while the policy held nothing."),
        DISPATCHED_KTHREAD = dispatched(KTHREAD, "Dispatched by BPF: per-CPU kernel threads and memory-reclaim threads."),
        DISPATCHED_SELF = dispatched(SELF, "Dispatched by BPF: the policy process itself, ahead of every other task."),
        DISPATCHED_CONGESTION = dispatched(CONGESTION, "Dispatched by BPF because the ring buffer to the policy was full."),
        DISPATCHED_FALLBACK = dispatched(FALLBACK, "Dispatched by BPF while the policy process was silent."),
        SENT = MetricDef::counter("tasks_sent_total", &[], "Tasks handed to the policy."),
        SENT_DEFERRED = MetricDef::counter("tasks_sent_deferred_total", &[], "Tasks handed to the policy without waking it, where waking it would have preempted a task: it reads them with others at a CPU's next scheduling point (also counted in tasks_sent_total)."),
        POLICY_TURNS = MetricDef::counter("policy_turns_total", &[], "Turns of the policy's loop: each reads the tasks handed over and decides (a round trip through userspace)."),
        CUSTODY_FULL = MetricDef::counter("custody_full_total", &[], "Hand-overs refused because BPF's record of the tasks the policy holds (for the fallback) was full: BPF dispatched the task itself (also counted as congestion)."),
        CUSTODY_PUSH_FAILED = MetricDef::counter("custody_push_failed_total", &[], "Pushes of an entry into BPF's record of the tasks the policy holds that the queue map refused (its lock may time out on 6.15 and later): BPF dispatched the task itself."),
        DECISIONS_CANCELLED = MetricDef::counter("decisions_cancelled_total", &[], "Decisions dropped: the task was enqueued again, dequeued or gone since it was handed over."),
        DECISIONS_REPLACED = MetricDef::counter("decisions_replaced_total", &[], "Decisions naming a CPU the task may not use: sent to any CPU instead."),
        POLICY_NUDGES = MetricDef::counter("policy_nudges_total", &[], "Wake-up calls to the policy: a CPU had nothing to run while the policy held tasks."),
        SHARED_FIRST = MetricDef::counter("shared_queue_first_total", &[], "Decided tasks a CPU took while tasks waited in BPF's own queue (fallback, congestion, refused hand-overs), because its previous task came from there: the two queues take turns, so neither starves the other (where the kernel has user queues)."),
        LONG_WAITS = MetricDef::counter("long_waits_total", &[], "Tasks a CPU took from the shared queue out of vtime order, having waited 1 s there: the bound on a decided task's wait, whatever its vtime (a nice-19 hog behind 40 hogs on one CPU got no turn in 10 s without it)."),
        FALLBACK_SECONDS = def("fallback_seconds_total", &[], MetricKind::Counter, Unit::Seconds, "Time BPF scheduled on its own because the policy process was silent."),
        FALLBACK_ENTRIES = MetricDef::counter("fallback_entries_total", &[], "Times the policy went silent and BPF took over."),
        PAGE_FAULTS = MetricDef::counter("page_faults_total", &[], "Page faults the policy loop takes while it reads tasks and decides (minor and major; statistics work excluded): none once it runs steadily."),
        CPU_SECONDS = def("scheduler_cpu_seconds_total", &[], MetricKind::Counter, Unit::Seconds, "CPU time the policy process used (user and system)."),
    ];
}

/// The per-CPU counters of the `stats` map, by `enum usched_stat_idx`.
pub static COUNTERS: &[CounterSlot] = &[
    (intf::USCHED_STAT_RUNNING, &TASKS_RUNNING),
    (intf::USCHED_STAT_USER, &DISPATCHED_USER),
    (intf::USCHED_STAT_GRANTED, &DISPATCHED_GRANTED),
    (intf::USCHED_STAT_IDLE, &DISPATCHED_IDLE),
    (intf::USCHED_STAT_KTHREAD, &DISPATCHED_KTHREAD),
    (intf::USCHED_STAT_SELF, &DISPATCHED_SELF),
    (intf::USCHED_STAT_CONGESTION, &DISPATCHED_CONGESTION),
    (intf::USCHED_STAT_FALLBACK, &DISPATCHED_FALLBACK),
    (intf::USCHED_STAT_SENT, &SENT),
    (intf::USCHED_STAT_DEFERRED, &SENT_DEFERRED),
    (intf::USCHED_STAT_CUSTODY_FULL, &CUSTODY_FULL),
    (intf::USCHED_STAT_CUSTODY_PUSH_FAILED, &CUSTODY_PUSH_FAILED),
    (intf::USCHED_STAT_CANCELLED, &DECISIONS_CANCELLED),
    (intf::USCHED_STAT_REPLACED, &DECISIONS_REPLACED),
    (intf::USCHED_STAT_NUDGE, &POLICY_NUDGES),
    (intf::USCHED_STAT_SHARED_FIRST, &SHARED_FIRST),
    (intf::USCHED_STAT_LONG_WAIT, &LONG_WAITS),
    (intf::USCHED_STAT_LONG_WAIT_WALKS, &lw::WALKS),
    (intf::USCHED_STAT_LONG_WAIT_WALKED_TASKS, &lw::WALKED_TASKS),
    (intf::USCHED_STAT_LONG_WAIT_WALK_NS, &lw::WALK_NS),
    (intf::USCHED_STAT_STRANDED_SCANS, &stranded::SCANS),
    (intf::USCHED_STAT_STRANDED_SCANNED_TASKS, &stranded::SCANNED_TASKS),
    (intf::USCHED_STAT_STRANDED_SCAN_NS, &stranded::SCAN_NS),
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

/// Sets the statistics that are not per-CPU counters (those are [`COUNTERS`]): from the
/// .bss, the process's usage, and `now_ns`, the monotonic clock (an ongoing fallback counts).
pub fn set_figures(reading: &mut Snapshot, bss: &BssReading, usage: Usage, now_ns: u64) {
    let ongoing_ns = if bss.fallback_since_ns == 0 { 0 } else { now_ns.saturating_sub(bss.fallback_since_ns) };
    reading.set(&TASKS_QUEUED, bss.nr_sent.saturating_sub(bss.user_received) as f64);
    reading.set(&TASKS_WAITING_USER, bss.user_held as f64);
    reading.set(&POLICY_TURNS, bss.user_heartbeat as f64);
    reading.set(&FALLBACK_SECONDS, (bss.fallback_total_ns + ongoing_ns) as f64 / 1e9);
    reading.set(&FALLBACK_ENTRIES, bss.fallback_entries as f64);
    reading.set(&PAGE_FAULTS, usage.page_faults as f64);
    reading.set(&CPU_SECONDS, usage.cpu_s);
}

pub fn log_line(previous: &Snapshot, now: &Snapshot) -> String {
    let d = |name: &str, labels: &[(&str, &str)]| now.delta(previous, name, labels);
    let paths = [("user", USER), ("granted", GRANTED), ("idle", IDLE), ("kthread", KTHREAD), ("self", SELF), ("congestion", CONGESTION), ("fallback", FALLBACK)];
    let total: f64 = paths.iter().map(|(_, l)| d("dispatched_tasks_total", l)).sum();
    let by_path: Vec<String> = paths.iter().map(|(name, l)| format!("{name} {}", d("dispatched_tasks_total", l))).collect();
    format!(
        "running {} queued {} held {} | dispatched {total}: {} | sent {} deferred {} turns {} | cancelled {} replaced {} nudges {} shared first {} long waits {} ({}) | custody full {} push failed {} | fallback {:.1} s ({} entries) | faults {} | cpu {:.0} ms{}",
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
        d("shared_queue_first_total", &[]),
        d("long_waits_total", &[]),
        lw::walks_summary(previous, now),
        d("custody_full_total", &[]),
        d("custody_push_failed_total", &[]),
        now.get("fallback_seconds_total", &[]),
        now.get("fallback_entries_total", &[]),
        d("page_faults_total", &[]),
        d("scheduler_cpu_seconds_total", &[]) * 1000.0,
        stranded::log_suffix(previous, now),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use scxkit::metrics::set_counters;

    /// A reading with these per-CPU counters (slot, sum), the others 0.
    fn reading(counters: &[(u32, u64)], bss: &BssReading, usage: Usage, now_ns: u64) -> Snapshot {
        let mut reading = Snapshot::new();
        let sum = |slot| counters.iter().find(|(s, _)| *s == slot).map_or(0, |(_, v)| *v);
        set_counters(&mut reading, COUNTERS, |slot| Ok(sum(slot))).unwrap();
        set_figures(&mut reading, bss, usage, now_ns);
        reading
    }

    #[test]
    fn every_bpf_counter_is_bound_once() {
        assert_eq!(scxkit::metrics::misbound_slots(COUNTERS, intf::USCHED_NR_STATS), []);
    }

    #[test]
    fn every_statistic_is_set() {
        let snap = reading(&[], &BssReading::default(), Usage::default(), 0);
        let unset: Vec<&str> = METRICS.iter().filter(|d| snap.value_of(&scxkit::metrics::Series::of(d)).is_none()).map(|d| d.name).collect();
        assert!(unset.is_empty(), "{unset:?}");
    }

    #[test]
    fn values_follow_the_declarations() {
        let bss = BssReading { nr_sent: 10, user_received: 7, user_held: 2, fallback_total_ns: 1_500_000_000, fallback_since_ns: 0, fallback_entries: 1, user_heartbeat: 40 };
        let snap = reading(&[(intf::USCHED_STAT_RUNNING, 3), (intf::USCHED_STAT_USER, 8)], &bss, Usage { page_faults: 4, cpu_s: 0.25 }, 0);
        assert_eq!(snap.len(), METRICS.len() + lw::LONG_WAIT_METRICS.len() + stranded::STRANDED_METRICS.len());
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
        let snap = reading(&[], &bss, Usage::default(), 7_000_000_000);
        assert_eq!(snap.get("fallback_seconds_total", &[]), 3.0);
    }

    #[test]
    fn line_shows_each_path_per_interval() {
        let before = reading(&[(intf::USCHED_STAT_USER, 5)], &BssReading::default(), Usage::default(), 0);
        let after_counters = [(intf::USCHED_STAT_USER, 9), (intf::USCHED_STAT_FALLBACK, 2), (intf::USCHED_STAT_CANCELLED, 1), (intf::USCHED_STAT_SENT, 7), (intf::USCHED_STAT_DEFERRED, 5), (intf::USCHED_STAT_SHARED_FIRST, 3), (intf::USCHED_STAT_LONG_WAIT, 2)];
        let after = reading(&after_counters, &BssReading::default(), Usage { page_faults: 0, cpu_s: 0.002 }, 0);
        let line = log_line(&before, &after);
        assert!(line.contains("dispatched 6: user 4 granted 0 idle 0 kthread 0 self 0 congestion 0 fallback 2"), "{line}");
        assert!(line.contains("sent 7 deferred 5 turns 0 | cancelled 1 replaced 0 nudges 0 shared first 3 long waits 2 (walks 0, 0 tasks, 0.0 ms) | custody full 0 push failed 0"), "{line}");
        assert!(line.contains("cpu 2 ms"), "{line}");
    }
}
