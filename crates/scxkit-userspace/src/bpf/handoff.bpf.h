/*
 * The two ring buffers: tasks to userspace, decisions back. Decisions are applied in
 * ops.dispatch, the only callback that may move a task BPF holds to any queue.
 */
#ifndef __USCHED_HANDOFF_BPF_H
#define __USCHED_HANDOFF_BPF_H

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, USCHED_RING_BYTES);
} to_user SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_USER_RINGBUF);
	__uint(max_entries, USCHED_RING_BYTES);
} from_user SEC(".maps");

/* Set when a message went without a wakeup: the next one forces one. */
static bool wakeup_owed;

/* How a message wakes the policy: at once, except from a CPU on its way offline, whose
 * wakeup could stay pending for good (see scxk_this_cpu_leaving). The ring buffer wakes
 * its reader only for the first unread message, so the next message sent from elsewhere
 * forces the wakeup the skipped one owes; until then the policy's loop reads it on its next
 * turn, within its longest sleep. */
static __always_inline u64 wakeup_flags(void)
{
	if (scxk_this_cpu_leaving()) {
		wakeup_owed = true;
		return BPF_RB_NO_WAKEUP;
	}
	if (wakeup_owed) {
		wakeup_owed = false;
		return BPF_RB_FORCE_WAKEUP;
	}
	return 0;
}

/* Hands p to userspace; false when there is no room (the caller queues it itself). */
static bool send_to_user(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	struct usched_task *msg;

	if (!custody_add(p->pid, tctx->enq_seq))
		return false;
	msg = bpf_ringbuf_reserve(&to_user, sizeof(*msg), 0);
	if (!msg)
		return false;
	msg->pid = p->pid;
	msg->prev_cpu = scx_bpf_task_cpu(p);
	msg->nr_cpus_allowed = p->nr_cpus_allowed;
	msg->weight = p->scx.weight;
	msg->enq_seq = tctx->enq_seq;
	msg->enq_flags = enq_flags;
	msg->run_ns = tctx->run_ns;
	msg->runtime_since_sleep_ns = tctx->since_sleep_ns;
	msg->nvcsw = tctx->nvcsw;
	msg->flags = 0;
	tctx->run_ns = 0;
	tctx->custody_seq = tctx->enq_seq;
	bpf_ringbuf_submit(msg, wakeup_flags());
	__sync_fetch_and_add(&nr_sent, 1);
	scxk_count(&stats, USCHED_STAT_SENT);
	return true;
}

/* Wakes the policy when a CPU has nothing to run while it holds tasks: a message that
 * carries no task. One at a time: userspace clears nudge_pending when it reads it. */
static void nudge_user(void)
{
	struct usched_task *msg;

	if (!user_held || nudge_pending)
		return;
	msg = bpf_ringbuf_reserve(&to_user, sizeof(*msg), 0);
	if (!msg)
		return;
	__builtin_memset(msg, 0, sizeof(*msg));
	msg->flags = USCHED_MSG_NUDGE;
	nudge_pending = 1;
	bpf_ringbuf_submit(msg, wakeup_flags());
	scxk_count(&stats, USCHED_STAT_NUDGE);
}

/* An idle CPU p may use, claimed, or -1. */
static s32 claim_idle_cpu(struct task_struct *p)
{
	s32 cpu;

	if (!scx_bpf_pick_idle_cpu_usable())
		return -1;
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	return cpu >= 0 && scxk_cpu_offline(cpu) ? -1 : cpu;
}

static void apply_decision(const struct usched_decision *d)
{
	struct task_struct *p = custody_task(d->pid, d->enq_seq);
	struct task_ctx *tctx;
	s32 cpu = d->cpu;

	if (!p) {
		scxk_count(&stats, USCHED_STAT_CANCELLED);
		return;
	}
	tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	if (tctx) {
		tctx->custody_seq = 0;
		tctx->vtime = d->vtime;
	}
	if (cpu != USCHED_ANY_CPU && (cpu < 0 || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr) ||
				      scxk_cpu_offline(cpu))) {
		scxk_count(&stats, USCHED_STAT_REPLACED);
		cpu = USCHED_ANY_CPU;
	}
	/* A task preempted with migration disabled can only go back to its CPU; so can one
	 * bound to a CPU that went offline while the policy held it (an offline CPU does not
	 * serve the shared queue, see scxkit/hotplug.bpf.h). */
	if (scxk_migration_disabled(p) ||
	    (p->nr_cpus_allowed == 1 && scxk_cpu_offline(scx_bpf_task_cpu(p))))
		cpu = scx_bpf_task_cpu(p);
	else if (cpu == USCHED_ANY_CPU)
		cpu = claim_idle_cpu(p);
	if (cpu >= 0)
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, d->slice_ns, 0);
	else if (scx_bpf_create_dsq_usable())
		scx_bpf_dsq_insert_vtime(p, shared_dsq(), d->slice_ns, d->vtime, 0);
	else
		scx_bpf_dsq_insert(p, shared_dsq(), d->slice_ns, 0);
	scxk_count(&stats, USCHED_STAT_USER);
	bpf_task_release(p);
}

/* Decisions applied in this ops.dispatch call. A map slot, not the callback's context on
 * the stack: the verifier would follow a stack counter's exact value through every turn of
 * the drain and give up; a map value is just a number to it. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} drained SEC(".maps");

static long drain_one(struct bpf_dynptr *dynptr, void *ctx)
{
	u32 zero = 0, *count = bpf_map_lookup_elem(&drained, &zero);
	struct usched_decision d;

	if (!count || bpf_dynptr_read(&d, sizeof(d), dynptr, 0, 0))
		return 1;
	apply_decision(&d);
	*count += 1;
	return *count >= USCHED_DISPATCH_BATCH;
}

/* Applies up to one batch of decisions. */
static void drain_decisions(void)
{
	u32 zero = 0, *count = bpf_map_lookup_elem(&drained, &zero);

	if (!count)
		return;
	*count = 0;
	bpf_user_ringbuf_drain(&from_user, drain_one, NULL, 0);
}

#endif /* __USCHED_HANDOFF_BPF_H */
