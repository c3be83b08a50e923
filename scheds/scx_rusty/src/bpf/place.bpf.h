/*
 * scx_rusty, CPU selection for a waking task, each path counted: near a synchronous waker,
 * the previous CPU, an idle CPU of the home domain, then "direct greedy": an idle CPU of an
 * underused domain (same node; other nodes only with --direct-greedy-numa); with
 * --new-task-spread, a new task then takes an idle CPU of any domain, which becomes its home.
 * Idle CPUs are found by the kernel's built-in selection restricted to a domain, which tries
 * the previous CPU's whole idle SMT core first.
 */
#ifndef __RUSTY_PLACE_BPF_H
#define __RUSTY_PLACE_BPF_H

#include <scxkit/kick.bpf.h>
#include "domain.bpf.h"
#include "home.bpf.h"
#include "tune.bpf.h"

/* Written by userspace before load; the defaults live in intf.h. */
RODATA bool direct_greedy_numa;
RODATA bool new_task_spread;

/* An idle CPU of `dom` for p, claimed; negative when none. */
static __always_inline s32 idle_cpu_in(struct task_struct *p, s32 prev_cpu, u64 wake_flags, u32 dom)
{
	const struct cpumask *cpus = dom_cpumask(dom);

	if (!cpus)
		return -1;
	return scx_bpf_select_cpu_and(p, prev_cpu, wake_flags, cpus, 0);
}

/* An idle CPU of a domain other than `home` that the tuner found underused, on home's node
 * (`far` false) or on another node (`far` true). */
static __always_inline s32 direct_greedy_cpu(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
					     struct task_ctx *tctx, bool far)
{
	struct tune_input *t = tune_get();
	u64 doms;
	u32 dom;
	s32 cpu;

	if (!t)
		return -1;
	doms = t->direct_greedy_doms & tctx->dom_mask;
	bpf_for(dom, 0, nr_doms) {
		if (dom == tctx->dom || !dom_in(doms, dom) || same_node(dom, tctx->dom) == far)
			continue;
		cpu = idle_cpu_in(p, prev_cpu, wake_flags, dom);
		if (cpu >= 0)
			return cpu;
	}
	return -1;
}

/* Where the next new task starts looking for an idle CPU in another domain: in turn, so
 * that a burst of forks does not pile into the lowest-numbered domain. */
static u32 new_task_next_dom;

/* A new task (at fork: SCX_WAKE_FORK) with no idle CPU in its home domain or on its node:
 * an idle CPU of any other domain it may use, claimed, which becomes its home; negative when
 * none. It has neither cache nor memory of its own there yet (an exec gives it new memory
 * where it runs), so it is spread at once rather than queued behind its parent's domain
 * until a balancing pass, which would move it across nodes later, its memory made. A CPU
 * claimed but offline, or guessed to be leaving, is left to wake and look at its queue. */
static __always_inline s32 new_task_cpu(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
					struct task_ctx *tctx)
{
	u32 start, i, dom;
	s32 cpu;

	if (!new_task_spread || !(wake_flags & SCX_WAKE_FORK))
		return -1;
	start = new_task_next_dom++;
	bpf_for(i, 0, nr_doms) {
		dom = (start + i) % nr_doms;
		if (dom == tctx->dom || !dom_in(tctx->dom_mask, dom))
			continue;
		cpu = idle_cpu_in(p, prev_cpu, wake_flags, dom);
		if (cpu < 0)
			continue;
		if (scxk_cpu_offline(cpu)) {
			scxk_kick_cpu(cpu, SCX_KICK_IDLE);
			return -1;
		}
		set_home(p, tctx, dom, bpf_ktime_get_ns());
		return cpu;
	}
	return -1;
}

/* Where a waking task runs at once, and by which path; negative when it is to be queued. */
static __always_inline s32 place_task(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
				      struct task_ctx *tctx, enum rusty_stat_idx *path)
{
	s32 cpu;

	if (wake_flags & SCX_WAKE_SYNC) {
		u32 waker_dom = cpu_dom(bpf_get_smp_processor_id());

		if (dom_in(tctx->dom_mask, waker_dom)) {
			cpu = idle_cpu_in(p, bpf_get_smp_processor_id(), wake_flags, waker_dom);
			*path = RUSTY_STAT_SYNC;
			if (cpu >= 0)
				return cpu;
		}
	}
	cpu = idle_cpu_in(p, prev_cpu, wake_flags, tctx->dom);
	*path = cpu == prev_cpu ? RUSTY_STAT_PREV_IDLE : RUSTY_STAT_HOME_IDLE;
	if (cpu >= 0)
		return cpu;
	cpu = direct_greedy_cpu(p, prev_cpu, wake_flags, tctx, false);
	*path = RUSTY_STAT_DIRECT_GREEDY;
	if (cpu >= 0)
		return cpu;
	if (direct_greedy_numa) {
		cpu = direct_greedy_cpu(p, prev_cpu, wake_flags, tctx, true);
		*path = RUSTY_STAT_DIRECT_GREEDY_XNUMA;
		if (cpu >= 0)
			return cpu;
	}
	*path = RUSTY_STAT_NEW_TASK_SPREAD;
	return new_task_cpu(p, prev_cpu, wake_flags, tctx);
}

#endif /* __RUSTY_PLACE_BPF_H */
