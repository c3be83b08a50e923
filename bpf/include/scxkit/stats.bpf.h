/*
 * A scheduler's counters: one per-CPU u64 array named `stats`, indexed by the stat enum of
 * its intf.h, which the runtime sums over CPUs. Per-CPU, so that counting never contends.
 */
#ifndef __SCXKIT_STATS_BPF_H
#define __SCXKIT_STATS_BPF_H

#include "common.bpf.h"

/* Defines the `stats` map with `nr_stats` counters, scxk_stat_inc(idx), scxk_stat_add(idx,
 * value) and scxk_stat_set(idx, value) (this CPU's slot). */
#define SCXK_STATS(nr_stats)                                                  \
	struct {                                                              \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);                      \
		__uint(max_entries, nr_stats);                                \
		__type(key, u32);                                             \
		__type(value, u64);                                           \
	} stats SEC(".maps");                                                 \
                                                                              \
	static __always_inline void scxk_stat_add(u32 idx, u64 value)        \
	{                                                                     \
		u64 *cnt = bpf_map_lookup_elem(&stats, &idx);                 \
                                                                              \
		if (cnt)                                                      \
			*cnt += value;                                        \
	}                                                                     \
                                                                              \
	static __always_inline void scxk_stat_inc(u32 idx)                    \
	{                                                                     \
		scxk_stat_add(idx, 1);                                        \
	}                                                                     \
                                                                              \
	static __always_inline void scxk_stat_set(u32 idx, u64 value)        \
	{                                                                     \
		u64 *slot = bpf_map_lookup_elem(&stats, &idx);                \
                                                                              \
		if (slot)                                                     \
			*slot = value;                                        \
	}

/* Defines NAME(nr_tasks, walk_ns), which counts a walk of queues, the tasks it looked at and
 * its time in three counters of SCXK_STATS: the long-wait taker's ON_WALKED
 * (scxkit/long_wait.bpf.h), or a scan for stranded tasks (scxk_rescue_stranded). */
#define SCXK_WALK_COUNTER(NAME, WALKS_IDX, WALKED_TASKS_IDX, WALK_NS_IDX)                    \
	static __always_inline void NAME(u32 nr_tasks, u64 walk_ns)                          \
	{                                                                                    \
		scxk_stat_inc(WALKS_IDX);                                                    \
		scxk_stat_add(WALKED_TASKS_IDX, nr_tasks);                                   \
		scxk_stat_add(WALK_NS_IDX, walk_ns);                                         \
	}

#endif /* __SCXKIT_STATS_BPF_H */
