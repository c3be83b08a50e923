/*
 * scx_rusty, domains: each CPU belongs to one domain, each task has a home domain. The home
 * changes when userspace's balancer asks (applied at the task's next wakeup or enqueue) or
 * when the task's affinity leaves it.
 */
#ifndef __RUSTY_DOMAIN_BPF_H
#define __RUSTY_DOMAIN_BPF_H

#include <scxkit/common.bpf.h>
#include <scxkit/cpumask.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include "intf.h"

/* The topology, written by userspace before load. */
RODATA u32 nr_cpus = 1;
RODATA u32 nr_doms = 1;
RODATA u32 cpu_doms[RUSTY_MAX_CPUS];
RODATA u32 dom_nodes[RUSTY_MAX_DOMS];
RODATA u64 dom_cpus[RUSTY_MAX_DOMS][RUSTY_MAX_CPUS / 64];
RODATA u32 dom_nr_cpus[RUSTY_MAX_DOMS];

struct dom_mask_slot {
	struct bpf_cpumask __kptr *cpus;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RUSTY_MAX_DOMS);
	__type(key, u32);
	__type(value, struct dom_mask_slot);
} dom_masks SEC(".maps");

static __always_inline const struct cpumask *dom_cpumask(u32 dom)
{
	struct dom_mask_slot *slot = bpf_map_lookup_elem(&dom_masks, &dom);

	return slot ? cast_mask(slot->cpus) : NULL;
}

static __always_inline u32 cpu_dom(s32 cpu)
{
	/* Masks, not range checks, bound these indexes (the limits are powers of two): the
	 * compiler drops a mask after a range check, and the verifier then sees no bound. */
	return cpu_doms[(u32)cpu & (RUSTY_MAX_CPUS - 1)];
}

static __always_inline bool same_node(u32 a, u32 b)
{
	return dom_nodes[a & (RUSTY_MAX_DOMS - 1)] == dom_nodes[b & (RUSTY_MAX_DOMS - 1)];
}

static __always_inline bool dom_in(u64 set, u32 dom)
{
	return dom < RUSTY_MAX_DOMS && (set >> dom) & 1;
}

/* The domains whose CPUs intersect `cpus`. */
static __always_inline u64 doms_allowed(const struct cpumask *cpus)
{
	u64 mask = 0;
	u32 dom;

	bpf_for(dom, 0, nr_doms) {
		const struct cpumask *dcpus = dom_cpumask(dom);

		if (dcpus && bpf_cpumask_intersects(dcpus, cpus))
			mask |= 1ULL << dom;
	}
	return mask;
}

/* A home for a task allowed in `allowed`: the domain of `cpu` when allowed, else the
 * lowest allowed domain. */
static __always_inline u32 pick_home(u64 allowed, s32 cpu)
{
	u32 dom = cpu_dom(cpu);

	if (dom_in(allowed, dom) || !allowed)
		return dom;
	return __builtin_ctzll(allowed);
}

/* Whether `cpu` is online and p may run there. */
static __always_inline bool cpu_usable(const struct task_struct *p, u32 cpu)
{
	return !scxk_cpu_offline(cpu) && bpf_cpumask_test_cpu(cpu, p->cpus_ptr);
}

/* The u64 words of a row of dom_cpus. */
#define DOM_WORDS (RUSTY_MAX_CPUS / 64)

/* Whether domain `dom` has a CPU offline or on its way there (`offline`), else one online
 * that p may use (any task when p is NULL). Walks the domain's own CPUs (dom_cpus), not every
 * CPU: a CPU may stay away for as long as the scheduler stays loaded, and these run at
 * dispatches and wakeups meanwhile. */
static __always_inline bool dom_any_cpu(u32 dom, const struct task_struct *p, bool offline)
{
	u32 w, i;

	bpf_for(w, 0, DOM_WORDS) {
		u64 word;

		if (w * 64 >= nr_cpus)
			break;
		word = dom_cpus[dom & (RUSTY_MAX_DOMS - 1)][w & (DOM_WORDS - 1)];
		bpf_for(i, 0, 64) {
			s32 cpu;

			if (!word)
				break;
			cpu = w * 64 + __builtin_ctzll(word);
			word &= word - 1;
			if (offline ? scxk_cpu_offline(cpu) : p ? cpu_usable(p, cpu) : !scxk_cpu_offline(cpu))
				return true;
		}
	}
	return false;
}

/* Whether p may run on a CPU of domain `dom` that is online (as ops.cpu_offline told). */
static __always_inline bool dom_serves(u32 dom, const struct task_struct *p)
{
	s32 own = scx_bpf_task_cpu(p);

	/* Most tasks sit on a CPU of their home: no walk. */
	if (cpu_dom(own) == dom && cpu_usable(p, own))
		return true;
	return dom_any_cpu(dom, p, false);
}

/* A home in `allowed` with an online CPU that p may use: the domain of p's CPU if it is one,
 * else the first; `fallback` if there is none. */
static __always_inline u32 serving_home(const struct task_struct *p, u64 allowed, u32 fallback)
{
	s32 own = scx_bpf_task_cpu(p);
	u32 cpu;

	if (dom_in(allowed, cpu_dom(own)) && dom_serves(cpu_dom(own), p))
		return cpu_dom(own);
	bpf_for(cpu, 0, nr_cpus) {
		if (dom_in(allowed, cpu_dom(cpu)) && cpu_usable(p, cpu))
			return cpu_dom(cpu);
	}
	return fallback;
}

#endif /* __RUSTY_DOMAIN_BPF_H */
