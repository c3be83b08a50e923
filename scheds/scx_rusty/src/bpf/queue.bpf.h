/*
 * scx_rusty, queues: one per domain (its id is the domain's), ordered by weighted vruntime or
 * FIFO with --fifo. A CPU takes work from its own domain's queue first, then steals greedily
 * from a domain of its node holding at least --greedy-threshold tasks, then from another
 * node's holding at least --greedy-threshold-x-numa (0 turns either off). A stolen task runs
 * once on the thief and keeps its home. Queuing work wakes an idle CPU of the home domain,
 * or else one of an underused domain (--kick-greedy-under) that may then steal it. While a
 * CPU of a domain goes offline, its queue is served by any CPU once its own CPUs have left
 * it unserved for RUSTY_UNSERVED_MS, whatever the thresholds.
 *
 * Where the kernel cannot create queues (see kfuncs.bpf.h), every domain shares the
 * built-in global FIFO and there is no stealing (userspace says so at start).
 */
#ifndef __RUSTY_QUEUE_BPF_H
#define __RUSTY_QUEUE_BPF_H

#include <scxkit/hotplug.bpf.h>
#include <scxkit/idle_waker.bpf.h>
#include <scxkit/kick.bpf.h>
#include <scxkit/stranded.bpf.h>
#include <scxkit/long_wait.bpf.h>
#include <scxkit/slice.bpf.h>
#include "clock.bpf.h"
#include "counters.bpf.h"
#include "domain.bpf.h"
#include "task.bpf.h"
#include "tune.bpf.h"

/* Written by userspace before load; the defaults live in intf.h. */
RODATA u32 greedy_threshold = RUSTY_GREEDY_THRESHOLD_DEFAULT;
RODATA u32 greedy_threshold_x_numa;
RODATA bool fifo;

/* Wakes an idle CPU of `dom` that p may use (in p->cpus_ptr too: a CPU p may not run on
 * would wake for nothing); true when one was woken. */
static __always_inline bool kick_idle_in(struct task_struct *p, u32 dom)
{
	const struct cpumask *cpus = dom_cpumask(dom);
	s32 cpu;

	if (!cpus || !scx_bpf_kick_cpu_usable())
		return false;
	cpu = scx_bpf_select_cpu_and(p, scx_bpf_task_cpu(p), 0, cpus, 0);
	if (cpu < 0)
		return false;
	scxk_kick_cpu(cpu, SCX_KICK_IDLE);
	return true;
}

/* After queuing p: an idle CPU of its home domain comes to take it; without one, an idle
 * CPU of an underused domain that would steal it (of another node only when cross-node
 * stealing is on). */
static __always_inline void kick_for(struct task_struct *p, struct task_ctx *tctx)
{
	struct tune_input *t = tune_get();
	u32 dom;

	if (kick_idle_in(p, tctx->dom)) {
		scxk_stat_inc(RUSTY_STAT_KICK_HOME);
		return;
	}
	if (!t || !greedy_threshold)
		return;
	bpf_for(dom, 0, nr_doms) {
		if (dom == tctx->dom || !dom_in(t->kick_greedy_doms & tctx->dom_mask, dom))
			continue;
		if (!same_node(dom, tctx->dom) && !greedy_threshold_x_numa)
			continue;
		if (kick_idle_in(p, dom)) {
			scxk_stat_inc(RUSTY_STAT_KICK_GREEDY);
			return;
		}
	}
}

#define RUSTY_UNSERVED_MS 100

/* Since when each domain's queue has held tasks that none of its own CPUs took, ns; 0 when
 * its CPUs took the last ones. */
static u64 dom_waiting_since_ns[RUSTY_MAX_DOMS];

static __always_inline u64 *dom_waiting_since(u32 dom)
{
	return &dom_waiting_since_ns[dom & (RUSTY_MAX_DOMS - 1)];
}

/* Whether a CPU of domain `dom` is offline or on its way there. */
static __always_inline bool dom_losing_cpu(u32 dom)
{
	return dom_any_cpu(dom, NULL, true);
}

/* Whether domain `dom`'s queue has held tasks for RUSTY_UNSERVED_MS that none of its own
 * CPUs took. */
static __always_inline bool dom_waited_unserved(u32 dom, u64 now)
{
	u64 since = *dom_waiting_since(dom);

	return since && now - since > RUSTY_UNSERVED_MS * NSEC_PER_MSEC;
}

/* Whether domain `dom`'s queue has waited RUSTY_UNSERVED_MS for its own CPUs while one of
 * them is leaving. A CPU on its way offline takes no work (7.x: it would push it away, see
 * rusty_dispatch) while the hotplug waits for an RCU grace period, which may need a task
 * queued there: with every CPU of the domain leaving, only another domain's CPU can run it.
 * Otherwise a queue waits for its own CPUs or for stealing (--greedy-threshold), however
 * long their slices. */
static __always_inline bool dom_unserved(u32 dom, u64 now)
{
	return dom_waited_unserved(dom, now) && dom_losing_cpu(dom);
}

/* A kernel thread waking up: it goes before the sleepers (kthread_wakeup_vtime). */
static __always_inline bool kthread_wakeup(const struct task_struct *p, u64 enq_flags)
{
	return (p->flags & PF_KTHREAD) && (enq_flags & SCX_ENQ_WAKEUP);
}

/* The vruntime p queues with in domain `dom`: its own, at most a sleeper's credit behind the
 * clock, and a kernel thread's wakeup ahead of those (kthread_wakeup_vtime). */
static __always_inline u64 queue_vtime(struct task_struct *p, u32 dom, u64 slice, u64 enq_flags)
{
	u64 vtime = task_vtime(p, dom, slice);

	if (kthread_wakeup(p, enq_flags))
		return kthread_wakeup_vtime(p, dom, slice, vtime);
	return vtime;
}

/* Queues p on its home domain's queue. */
static __always_inline void queue_task(struct task_struct *p, struct task_ctx *tctx, u64 slice,
				       u64 enq_flags)
{
	u64 *since;

	scxk_stat_inc(RUSTY_STAT_QUEUED);
	if (!scx_bpf_create_dsq_usable()) {
		scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, slice, enq_flags);
		return;
	}
	since = dom_waiting_since(tctx->dom);
	tctx->queued_ns = bpf_ktime_get_ns();
	/* Taken for its long wait but dequeued before it ran (a new affinity, say). */
	tctx->long_wait_pick = 0;
	if (!*since)
		*since = tctx->queued_ns;
	if (fifo) /* A kernel thread's wakeup at the head, as in vruntime order. */
		scx_bpf_dsq_insert(p, tctx->dom, slice,
				   enq_flags | (kthread_wakeup(p, enq_flags) ? SCX_ENQ_HEAD : 0));
	else
		scx_bpf_dsq_insert_vtime(p, tctx->dom, slice, queue_vtime(p, tctx->dom, slice, enq_flags),
					 enq_flags);
	kick_for(p, tctx);
}

/* Takes a task from another domain's queue holding at least `threshold` tasks, of the
 * thief's node (`far` false) or of another node (`far` true). */
static __always_inline bool steal(u32 thief_dom, u32 threshold, bool far)
{
	u32 dom;

	if (!threshold || !scx_bpf_dsq_nr_queued_usable())
		return false;
	bpf_for(dom, 0, nr_doms) {
		if (dom == thief_dom || same_node(dom, thief_dom) == far)
			continue;
		if (scx_bpf_dsq_nr_queued(dom) >= (s32)threshold && scx_bpf_dsq_move_to_local(dom))
			return true;
	}
	return false;
}

/* Takes a task from a domain whose own CPUs have not served its queue for RUSTY_UNSERVED_MS. */
static __always_inline bool take_unserved(u32 thief_dom)
{
	u64 now = bpf_ktime_get_ns();
	u32 dom;

	bpf_for(dom, 0, nr_doms) {
		if (dom != thief_dom && dom_unserved(dom, now) && scx_bpf_dsq_move_to_local(dom))
			return true;
	}
	return false;
}

/* Whether some domain's queue holds tasks and waits for its own CPUs in vain (dom_unserved). */
static __always_inline bool any_dom_unserved(void)
{
	u64 now = bpf_ktime_get_ns();
	u32 dom;

	if (!scx_bpf_dsq_nr_queued_usable())
		return false;
	bpf_for(dom, 0, nr_doms) {
		if (dom_unserved(dom, now) && scx_bpf_dsq_nr_queued(dom) > 0)
			return true;
	}
	return false;
}

/* Wakes each idle CPU whose domain has tasks queued (a kick does nothing to a busy one); then
 * whether some domain is unserved, for which every idle CPU is woken. A CPU that came online,
 * or idled on a wrong guess that it was leaving (scxk_dispatching_cpu_leaving), may sleep
 * with a task that only it can run in its domain's queue: with the RCU kthread there, until
 * an RCU stall. */
static __always_inline bool wake_queued_doms(void)
{
	u32 cpu;

	if (scx_bpf_dsq_nr_queued_usable() && scx_bpf_kick_cpu_usable() && !scxk_this_cpu_leaving()) {
		bpf_for(cpu, 0, nr_cpus) {
			if (!scxk_cpu_told_offline(cpu) && scx_bpf_dsq_nr_queued(cpu_dom(cpu)) > 0)
				scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
		}
	}
	return any_dom_unserved();
}

/* Whether some CPU may be inactive (scxk_cpu_maybe_inactive), as of the waker's last turn: a
 * CPU going offline stops serving its domain before ops.cpu_offline says so (6.19: after an
 * RCU grace period), and take_work then looks for stranded tasks too. */
static bool cpus_maybe_inactive;

SCXK_WALK_COUNTER(stranded_scanned, RUSTY_STAT_STRANDED_SCANS, RUSTY_STAT_STRANDED_SCANNED_TASKS,
		  RUSTY_STAT_STRANDED_SCAN_NS)

SCXK_STRANDED_SCANNER(rescue_stranded, stranded_scanned)

/* The waker's upkeep: notes whether a CPU may be inactive, and hands the tasks that only such
 * a CPU can run to it (scxk_rescue_stranded), at most once every half RUSTY_UNSERVED_MS. */
static __always_inline void tend_inactive_cpus(void)
{
	cpus_maybe_inactive = scxk_any_cpu_maybe_inactive();
	if (cpus_maybe_inactive && scx_bpf_create_dsq_usable())
		rescue_stranded(nr_doms, RUSTY_UNSERVED_MS * NSEC_PER_MSEC / 2);
}

/* Every half RUSTY_UNSERVED_MS: idle CPUs with work queued in their domain are woken, and
 * while a domain's queue is not served, every idle CPU, to take its work (take_unserved). */
SCXK_IDLE_WAKER(unserved_waker, RUSTY_UNSERVED_MS * NSEC_PER_MSEC / 2, wake_queued_doms,
		tend_inactive_cpus)

#define RUSTY_MAX_WAIT_MS 1000

/* When a CPU of each domain last walked its queue for a task waiting RUSTY_MAX_WAIT_MS, ns. */
static u64 dom_long_wait_scan_ns[RUSTY_MAX_DOMS];

static __always_inline u64 queued_since(struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_get(p);

	return tctx ? tctx->queued_ns : 0;
}

/* The task runs as a guest (rusty_running): far ahead in vruntime (a nice-19 hog), it would
 * otherwise pull its domain's clock along, and every sleeper after it would queue behind the
 * hogs. */
static __always_inline void taken_for_long_wait(struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_get(p);

	if (tctx)
		tctx->long_wait_pick = 1;
}

SCXK_WALK_COUNTER(long_wait_walked, RUSTY_STAT_LONG_WAIT_WALKS,
		  RUSTY_STAT_LONG_WAIT_WALKED_TASKS, RUSTY_STAT_LONG_WAIT_WALK_NS)

SCXK_LONG_WAIT_TAKER(take_long_waiting_from, queued_since, taken_for_long_wait, long_wait_walked)

/* Takes from domain `dom`'s queue the task that has waited longest, if it was queued
 * RUSTY_MAX_WAIT_MS ago, whatever its vtime (scxkit/long_wait.bpf.h): a stream of waking
 * tasks, each given a sleeper's credit, can keep a task that was preempted (in an RCU read
 * section, say) behind them for good. At most one walk per domain per RUSTY_UNSERVED_MS,
 * unless the last one took a task. */
static __always_inline bool take_long_waiting(s32 cpu, u32 dom)
{
	return take_long_waiting_from(dom, cpu, bpf_ktime_get_ns(), RUSTY_MAX_WAIT_MS * NSEC_PER_MSEC,
				      &dom_long_wait_scan_ns[dom & (RUSTY_MAX_DOMS - 1)],
				      RUSTY_UNSERVED_MS * NSEC_PER_MSEC);
}

/* Whether no CPU of domain `dom` is online. */
static __always_inline bool dom_dead(u32 dom)
{
	return !dom_any_cpu(dom, NULL, false);
}

/* Takes a task from another domain with tasks queued and no CPU online. */
static __always_inline bool take_dead(u32 thief_dom)
{
	u32 dom;

	if (!scx_bpf_dsq_nr_queued_usable())
		return false;
	bpf_for(dom, 0, nr_doms) {
		if (dom != thief_dom && scx_bpf_dsq_nr_queued(dom) > 0 && dom_dead(dom) &&
		    scx_bpf_dsq_move_to_local(dom))
			return true;
	}
	return false;
}

/* Takes a task that waited RUSTY_MAX_WAIT_MS in another domain's queue (take_long_waiting). */
static __always_inline bool take_stranded(s32 cpu, u32 own_dom)
{
	u32 dom;

	bpf_for(dom, 0, nr_doms) {
		if (dom != own_dom && take_long_waiting(cpu, dom))
			return true;
	}
	return false;
}

/* Fills `cpu`'s local queue: its own domain, then greedy stealing, then a domain its own
 * CPUs do not serve. While a CPU is told offline, what no CPU of its own domain can run comes
 * before the own domain: the queue of a domain with no CPU online (while it has none; a CPU of
 * a domain full of hogs would never get to it, and the RCU kthread waiting there stalls RCU),
 * and a task queued 1 s in another domain, which may be allowed only on CPUs that left it
 * (also while a CPU may be on its way offline, before it is told: a task allowed on CPUs 1
 * and 3, queued with CPUs 2-3, waits there for CPU 3, which serves nothing while the hotplug
 * waits for an RCU grace period, and that period may wait for the task). Only those: were
 * every domain a leaving CPU left unserved taken first, each CPU would serve the others and
 * not its own, whose tasks (the RCU kthread) would wait for seconds. */
static __always_inline bool take_work(s32 cpu)
{
	u32 dom = cpu_dom(cpu);

	if (take_long_waiting(cpu, dom)) {
		scxk_stat_inc(RUSTY_STAT_TAKE_LONG_WAIT);
		return true;
	}
	if (scxk_nr_told_offline && take_dead(dom)) {
		scxk_stat_inc(RUSTY_STAT_TAKE_UNSERVED);
		return true;
	}
	if ((scxk_nr_told_offline || cpus_maybe_inactive) && take_stranded(cpu, dom)) {
		scxk_stat_inc(RUSTY_STAT_TAKE_LONG_WAIT);
		return true;
	}
	if (scx_bpf_dsq_move_to_local(dom)) {
		scxk_stat_inc(RUSTY_STAT_TAKE_HOME);
		*dom_waiting_since(dom) = scxk_nr_queued(dom) > 0 ? bpf_ktime_get_ns() : 0;
		return true;
	}
	/* Written only when it changes: every idle dispatch passes here. */
	if (*dom_waiting_since(dom))
		*dom_waiting_since(dom) = 0;
	if (steal(dom, greedy_threshold, false)) {
		scxk_stat_inc(RUSTY_STAT_STEAL_NODE);
		return true;
	}
	if (steal(dom, greedy_threshold_x_numa, true)) {
		scxk_stat_inc(RUSTY_STAT_STEAL_XNUMA);
		return true;
	}
	if (take_unserved(dom)) {
		scxk_stat_inc(RUSTY_STAT_TAKE_UNSERVED);
		return true;
	}
	return false;
}

#endif /* __RUSTY_QUEUE_BPF_H */
