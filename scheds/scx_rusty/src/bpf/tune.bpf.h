/*
 * scx_rusty, the tuner's decisions: userspace writes the slice, the domains under the
 * greedy thresholds and the balancer's sequence number into one slot every --tune-interval.
 */
#ifndef __RUSTY_TUNE_BPF_H
#define __RUSTY_TUNE_BPF_H

#include <scxkit/common.bpf.h>
#include "intf.h"

/* Written by userspace before load; the defaults live in intf.h. */
RODATA u64 initial_slice_ns = RUSTY_SLICE_UNDERUTIL_DEFAULT_US * 1000ULL;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct tune_input);
} tune SEC(".maps");

static __always_inline struct tune_input *tune_get(void)
{
	u32 key = 0;

	return bpf_map_lookup_elem(&tune, &key);
}

static __always_inline u64 current_slice_ns(void)
{
	struct tune_input *t = tune_get();

	return t && t->slice_ns ? t->slice_ns : initial_slice_ns;
}

#endif /* __RUSTY_TUNE_BPF_H */
