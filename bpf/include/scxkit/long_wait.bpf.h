/*
 * The bound on a task's wait in a queue ordered by vtime or deadline: that order alone keeps
 * a task far ahead of the others waiting until they catch up, and a nice-19 task is charged
 * about 70 times its run. A kernel thread at nice 19 (khugepaged) waited 36 s beside 400 hogs
 * and 16 fork loops on four CPUs, until the kernel's watchdog ejected scx_bpfland; preempted
 * in an RCU read section, such a thread stalls RCU.
 *
 * SCXK_LONG_WAIT_TAKER(NAME, WAITING_SINCE, ON_TAKEN, ON_WALKED) defines
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
 * took a task: more may wait. ON_WALKED(nr_tasks, walk_ns) is called after each walk, with
 * the tasks it looked at in both its passes (finding, then moving) and the time it took, for
 * the scheduler's statistics (SCXK_WALK_COUNTER, stats.bpf.h, defines one). A scheduler
 * with ops.update_idle must keep the kernel's idle tracking (SCX_OPS_KEEP_BUILTIN_IDLE): the
 * wake below reads it, and the kernel ejects a scheduler that reads it without.
 *
 * A walk looks at SCXK_LONG_WAIT_MAX_WALK tasks at most, from the head or from the tail of
 * the queue, and the next walk waits SCXK_LONG_WAIT_WALK_COST_FACTOR times as long as the
 * last one took (at most max_wait_ns / 2). A walk holds this CPU's runqueue lock with
 * interrupts off: over a queue of tens of thousands of tasks (36,000 threads killed at once,
 * 4 vCPUs in TCG) a whole walk every 10 ms left that CPU little time for its timers and the
 * kernel's own kworkers, and scx_rusty was ejected (RCU stalls, the sched_ext watchdog not
 * checking in). The head holds the tasks vtime order serves next, the tail those it serves
 * last, far ahead in vtime (the nice-19 kernel thread above).
 *
 * An overdue task that the walking CPU may not run gets an idle CPU it may run woken instead
 * (scxk_long_wait_wake_for), one wake per walk: an idle CPU looks for work only when woken, and
 * one that missed its wakeup left a task allowed on CPUs 1 and 3 (3 offline) queued for 21 s
 * while CPU 1 idled and CPU 0 walked past it, until an RCU stall ejected scx_bpfland (6.19,
 * a hotplug storm, once in CI and once in 6 rounds of 40 events here).
 *
 * Known limits: a task that only one CPU may run is taken only when that CPU's walk comes
 * first, about one walk in nr_cpus; in a queue longer than 2 * SCXK_LONG_WAIT_MAX_WALK, a
 * task in the middle is found only once the tasks ahead or behind it have left.
 */
#ifndef __SCXK_LONG_WAIT_BPF_H
#define __SCXK_LONG_WAIT_BPF_H

#include <scxkit/common.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include <scxkit/dsq_walk.bpf.h>
#include <scxkit/kick.bpf.h>

/* After a walk that took a task, the next may come this soon, ns. Not at once: with every
 * task overdue (hundreds of hogs on four vCPUs in the reproducible mode), walking at every
 * dispatch made the bound the scheduler (a nice-19 hog got 0.56 of a nice-0 hog's CPU) and
 * kept a CPU's other queues waiting. */
#define SCXK_LONG_WAIT_RETAKE_NS (10 * NSEC_PER_MSEC)

/* The most tasks one walk looks at. */
#define SCXK_LONG_WAIT_MAX_WALK 1024

/* The next walk of a queue comes no sooner than this many times the last walk's length after
 * it ends: walks take at most about 1/16 of a CPU per queue. */
#define SCXK_LONG_WAIT_WALK_COST_FACTOR 15

/* Each CPU's count of the tasks its current walk has looked at (see scxk_walk_count). A CPU
 * walks from ops.dispatch only, one walk at a time. */
static u32 scxk_long_wait_seen[SCXK_MAX_CPUS];

/* How many overdue tasks that the walking CPU may not run one walk tries to wake a CPU for,
 * until one wake. Each try costs a look at the idle mask, with the runqueue locked. */
#define SCXK_LONG_WAIT_WAKE_TRIES 4

/* An idle CPU from p's mask for scxk_long_wait_wake_for, or -1: not one told offline (the idle
 * mask keeps the bit of a CPU that went offline idle, and a pick may return it; the pick
 * cleared that stale bit, so one more pick looks further). One guessed to be leaving is
 * taken: woken, it guesses again (see scxk_kick_idle_cpus). */
static __always_inline s32 scxk_long_wait_pick_idle(struct task_struct *p)
{
	s32 cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);

	if (cpu >= 0 && scxk_cpu_told_offline(cpu))
		cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	return cpu >= 0 && !scxk_cpu_told_offline(cpu) ? cpu : -1;
}

/* Wakes an idle CPU where overdue task p may run, for a walk on a CPU where it may not: the
 * CPU whose runqueue holds p, if idle, allowed and neither told offline nor guessed leaving
 * (scxk_cpu_offline), else any idle CPU p may use (scxk_long_wait_pick_idle), unless p is
 * held on its CPU with migration disabled: no other CPU may take it. Returns whether it woke
 * one: a busy CPU takes its turn at its next dispatch, unkicked. Not from a CPU on its way
 * offline (scxk_may_kick). The woken CPU takes work from the queues; the next walk comes
 * within SCXK_LONG_WAIT_RETAKE_NS. */
static __always_inline bool scxk_long_wait_wake_for(struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);

	if (!scxk_may_kick(false) || !scx_bpf_test_and_clear_cpu_idle_usable() ||
	    !scx_bpf_pick_idle_cpu_usable())
		return false;
	if (scxk_cpu_offline(cpu) || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr) ||
	    !scx_bpf_test_and_clear_cpu_idle(cpu)) {
		if (scxk_migration_disabled(p))
			return false;
		cpu = scxk_long_wait_pick_idle(p);
	}
	if (cpu < 0)
		return false;
	scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	__sync_fetch_and_add(&scxk_long_wait_wakes, 1);
	return true;
}

/* Sets *last_walk_ns so that the next walk is due no sooner than `next_ns` and no sooner than
 * SCXK_LONG_WAIT_WALK_COST_FACTOR times the walk that ran from start_ns until now, but within
 * half the wait it bounds: a walk stretched by a preempted vCPU (300 ms in TCG's round robin)
 * would otherwise put the next one 4.5 s out. */
static __always_inline void scxk_long_wait_pace(u64 *last_walk_ns, u64 start_ns, u64 next_ns,
						u64 walk_interval_ns, u64 max_wait_ns)
{
	u64 end_ns = bpf_ktime_get_ns();
	u64 delay_ns = SCXK_LONG_WAIT_WALK_COST_FACTOR * (end_ns - start_ns);
	u64 paced_ns;

	if (delay_ns > max_wait_ns / 2)
		delay_ns = max_wait_ns / 2;
	paced_ns = end_ns + delay_ns;

	if (time_before(next_ns, paced_ns))
		next_ns = paced_ns;
	*last_walk_ns = next_ns - walk_interval_ns;
}

#define SCXK_LONG_WAIT_TAKER(NAME, WAITING_SINCE, ON_TAKEN, ON_WALKED)				\
static __always_inline s32 NAME##_longest(u64 dsq_id, u64 flags, s32 cpu, u64 now,		\
					  u64 max_wait_ns, u64 *oldest_ns, u32 *seen,		\
					  u32 *tries, bool *woke)				\
{												\
	struct task_struct *p;									\
	u64 since;										\
	s32 pid = 0;										\
												\
	bpf_for_each(scx_dsq, p, dsq_id, flags) {						\
		if (!scxk_walk_count(seen, SCXK_LONG_WAIT_MAX_WALK))			\
			break;									\
		since = WAITING_SINCE(p);							\
		if (!since || !time_before(since + max_wait_ns, now))				\
			continue;								\
		if (!scxk_movable_to(p, cpu)) {							\
			if (!*woke && *tries < SCXK_LONG_WAIT_WAKE_TRIES) {			\
				(*tries)++;							\
				*woke = scxk_long_wait_wake_for(p);				\
			}									\
			continue;								\
		}										\
		if (!pid || time_before(since, *oldest_ns)) {					\
			pid = p->pid;								\
			*oldest_ns = since;							\
		}										\
	}											\
	return pid;										\
}												\
												\
/* The task found, if it still waits since then (not run and queued again meanwhile). */	\
static __always_inline bool NAME##_move(u64 dsq_id, u64 flags, s32 pid, u64 since,		\
					u32 *seen)						\
{												\
	struct task_struct *p;									\
												\
	*seen = 0;										\
	bpf_for_each(scx_dsq, p, dsq_id, flags) {						\
		if (!scxk_walk_count(seen, SCXK_LONG_WAIT_MAX_WALK))			\
			break;									\
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
	u32 *seen = &scxk_long_wait_seen[cpu & (SCXK_MAX_CPUS - 1)];				\
	u64 since = 0, next_ns = now + walk_interval_ns, flags, start_ns;			\
	u32 nr_seen;										\
	bool taken, woke = false;								\
	u32 tries = 0;										\
	s32 pid;										\
												\
	if (!scxk_walk_due(last_walk_ns, now, walk_interval_ns))				\
		return false;									\
	/* Held as far as pacing may go until the walk ends: a walk longer than the interval	\
	 * let another CPU walk the same queue beside it. */					\
	*last_walk_ns = now + max_wait_ns / 2 - walk_interval_ns;				\
	/* The walk's own start: `now` may be older (read once for several queues). */		\
	start_ns = bpf_ktime_get_ns();								\
	flags = scxk_walk_from_either_end();						\
	*seen = 0;										\
	pid = NAME##_longest(dsq_id, flags, cpu, now, max_wait_ns, &since, seen, &tries,	\
			     &woke);								\
	nr_seen = *seen;									\
	taken = pid && NAME##_move(dsq_id, flags, pid, since, seen);				\
	if (pid)										\
		nr_seen += *seen;								\
	if ((taken || woke) && walk_interval_ns > SCXK_LONG_WAIT_RETAKE_NS)			\
		next_ns = now + SCXK_LONG_WAIT_RETAKE_NS;					\
	scxk_long_wait_pace(last_walk_ns, start_ns, next_ns, walk_interval_ns, max_wait_ns);	\
	ON_WALKED(nr_seen, bpf_ktime_get_ns() - start_ns);					\
	return taken;										\
}

#endif /* __SCXK_LONG_WAIT_BPF_H */
