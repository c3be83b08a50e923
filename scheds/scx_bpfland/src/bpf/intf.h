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
	/* A task's voluntary switches are counted over windows of this length... */
	BPFLAND_NVCSW_WINDOW_MS = 100,
	/* ...or of at least this length when the rate is so high that one window classes the
	 * task interactive (a new task is promoted without 100 ms of waiting behind hogs). */
	BPFLAND_NVCSW_MIN_WINDOW_MS = 10,
	/* When no regular task has been served for this long, the regular queue goes first. */
	BPFLAND_STARVATION_MS = 100,
	/* Weight of a nice-0 task (p->scx.weight). */
	BPFLAND_WEIGHT_NICE0 = 100,
};

/* Per-CPU counters, indexes into the `stats` map. */
enum bpfland_stat_idx {
	/* Woke up on an idle CPU and went straight to it. */
	BPFLAND_STAT_DIRECT,
	/* Queued in the interactive queue. */
	BPFLAND_STAT_INTERACTIVE,
	/* Queued in the regular queue. */
	BPFLAND_STAT_REGULAR,
	/* Placed on a CPU outside the primary domain. */
	BPFLAND_STAT_OVERFLOW,
	/* An interactive wakeup preempted a regular task. */
	BPFLAND_STAT_PREEMPT,
	/* A per-CPU kthread dispatched straight to its CPU (--local-kthreads). */
	BPFLAND_STAT_KTHREAD,
	/* A task whose affinity excludes the primary domain, queued on its own CPU. */
	BPFLAND_STAT_PINNED,
	BPFLAND_NR_STATS,
};

/* Per-task state (BPF task storage); userspace reads it for --watch-pid. */
struct task_ctx {
	/* When the task last started running, ns. */
	u64 start_ns;
	/* Slice it was given last, ns. */
	u64 slice_ns;
	/* Unused (positive) or overrun (negative) time carried to the next slice, ns. */
	s64 carry_ns;
	/* Voluntary switches in the current window, and when the window opened, ns. */
	u64 nvcsw_window;
	u64 window_start_ns;
	/* Average rate of voluntary context switches, per second. */
	u64 nvcsw_rate;
	/* Set by select_cpu when no idle CPU was found for this wakeup and the waker is not
	 * about to sleep (not a sync wakeup): the task may then preempt a regular one. */
	u32 wake_preempt;
	/* 1 when nvcsw_rate is at or above the threshold. */
	u32 interactive;
};

#endif /* __SCX_BPFLAND_INTF_H */
