/*
 * scx_bpfland, per-task state: weighted vruntime, the time-slice budget, and the
 * interactive classification from the rate of voluntary context switches.
 */
#ifndef __BPFLAND_TASK_BPF_H
#define __BPFLAND_TASK_BPF_H

#include <scxkit/task_storage.bpf.h>
#include <scxkit/vtime.bpf.h>
#include "intf.h"

/* Written by userspace before load; the defaults live in intf.h. */
RODATA u64 slice_ns = BPFLAND_SLICE_DEFAULT_US * 1000ULL;
RODATA u64 slice_min_ns = BPFLAND_SLICE_MIN_DEFAULT_US * 1000ULL;
RODATA u64 slice_lag_ns = BPFLAND_SLICE_LAG_DEFAULT_US * 1000ULL;
RODATA u64 run_cap_ns = BPFLAND_RUN_CAP_MAX_MS * NSEC_PER_MSEC;
RODATA u64 nvcsw_threshold = BPFLAND_NVCSW_THRESHOLD_DEFAULT;

SCXK_TASK_STORAGE(task_ctxs, struct task_ctx);

/* The largest vruntime of a task that started running: the queues' "now". */
static u64 vtime_now;
/* Tasks classified interactive now (a gauge for userspace). */
u64 nr_interactive;

static __always_inline struct task_ctx *task_ctx_get(const struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, (struct task_struct *)p, 0, 0);
}

/* The next slice: the base slice plus what the task left unused last time (or minus what
 * it overran), the carry bounded by the lag, never below the minimum. */
static __always_inline u64 task_slice(const struct task_ctx *tctx)
{
	s64 slice = (s64)slice_ns + tctx->carry_ns;

	return slice < (s64)slice_min_ns ? slice_min_ns : (u64)slice;
}

/* Gives p a slice of `ns` from now, remembered in its context (when it has one). */
static __always_inline void task_set_slice(struct task_struct *p, struct task_ctx *tctx, u64 ns)
{
	if (tctx)
		tctx->slice_ns = ns;
	scxk_set_slice(p, ns);
}

/* The earliest vruntime a task queues with: a long sleeper's, `slice_lag_ns` of credit. */
static __always_inline u64 vtime_floor(void)
{
	return vtime_now - slice_lag_ns;
}

/* The vruntime to queue with: a long sleeper brings back at most `slice_lag_ns` of credit. */
static __always_inline u64 task_vtime(struct task_ctx *tctx)
{
	u64 floor = vtime_floor();

	if (time_before(tctx->vtime, floor))
		tctx->vtime = floor;
	return tctx->vtime;
}

/* A task woken by an interrupt (a timer, a device: `by_interrupt`) before its first window
 * has closed (it has slept, its rate is not known yet) comes back with a long sleeper's
 * credit, whatever it ran before: a frame loop started beside a build is classed interactive at its third
 * sleep, and its frames 1 and 2 were late behind the build's jobs (up to 75 ms, one CPU)
 * as it had run ahead of them. A task gets this in its first window only (at most
 * BPFLAND_NVCSW_WINDOW_MS). Not for a wakeup by a task: hundreds of new hackbench tasks
 * waking one another through pipes switched a fifth more often with it. */
static __always_inline void credit_new_sleeper(struct task_ctx *tctx, u64 enq_flags,
						bool by_interrupt)
{
	u64 floor = vtime_floor();

	if (!(enq_flags & SCX_ENQ_WAKEUP) || !by_interrupt || tctx->rate_known ||
	    !tctx->window_start_ns)
		return;
	if (time_before(floor, tctx->vtime))
		tctx->vtime = floor;
}

/* A task's place in its queue: its vruntime plus what it has run since it last slept, at
 * most run_cap_ns (weighted like the vruntime). Of two tasks as far behind, the one that
 * asks for less goes first: a command just forked before a hog in the middle of a long run,
 * which EEVDF's deadlines also do. The cap is five lags (at most 100 ms) so that a longer
 * command (`ps axuw` on a busy system, a few hundred ms) keeps that place until it has run
 * about as long as the cap, rather than for its first lag only. */
static __always_inline u64 task_deadline(const struct task_struct *p, struct task_ctx *tctx)
{
	u64 exec_ns = tctx->exec_ns < run_cap_ns ? tctx->exec_ns : run_cap_ns;

	return task_vtime(tctx) + scxk_vtime_of(p, exec_ns);
}

static __always_inline s64 clamp_lag(s64 ns)
{
	if (ns > (s64)slice_lag_ns)
		return slice_lag_ns;
	if (ns < -(s64)slice_lag_ns)
		return -(s64)slice_lag_ns;
	return ns;
}

/* Closes the voluntary-switch window when it is long enough and updates the class: the
 * average rate takes a quarter of the window's. A task's first window opens at its first
 * voluntary switch (task_stop): its start-up (an exec, a wait for the CPU under load) tells
 * nothing of its rhythm. A short window closes early, with BPFLAND_NVCSW_MIN_SWITCHES or
 * more, when its rate alone lifts the average over the threshold (four times it), or, in
 * the task's first window, at twice the threshold, which then seeds the average: promotion
 * is quick, demotion takes full windows. (One early sleep of a CPU-bound task looked like a
 * high rate; a frame loop waiting behind hogs at its start sleeps at a lower rate than its
 * own until it is promoted.) */
static __always_inline void update_interactive(struct task_ctx *tctx, u64 now)
{
	u64 elapsed = now - tctx->window_start_ns;
	bool short_window = elapsed < BPFLAND_NVCSW_WINDOW_MS * NSEC_PER_MSEC;
	bool new_task = !tctx->rate_known;
	u64 early_rate = (new_task ? 2 : 4) * nvcsw_threshold;
	u64 rate;
	u32 interactive;

	if (!tctx->window_start_ns || elapsed < BPFLAND_NVCSW_MIN_WINDOW_MS * NSEC_PER_MSEC)
		return;
	rate = tctx->nvcsw_window * NSEC_PER_SEC / elapsed;
	if (short_window && (rate < early_rate || tctx->nvcsw_window < BPFLAND_NVCSW_MIN_SWITCHES))
		return;
	if (short_window && new_task)
		tctx->nvcsw_rate = early_rate;
	else /* Exponential average, 3/4 of the old value and 1/4 of the new window. */
		tctx->nvcsw_rate = (tctx->nvcsw_rate * 3 + rate) / 4;
	tctx->rate_known = 1;
	tctx->nvcsw_window = 0;
	tctx->window_start_ns = now;

	interactive = tctx->nvcsw_rate >= nvcsw_threshold;
	if (interactive != tctx->interactive) {
		tctx->interactive = interactive;
		if (interactive)
			__sync_fetch_and_add(&nr_interactive, 1);
		else
			__sync_fetch_and_sub(&nr_interactive, 1);
	}
}

/* Charges the time p ran since its budget period started: vruntime (scaled by the inverse
 * of its weight), total runtime and runtime since it slept, and the slice budget carried
 * over; a new period starts. */
static __always_inline void task_charge(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	u64 used_ns = now - tctx->start_ns;

	/* Not seen starting to run yet (it was running when the scheduler attached). */
	if (!tctx->start_ns) {
		tctx->start_ns = now;
		return;
	}
	tctx->vtime += scxk_vtime_of(p, used_ns);
	tctx->runtime_ns += used_ns;
	tctx->exec_ns += used_ns;
	tctx->carry_ns = clamp_lag((s64)tctx->slice_ns - (s64)used_ns);
	tctx->start_ns = now;
}

/* Accounts a task leaving the CPU: vruntime, slice budget, voluntary switches; a task that
 * sleeps starts a new run. */
static __always_inline void task_stop(struct task_struct *p, struct task_ctx *tctx, bool runnable)
{
	u64 now = bpf_ktime_get_ns();

	task_charge(p, tctx, now);
	/* Not runnable any more: the task blocked by itself (a voluntary switch). */
	if (!runnable) {
		if (tctx->window_start_ns)
			tctx->nvcsw_window++;
		else
			tctx->window_start_ns = now;
		tctx->exec_ns = 0;
	}
	update_interactive(tctx, now);
}

#endif /* __BPFLAND_TASK_BPF_H */
