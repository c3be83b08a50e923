/*
 * Tasks stranded in a shared queue by a CPU going offline: a task only that CPU may run, queued
 * after the CPU stopped calling ops.dispatch (6.19), is moved to the CPU's local queue from a
 * timer (scxk_rescue_stranded).
 */
#ifndef __SCXKIT_STRANDED_BPF_H
#define __SCXKIT_STRANDED_BPF_H

#include "hotplug.bpf.h"
#include "dsq_walk.bpf.h"

/* How long, in jiffies (10 to 100 ms), a task that can run on one CPU only may wait in a
 * shared queue before scxk_rescue_stranded moves it to that CPU's local queue. */
#define SCXK_STRANDED_JIFFIES 10

/* The most tasks one walk of a queue for scxk_rescue_stranded looks at: the timer that walks
 * runs in a softirq, inside an RCU read section, and a hotplug under load may find tens of
 * thousands of tasks queued (each walk went over the whole queue). A stranded task in the
 * middle of a longer queue is found once the tasks ahead of it or behind it have left. */
#define SCXK_STRANDED_MAX_WALK 1024

/* The next scan for scxk_rescue_stranded comes no sooner than this many times its walks' time
 * after they end, and at most SCXK_STRANDED_MAX_DELAY_NS later than its interval for each
 * queue walked (the cap is per walk). */
#define SCXK_STRANDED_WALK_COST_FACTOR 15
#define SCXK_STRANDED_MAX_DELAY_NS (500 * NSEC_PER_MSEC)

/* When a CPU last walked the queues for scxk_rescue_stranded, ns (ahead of now once paced). */
u64 scxk_stranded_scan_ns SCXK_SHARED;

/* Each CPU's count of the tasks its current walk for scxk_rescue_stranded has looked at (see
 * scxk_walk_count). Apart from the long-wait taker's: this one walks from a timer. */
static u32 scxk_stranded_seen[SCXK_MAX_CPUS];

/* Whether the queues are due for scxk_rescue_stranded: one CPU looks at most once every
 * `interval_ns` (the time first: the look at every CPU's runqueue costs more), and some
 * CPU may be inactive. */
static __always_inline bool scxk_stranded_scan_due(u64 interval_ns)
{
	return scxk_walk_due(&scxk_stranded_scan_ns, bpf_ktime_get_ns(), interval_ns) &&
	       scxk_any_cpu_maybe_inactive();
}

/* Puts the next scan for scxk_rescue_stranded later by SCXK_STRANDED_WALK_COST_FACTOR times a
 * walk that started at start_ns: the walks of one scan add up. */
static __always_inline void scxk_stranded_scan_pace(u64 start_ns)
{
	u64 delay_ns = SCXK_STRANDED_WALK_COST_FACTOR * (bpf_ktime_get_ns() - start_ns);

	if (delay_ns > SCXK_STRANDED_MAX_DELAY_NS)
		delay_ns = SCXK_STRANDED_MAX_DELAY_NS;
	__sync_fetch_and_add(&scxk_stranded_scan_ns, delay_ns);
}

/* Moves to their CPU's local queue the tasks of queue `dsq_id` that can run on that CPU
 * alone (scxk_only_cpu_left), have waited SCXK_STRANDED_JIFFIES or more, and whose CPU may be
 * inactive (scxk_cpu_maybe_inactive), among SCXK_STRANDED_MAX_WALK tasks from either end;
 * returns how many tasks it looked at. A CPU going offline stops calling ops.dispatch as soon
 * as it is no longer active, before ops.cpu_offline says so (6.19: after an RCU grace period).
 * A task bound to it and queued just before waited for good; one inside an RCU read section
 * held up that grace period, and the hotplug with it, until an RCU stall ejected the scheduler
 * (scx_simple, 6.19, a hotplug storm under load: once in about 13 rounds of 40 events, and in
 * CI). A CPU serves its local queue whatever its state. Call from a timer, when
 * scxk_stranded_scan_due: each walk paces the next scan (scxk_stranded_scan_pace). */
static __always_inline u32 scxk_rescue_stranded(u64 dsq_id)
{
	u32 *seen = &scxk_stranded_seen[bpf_get_smp_processor_id() & (SCXK_MAX_CPUS - 1)];
	u64 now_jiffies = bpf_jiffies64(), start_ns = bpf_ktime_get_ns();
	volatile u32 *nr_seen = seen;
	struct task_struct *p;
	s32 cpu;

	if (!scxk_dsq_walk_usable())
		return 0;
	*seen = 0;
	bpf_for_each(scx_dsq, p, dsq_id, scxk_walk_from_either_end()) {
		if (!scxk_walk_count(seen, SCXK_STRANDED_MAX_WALK))
			break;
		cpu = scx_bpf_task_cpu(p);
		if (now_jiffies - p->scx.runnable_at < SCXK_STRANDED_JIFFIES ||
		    !scxk_cpu_maybe_inactive(cpu) || !scxk_only_cpu_left(p, cpu))
			continue;
		scx_bpf_dsq_move(SCXK_FOR_EACH_ITER, p, SCX_DSQ_LOCAL_ON | cpu, 0);
	}
	scxk_stranded_scan_pace(start_ns);
	return *nr_seen;
}

/* SCXK_STRANDED_SCANNER(NAME, ON_SCANNED) defines
 *
 *     static __always_inline void NAME(u32 nr_dsqs, u64 interval_ns)
 *
 * which, when scxk_stranded_scan_due(interval_ns), walks queues 0 to nr_dsqs - 1 with
 * scxk_rescue_stranded and calls ON_SCANNED(nr_tasks, scan_ns) with the tasks it looked at
 * and its time (SCXK_WALK_COUNTER, stats.bpf.h, or scxk_scanned_uncounted). Call it from a
 * timer. */
#define SCXK_STRANDED_SCANNER(NAME, ON_SCANNED)                                              \
	static __always_inline void NAME(u32 nr_dsqs, u64 interval_ns)                       \
	{                                                                                    \
		u64 start_ns = bpf_ktime_get_ns();                                           \
		u32 dsq, nr_tasks = 0;                                                       \
                                                                                             \
		if (!scxk_stranded_scan_due(interval_ns))                                    \
			return;                                                              \
		bpf_for(dsq, 0, nr_dsqs)                                                     \
			nr_tasks += scxk_rescue_stranded(dsq);                               \
		ON_SCANNED(nr_tasks, bpf_ktime_get_ns() - start_ns);                         \
	}

/* For SCXK_STRANDED_SCANNER: a scheduler without statistics. */
static __always_inline void scxk_scanned_uncounted(u32 nr_tasks, u64 scan_ns)
{
}

#endif /* __SCXKIT_STRANDED_BPF_H */
