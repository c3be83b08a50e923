/*
 * scx_rusty, vruntime: each domain's queue has its own clock, the largest vruntime of a
 * task of that domain that started running. A task is charged what it ran, scaled by the
 * inverse of its weight (scxkit/vtime.bpf.h), and comes back from a sleep or a move at
 * most one slice behind its domain's clock.
 */
#ifndef __RUSTY_CLOCK_BPF_H
#define __RUSTY_CLOCK_BPF_H

#include <scxkit/vtime.bpf.h>
#include "intf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RUSTY_MAX_DOMS);
	__type(key, u32);
	__type(value, u64);
} dom_clocks SEC(".maps");

/* Domain `dom`'s clock, ns of vruntime. */
static __always_inline u64 *dom_clock_get(u32 dom)
{
	return bpf_map_lookup_elem(&dom_clocks, &dom);
}

/* The vruntime to queue with: a sleeper brings back at most one slice of credit. */
static __always_inline u64 task_vtime(const struct task_struct *p, u32 dom, u64 slice)
{
	u64 *clock = dom_clock_get(dom);
	u64 floor;

	if (!clock)
		return p->scx.dsq_vtime;
	floor = *clock - slice;
	return time_before(p->scx.dsq_vtime, floor) ? floor : p->scx.dsq_vtime;
}

/* The vruntime to queue a kernel thread's wakeup with: a slice ahead of the sleepers' credit,
 * so that it goes before the tasks waiting with that credit, unless its own vruntime is more
 * than a slice past the clock: a kernel thread that ran more than its share (kswapd, a busy
 * kworker) keeps `vtime` (task_vtime's), its debt. When 36,000 sleeping threads exited at once
 * on four vCPUs, each came back a slice behind the clock, and the RCU grace-period kthread,
 * waking after them, waited 11 s behind them: an RCU stall, and the kernel ejected scx_rusty.
 * Only a wakeup: a kernel thread whose slice ran out queues as any task, charged what it ran. */
static __always_inline u64 kthread_wakeup_vtime(const struct task_struct *p, u32 dom, u64 slice,
						u64 vtime)
{
	u64 *clock = dom_clock_get(dom);

	if (!clock || time_before(*clock + slice, p->scx.dsq_vtime))
		return vtime;
	return *clock - 2 * slice;
}

/* Charges what p ran since it started. */
static __always_inline void task_charge(struct task_struct *p, struct task_ctx *tctx, u64 now)
{
	if (!tctx->start_ns) {
		tctx->start_ns = now;
		return;
	}
	scxk_charge_vtime(p, now - tctx->start_ns);
	tctx->start_ns = now;
}

#endif /* __RUSTY_CLOCK_BPF_H */
