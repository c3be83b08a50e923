/*
 * scx_rusty, load tracking: each task's runnable duty cycle and each domain's load (the
 * weights of its runnable tasks), both decaying averages with --load-half-life
 * (scxkit/ravg.h; userspace reads them with the same arithmetic, scxkit::ravg). A
 * domain's average is shared by its CPUs, so it is updated under a spin lock.
 */
#ifndef __RUSTY_LOAD_BPF_H
#define __RUSTY_LOAD_BPF_H

#include <scxkit/common.bpf.h>
#include "intf.h"

/* Written by userspace before load; the defaults live in intf.h. */
RODATA u64 load_half_life_ns = 1000000000ULL;

struct dom_lock {
	struct bpf_spin_lock lock;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RUSTY_MAX_DOMS);
	__type(key, u32);
	__type(value, struct dom_lock);
} dom_locks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RUSTY_MAX_DOMS);
	__type(key, u32);
	__type(value, struct dom_stat);
} dom_stats SEC(".maps");

static __always_inline struct dom_stat *dom_stat_get(u32 dom)
{
	return bpf_map_lookup_elem(&dom_stats, &dom);
}

/* Adds `weight` to (or, negative, takes it from) the runnable weight of `dom`. */
static __always_inline void dom_load_add(u32 dom, s64 weight, u64 now)
{
	struct dom_stat *ds = dom_stat_get(dom);
	struct dom_lock *dl = bpf_map_lookup_elem(&dom_locks, &dom);
	u64 amount;

	if (!ds || !dl)
		return;
	bpf_spin_lock(&dl->lock);
	amount = ds->load.amount + weight;
	/* A sum of weights never goes below zero; if it would, something was lost. */
	if ((s64)amount < 0)
		amount = 0;
	scxk_ravg_update(&ds->load, now, load_half_life_ns, amount);
	bpf_spin_unlock(&dl->lock);
}

/* The task became runnable (or is runnable and moves to a new home): its weight counts in
 * its home domain's load. */
static __always_inline void load_attach(struct task_ctx *tctx, u64 now)
{
	tctx->load_dom = tctx->dom;
	tctx->load_weight = tctx->weight;
	dom_load_add(tctx->dom, tctx->weight, now);
}

static __always_inline void load_detach(struct task_ctx *tctx, u64 now)
{
	if (tctx->load_dom >= RUSTY_MAX_DOMS)
		return;
	dom_load_add(tctx->load_dom, -(s64)tctx->load_weight, now);
	tctx->load_dom = RUSTY_NO_DOM;
}

static __always_inline void task_runnable(struct task_ctx *tctx, u64 now)
{
	scxk_ravg_update(&tctx->duty, now, load_half_life_ns, 1);
	if (tctx->load_dom == RUSTY_NO_DOM)
		load_attach(tctx, now);
}

static __always_inline void task_quiescent(struct task_ctx *tctx, u64 now)
{
	scxk_ravg_update(&tctx->duty, now, load_half_life_ns, 0);
	load_detach(tctx, now);
}

/* The home changed: a runnable task's weight follows it. */
static __always_inline void load_follow_home(struct task_ctx *tctx, u64 now)
{
	if (tctx->load_dom == RUSTY_NO_DOM || tctx->load_dom == tctx->dom)
		return;
	load_detach(tctx, now);
	load_attach(tctx, now);
}

static __always_inline void task_set_weight(struct task_ctx *tctx, u32 weight, u64 now)
{
	tctx->weight = weight;
	if (tctx->load_dom == RUSTY_NO_DOM)
		return;
	load_detach(tctx, now);
	load_attach(tctx, now);
}

#endif /* __RUSTY_LOAD_BPF_H */
