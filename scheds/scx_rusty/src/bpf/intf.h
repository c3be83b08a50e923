/* scx_rusty: the one definition of everything shared by its BPF side and its Rust side. */
#ifndef __SCX_RUSTY_INTF_H
#define __SCX_RUSTY_INTF_H

#include <scxkit/types.h>
#include <scxkit/ravg.h>
#include <scxkit/weight.h>

enum rusty_consts {
	/* Largest CPU count supported (size of the per-domain bitmaps). */
	RUSTY_MAX_CPUS = 512,
	/* Largest number of domains: a task's allowed domains fit one u64. */
	RUSTY_MAX_DOMS = 64,
	/* Defaults of the CLI options (microseconds, percent, tasks). */
	RUSTY_SLICE_UNDERUTIL_DEFAULT_US = 20000,
	RUSTY_SLICE_OVERUTIL_DEFAULT_US = 1000,
	RUSTY_DIRECT_GREEDY_UNDER_DEFAULT_PCT = 90,
	/* 100: kick always, as upstream's scx_rusty does by default. */
	RUSTY_KICK_GREEDY_UNDER_DEFAULT_PCT = 100,
	RUSTY_GREEDY_THRESHOLD_DEFAULT = 1,
	/* The longest slice of a task taken out of vruntime order (take_long_waiting), us. */
	RUSTY_LONG_WAIT_SLICE_US = 1000,
	/* A domain's queue goes round in about this long (queue_round_slice_ns), ms, with
	 * slices of at least RUSTY_MIN_SLICE_US. */
	RUSTY_QUEUE_ROUND_MS = 500,
	RUSTY_MIN_SLICE_US = 250,
	/* task_ctx.load_dom while the task is not runnable. */
	RUSTY_NO_DOM = RUSTY_MAX_DOMS,
	/* Balancing levels a move request may name: 1 = between nodes, 2 = between the
	 * domains of a node. */
	RUSTY_NR_LB_LEVELS = 2,
};

/* Per-CPU counters, indexes into the `stats` map. Every dispatch is counted once, by the
 * path that made it (the RUSTY_STAT_PATH_* range); the rest are counted apart. */
enum rusty_stat_idx {
	/* select_cpu: a synchronous wakeup put on an idle CPU of the waker's domain. */
	RUSTY_STAT_SYNC,
	/* select_cpu: the previous CPU, idle, in the home domain. */
	RUSTY_STAT_PREV_IDLE,
	/* select_cpu: another idle CPU of the home domain. */
	RUSTY_STAT_HOME_IDLE,
	/* select_cpu: an idle CPU of an underused domain of the same node. */
	RUSTY_STAT_DIRECT_GREEDY,
	/* select_cpu: an idle CPU of an underused domain of another node (--direct-greedy-numa). */
	RUSTY_STAT_DIRECT_GREEDY_XNUMA,
	/* select_cpu: a new task, with no idle CPU on its node, put on an idle CPU of another
	 * domain, which became its home (--new-task-spread). */
	RUSTY_STAT_NEW_TASK_SPREAD,
	/* enqueue: a task that may not migrate now, put on its CPU's local queue. */
	RUSTY_STAT_PINNED,
	/* enqueue: queued on its home domain's queue (or the global one, see fallbacks). */
	RUSTY_STAT_QUEUED,
	/* Not paths: which queue dispatch took a task from. */
	RUSTY_STAT_TAKE_HOME,
	RUSTY_STAT_STEAL_NODE,
	RUSTY_STAT_STEAL_XNUMA,
	/* From a domain its own CPUs had not served for RUSTY_UNSERVED_MS, one of them leaving. */
	RUSTY_STAT_TAKE_UNSERVED,
	/* From its own domain's queue, out of vtime order: a task queued RUSTY_MAX_WAIT_MS ago. */
	RUSTY_STAT_TAKE_LONG_WAIT,
	/* The walks for such a task (scxkit/long_wait.bpf.h): how many, the tasks they looked
	 * at, and their time, ns. */
	RUSTY_STAT_LONG_WAIT_WALKS,
	RUSTY_STAT_LONG_WAIT_WALKED_TASKS,
	RUSTY_STAT_LONG_WAIT_WALK_NS,
	/* The scans of every domain's queue for tasks that only a CPU on its way offline can run
	 * (scxk_rescue_stranded): how many, the tasks they looked at, and their time, ns. */
	RUSTY_STAT_STRANDED_SCANS,
	RUSTY_STAT_STRANDED_SCANNED_TASKS,
	RUSTY_STAT_STRANDED_SCAN_NS,
	/* Idle CPUs woken for queued work: of the home domain, or of an underused one. */
	RUSTY_STAT_KICK_HOME,
	RUSTY_STAT_KICK_GREEDY,
	/* Calls of ops.enqueue: each dispatches by PINNED or QUEUED. */
	RUSTY_STAT_ENQUEUE,
	/* Moves asked by userspace and applied, per level (NODE then DOMAIN). */
	RUSTY_STAT_MOVE_APPLIED_NODE,
	RUSTY_STAT_MOVE_APPLIED_DOMAIN,
	/* Moves asked by userspace that the task's affinity no longer allowed. */
	RUSTY_STAT_MOVE_REFUSED,
	/* Tasks given a new home because their affinity left the old one. */
	RUSTY_STAT_REHOME_AFFINITY,
	/* Tasks without state (its allocation failed), run from the global queue. */
	RUSTY_STAT_NO_CTX,
	RUSTY_NR_STATS,
	RUSTY_STAT_PATH_FIRST = RUSTY_STAT_SYNC,
	RUSTY_STAT_PATH_LAST = RUSTY_STAT_QUEUED,
};

/* Per-task state, in task storage; userspace reads it every balancing pass (task_dump). */
struct task_ctx {
	/* Runnable duty cycle: amount 1 while runnable, 0 while sleeping. */
	struct scxk_ravg duty;
	/* The domains the task may run in (bit n: domain n). */
	u64 dom_mask;
	/* The balancing pass (tune_input.lb_seq) whose request this task last looked for. */
	u64 lb_seq_seen;
	/* When the task last started running, ns. */
	u64 start_ns;
	/* When the task was last queued on a domain's queue, ns. */
	u64 queued_ns;
	/* Home domain. */
	u32 dom;
	/* The domain whose load holds this task's weight while it is runnable (RUSTY_NO_DOM
	 * when not runnable), and that weight. */
	u32 load_dom;
	u32 load_weight;
	/* p->scx.weight as last seen. */
	u32 weight;
	/* 1 from its move by take_long_waiting until it runs: taken out of vruntime order, it
	 * leaves its domain's vruntime clock alone and runs a short slice. */
	u32 long_wait_pick;
	/* 1 once exit_task has run: the state stays until the task is freed, and the task dump
	 * skips it. */
	u32 exited;
};

/* One record of the task iterator (dump_tasks), per task the scheduler has initialized. */
struct task_dump {
	s32 pid;
	/* 1: ctx is the task's state; 0: the task has none and is left out of balancing. */
	u32 tracked;
	struct task_ctx ctx;
};

/* Per-domain load, read by userspace: the sum of the weights of its runnable tasks as a
 * decaying average (a nice-0 task runnable all the time adds SCXK_NICE0_WEIGHT x
 * SCXK_RAVG_ONE). */
struct dom_stat {
	struct scxk_ravg load;
};

/* Written by userspace: the tuner's decisions and the balancer's sequence number. */
struct tune_input {
	/* The time slice for tasks, ns. */
	u64 slice_ns;
	/* Domains under --direct-greedy-under and --kick-greedy-under (bit n: domain n). */
	u64 direct_greedy_doms;
	u64 kick_greedy_doms;
	/* Bumped after each pass's move requests are written. */
	u64 lb_seq;
};

/* A move decided by the balancer (lb_requests map, keyed by pid, sized by userspace at load
 * from the machine's thread limit). */
struct lb_request {
	u32 dom;
	/* 1: between nodes, 2: between domains of a node. */
	u32 level;
};

#endif /* __SCX_RUSTY_INTF_H */
