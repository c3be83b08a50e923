/*
 * scx_rusty, per-task state: one task_ctx per task, in task storage, and the iterator through
 * which userspace's balancer reads them all.
 *
 * Task storage grows with the tasks: a map of any fixed size would leave the tasks beyond it
 * unbalanced. Userspace cannot walk task storage, so a task iterator (iter/task, Linux 5.8,
 * no sched_ext kfunc, so nothing of the 7.1/7.2 kfunc trap) writes one task_dump per task to
 * the seq file that userspace reads each pass: about 300 tasks per read(), where walking a
 * pid-keyed map takes two syscalls per task.
 */
#ifndef __RUSTY_TASK_BPF_H
#define __RUSTY_TASK_BPF_H

#include <scxkit/common.bpf.h>
#include <scxkit/task_storage.bpf.h>
#include "intf.h"

SCXK_TASK_STORAGE(task_ctxs, struct task_ctx);

static __always_inline struct task_ctx *task_ctx_get(const struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, (struct task_struct *)p, 0, 0);
}

/* Whether sched_ext has initialized p for the loaded scheduler (its state is not NONE): a task
 * the scheduler should know. The state mask is read from the running kernel's BTF: its width
 * changed between kernels. A kernel without it counts every task without state as left out
 * rather than none. */
static __always_inline bool scx_task_initialized(const struct task_struct *p)
{
	if (!bpf_core_enum_value_exists(enum scx_ent_flags, SCX_TASK_STATE_MASK))
		return true;
	return p->scx.flags & bpf_core_enum_value(enum scx_ent_flags, SCX_TASK_STATE_MASK);
}

/* One record per task of the scheduler's: tracked with its state, or left out (no state). An
 * exited task's state stays until the task is freed, marked and skipped. */
SEC("iter/task")
int dump_tasks(struct bpf_iter__task *ctx)
{
	struct task_struct *p = ctx->task;
	struct task_dump rec = {};
	struct task_ctx *tctx;

	if (!p)
		return 0;
	tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	if (tctx) {
		if (tctx->exited)
			return 0;
		rec.tracked = 1;
		rec.ctx = *tctx;
	} else if (!scx_task_initialized(p)) {
		return 0;
	}
	rec.pid = p->pid;
	bpf_seq_write(ctx->meta->seq, &rec, sizeof(rec));
	return 0;
}

#endif /* __RUSTY_TASK_BPF_H */
