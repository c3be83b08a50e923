/*
 * A slice short enough for a queue to go round: each task queued waits for those ahead of it
 * to run a slice each, and the kernel's watchdog ejects the scheduler once a task has waited
 * 30 s. 3,000 threads spinning on two CPUs at 20 ms slices wait 30 s each: scx_rusty and
 * scx_simple were ejected so (7.3, 4 vCPUs).
 */
#ifndef __SCXKIT_SLICE_BPF_H
#define __SCXKIT_SLICE_BPF_H

#include "common.bpf.h"

/* The longest slice, at most `slice_ns` and at least `min_ns`, that lets `nr_queued` tasks
 * served by `nr_cpus` CPUs go round within `round_ns`. `slice_ns` while the queue is no
 * longer than its CPUs, or not known (nr_queued negative: scx_bpf_dsq_nr_queued's error). */
static __always_inline u64 scxk_round_slice_ns(u64 slice_ns, s32 nr_queued, u32 nr_cpus,
					       u64 round_ns, u64 min_ns)
{
	u64 round_slice_ns;

	if (nr_queued <= (s32)nr_cpus)
		return slice_ns;
	round_slice_ns = round_ns * nr_cpus / nr_queued;
	if (round_slice_ns < min_ns)
		round_slice_ns = min_ns;
	return round_slice_ns < slice_ns ? round_slice_ns : slice_ns;
}

/* The queued tasks of `dsq_id`, or -1 where this kernel cannot tell. */
static __always_inline s32 scxk_nr_queued(u64 dsq_id)
{
	return scx_bpf_dsq_nr_queued_usable() ? scx_bpf_dsq_nr_queued(dsq_id) : -1;
}

#endif /* __SCXKIT_SLICE_BPF_H */
