/*
 * scx_rusty, the home domain: set in init_task to the domain of the task's CPU (at fork,
 * the CPU its parent forks on; at load, the CPU it is on), changed by the balancer's
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
