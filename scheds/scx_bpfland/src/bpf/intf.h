/* scx_bpfland: the one definition of everything shared by its BPF side and its Rust side. */
#ifndef __SCX_BPFLAND_INTF_H
#define __SCX_BPFLAND_INTF_H

#include <scxkit/types.h>

enum bpfland_consts {
	/* Largest CPU count supported (size of the primary-domain bitmap). */
	BPFLAND_MAX_CPUS = 1024,
	/* Queues: interactive tasks are served before regular ones. */
	BPFLAND_PRIO_DSQ = 0,
	BPFLAND_SHARED_DSQ = 1,
	/* Defaults of the CLI options, in microseconds or per second. */
	BPFLAND_SLICE_DEFAULT_US = 20000,
	BPFLAND_SLICE_MIN_DEFAULT_US = 1000,
	BPFLAND_SLICE_LAG_DEFAULT_US = 20000,
	BPFLAND_NVCSW_THRESHOLD_DEFAULT = 10,
	BPFLAND_OVERFLOW_DELAY_DEFAULT_US = 5000,
	BPFLAND_CROWD_TASKS_DEFAULT = 8,
	/* A crowd's raised floors (crowd_min_slice) add up to at most this long per round of
	 * the regular tasks waiting per CPU: half BPFLAND_MAX_WAIT_MS. (The floor is never
	 * below the minimum slice: --slice-min-us times the crowd may be longer.) */
	BPFLAND_CROWD_ROUND_MAX_MS = 500,
	/* A task's voluntary switches are counted over windows of this length... */
	BPFLAND_NVCSW_WINDOW_MS = 100,
	/* ...or of at least this length when the rate is so high that one window classes the
	 * task interactive (a new task is promoted without 100 ms of waiting behind hogs). */
	BPFLAND_NVCSW_MIN_WINDOW_MS = 10,
	/* Voluntary switches a window needs to close before BPFLAND_NVCSW_WINDOW_MS. */
	BPFLAND_NVCSW_MIN_SWITCHES = 2,
	/* task_ctx.wake_preempt when select_cpu did not run for the current wakeup. */
	BPFLAND_WAKE_UNSEEN = 2,
	/* When a regular task has waited this long, or no regular task has been served for this
	 * long, the regular queue goes first. */
	BPFLAND_STARVATION_MS = 100,
	/* How many of the regular queue's first tasks are looked at for one that waited that
	 * long (a task just forked is queued ahead of hogs). */
	BPFLAND_OVERDUE_SCAN = 8,
	/* ...at most once in this long, by any CPU. */
	BPFLAND_OVERDUE_SCAN_INTERVAL_MS = 1,
	/* The longest a task waits in either queue, whatever its deadline: a task of low weight
	 * (nice 19: charged 100 times its run) behind hundreds of others would otherwise wait
	 * minutes, and one preempted inside an RCU read section holds up the kernel meanwhile.
	 * Each queue is walked for one, at most once per BPFLAND_STARVATION_MS. */
	BPFLAND_MAX_WAIT_MS = 1000,
	/* Tasks queued this long with no CPU taking any: CPUs outside the primary domain take
	 * them (see queues_unserved). */
	BPFLAND_UNSERVED_MS = 100,
	/* A task's run since it last slept counts in its deadline up to this many
	 * --slice-lag-us (task_deadline), and at most BPFLAND_RUN_CAP_MAX_MS: a large lag
	 * would otherwise let each new process of a chain run alone for seconds. */
	BPFLAND_RUN_CAP_LAGS = 5,
	BPFLAND_RUN_CAP_MAX_MS = 100,
};

/* Per-CPU counters, indexes into the `stats` map. Every dispatch is counted once, by the
 * path that made it (the BPFLAND_STAT_PATH_* range); placements are counted apart. */
enum bpfland_stat_idx {
	/* select_cpu found an idle CPU and dispatched the waking task straight to it. */
	BPFLAND_STAT_DIRECT,
	/* enqueue found an idle CPU for the task. */
	BPFLAND_STAT_IDLE,
	/* enqueue put an interactive task on a CPU running a regular one, preempting it. */
	BPFLAND_STAT_PREEMPT,
	/* Queued in the interactive queue. */
	BPFLAND_STAT_INTERACTIVE,
	/* Queued in the regular queue. */
	BPFLAND_STAT_REGULAR,
	/* A per-CPU kthread dispatched straight to its CPU (--local-kthreads). */
	BPFLAND_STAT_KTHREAD,
	/* A task whose affinity excludes the primary domain, queued on its own CPU. */
	BPFLAND_STAT_PINNED,
	/* Not a path: calls of ops.enqueue, each of which dispatches by exactly one path other
	 * than DIRECT (a cross-check of the path counters). */
	BPFLAND_STAT_ENQUEUE,
	/* Not a path: a task placed on, or taken by, a CPU outside the primary domain. */
	BPFLAND_STAT_OVERFLOW,
	/* Not a path: a task taken because it had waited BPFLAND_MAX_WAIT_MS. */
	BPFLAND_STAT_LONG_WAIT,
	/* Not paths: the walks for such a task (scxkit/long_wait.bpf.h), the tasks they looked
	 * at, and their time, ns. */
	BPFLAND_STAT_LONG_WAIT_WALKS,
	BPFLAND_STAT_LONG_WAIT_WALKED_TASKS,
	BPFLAND_STAT_LONG_WAIT_WALK_NS,
	/* The scans of the queues for tasks that only a CPU on its way offline can run
	 * (scxk_rescue_stranded): how many, the tasks they looked at, and their time, ns. */
	BPFLAND_STAT_STRANDED_SCANS,
	BPFLAND_STAT_STRANDED_SCANNED_TASKS,
	BPFLAND_STAT_STRANDED_SCAN_NS,
	BPFLAND_NR_STATS,
	BPFLAND_STAT_PATH_FIRST = BPFLAND_STAT_DIRECT,
	BPFLAND_STAT_PATH_LAST = BPFLAND_STAT_PINNED,
};

/* Per-task state (BPF task storage); userspace reads it for --watch-pid. */
struct task_ctx {
	/* When the task last started running, ns. */
	u64 start_ns;
	/* Slice it was given last, ns. */
	u64 slice_ns;
	/* Unused (positive) or overrun (negative) time carried to the next slice, ns. */
	s64 carry_ns;
	/* Voluntary switches in the current window, and when the window opened, ns (0: the
	 * task has not yet switched voluntarily; its first window opens then). */
	u64 nvcsw_window;
	u64 window_start_ns;
	/* Average rate of voluntary context switches, per second. */
	u64 nvcsw_rate;
	/* Runtime charged to the task so far, ns (shown by --watch-pid). */
	u64 runtime_ns;
	/* Weighted vruntime, ns; the queues order by it plus exec_ns (see task_deadline). */
	u64 vtime;
	/* Runtime since the task last slept, ns. */
	u64 exec_ns;
	/* When it was last put in a queue, ns. */
	u64 queued_ns;
	/* Set by select_cpu for the wakeup it handled: 1 when the task may preempt (no idle CPU
	 * was found and the waker is not about to sleep), 0 when it may not; cleared by the
	 * enqueue that follows. Left at WAKE_UNSEEN when the kernel skipped select_cpu (a task
	 * allowed on one CPU): such a wakeup may preempt. */
	u32 wake_preempt;
	/* 1 when nvcsw_rate is at or above the threshold. */
	u32 interactive;
	/* 1 once a window has closed: nvcsw_rate is the task's (0 then is a rate, not "none
	 * yet"). */
	u32 rate_known;
	/* Set by select_cpu for the wakeup it handled: 1 when the waker was an interrupt (a
	 * timer, a device), 0 when it was a task. Read by the enqueue that follows, whose own
	 * context may be an interrupt for a task's wakeup too (one queued on another CPU's
	 * wake list runs from an IPI there). */
	u32 woken_by_interrupt;
};

#endif /* __SCX_BPFLAND_INTF_H */
