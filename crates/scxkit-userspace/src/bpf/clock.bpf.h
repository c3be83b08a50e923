/*
 * The queue's clock, vtime_now: where new tasks and granted wakeups are placed (a policy
 * places its own relative to it too).
 *
 * It never goes back, and moves in two ways:
 * - to the vtime of a task that starts running, when that is later;
 * - with clock_runtime_divisor (Policy::clock_runtime_divisor), as tasks run: by each run's
 *   time weighted by nice 0 over the weights of all runnable tasks, each counted at most as
 *   nice 0 (about the rate at which a fair share of the CPUs adds to a task's vtime), divided
 *   by clock_runtime_divisor. A task placed ahead of the clock then comes before new
 *   placements within a bounded time. With the first way alone the clock stood still while
 *   only tasks placed behind it ran (the children of fork loops, granted shells): on 2 CPUs
 *   beside 8 hogs and 6 fork loops, a hog got 11% of a fair share.
 */
#ifndef __USCHED_CLOCK_BPF_H
#define __USCHED_CLOCK_BPF_H

#include "state.bpf.h"

/* A task that starts with a later vtime than the clock's moves the clock there; not when an
 * advance (clock_ran) lands meanwhile: a plain store would undo it. */
static __always_inline void clock_started(u64 vtime)
{
	u64 now = vtime_now;

	if (vtime && time_before(now, vtime))
		__sync_bool_compare_and_swap(&vtime_now, now, vtime);
}

/* p, with context tctx, became runnable: its weight counts from now, at most nice 0's. The
 * kernel pairs ops.runnable with ops.quiescent (a weight change comes between the two), and
 * its record here keeps the sum exact. The cap: a task uses one CPU at most, however heavy,
 * so its weight does not slow the others' fair rate beyond that; one nice -20 hog (8668)
 * slowed the clock tenfold, and hogs beside fork loops on two CPUs got 16% of a fair share. */
static __always_inline void clock_runnable(const struct task_struct *p, struct task_ctx *tctx)
{
	u64 weight = p->scx.weight < SCXK_NICE0_WEIGHT ? p->scx.weight : SCXK_NICE0_WEIGHT;

	if (!clock_runtime_divisor || tctx->runnable_weight)
		return;
	tctx->runnable_weight = weight;
	__sync_fetch_and_add(&runnable_weight_sum, weight);
}

/* p is no longer runnable. */
static __always_inline void clock_quiescent(struct task_ctx *tctx)
{
	u64 weight = tctx->runnable_weight;

	if (!weight)
		return;
	tctx->runnable_weight = 0;
	__sync_fetch_and_sub(&runnable_weight_sum, weight);
}

/* A task ran ran_ns: the clock advances by ran_ns x nice 0's weight / the runnable weights /
 * clock_runtime_divisor. */
static __always_inline void clock_ran(u64 ran_ns)
{
	u64 sum = runnable_weight_sum;

	if (!clock_runtime_divisor)
		return;
	/* Runnable tasks lighter than one nice-0 task in all (nice 19 alone) move it as one. */
	if (sum < SCXK_NICE0_WEIGHT)
		sum = SCXK_NICE0_WEIGHT;
	__sync_fetch_and_add(&vtime_now, ran_ns * SCXK_NICE0_WEIGHT / sum / clock_runtime_divisor);
}

#endif /* __USCHED_CLOCK_BPF_H */
