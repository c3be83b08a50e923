//! What a policy sees and does: the tasks handed over, and the decisions it sends back.

use crate::intf;
use libbpf_rs::UserRingBuffer;
use std::num::NonZeroU32;

// SAFETY: bindgen's twins of intf.h's structs: integers only.
unsafe impl scxkit_runtime::maps::PlainC for intf::usched_task {}
// SAFETY: as above.
unsafe impl scxkit_runtime::maps::PlainC for intf::usched_decision {}

/// What a waker keeps of its slice by default ([`Policy::deferred_waker_slice_ns`]), ns.
pub const DEFERRED_WAKER_SLICE_DEFAULT_NS: u64 = intf::USCHED_DEFER_MAX_US as u64 * 1000;
/// The most a policy may let a waker keep there, ns.
pub const DEFERRED_WAKER_SLICE_MAX_NS: u64 = intf::USCHED_DEFER_CEILING_MS as u64 * 1_000_000;

/// What a waker keeps of its slice under `policy`, as written to BPF after each turn: its
/// [`Policy::deferred_waker_slice_ns`], at most [`DEFERRED_WAKER_SLICE_MAX_NS`] (0 stays the
/// default). The one place the ceiling applies on this side; BPF reads anything above it
/// as the default.
pub fn deferred_waker_slice_kept_ns(policy: &(impl Policy + ?Sized)) -> u64 {
    policy.deferred_waker_slice_ns().min(DEFERRED_WAKER_SLICE_MAX_NS)
}

/// A task the kernel handed to the policy: it runs nowhere until the policy dispatches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueuedTask {
    pub pid: i32,
    /// The CPU it last ran on.
    pub prev_cpu: i32,
    pub nr_cpus_allowed: u32,
    /// Scheduling weight: 100 for nice 0, more for lower nice values.
    pub weight: u32,
    /// The `SCX_ENQ_*` flags of this enqueue.
    pub enq_flags: u64,
    /// Time it ran since it was last handed over, in ns: what to charge it.
    pub run_ns: u64,
    /// Time it ran since it last went to sleep of its own accord, in ns.
    pub runtime_since_sleep_ns: u64,
    /// Voluntary context switches so far (times it stopped to sleep).
    pub nvcsw: u64,
    /// Which hand-over this is: the decision quotes it, so a stale one is cancelled.
    enq_seq: u64,
}

impl QueuedTask {
    /// A task with the given fields, as the kernel would hand it over; for policies' tests.
    pub fn new(pid: i32, weight: u32, run_ns: u64, nvcsw: u64) -> QueuedTask {
        QueuedTask {
            pid,
            prev_cpu: 0,
            nr_cpus_allowed: 1,
            weight,
            enq_flags: 0,
            run_ns,
            runtime_since_sleep_ns: run_ns,
            nvcsw,
            enq_seq: 1,
        }
    }

    /// Decodes one message of the kernel's ring buffer; None for a wake-up call (a nudge)
    /// or a message of the wrong size.
    pub(crate) fn decode(bytes: &[u8]) -> Option<QueuedTask> {
        let msg: intf::usched_task = scxkit_runtime::maps::from_prefix(bytes)?;
        if msg.flags & intf::USCHED_MSG_NUDGE as u64 != 0 {
            return None;
        }
        Some(QueuedTask {
            pid: msg.pid,
            prev_cpu: msg.prev_cpu,
            nr_cpus_allowed: msg.nr_cpus_allowed,
            weight: msg.weight,
            enq_flags: msg.enq_flags,
            run_ns: msg.run_ns,
            runtime_since_sleep_ns: msg.runtime_since_sleep_ns,
            nvcsw: msg.nvcsw,
            enq_seq: msg.enq_seq,
        })
    }
}

/// Where a dispatched task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// An idle CPU it may use if there is one, else the first CPU free, in vtime order.
    AnyCpu,
    /// That CPU's own queue. A CPU the task may not use is replaced by `AnyCpu` (counted).
    Cpu(i32),
}

/// What the policy decided for one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub target: Target,
    pub slice_ns: u64,
    /// Order among the tasks waiting for any CPU: smaller runs first.
    pub vtime: u64,
    /// The task's next wakeups, decided now: None hands each one over.
    pub grant: Option<WakeGrant>,
}

/// Wakeups decided ahead: BPF queues them itself, without a round trip through the policy,
/// until the task has run `budget_ns` in all since the decision, and for at most a second.
/// Each goes to an idle CPU if there is one, else among the tasks waiting for any CPU at
/// `credit_ns` before the queue's now ([`Dispatcher::vtime_now`]) (and ahead of the task its
/// CPU runs, if that one lags further), with the decision's slice, preempting that task
/// unless the wakeup came from a task about to sleep. What the task runs meanwhile is
/// charged at its next hand-over (`QueuedTask::run_ns`). `--full-user` ignores grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WakeGrant {
    pub budget_ns: u64,
    pub credit_ns: u64,
}

/// A scheduling policy: receives the tasks the kernel hands over and dispatches them.
///
/// Called from one thread, the policy loop, which must not block: the whole system waits
/// for its decisions. Allocate up front (or reuse), so the loop does not page-fault.
pub trait Policy {
    /// A task that needs a CPU. Keep it until you dispatch it.
    fn enqueue(&mut self, task: QueuedTask);

    /// Dispatch the tasks that should run now through `out`; return how many you still
    /// hold. Called after every batch of enqueues, and when a CPU has gone idle while you
    /// held tasks.
    fn dispatch(&mut self, out: &mut Dispatcher) -> usize;

    /// The slice, for nice 0, of a task BPF dispatches without asking (a wakeup on an idle
    /// CPU while the policy holds nothing); lighter tasks get a proportionally shorter one.
    fn bypass_slice_ns(&self) -> u64 {
        intf::USCHED_SELF_SLICE_US as u64 * 1000
    }

    /// The most of its slice a task keeps after waking another while no CPU is idle, in ns:
    /// that wakeup then waits for the waker's next scheduling point (it sleeps, or this much
    /// of its slice ends) rather than preempting it for a round trip through the policy.
    /// Read after every call of [`Policy::dispatch`]; 0 means the default, 1 ms, and more
    /// than [`DEFERRED_WAKER_SLICE_MAX_NS`] is cut to that ([`deferred_waker_slice_kept_ns`]).
    /// In a crowd, where every slice's end is a switch anyway, a policy may let wakers keep
    /// more: with 1 ms, hackbench's 200 senders on one CPU were switched out at every tick.
    fn deferred_waker_slice_ns(&self) -> u64 {
        DEFERRED_WAKER_SLICE_DEFAULT_NS
    }

    /// Where this policy's vtimes are run time weighted by nice (ns x nice 0's weight / the
    /// task's weight): `Some(n)` makes the queue's clock ([`Dispatcher::vtime_now`]) also
    /// advance as tasks run, at 1/n of the rate a fair share of the CPUs adds to a task's
    /// vtime. Tasks placed behind the clock (new ones, granted wakeups) then cannot keep it
    /// still while a task ahead of it waits: that task gets at least about 1/n of a fair
    /// share. `None` (the default, and for other vtimes, such as a FIFO's sequence numbers):
    /// the clock moves only when a task starts ahead of it.
    fn clock_runtime_divisor(&self) -> Option<NonZeroU32> {
        None
    }
}

/// What the kernel side has seen of the policy's decisions.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KernelView {
    /// The largest vtime of a task that started running after a decision, or later (see
    /// [`Policy::clock_runtime_divisor`]): the policy's "now".
    pub vtime_now: u64,
    /// Tasks dispatched to any CPU that wait for one (0 where the kernel cannot count them).
    pub nr_queued: u64,
}

/// Sends decisions to the kernel (a user ring buffer, read in ops.dispatch).
pub struct Dispatcher<'a> {
    ring: Option<&'a UserRingBuffer>,
    nr_cpus: usize,
    kernel: KernelView,
    sent: Vec<intf::usched_decision>,
}

impl<'a> Dispatcher<'a> {
    pub(crate) fn new(ring: &'a UserRingBuffer, nr_cpus: usize, kernel: KernelView) -> Dispatcher<'a> {
        Dispatcher { ring: Some(ring), nr_cpus, kernel, sent: Vec::new() }
    }

    /// A dispatcher that records decisions instead of sending them, with the kernel's view
    /// given: for policies' tests.
    pub fn recording(nr_cpus: usize, kernel: KernelView) -> Dispatcher<'static> {
        Dispatcher { ring: None, nr_cpus, kernel, sent: Vec::new() }
    }

    /// The CPUs online when this attempt started.
    pub fn nr_cpus(&self) -> usize {
        self.nr_cpus
    }

    /// Where the queue is: the largest vtime of a dispatched task that has started running,
    /// or later (see [`Policy::clock_runtime_divisor`]).
    pub fn vtime_now(&self) -> u64 {
        self.kernel.vtime_now
    }

    /// Tasks already dispatched to any CPU and still waiting for one.
    pub fn nr_queued_in_kernel(&self) -> u64 {
        self.kernel.nr_queued
    }

    /// Sends one decision. False when the ring buffer is full: keep the task and try again
    /// at the next call.
    pub fn dispatch(&mut self, task: &QueuedTask, decision: Decision) -> bool {
        let msg = intf::usched_decision {
            pid: task.pid,
            cpu: match decision.target {
                Target::AnyCpu => intf::USCHED_ANY_CPU,
                Target::Cpu(cpu) => cpu,
            },
            enq_seq: task.enq_seq,
            slice_ns: decision.slice_ns,
            vtime: decision.vtime,
            grant_budget_ns: decision.grant.map_or(0, |g| g.budget_ns),
            grant_credit_ns: decision.grant.map_or(0, |g| g.credit_ns),
        };
        let Some(ring) = self.ring else {
            self.sent.push(msg);
            return true;
        };
        let Ok(mut sample) = ring.reserve(std::mem::size_of_val(&msg)) else {
            return false;
        };
        sample.copy_from_slice(scxkit_runtime::maps::as_bytes(&msg));
        ring.submit(sample).is_ok()
    }

    /// The grants of a recording dispatcher's decisions, as (pid, grant).
    pub fn recorded_grants(&self) -> Vec<(i32, Option<WakeGrant>)> {
        let grant = |d: &intf::usched_decision| {
            (d.grant_budget_ns > 0).then_some(WakeGrant { budget_ns: d.grant_budget_ns, credit_ns: d.grant_credit_ns })
        };
        self.sent.iter().map(|d| (d.pid, grant(d))).collect()
    }

    /// The decisions a recording dispatcher took, as (pid, target, slice_ns, vtime).
    pub fn recorded(&self) -> Vec<(i32, Target, u64, u64)> {
        self.sent
            .iter()
            .map(|d| {
                let target = if d.cpu == intf::USCHED_ANY_CPU { Target::AnyCpu } else { Target::Cpu(d.cpu) };
                (d.pid, target, d.slice_ns, d.vtime)
            })
            .collect()
    }
}
