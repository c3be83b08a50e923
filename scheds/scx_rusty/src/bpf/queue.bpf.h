/*
 * scx_rusty, queues: one per domain (its id is the domain's), ordered by weighted vruntime or
 * FIFO with --fifo. A CPU takes work from its own domain's queue first, then steals greedily
 * from a domain of its node holding at least --greedy-threshold tasks, then from another
 * node's holding at least --greedy-threshold-x-numa (0 turns either off). A stolen task runs
 * once on the thief and keeps its home. Queuing work wakes an idle CPU of the home domain,
 * or else one of an underused domain (--kick-greedy-under) that may then steal it.
 *
 * Where the kernel cannot create queues (see kfuncs.bpf.h), every domain shares the
 * built-in global FIFO and there is no stealing (userspace says so at start).
 */
#ifndef __RUSTY_QUEUE_BPF_H
#define __RUSTY_QUEUE_BPF_H

/* The vruntime to queue with: a sleeper brings back at most one slice of credit. */
static __always_inline u64 task_vtime(const struct task_struct *p, u32 dom, u64 slice)
{
	struct dom_stat *ds = dom_stat_get(dom);
	u64 floor;

	if (!ds)
		return p->scx.dsq_vtime;
	floor = ds->vtime_now - slice;
	return time_before(p->scx.dsq_vtime, floor) ? floor : p->scx.dsq_vtime;
}

/* Charges what p ran since it started, scaled by the inverse of its weight. */
static __always_inline void task_charge(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	if (!tctx->start_ns) {
		tctx->start_ns = now;
		return;
	}
	scxk_set_dsq_vtime(p, p->scx.dsq_vtime + (now - tctx->start_ns) * RUSTY_WEIGHT_NICE0 / p->scx.weight);
	tctx->start_ns = now;
}

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
		scxk_count(&stats, RUSTY_STAT_KICK_HOME);
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
			scxk_count(&stats, RUSTY_STAT_KICK_GREEDY);
			return;
		}
	}
}

/* Queues p on its home domain's queue. */
static __always_inline void queue_task(struct task_struct *p, struct task_ctx *tctx, u64 slice, u64 enq_flags)
{
	scxk_count(&stats, RUSTY_STAT_QUEUED);
	if (!scx_bpf_create_dsq_usable()) {
		scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, slice, enq_flags);
		return;
	}
	if (fifo)
		scx_bpf_dsq_insert(p, tctx->dom, slice, enq_flags);
	else
		scx_bpf_dsq_insert_vtime(p, tctx->dom, slice, task_vtime(p, tctx->dom, slice), enq_flags);
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

/* Fills `cpu`'s local queue: its own domain, then greedy stealing. */
static __always_inline bool take_work(s32 cpu)
{
	u32 dom = cpu_dom(cpu);

	if (scx_bpf_dsq_move_to_local(dom)) {
		scxk_count(&stats, RUSTY_STAT_TAKE_HOME);
		return true;
	}
	if (steal(dom, greedy_threshold, false)) {
		scxk_count(&stats, RUSTY_STAT_STEAL_NODE);
		return true;
	}
	if (steal(dom, greedy_threshold_x_numa, true)) {
		scxk_count(&stats, RUSTY_STAT_STEAL_XNUMA);
		return true;
	}
	return false;
}

#endif /* __RUSTY_QUEUE_BPF_H */
