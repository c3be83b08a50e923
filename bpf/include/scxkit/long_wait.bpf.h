/*
 * The bound on a task's wait in a queue ordered by vtime or deadline: that order alone keeps
 * a task far ahead of the others waiting until they catch up, and a nice-19 task is charged
 * about 70 times its run. A kernel thread at nice 19 (khugepaged) waited 36 s beside 400 hogs
 * and 16 fork loops on four CPUs, until the kernel's watchdog ejected scx_bpfland; preempted
 * in an RCU read section, such a thread stalls RCU.
 *
 * SCXK_LONG_WAIT_TAKER(NAME, WAITING_SINCE, ON_TAKEN) defines
 *
 *     static bool NAME(u64 dsq_id, s32 cpu, u64 now, u64 max_wait_ns,
 *                      u64 *last_walk_ns, u64 walk_interval_ns)
 *
 * which moves to this CPU's local queue (call it from ops.dispatch) the task of queue dsq_id
 * that has waited longest, if that is max_wait_ns or more, among those that may run on `cpu`,
 * and calls ON_TAKEN(p) for it. The longest, not the first in queue order: with more tasks
 * overdue than the CPUs took, the first ones were always others, and the task far behind
 * them kept waiting (36 s, above). WAITING_SINCE(p) is when p started waiting, ns (0: not
 * known, never taken). A CPU walks the queue at most every walk_interval_ns (the last walk's
 * time in *last_walk_ns, shared by the CPUs), or SCXK_LONG_WAIT_RETAKE_NS after a walk that
 * took a task: more may wait.
 *
 * Known limit: a task that only one CPU may run is taken only when that CPU's walk comes
 * first, about one walk in nr_cpus.
 */
#ifndef __SCXK_LONG_WAIT_BPF_H
#define __SCXK_LONG_WAIT_BPF_H

#include <scxkit/common.bpf.h>
#include <scxkit/hotplug.bpf.h>

/* After a walk that took a task, the next may come this soon, ns. Not at once: with every
 * task overdue (hundreds of hogs on four vCPUs in the reproducible mode), walking at every
 * dispatch made the bound the scheduler (a nice-19 hog got 0.56 of a nice-0 hog's CPU) and
 * kept a CPU's other queues waiting. */
#define SCXK_LONG_WAIT_RETAKE_NS (10 * NSEC_PER_MSEC)

#define SCXK_LONG_WAIT_TAKER(NAME, WAITING_SINCE, ON_TAKEN)					\
static __always_inline s32 NAME##_longest(u64 dsq_id, s32 cpu, u64 now, u64 max_wait_ns,	\
					  u64 *oldest_ns)					\
{												\
	struct task_struct *p;									\
	u64 since;										\
	s32 pid = 0;										\
												\
	bpf_for_each(scx_dsq, p, dsq_id, 0) {							\
		since = WAITING_SINCE(p);							\
		if (!since || !time_before(since + max_wait_ns, now) || !scxk_movable_to(p, cpu))\
			continue;								\
		if (!pid || time_before(since, *oldest_ns)) {					\
			pid = p->pid;								\
			*oldest_ns = since;							\
		}										\
	}											\
	return pid;										\
}												\
												\
/* The task found, if it still waits since then (not run and queued again meanwhile). */	\
static __always_inline bool NAME##_move(u64 dsq_id, s32 pid, u64 since)			\
{												\
	struct task_struct *p;									\
												\
	bpf_for_each(scx_dsq, p, dsq_id, 0) {							\
		if (p->pid != pid)								\
			continue;								\
		if (WAITING_SINCE(p) != since)							\
			return false;								\
		if (!scx_bpf_dsq_move(SCXK_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))			\
			return false;								\
		ON_TAKEN(p);									\
		return true;									\
	}											\
	return false;										\
}												\
												\
static __always_inline bool NAME(u64 dsq_id, s32 cpu, u64 now, u64 max_wait_ns,		\
				 u64 *last_walk_ns, u64 walk_interval_ns)			\
{												\
	u64 since = 0;										\
	s32 pid;										\
												\
	if (!scxk_walk_due(last_walk_ns, now, walk_interval_ns))				\
		return false;									\
	pid = NAME##_longest(dsq_id, cpu, now, max_wait_ns, &since);				\
	if (!pid || !NAME##_move(dsq_id, pid, since))						\
		return false;									\
	if (walk_interval_ns > SCXK_LONG_WAIT_RETAKE_NS)					\
		*last_walk_ns = now - walk_interval_ns + SCXK_LONG_WAIT_RETAKE_NS;		\
	return true;										\
}

#endif /* __SCXK_LONG_WAIT_BPF_H */
