/*
 * Records why the scheduler exited in a one-slot map the runtime reads: call
 * scxk_record_exit(ei) from ops.exit. The map, not a global, so any skeleton can be read
 * by the same runtime code.
 */
#ifndef __SCXKIT_EXIT_INFO_BPF_H
#define __SCXKIT_EXIT_INFO_BPF_H

#include "exit_info.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scxk_exit_info);
} scxk_exit_info SEC(".maps");

static __always_inline void scxk_record_exit(struct scx_exit_info *ei)
{
	u32 zero = 0;
	struct scxk_exit_info *out = bpf_map_lookup_elem(&scxk_exit_info, &zero);

	if (!out)
		return;
	bpf_probe_read_kernel_str(out->reason, sizeof(out->reason), ei->reason);
	bpf_probe_read_kernel_str(out->msg, sizeof(out->msg), ei->msg);
	out->exit_code = ei->exit_code;
	out->restart = !!(ei->exit_code & SCX_ECODE_ACT_RESTART);
	/* Written last: userspace polls `kind` and then reads the rest. */
	__sync_val_compare_and_swap(&out->kind, 0, ei->kind);
}

#endif /* __SCXKIT_EXIT_INFO_BPF_H */
