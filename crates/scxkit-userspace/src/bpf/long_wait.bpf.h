/*
 * The bound on a wait in the shared queue (scxkit/long_wait.bpf.h): a task that has waited
 * USCHED_MAX_WAIT_MS there, since it became runnable or was preempted, is taken by the next
 * CPU that may run it, whatever its vtime. In vtime order alone a nice-19 hog behind 40 hogs
 * on one CPU got no turn in 10 s, and one beside 400 hogs and 16 fork loops on four CPUs
 * waited 39 s, until the kernel's watchdog ejected scx_rustland.
 */
#ifndef __USCHED_LONG_WAIT_BPF_H
#define __USCHED_LONG_WAIT_BPF_H

#include <scxkit/common.bpf.h>
#include <scxkit/long_wait.bpf.h>
#include "state.bpf.h"

/* When a CPU last walked the shared queue for a task waiting USCHED_MAX_WAIT_MS, ns. */
static u64 long_wait_scan_ns;

/* tctx's task starts waiting now: it became runnable, or stopped while still runnable. */
static __always_inline void wait_started(struct task_ctx *tctx, u64 now)
{
	tctx->waiting_since_ns = now;
}

static __always_inline u64 waiting_since(struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	return tctx ? tctx->waiting_since_ns : 0;
}

/* Taken out of vtime order: at most USCHED_LONG_WAIT_SLICE_US, and no vtime, so that the
 * queue's clock stays. Pulled to a nice-19 task's far vtime, it would place every new task
 * and sleeper after it ahead of the hogs it had waited behind. */
static __always_inline void taken_for_long_wait(struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tctx)
		tctx->vtime = 0;
	if (p->scx.slice > USCHED_LONG_WAIT_SLICE_US * 1000ULL)
		scxk_set_slice(p, USCHED_LONG_WAIT_SLICE_US * 1000ULL);
	scxk_stat_inc(USCHED_STAT_LONG_WAIT);
}

SCXK_WALK_COUNTER(long_wait_walked, USCHED_STAT_LONG_WAIT_WALKS,
		  USCHED_STAT_LONG_WAIT_WALKED_TASKS, USCHED_STAT_LONG_WAIT_WALK_NS)

SCXK_LONG_WAIT_TAKER(take_long_waiting_from, waiting_since, taken_for_long_wait, long_wait_walked)

/* Moves to `cpu` (this CPU) the task of the shared queue that has waited longest, if that is
 * USCHED_MAX_WAIT_MS or more. */
static __always_inline bool take_long_waiting(s32 cpu)
{
	return take_long_waiting_from(USCHED_SHARED_DSQ, cpu, bpf_ktime_get_ns(),
				      USCHED_MAX_WAIT_MS * NSEC_PER_MSEC, &long_wait_scan_ns,
				      USCHED_LONG_WAIT_SCAN_MS * NSEC_PER_MSEC);
}

#endif /* __USCHED_LONG_WAIT_BPF_H */
