/*
 * Weighted virtual time: a task's vtime grows by the time it ran divided by its weight, so
 * a heavier (lower nice) task advances more slowly and gets more of the CPU.
 */
#ifndef __SCXKIT_VTIME_BPF_H
#define __SCXKIT_VTIME_BPF_H

#include "common.bpf.h"
#include "weight.h"

/* `ran_ns` of run time as vtime for p: scaled by nice-0 weight / p's weight. */
static __always_inline u64 scxk_vtime_of(const struct task_struct *p, u64 ran_ns)
{
	return ran_ns * SCXK_NICE0_WEIGHT / p->scx.weight;
}

/* Charges p's queue vtime (p->scx.dsq_vtime) with `ran_ns` of run time. */
static __always_inline void scxk_charge_vtime(struct task_struct *p, u64 ran_ns)
{
	scxk_set_dsq_vtime(p, p->scx.dsq_vtime + scxk_vtime_of(p, ran_ns));
}

#endif /* __SCXKIT_VTIME_BPF_H */
