/*
 * scx_bpfland, queues: interactive tasks wait in their own queue, served before the regular
 * one; each queue is ordered by deadline (task_deadline). A waking interactive task on a
 * saturated machine preempts a regular one. Where the kernel cannot create queues (see
 * kfuncs.bpf.h) both classes share the built-in global FIFO, interactive tasks at its head.
 */
#ifndef __BPFLAND_QUEUE_BPF_H
#define __BPFLAND_QUEUE_BPF_H

#include <scxkit/context.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include <scxkit/idle_waker.bpf.h>
#include <scxkit/stranded.bpf.h>
#include <scxkit/long_wait.bpf.h>
#include "counters.bpf.h"
#include "idle.bpf.h"
#include "task.bpf.h"

/* Whether `cpu` runs a regular task p may preempt, in the primary domain or anywhere when
 * `anywhere` (the primary domain is saturated). A remote victim must also have had the
 * minimum slice: preempting another CPU costs an interrupt, and without that rule a burst
 * of wakeups bounces young tasks between CPUs. */
static __always_inline bool can_preempt(struct task_struct *p, s32 cpu, bool anywhere, bool remote)
{
	struct cpu_ctx *cctx = cpu_ctx_get(cpu);

	return cctx && !cctx->offline && cctx->running_regular &&
	       (!remote || bpf_ktime_get_ns() - cctx->running_since_ns >= slice_min_ns) &&
	       (anywhere || in_primary(cpu)) && bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

/* Puts interactive p on the local queue of a CPU running a regular task, preempting it.
 * Tries p's previous CPU first (cache-hot; for a timer wakeup, the CPU already handling
 * it), then the waking CPU, then any other, the primary domain first. Returns false when
 * there is no such CPU. */
static __always_inline bool preempt_for(struct task_struct *p, u64 slice, u64 enq_flags)
{
	bool anywhere = primary_all || primary_saturated();
	s32 prev = scx_bpf_task_cpu(p), self = bpf_get_smp_processor_id();
	s32 victim = -1;
	u32 cpu;

	if (can_preempt(p, prev, anywhere, prev != self)) {
		victim = prev;
	} else if (can_preempt(p, self, anywhere, false)) {
		victim = self;
	} else {
		bpf_for(cpu, 0, nr_cpus) {
			if (!can_preempt(p, cpu, anywhere, true))
				continue;
			victim = cpu;
			if (in_primary(cpu))
				break;
		}
	}
	if (victim < 0)
		return false;
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | victim, slice, enq_flags | SCX_ENQ_PREEMPT);
	count_dispatch(BPFLAND_STAT_PREEMPT, victim);
	return true;
}

/* Runs p at once on an idle CPU of `domain`, if there is one: an idle CPU sleeps and would
 * not come to take queued work by itself. */
static __always_inline bool run_on_idle_in(struct task_struct *p, const struct cpumask *domain,
					   u64 slice, u64 enq_flags)
{
	s32 cpu;

	if (!domain)
		return false;
	cpu = scx_bpf_select_cpu_and(p, scx_bpf_task_cpu(p), 0, domain, 0);
	if (cpu < 0 || scxk_cpu_offline(cpu))
		return false;
	count_dispatch(BPFLAND_STAT_IDLE, cpu);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, slice, enq_flags);
	return true;
}

/* For tasks queued again without a wakeup (slice expired, or sent back from outside the
 * primary domain): an idle CPU of their domain (the primary domain, or all their CPUs). */
static __always_inline bool run_on_idle(struct task_struct *p, u64 slice, u64 enq_flags)
{
	const struct cpumask *primary = cast_mask(primary_mask);

	/* Both masks loaded apart: one load picking either base is refused by the verifier. */
	if (primary_everywhere() || !primary)
		return run_on_idle_in(p, p->cpus_ptr, slice, enq_flags);
	return run_on_idle_in(p, primary, slice, enq_flags);
}

/* When the primary domain is saturated: an idle CPU anywhere p may run. */
static __always_inline bool overflow_now(struct task_struct *p, u64 slice, u64 enq_flags)
{
	if (primary_everywhere() || !primary_saturated())
		return false;
	return run_on_idle_in(p, p->cpus_ptr, slice, enq_flags);
}

/* Since when tasks have waited in the queues without the primary domain taking any, ns; 0
 * when none waits. */
static u64 waiting_since_ns;

/* Whether tasks have waited BPFLAND_UNSERVED_MS with no primary CPU taking any: the primary
 * domain is not serving the queues (a primary CPU going offline stops taking work before
 * ops.cpu_offline says so, and the hotplug itself may wait for a task queued here). */
static __always_inline bool queues_unserved(void)
{
	u64 since = waiting_since_ns;

	return since && bpf_ktime_get_ns() - since > BPFLAND_UNSERVED_MS * NSEC_PER_MSEC;
}

static __always_inline bool queues_empty(void)
{
	if (!scx_bpf_dsq_nr_queued_usable())
		return false;
	return scx_bpf_dsq_nr_queued(BPFLAND_PRIO_DSQ) + scx_bpf_dsq_nr_queued(BPFLAND_SHARED_DSQ) == 0;
}

/* Written by userspace before load: regular tasks waiting per CPU for each minimum slice of
 * the floor (crowd_min_slice); 0 keeps the floor at the minimum slice. */
RODATA u32 crowd_tasks = BPFLAND_CROWD_TASKS_DEFAULT;

/* Regular tasks waiting per online CPU now; -1 where the kernel cannot count a queue. */
static __always_inline s64 regular_waiting(void)
{
	s32 queued;

	/* In the global-FIFO fallback there is no regular queue to count. */
	if (!scx_bpf_create_dsq_usable() || !scx_bpf_dsq_nr_queued_usable())
		return -1;
	queued = scx_bpf_dsq_nr_queued(BPFLAND_SHARED_DSQ);
	return queued > 0 ? (u32)queued / (nr_online_cpus ?: 1) : 0;
}

/* The least slice a regular task gets with `waiting` regular tasks waiting per CPU: the
 * minimum slice, times one per crowd_tasks waiting, at most the base slice, and at most
 * BPFLAND_CROWD_ROUND_MAX_MS for the whole crowd's round (never below the minimum). In a
 * crowd each regular task waits about `waiting` floors for its turn, while every floor's end
 * is a switch: hackbench on one CPU (200 senders) switched half again as often at a 1 ms
 * floor. A desktop's background (a few hogs and build jobs per CPU, fewer than
 * 2 * crowd_tasks) keeps the minimum. */
static __always_inline u64 crowd_min_slice(s64 waiting)
{
	u64 floor_ns, round_cap_ns;

	if (waiting <= 0 || !crowd_tasks)
		return slice_min_ns;
	floor_ns = slice_min_ns * ((u64)waiting / crowd_tasks);
	round_cap_ns = BPFLAND_CROWD_ROUND_MAX_MS * NSEC_PER_MSEC / (u64)waiting;
	if (floor_ns > round_cap_ns)
		floor_ns = round_cap_ns;
	if (floor_ns > slice_ns)
		floor_ns = slice_ns;
	return floor_ns > slice_min_ns ? floor_ns : slice_min_ns;
}

/* The slice of a regular task starting to run now: its budget, cut so that the regular
 * tasks waiting share the base slice. With N waiting per CPU, each gets slice_ns / (N + 1),
 * and at least crowd_min_slice: a short command queued behind a build then waits about one
 * base slice, rather than one base slice per task ahead of it, and in a crowd at most one
 * round of raised floors (BPFLAND_CROWD_ROUND_MAX_MS).
 * (Interactive tasks keep their budget: they run in short bursts, and cutting one only sends
 * it back to its queue.) */
static __always_inline u64 shared_slice(u64 budget_ns)
{
	s64 waiting = regular_waiting();
	u64 share_ns, floor_ns;

	if (waiting < 0)
		return budget_ns;
	share_ns = slice_ns / (waiting + 1);
	floor_ns = crowd_min_slice(waiting);
	if (share_ns < floor_ns)
		share_ns = floor_ns;
	return budget_ns < share_ns ? budget_ns : share_ns;
}

/* A task was taken from the queues: the wait, if any remains, starts again now. */
static __always_inline void queues_served(u64 now)
{
	waiting_since_ns = queues_empty() ? 0 : now;
}

SCXK_WALK_COUNTER(stranded_scanned, BPFLAND_STAT_STRANDED_SCANS,
		  BPFLAND_STAT_STRANDED_SCANNED_TASKS, BPFLAND_STAT_STRANDED_SCAN_NS)

SCXK_STRANDED_SCANNER(scan_for_stranded, stranded_scanned)

/* Hands the tasks that only a CPU going offline may run to that CPU (see
 * scxk_rescue_stranded), at most once every BPFLAND_UNSERVED_MS: both queues, the priority
 * queue (0) and the shared one (1). */
_Static_assert(BPFLAND_PRIO_DSQ == 0 && BPFLAND_SHARED_DSQ == 1,
	       "the stranded scan walks queues 0 and 1");
static __always_inline void rescue_stranded(void)
{
	if (scx_bpf_create_dsq_usable())
		scan_for_stranded(2, BPFLAND_UNSERVED_MS * NSEC_PER_MSEC);
}

/* Every half BPFLAND_UNSERVED_MS, while the primary domain does not serve the queues, the
 * idle CPUs outside it are woken to take the work. */
SCXK_IDLE_WAKER(unserved_watch, BPFLAND_UNSERVED_MS * NSEC_PER_MSEC / 2, queues_unserved,
		rescue_stranded)

/* Queues p by class and deadline (task_deadline). A kernel thread preempted inside an RCU
 * read section (scxk_kthread_holds_up_rcu) holds up every grace period: it is queued with
 * the interactive tasks, at most at the floor of their clock (a long sleeper's place),
 * whatever its class and weight. Only this turn is forgiven: its run is still charged, so a
 * thread often preempted there gets the floor each time, level with fresh wakeups, not
 * ahead of them. */
static __always_inline void queue_task(struct task_struct *p, struct task_ctx *tctx, u64 slice,
				       u64 enq_flags)
{
	/* The wait starts now if none was under way (the queue counts only asked for then). */
	bool wait_starts = !waiting_since_ns || queues_empty();
	bool rcu_holder = scxk_kthread_holds_up_rcu(p);
	bool first = tctx->interactive || rcu_holder;
	u64 deadline, floor;

	scxk_stat_inc(first ? BPFLAND_STAT_INTERACTIVE : BPFLAND_STAT_REGULAR);
	if (!scx_bpf_create_dsq_usable()) {
		scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, slice, enq_flags | (first ? SCX_ENQ_HEAD : 0));
		return;
	}
	tctx->queued_ns = bpf_ktime_get_ns();
	deadline = task_deadline(p, tctx);
	floor = vtime_floor();
	if (rcu_holder && time_before(floor, deadline))
		deadline = floor;
	scx_bpf_dsq_insert_vtime(p, first ? BPFLAND_PRIO_DSQ : BPFLAND_SHARED_DSQ, slice, deadline,
				 enq_flags);
	if (wait_starts)
		waiting_since_ns = bpf_ktime_get_ns();
}

/* When a regular task was last taken from the regular queue, ns. */
static u64 regular_served_ns;

/* Takes the regular queue's first task in its turn. (An overdue turn, move_overdue, does
 * not count as serving the queue: the next task may be waiting as long.) */
static __always_inline bool consume_regular(u64 now)
{
	if (!scx_bpf_dsq_move_to_local(BPFLAND_SHARED_DSQ))
		return false;
	regular_served_ns = now;
	return true;
}

/* When task p was queued, ns; 0 when unknown. */
static __always_inline u64 queued_since(struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_get(p);

	return tctx ? tctx->queued_ns : 0;
}

/* Whether task p has waited `wait_ms` since it was queued. */
static __always_inline bool waited(struct task_struct *p, u64 now, u64 wait_ms)
{
	u64 queued_ns = queued_since(p);

	return queued_ns && time_before(queued_ns + wait_ms * NSEC_PER_MSEC, now);
}

/* Whether regular task p has waited BPFLAND_STARVATION_MS since it was queued. */
static __always_inline bool overdue(struct task_struct *p, u64 now)
{
	return waited(p, now, BPFLAND_STARVATION_MS);
}

/* Gives p, about to be moved for an overdue turn, the minimum slice. */
static __always_inline void cut_to_min_slice(struct task_struct *p)
{
	task_set_slice(p, task_ctx_get(p), slice_min_ns);
}

/* Moves to `cpu` (this CPU) a regular task that has waited BPFLAND_STARVATION_MS: the first
 * such among the regular queue's first BPFLAND_OVERDUE_SCAN tasks that may run here, as one
 * queued after a fork may be ahead of a hog that has waited long (task_deadline). With
 * `none_served`, the first that may run here is due anyway. The turn is cut to the minimum
 * slice. */
static __always_inline bool move_overdue(s32 cpu, u64 now, bool none_served)
{
	struct task_struct *p;
	u32 seen = 0;

	if (scxk_dsq_walk_usable()) {
		bpf_for_each(scx_dsq, p, BPFLAND_SHARED_DSQ, 0) {
			if (seen++ >= BPFLAND_OVERDUE_SCAN)
				break;
			if (!scxk_movable_to(p, cpu) || (!none_served && !overdue(p, now)))
				continue;
			if (!scx_bpf_dsq_move(SCXK_FOR_EACH_ITER, p, SCX_DSQ_LOCAL, 0))
				return false;
			cut_to_min_slice(p);
			return true;
		}
		return false;
	}
	/* Without a walk: the head only (the kernel may move another task that can run here,
	 * with the head's slice cut). */
	if (scx_bpf_dsq_peek_usable()) {
		p = scx_bpf_dsq_peek(BPFLAND_SHARED_DSQ);
		if (!p || (!none_served && !overdue(p, now)))
			return false;
		cut_to_min_slice(p);
		return scx_bpf_dsq_move_to_local(BPFLAND_SHARED_DSQ);
	}
	return none_served && scx_bpf_dsq_move_to_local(BPFLAND_SHARED_DSQ);
}

/* When a CPU last walked the interactive and the regular queue for a task waiting
 * BPFLAND_MAX_WAIT_MS, ns. */
static u64 long_wait_scan_prio_ns, long_wait_scan_ns;

static __always_inline void taken_for_long_wait(struct task_struct *p)
{
	cut_to_min_slice(p);
	scxk_stat_inc(BPFLAND_STAT_LONG_WAIT);
}

SCXK_WALK_COUNTER(long_wait_walked, BPFLAND_STAT_LONG_WAIT_WALKS,
		  BPFLAND_STAT_LONG_WAIT_WALKED_TASKS, BPFLAND_STAT_LONG_WAIT_WALK_NS)

SCXK_LONG_WAIT_TAKER(take_long_waiting_from, queued_since, taken_for_long_wait, long_wait_walked)

/* Moves to `cpu` (this CPU), for the minimum slice, the task that has waited longest in the
 * interactive queue, else in the regular one, if that is BPFLAND_MAX_WAIT_MS or more,
 * wherever it is in its queue: the bound on any task's wait (scxkit/long_wait.bpf.h). A CPU
 * walks a queue at most once per BPFLAND_STARVATION_MS unless the last walk took a task.
 * The interactive queue needs it too: a task classed interactive that stops sleeping is
 * charged its whole run at its weight (100 times at nice 19), and behind a stream of
 * interactive wakeups that queue's clock takes minutes to reach such a deadline. */
static __always_inline bool move_long_waiting(s32 cpu, u64 now)
{
	return take_long_waiting_from(BPFLAND_PRIO_DSQ, cpu, now,
				      BPFLAND_MAX_WAIT_MS * NSEC_PER_MSEC, &long_wait_scan_prio_ns,
				      BPFLAND_STARVATION_MS * NSEC_PER_MSEC) ||
	       take_long_waiting_from(BPFLAND_SHARED_DSQ, cpu, now,
				      BPFLAND_MAX_WAIT_MS * NSEC_PER_MSEC, &long_wait_scan_ns,
				      BPFLAND_STARVATION_MS * NSEC_PER_MSEC);
}

/* When a CPU last looked for an overdue regular task, ns. */
static u64 overdue_scan_ns;

/* Serves the regular queue before waiting interactive tasks when one of its tasks has waited
 * BPFLAND_STARVATION_MS (seen at most BPFLAND_OVERDUE_SCAN_INTERVAL_MS late), or no regular
 * task was served for that long. The first rule bounds
 * each task's wait (the second alone lets N regular tasks wait about N times as long, one
 * served per period). Such a turn is cut to the minimum slice, and a CPU never gives two in
 * a row (see consume): with more regular tasks than the bound has minimum slices, every one
 * of them is overdue, and interactive tasks would get no turn. */
static __always_inline bool serve_starving_regular(s32 cpu, u64 now, bool none_served)
{
	if (!scx_bpf_dsq_nr_queued_usable() || !scx_bpf_dsq_nr_queued(BPFLAND_PRIO_DSQ))
		return false;
	/* The walk for an overdue task, at most every BPFLAND_OVERDUE_SCAN_INTERVAL_MS: on every
	 * dispatch it cost hackbench 3% on one CPU. (Without a walk, move_overdue peeks.) */
	if (!none_served && scxk_dsq_walk_usable() &&
	    !scxk_walk_due(&overdue_scan_ns, now, BPFLAND_OVERDUE_SCAN_INTERVAL_MS * NSEC_PER_MSEC))
		return false;
	if (!move_overdue(cpu, now, none_served))
		return false;
	if (none_served)
		regular_served_ns = now;
	return true;
}

/* Moves the next task to this CPU's local queue: interactive first, unless the regular
 * queue is starving (serve_starving_regular). (Serving it on a fixed share of dispatches
 * instead put a hog's whole slice ahead of waiting interactive tasks.) */
static __always_inline bool consume(s32 cpu)
{
	u64 now = bpf_ktime_get_ns();
	bool none_served = now - regular_served_ns > BPFLAND_STARVATION_MS * NSEC_PER_MSEC;
	struct cpu_ctx *cctx = cpu_ctx_get(cpu);
	bool overdue_turn = false, taken;

	if (move_long_waiting(cpu, now)) {
		taken = true;
	} else if ((none_served || (cctx && !cctx->overdue_turn)) &&
		   serve_starving_regular(cpu, now, none_served)) {
		taken = true;
		overdue_turn = !none_served;
	} else {
		taken = scx_bpf_dsq_move_to_local(BPFLAND_PRIO_DSQ) || consume_regular(now);
	}
	if (cctx)
		cctx->overdue_turn = overdue_turn;
	/* Only the primary domain's serving ends a wait: CPUs outside it, once they help,
	 * help until the queues are empty. (With no primary CPU online, every CPU serves.) */
	if (taken && (in_primary(cpu) || primary_everywhere()))
		queues_served(now);
	return taken;
}

#endif /* __BPFLAND_QUEUE_BPF_H */
