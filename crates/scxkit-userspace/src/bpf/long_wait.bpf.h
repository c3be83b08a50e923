/*
 * The bound on a wait in the shared queue. A task that has waited USCHED_MAX_WAIT_MS there
 * (since it became runnable or was preempted) is taken by the next CPU that may run it,
 * whatever its vtime. Vtime order alone lets a task far ahead of the others wait for as long
 * as they take to catch up: a nice-19 hog, charged about 70 times its run, got no turn in
 * 10 s behind 40 hogs on one CPU, and a kernel thread placed 427 ms ahead of the clock beside
 * 400 hogs on four CPUs waited 38 s, until the kernel's watchdog ejected the scheduler.
 */
#ifndef __USCHED_LONG_WAIT_BPF_H
#define __USCHED_LONG_WAIT_BPF_H

#include <scxkit/common.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include "state.bpf.h"

/* When a CPU last walked the shared queue for a task waiting USCHED_MAX_WAIT_MS, ns. */
static u64 long_wait_scan_ns;

/* tctx's task starts waiting now: it became runnable, or stopped while still runnable. */
static __always_inline void wait_started(struct task_ctx *tctx, u64 now)
{
	tctx->waiting_since_ns = now;
}

static __always_inline bool waited_too_long(const struct task_ctx *tctx, u64 now)
{
	return tctx->waiting_since_ns &&
	       time_before(tctx->waiting_since_ns + USCHED_MAX_WAIT_MS * NSEC_PER_MSEC, now);
}

/* The pid of the task of the shared queue that has waited longest, at least
 * USCHED_MAX_WAIT_MS, among those that may run on `cpu`; 0 if none. */
static __always_inline s32 longest_waiting(s32 cpu, u64 now)
{
	u64 oldest_ns = 0;
	s32 pid = 0;
	struct task_struct *p;

	bpf_for_each(scx_dsq, p, USCHED_SHARED_DSQ, 0) {
		struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

		if (!tctx || !waited_too_long(tctx, now) || !scxk_movable_to(p, cpu))
			continue;
		if (!pid || time_before(tctx->waiting_since_ns, oldest_ns)) {
			pid = p->pid;
			oldest_ns = tctx->waiting_since_ns;
		}
	}
	return pid;
}

/* Moves the task of `pid` from the shared queue to this CPU, with at most
 * USCHED_LONG_WAIT_SLICE_US of slice. It starts without a vtime, so the queue's clock stays:
 * pulled to a nice-19 task's far vtime, every new task and sleeper after it would be placed
 * ahead of the hogs it had waited behind. */
static __always_inline bool take_waiting_pid(s32 pid)
{
	struct task_struct *p;

	bpf_for_each(scx_dsq, p, USCHED_SHARED_DSQ, 0) {
		struct task_ctx *tctx;
		u64 vtime;

		if (p->pid != pid)
			continue;
		tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
		if (!tctx)
			return false;
		vtime = tctx->vtime;
		tctx->vtime = 0;
		if (!scx_bpf_dsq_move(SCXK_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0)) {
			tctx->vtime = vtime;
			return false;
		}
		if (p->scx.slice > USCHED_LONG_WAIT_SLICE_US * 1000ULL)
			scxk_set_slice(p, USCHED_LONG_WAIT_SLICE_US * 1000ULL);
		return true;
	}
	return false;
}

/*
 * Moves to `cpu` (this CPU) the task of the shared queue that has waited longest, if that is
 * USCHED_MAX_WAIT_MS or more. The longest, not the first in vtime order: with more tasks
 * overdue than the walks took (400 hogs on four CPUs), the first ones were always others,
 * and a nice-19 hog far behind them waited 39 s. A CPU walks the queue at most every
 * USCHED_LONG_WAIT_SCAN_MS, except right after a walk that found a task: more may wait.
 */
static __always_inline bool take_long_waiting(s32 cpu)
{
	u64 now = bpf_ktime_get_ns();
	s32 pid;

	if (!scxk_walk_due(&long_wait_scan_ns, now, USCHED_LONG_WAIT_SCAN_MS * NSEC_PER_MSEC))
		return false;
	pid = longest_waiting(cpu, now);
	if (!pid || !take_waiting_pid(pid))
		return false;
	long_wait_scan_ns = 0;
	scxk_stat_inc(USCHED_STAT_LONG_WAIT);
	return true;
}

#endif /* __USCHED_LONG_WAIT_BPF_H */
