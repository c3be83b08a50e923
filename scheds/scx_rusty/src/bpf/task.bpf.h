/*
 * scx_rusty, per-task state: one task_ctx per task, keyed by pid so that userspace's
 * balancer can read every task's load and home (task storage cannot be walked from
 * userspace). A task beyond RUSTY_MAX_TASKS has none and is queued on the global queue.
 */
#ifndef __RUSTY_TASK_BPF_H
#define __RUSTY_TASK_BPF_H

#include <scxkit/common.bpf.h>
#include "intf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, RUSTY_MAX_TASKS);
	__type(key, s32);
	__type(value, struct task_ctx);
} task_ctxs SEC(".maps");

static __always_inline struct task_ctx *task_ctx_get(const struct task_struct *p)
{
	s32 pid = p->pid;

	return bpf_map_lookup_elem(&task_ctxs, &pid);
}

#endif /* __RUSTY_TASK_BPF_H */
