/*
 * The two ring buffers: tasks to userspace, decisions back. Decisions are applied in
 * ops.dispatch, the only callback that may move a task BPF holds to any queue.
 */
#ifndef __USCHED_HANDOFF_BPF_H
#define __USCHED_HANDOFF_BPF_H

#include <scxkit/context.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include <scxkit/kick.bpf.h>
#include "state.bpf.h"
#include "custody.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, USCHED_RING_BYTES);
} to_user SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_USER_RINGBUF);
	__uint(max_entries, USCHED_RING_BYTES);
} from_user SEC(".maps");

/* Messages sent and not yet read by the policy. Some may have gone without waking it
 * (wakeup_may_wait, or from a CPU on its way offline): every ops.dispatch that sees
 * any wakes it (a nudge), and BPF's watch timer kicks idle CPUs to look while tasks are in
 * custody. Counters, not a flag: a flag set by one CPU can be cleared by another between a
 * message's reservation and its commit. */
static __always_inline bool messages_unread(void)
{
	return nr_sent != user_received;
}

/* Whether waking the policy for p (or preempting for granted p) may wait for this CPU's
 * next scheduling point. Only where it would preempt someone (no CPU is idle) and the wakeup
 * comes from a task that runs here under this scheduler, not from an interrupt (a timer, a
 * device): a pipe's writer often sleeps next. The waker keeps at most defer_slice_max_ns of
 * its slice, which bounds the wait (the kernel ends a slice at a tick: 4 ms at 250 Hz): 1 ms,
 * or what the policy allows in a crowd, where each slice's end is a switch (scx_rustland:
 * its crowd's least slice). Waking the policy at once, on one CPU, preempted the waker for
 * every wakeup; the waker then made a round trip of its own: hackbench over pipes took 6x
 * EEVDF's time. */
static bool wakeup_may_wait(struct task_struct *p, const struct task_ctx *tctx)
{
	struct task_struct *waker = bpf_get_current_task_btf();
	const struct cpumask *idle;
	u64 keep_ns = defer_slice_max_ns;
	bool none_idle;

	if (!scxk_context_known() || scxk_in_interrupt() || !scx_bpf_get_idle_cpumask_usable() ||
	    scxk_this_cpu_leaving())
		return false;
	/* A new task (its first hand-over) is decided at once: a shell's command is one. */
	if (tctx->enq_seq <= 1)
		return false;
	/* Not a task queued again by itself (its slice ran out, or it was preempted): deferred,
	 * a frame loop under hogs missed its deadlines (p99 4.2 -> 12 ms, one CPU). */
	if (waker == p || !(waker->scx.flags & SCX_TASK_QUEUED))
		return false;
	idle = scx_bpf_get_idle_cpumask();
	none_idle = bpf_cpumask_empty(idle);
	scx_bpf_put_idle_cpumask(idle);
	if (!none_idle)
		return false;
	/* An endless slice (the hotplug thread's, scxkit/hotplug.bpf.h) is left alone, and then
	 * nothing bounds the wait: no deferral. */
	if (waker->scx.slice == SCX_SLICE_INF)
		return false;
	if (!keep_ns || keep_ns > USCHED_DEFER_CEILING_MS * NSEC_PER_MSEC)
		keep_ns = USCHED_DEFER_MAX_US * 1000ULL;
	if (waker->scx.slice > keep_ns)
		scxk_set_slice(waker, keep_ns);
	return true;
}

/* How a message wakes the policy: not at all when it may wait, or from a CPU on its way
 * offline, whose wakeup could stay pending for good (see scxk_this_cpu_leaving); by force
 * when an earlier message may be unread (the ring buffer wakes its reader only for the
 * first unread one, and that one may have gone without a wakeup); otherwise as usual. */
static __always_inline u64 wakeup_flags(bool may_wait, bool earlier_unread)
{
	if (may_wait || scxk_this_cpu_leaving())
		return BPF_RB_NO_WAKEUP;
	return earlier_unread ? BPF_RB_FORCE_WAKEUP : 0;
}

/* Hands p to userspace; false when there is no room (the caller queues it itself). */
static bool send_to_user(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	struct usched_task *msg;
	bool may_wait, earlier_unread;

	if (!custody_add(tctx, p->pid, tctx->enq_seq))
		return false;
	msg = bpf_ringbuf_reserve(&to_user, sizeof(*msg), 0);
	if (!msg) {
		/* Queued by the caller: its entry is stale now. */
		tctx->custody_seq = 0;
		return false;
	}
	may_wait = wakeup_may_wait(p, tctx);
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
	/* The decision on this hand-over brings the next grant: a cancelled one none. */
	tctx->grant_budget_ns = 0;
	if (may_wait)
		scxk_stat_inc(USCHED_STAT_DEFERRED);
	/* Counted before the commit: a message without a wakeup is then always seen unread. */
	earlier_unread = __sync_fetch_and_add(&nr_sent, 1) != user_received;
	bpf_ringbuf_submit(msg, wakeup_flags(may_wait, earlier_unread));
	scxk_stat_inc(USCHED_STAT_SENT);
	return true;
}

/* Wakes the policy when it holds tasks while a CPU has nothing to run, or has messages to
 * read: a message that carries no task. One at a time: userspace clears nudge_pending when
 * it reads it. */
static void nudge_user(void)
{
	struct usched_task *msg;

	if (nudge_pending || (!user_held && !messages_unread()))
		return;
	msg = bpf_ringbuf_reserve(&to_user, sizeof(*msg), 0);
	if (!msg)
		return;
	__builtin_memset(msg, 0, sizeof(*msg));
	msg->flags = USCHED_MSG_NUDGE;
	nudge_pending = 1;
	bpf_ringbuf_submit(msg, wakeup_flags(false, messages_unread()));
	scxk_stat_inc(USCHED_STAT_NUDGE);
}

/* An idle CPU p may use, claimed, or -1. One claimed but offline, or guessed to be leaving,
 * is woken to look at the shared queue where p then goes: it no longer counts as idle. */
static s32 claim_idle_cpu(struct task_struct *p)
{
	s32 cpu;

	if (!scx_bpf_pick_idle_cpu_usable())
		return -1;
	cpu = scx_bpf_pick_idle_cpu(p->cpus_ptr, 0);
	if (cpu < 0 || !scxk_cpu_offline(cpu))
		return cpu;
	if (!scxk_cpu_told_offline(cpu))
		scxk_kick_cpu(cpu, SCX_KICK_IDLE);
	return -1;
}

static void apply_decision(const struct usched_decision *d)
{
	struct task_struct *p = custody_take(d->pid, d->enq_seq);
	struct task_ctx *tctx;
	s32 cpu = d->cpu;

	if (!p) {
		scxk_stat_inc(USCHED_STAT_CANCELLED);
		return;
	}
	tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	if (tctx) {
		tctx->vtime = d->vtime;
		tctx->grant_budget_ns = d->grant_budget_ns;
		tctx->grant_credit_ns = d->grant_credit_ns;
		tctx->grant_slice_ns = d->slice_ns;
		tctx->grant_expires_ns = bpf_ktime_get_ns() + USCHED_GRANT_MAX_AGE_MS * NSEC_PER_MSEC;
	}
	if (cpu != USCHED_ANY_CPU && (cpu < 0 || !bpf_cpumask_test_cpu(cpu, p->cpus_ptr) ||
				      scxk_cpu_offline(cpu))) {
		scxk_stat_inc(USCHED_STAT_REPLACED);
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
	scxk_stat_inc(USCHED_STAT_USER);
	bpf_task_release(p);
}

/* Where granted p goes in the shared queue: grant_credit_ns before the queue's now, and
 * ahead of the task its CPU runs when that one is further behind: the queue's now is at
 * least the latest vtime started on any CPU (clock.bpf.h), and a task bound to one CPU (or
 * on a CPU others left alone) may lag it by more than a credit. */
static u64 granted_vtime(struct task_struct *p, const struct task_ctx *tctx)
{
	u64 now = vtime_now, *running = running_vtime_of(scx_bpf_task_cpu(p));
	u64 vtime = now > tctx->grant_credit_ns ? now - tctx->grant_credit_ns : 0;

	if (running && *running && time_before(*running, vtime))
		vtime = *running - 1;
	return vtime;
}

/* Preempts the task running on p's CPU for granted p, queued at `vtime`, when that task was
 * queued later in the policy's order: as a wakeup handed over would have, by waking the
 * policy there (it preempts, and the task it preempted is then decided again). */
static void preempt_for_granted(struct task_struct *p, u64 vtime)
{
	s32 cpu = scx_bpf_task_cpu(p);
	u64 *running = running_vtime_of(cpu);

	if (running && time_before(vtime, *running))
		scxk_kick_cpu(cpu, SCX_KICK_PREEMPT);
}

/* Queues a wakeup of p as the policy has already decided (its grant, see usched_decision):
 * on an idle CPU if there is one, else in the shared queue (granted_vtime), preempting a
 * task behind it unless the wakeup may wait for the next scheduling point (wakeup_may_wait,
 * as for a hand-over). False when the grant does not cover it: not a wakeup, p has run its
 * budget since it was last handed over (tctx->run_ns, what the policy is charged next), the
 * grant has lapsed, or --full-user. */
static bool queue_granted_wakeup(struct task_struct *p, struct task_ctx *tctx, u64 enq_flags)
{
	u64 vtime;
	s32 cpu;

	if (!grants_allowed || !(enq_flags & SCX_ENQ_WAKEUP) || tctx->run_ns >= tctx->grant_budget_ns ||
	    time_before(tctx->grant_expires_ns, bpf_ktime_get_ns()))
		return false;
	vtime = granted_vtime(p, tctx);
	tctx->vtime = vtime;
	scxk_stat_inc(USCHED_STAT_GRANTED);
	cpu = claim_idle_cpu(p);
	if (cpu >= 0) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, tctx->grant_slice_ns, enq_flags);
		scxk_kick_cpu(cpu, SCX_KICK_IDLE);
		return true;
	}
	if (scx_bpf_create_dsq_usable())
		scx_bpf_dsq_insert_vtime(p, shared_dsq(), tctx->grant_slice_ns, vtime, enq_flags);
	else
		scx_bpf_dsq_insert(p, shared_dsq(), tctx->grant_slice_ns, enq_flags);
	if (!wakeup_may_wait(p, tctx))
		preempt_for_granted(p, vtime);
	return true;
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
