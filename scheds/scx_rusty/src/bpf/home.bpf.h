/*
 * scx_rusty, the home domain: set in init_task (at load, the domain of the CPU the task is
 * on; at fork, its parent's domain or a lighter one, fork_home), changed by the balancer's
 * requests and by affinity changes.
 *
 * A move requested by userspace takes effect at the task's next select_cpu or enqueue,
 * whichever comes first, not at once: a queued task already sits in its old domain's
 * queue and a running one on an old domain's CPU, and neither can be moved from userspace.
 * A CPU-bound task alone on its CPU is never enqueued again (the CPU keeps it, with a fresh
 * slice, when its slice ends and nothing else waits): dispatch applies its move at the end
 * of its slice instead and lets it go, and the kernel then enqueues it (SCX_ENQ_LAST) on its
 * new home. So a running task moves within a slice of the request; a sleeping one has no
 * place in any queue until it wakes, which is when it moves.
 */
#ifndef __RUSTY_HOME_BPF_H
#define __RUSTY_HOME_BPF_H

#include "clock.bpf.h"
#include "counters.bpf.h"
#include "domain.bpf.h"
#include "load.bpf.h"
#include "task.bpf.h"
#include "tune.bpf.h"

/* The balancer's move requests, keyed by pid: read and removed at the task's next wakeup
 * or enqueue after a pass. A pass asks at most one move per task, and the kernel keeps the
 * tasks under kernel.threads-max: userspace sets max_entries to that before load. Not
 * preallocated: the entries cost memory only while requests wait. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, s32);
	__type(value, struct lb_request);
} lb_requests SEC(".maps");

/* Makes `dom` the task's home. Its weight follows when it is runnable, and it starts in
 * the new queue at that domain's vruntime: neither credit nor debt from the old one. */
static __always_inline void set_home(struct task_struct *p, struct task_ctx *tctx, u32 dom, u64 now)
{
	u64 *clock = dom_clock_get(dom);

	tctx->dom = dom;
	load_follow_home(tctx, now);
	if (clock)
		scxk_set_dsq_vtime(p, *clock);
}

/* Applies the balancer's request for p, if its latest pass made one; true when p moved. */
static __always_inline bool apply_lb_request(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	struct tune_input *t = tune_get();
	struct lb_request *req;
	s32 pid = p->pid;
	bool moved = false;

	if (!t || tctx->lb_seq_seen == t->lb_seq)
		return false;
	tctx->lb_seq_seen = t->lb_seq;
	req = bpf_map_lookup_elem(&lb_requests, &pid);
	if (!req)
		return false;
	if (req->dom < nr_doms && dom_in(tctx->dom_mask, req->dom)) {
		set_home(p, tctx, req->dom, now);
		scxk_stat_inc(req->level == 1 ? RUSTY_STAT_MOVE_APPLIED_NODE : RUSTY_STAT_MOVE_APPLIED_DOMAIN);
		moved = true;
	} else {
		scxk_stat_inc(RUSTY_STAT_MOVE_REFUSED);
	}
	bpf_map_delete_elem(&lb_requests, &pid);
	return moved;
}

/* Written by userspace before load (--no-fork-balance clears it). */
RODATA bool fork_balance = true;

/* Whether domain `a` carrying `load_a` is lighter per CPU than `b` carrying `load_b`. */
static __always_inline bool lighter_per_cpu(u32 a, u64 load_a, u32 b, u64 load_b)
{
	return load_a * dom_nr_cpus[b & (RUSTY_MAX_DOMS - 1)] < load_b * dom_nr_cpus[a & (RUSTY_MAX_DOMS - 1)];
}

static __always_inline u64 dom_runnable_weight(u32 dom)
{
	struct dom_stat *ds = dom_stat_get(dom);

	return ds ? ds->load.amount : 0;
}

/* A forked task's home, as the kernel's fork balancing would have it: its parent's domain
 * `parent`, unless another allowed domain, with the child's weight added, still carries less
 * runnable weight per CPU than the parent's does without it. That domain may be on another
 * node: a task that has not run yet has no memory there to leave. Without this, the jobs of
 * a `make -j` all start in make's domain, beside its hogs, while another node's CPUs share
 * only theirs, until the balancer's next pass; most compile jobs end before it. */
static __always_inline u32 fork_home(struct task_struct *p, struct task_ctx *tctx, u32 parent)
{
	u64 parent_load = dom_runnable_weight(parent), best_load = 0;
	/* The kernel sets a forked task's weight only after init_task. */
	u64 child = tctx->weight ? tctx->weight : SCXK_NICE0_WEIGHT;
	u32 dom, best = parent;

	if (!fork_balance || !dom_in(tctx->dom_mask, parent))
		return parent;
	bpf_for(dom, 0, nr_doms) {
		u64 load;

		if (dom == parent || !dom_in(tctx->dom_mask, dom))
			continue;
		load = dom_runnable_weight(dom) + child;
		if (!lighter_per_cpu(dom, load, parent, parent_load))
			continue;
		if (best == parent || lighter_per_cpu(dom, load, best, best_load)) {
			best = dom;
			best_load = load;
		}
	}
	if (best == parent || (scxk_nr_told_offline && !dom_serves(best, p)))
		return parent;
	scxk_stat_inc(same_node(best, parent) ? RUSTY_STAT_FORK_AWAY_DOMAIN : RUSTY_STAT_FORK_AWAY_NODE);
	return best;
}

/* Brings p's home up to date before it is placed or queued. */
static __always_inline void refresh_home(struct task_struct *p, struct task_ctx *tctx)
{
	u64 now = bpf_ktime_get_ns();

	apply_lb_request(p, tctx, now);
	if (!dom_in(tctx->dom_mask, tctx->dom)) {
		set_home(p, tctx, pick_home(tctx->dom_mask, scx_bpf_task_cpu(p)), now);
		scxk_stat_inc(RUSTY_STAT_REHOME_AFFINITY);
	}
	/* The CPUs of its domain that it may use went offline: left there, it would wait for
	 * another domain's CPU to take it each time it wakes (a task allowed on CPUs 1 and 3,
	 * homed with CPUs 2-3, waited 43 s with CPU 3 offline until the watchdog). */
	if (scxk_nr_told_offline && !dom_serves(tctx->dom, p)) {
		u32 dom = serving_home(p, tctx->dom_mask, tctx->dom);

		if (dom != tctx->dom)
			set_home(p, tctx, dom, now);
	}
}

#endif /* __RUSTY_HOME_BPF_H */
