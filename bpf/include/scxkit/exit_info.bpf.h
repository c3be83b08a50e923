/*
 * Records why the scheduler exited in a one-slot map the runtime reads: call
 * scxk_record_exit(ei) from ops.exit. The map, not a global, so any skeleton can be read
 * by the same runtime code.
 */
#ifndef __SCXKIT_EXIT_INFO_BPF_H
#define __SCXKIT_EXIT_INFO_BPF_H

#include "common.bpf.h"
#include "exit_info.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, struct scxk_exit_info);
} scxk_exit_info SEC(".maps") SCXK_SHARED;

/* The kernel's debug dump (what explains a stall), in chunks; userspace sets max_entries. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, char[SCXK_EXIT_DUMP_CHUNK]);
} scxk_exit_dump SEC(".maps") SCXK_SHARED;

/* Copies the NUL-terminated dump chunk by chunk until its end or the map's. Each chunk
 * holds CHUNK - 1 characters: bpf_probe_read_kernel_str() always ends with a NUL. */
static __always_inline void scxk_record_dump(const char *dump)
{
	const u32 stride = SCXK_EXIT_DUMP_CHUNK - 1;
	u32 i;

	if (!dump)
		return;
	bpf_for(i, 0, SCXK_EXIT_DUMP_MAX_CHUNKS) {
		char *chunk = bpf_map_lookup_elem(&scxk_exit_dump, &i);

		if (!chunk)
			break;
		/* A return below the chunk size means the NUL was in this chunk. */
		if (bpf_probe_read_kernel_str(chunk, SCXK_EXIT_DUMP_CHUNK, dump + (u64)i * stride) <
		    SCXK_EXIT_DUMP_CHUNK)
			break;
	}
}

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
	scxk_record_dump(ei->dump);
	/* Written last: userspace polls `kind` and then reads the rest. */
	__sync_val_compare_and_swap(&out->kind, 0, ei->kind);
}

#endif /* __SCXKIT_EXIT_INFO_BPF_H */
