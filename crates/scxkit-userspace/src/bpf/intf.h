/*
 * The userspace-scheduling framework: the one definition of what its BPF part and its Rust
 * part exchange (the messages of the two ring buffers, counters, constants).
 */
#ifndef __SCXK_USCHED_INTF_H
#define __SCXK_USCHED_INTF_H

#include <scxkit/types.h>
#include <scxkit/weight.h>

enum usched_consts {
	/* Decisions for "any CPU" wait here, ordered by the vtime the policy gave. */
	USCHED_SHARED_DSQ = 0,
	/* Tasks BPF schedules itself (reclaim threads, congestion, fallback), FIFO. */
	USCHED_KERNEL_DSQ = 1,
	/* A decision's cpu field for "any CPU the task may use". */
	USCHED_ANY_CPU = -1,
	/* Bytes of each ring buffer (a power of two, a multiple of the page size). */
	USCHED_RING_BYTES = 1 << 20,
	/* Tasks BPF remembers as handed to userspace, for the fallback to find them. */
	USCHED_CUSTODY_MAX = 16384,
	/* Tasks moved per ops.dispatch call: under the kernel's default batch of 32. */
	USCHED_DISPATCH_BATCH = 24,
	/* Defaults of the framework's options. */
	USCHED_FALLBACK_AFTER_MS_DEFAULT = 500,
	USCHED_FALLBACK_SLICE_US = 5000,
	/* The policy process and its direct dispatches run with this slice. */
	USCHED_SELF_SLICE_US = 20000,
	/* The shortest slice BPF gives a task it dispatches itself, however light. */
	USCHED_MIN_SLICE_US = 100,
	/* The most a task keeps of its slice after waking another without waking the policy
	 * (see wakeup_may_wait), by default, in microseconds: the next scheduling point, where
	 * the policy is woken, is at most that far. A policy may allow more in a crowd
	 * (Policy::deferred_waker_slice_ns). */
	USCHED_DEFER_MAX_US = 1000,
	/* The most a policy may allow there, ms: beyond it (or 0), the default. */
	USCHED_DEFER_CEILING_MS = 20,
	/* A grant lapses this long after its decision, ms: a task that runs little would
	 * otherwise go unseen by the policy for minutes (and be forgotten), whatever its
	 * behaviour became. */
	USCHED_GRANT_MAX_AGE_MS = 1000,
	/* The longest a task waits in the shared queue, ms: then the next CPU that may run it
	 * takes it, whatever its vtime (long_wait.bpf.h), with at most this slice, us. One CPU
	 * walks the queue for such tasks at most every USCHED_LONG_WAIT_SCAN_MS, or
	 * SCXK_LONG_WAIT_RETAKE_NS (10 ms) after a walk that took one. */
	USCHED_MAX_WAIT_MS = 1000,
	USCHED_LONG_WAIT_SLICE_US = 1000,
	USCHED_LONG_WAIT_SCAN_MS = 100,
	/* How often a BPF timer checks for a silent policy while every CPU is idle, ms. */
	USCHED_WATCH_INTERVAL_MS = 50,
	/* usched_task.flags: not a task, only a wake-up call for the policy (it holds tasks
	 * while a CPU went idle). */
	USCHED_MSG_NUDGE = 1,
};

/* Kernel to userspace: a task that needs a decision. */
struct usched_task {
	s32 pid;
	/* The CPU it last ran on. */
	s32 prev_cpu;
	u32 nr_cpus_allowed;
	/* p->scx.weight: SCXK_NICE0_WEIGHT for nice 0. */
	u32 weight;
	/* Which enqueue this is: a decision must quote it, a later enqueue makes it stale. */
	u64 enq_seq;
	u64 enq_flags;
	/* Time it ran since its previous hand-over, ns. */
	u64 run_ns;
	/* Time it ran since it last slept (went to sleep of its own accord), ns. */
	u64 runtime_since_sleep_ns;
	/* Voluntary context switches: times it stopped while not runnable. */
	u64 nvcsw;
	u64 flags;
};

/* Userspace to kernel: where and how a task runs. */
struct usched_decision {
	s32 pid;
	/* A CPU, or USCHED_ANY_CPU. */
	s32 cpu;
	u64 enq_seq;
	u64 slice_ns;
	u64 vtime;
	/* A grant: until the task has run grant_budget_ns in all since this decision, BPF
	 * queues its wakeups itself, grant_credit_ns before the queue's now (vtime_now), with
	 * this slice, without a round trip through userspace. 0: every wakeup is handed over. */
	u64 grant_budget_ns;
	u64 grant_credit_ns;
};

/* Per-CPU counters, indexes into the `stats` map. */
enum usched_stat_idx {
	/* Tasks handed to userspace. */
	USCHED_STAT_SENT,
	/* Dispatched as userspace decided. */
	USCHED_STAT_USER,
	/* Dispatched by BPF: woke up on an idle CPU while userspace held no task. */
	USCHED_STAT_IDLE,
	/* Dispatched by BPF: per-CPU kernel threads and memory-reclaim threads. */
	USCHED_STAT_KTHREAD,
	/* Dispatched by BPF: the policy process itself. */
	USCHED_STAT_SELF,
	/* Dispatched by BPF: the ring buffer to userspace was full. */
	USCHED_STAT_CONGESTION,
	/* Dispatched by BPF while the policy process was silent. */
	USCHED_STAT_FALLBACK,
	/* Decisions dropped: the task was enqueued again, or is gone, since it was sent. */
	USCHED_STAT_CANCELLED,
	/* Decisions whose CPU the task may not use: sent to any CPU instead. */
	USCHED_STAT_REPLACED,
	/* Wake-up calls sent to the policy: a CPU had nothing to run while it held tasks. */
	USCHED_STAT_NUDGE,
	/* Hand-overs refused because the custody FIFO had no place left: BPF dispatched the
	 * task itself (counted as congestion too). */
	USCHED_STAT_CUSTODY_FULL,
	/* Pushes of a custody entry the queue map refused (its lock may time out on 6.15 and
	 * later): BPF dispatched the task itself, as for a full FIFO. */
	USCHED_STAT_CUSTODY_PUSH_FAILED,
	/* Tasks handed over without waking the policy: it reads them at a CPU's next
	 * scheduling point, with others (counted in SENT too). */
	USCHED_STAT_DEFERRED,
	/* Dispatched by BPF on the policy's grant: a wakeup queued without a round trip. */
	USCHED_STAT_GRANTED,
	/* 1 while the CPU runs a task of this scheduler (summed: tasks running). */
	USCHED_STAT_RUNNING,
	/* Tasks taken from the shared queue while tasks waited in BPF's own, because the CPU's
	 * previous task came from BPF's: the two queues take turns while both hold work. */
	USCHED_STAT_SHARED_FIRST,
	/* Tasks taken from the shared queue out of vtime order, having waited
	 * USCHED_MAX_WAIT_MS there. */
	USCHED_STAT_LONG_WAIT,
	/* The walks for such a task (scxkit/long_wait.bpf.h), the tasks they looked at, and
	 * their time, ns. */
	USCHED_STAT_LONG_WAIT_WALKS,
	USCHED_STAT_LONG_WAIT_WALKED_TASKS,
	USCHED_STAT_LONG_WAIT_WALK_NS,
	/* The scans of the queues for tasks that only a CPU on its way offline can run
	 * (scxk_rescue_stranded): how many, the tasks they looked at, and their time, ns. */
	USCHED_STAT_STRANDED_SCANS,
	USCHED_STAT_STRANDED_SCANNED_TASKS,
	USCHED_STAT_STRANDED_SCAN_NS,
	USCHED_NR_STATS,
};

#endif /* __SCXK_USCHED_INTF_H */
