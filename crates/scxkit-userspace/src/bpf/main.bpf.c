/*
 * The generic BPF part of a scheduler whose policy runs in userspace (scxkit-userspace).
 *
 * A task that needs a CPU is handed to the policy process through a ring buffer; the
 * policy's decisions (CPU or any, slice, vtime) come back through a user ring buffer and are
 * applied in ops.dispatch. A decision may grant the task's next wakeups, which BPF then
 * queues itself until the task has run the grant's budget. BPF dispatches a few tasks
 * itself: the policy process (first, always), per-CPU kernel threads and memory-reclaim
 * threads (they must not wait for a process that may itself wait for memory), wakeups on an
 * idle CPU while userspace holds nothing, and every task when the ring buffer is full
 * (congestion).
 *
 * If the policy's heartbeat stops (SIGSTOP, a debugger, a stall) for fallback_after_ns,
 * BPF schedules on its own, FIFO, until it beats again: the tasks already handed over are
 * found through the custody FIFO (custody.bpf.h). A killed policy process needs nothing
 * here: its exit closes the struct_ops link and the kernel goes back to its own scheduler.
 */
#include <scxkit/common.bpf.h>
#include <scxkit/cpumask.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include <scxkit/idle_waker.bpf.h>
#include <scxkit/stranded.bpf.h>
#include <scxkit/context.bpf.h>
#include <scxkit/ops.bpf.h>
#include "intf.h"
#include "state.bpf.h"
#include "custody.bpf.h"
#include "handoff.bpf.h"
#include "clock.bpf.h"
#include "long_wait.bpf.h"

static __always_inline bool comm_starts_with(const struct task_struct *p, const char *prefix, u32 len)
{
	u32 i;

#pragma unroll
	for (i = 0; i < len; i++)
		if (p->comm[i] != prefix[i])
			return false;
	return true;
}

static __always_inline bool is_reclaim_kthread(const struct task_struct *p)
{
	if (!(p->flags & PF_KTHREAD))
		return false;
	return comm_starts_with(p, "kswapd", 6) || comm_starts_with(p, "kcompactd", 9) ||
	       comm_starts_with(p, "khugepaged", 10);
}

s32 BPF_STRUCT_OPS(usched_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);
	/* The policy goes to an idle CPU if there is one: on a busy CPU it preempts the task
	 * running there, which then waits for a decision while another task takes its turn.
	 * ops.enqueue queues it (at the head, preempting) either way. */
	if (p->pid == policy_tid)
		return cpu;
	if (is_idle && idle_bypass && user_backlog() == 0) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, bypass_slice(p), 0);
		scxk_stat_inc(USCHED_STAT_IDLE);
	}
	return cpu;
}

void BPF_STRUCT_OPS(usched_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = task_ctx(p);

	if (tctx)
		tctx->enq_seq++;
	if (p->pid == policy_tid) {
		/* Ahead of everything on its CPU: every other task waits for its decisions. */
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, USCHED_SELF_SLICE_US * 1000ULL,
				   enq_flags | SCX_ENQ_HEAD | SCX_ENQ_PREEMPT);
		scxk_stat_inc(USCHED_STAT_SELF);
	} else if (p->tgid == policy_tgid) {
		/* The policy's other threads (stats, exporters, signals): one may hold a lock the
		 * loop needs, so none of them waits for a decision of that loop. */
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, fallback_slice_ns, enq_flags);
		scxk_stat_inc(USCHED_STAT_SELF);
	} else if (scxk_is_per_cpu_kthread(p)) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, fallback_slice_ns, enq_flags);
		scxk_stat_inc(USCHED_STAT_KTHREAD);
	} else if (is_reclaim_kthread(p)) {
		scx_bpf_dsq_insert(p, kernel_dsq(), fallback_slice_ns, enq_flags);
		scxk_stat_inc(USCHED_STAT_KTHREAD);
	} else if (!tctx || fallback_active(bpf_ktime_get_ns())) {
		scx_bpf_dsq_insert(p, kernel_dsq(), fallback_slice_ns, enq_flags);
		scxk_stat_inc(USCHED_STAT_FALLBACK);
	} else if (queue_granted_wakeup(p, tctx, enq_flags)) {
		/* Decided already: no round trip. */
	} else if (!send_to_user(p, tctx, enq_flags)) {
		scx_bpf_dsq_insert(p, kernel_dsq(), fallback_slice_ns, enq_flags);
		scxk_stat_inc(USCHED_STAT_CONGESTION);
	}
}

/* Whether our own queues exist and can be counted (not where the kernel cannot do both). */
static __always_inline bool queues_countable(void)
{
	return scx_bpf_create_dsq_usable() && scx_bpf_dsq_nr_queued_usable();
}

/* Whether tasks wait in queue `dsq_id`, one of ours (false where they cannot be counted). */
static __always_inline bool queue_waiting(u64 dsq_id)
{
	return queues_countable() && scx_bpf_dsq_nr_queued(dsq_id) > 0;
}

/*
 * Moves a task from BPF's own queue or the shared one to this CPU. BPF's queue (reclaim
 * threads, congestion, fallback, refused hand-overs) comes first, but never twice in a row on
 * a CPU while the shared queue holds a task for it: while the policy was stopped, or its
 * custody record full, BPF's queue never emptied, and a task the policy had decided waited
 * 21 s in the shared queue, once preempted in an RCU read section (a stall, 6.19).
 */
static __always_inline bool take_from_queues(void)
{
	u32 zero = 0;
	bool *bpf_last = bpf_map_lookup_elem(&bpf_queue_served_last, &zero);

	if (!bpf_last)	/* never: the verifier wants the check */
		return scx_bpf_dsq_move_to_local(USCHED_KERNEL_DSQ) ||
		       scx_bpf_dsq_move_to_local(USCHED_SHARED_DSQ);
	if (*bpf_last && scx_bpf_dsq_move_to_local(USCHED_SHARED_DSQ)) {
		*bpf_last = false;
		if (queue_waiting(USCHED_KERNEL_DSQ))
			scxk_stat_inc(USCHED_STAT_SHARED_FIRST);
		return true;
	}
	if (scx_bpf_dsq_move_to_local(USCHED_KERNEL_DSQ)) {
		*bpf_last = true;
		return true;
	}
	*bpf_last = false;
	return scx_bpf_dsq_move_to_local(USCHED_SHARED_DSQ);
}

void BPF_STRUCT_OPS(usched_dispatch, s32 cpu, struct task_struct *prev)
{
	if (fallback_active(bpf_ktime_get_ns())) {
		custody_sweep();
	} else {
		drain_decisions();
		custody_trim();
		custody_compact_if_crowded();
	}
	/* Decisions go out from here too, but a CPU on its way offline takes no queued work
	 * other than its own kthreads'. */
	if (scxk_dispatching_cpu_leaving(cpu)) {
		if (scx_bpf_create_dsq_usable()) {
			scxk_take_bound(USCHED_KERNEL_DSQ, cpu);
			scxk_take_bound(USCHED_SHARED_DSQ, cpu);
		}
		return;
	}
	/* Tasks handed over without a wakeup are read now, at this scheduling point: with a
	 * 1 ms grace instead, each hop of a request/response chain under load waited for it
	 * (wakeup p50 4 ms against 0.5 ms). */
	if (messages_unread())
		nudge_user();
	if (scx_bpf_create_dsq_usable()) {
		if (scx_bpf_dsq_nr_queued_usable())
			nr_shared_queued = scx_bpf_dsq_nr_queued(USCHED_SHARED_DSQ);
		if (take_long_waiting(cpu) || take_from_queues())
			return;
	}
	nudge_user();
}

void BPF_STRUCT_OPS(usched_dequeue, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	/* Out of BPF's hands: a decision still on its way is stale. */
	if (tctx)
		tctx->custody_seq = 0;
}

/* Idle CPUs are woken now and then to look for work (a CPU only looks for it in
 * ops.dispatch, and an idle one does not call it): while the policy is silent, for the tasks
 * it held; whenever tasks wait in the shared queue, for one queued there while the only CPU
 * it may use was going idle; and while tasks are in custody, for the policy's decisions,
 * which only ops.dispatch applies (the CPU that would have, the policy's, may have gone
 * offline). */
static __always_inline bool work_unseen(void)
{
	return fallback_active(bpf_ktime_get_ns()) || queue_waiting(USCHED_SHARED_DSQ) || custody_nonempty();
}

SCXK_WALK_COUNTER(stranded_scanned, USCHED_STAT_STRANDED_SCANS, USCHED_STAT_STRANDED_SCANNED_TASKS,
		  USCHED_STAT_STRANDED_SCAN_NS)

SCXK_STRANDED_SCANNER(scan_for_stranded, stranded_scanned)

/* Hands the tasks that only a CPU going offline may run to that CPU (see
 * scxk_rescue_stranded), at each of the timer's wakeups: both queues, the shared one (0) and
 * the kernel threads' (1). */
_Static_assert(USCHED_SHARED_DSQ == 0 && USCHED_KERNEL_DSQ == 1,
	       "the stranded scan walks queues 0 and 1");
static __always_inline void rescue_stranded(void)
{
	if (scx_bpf_create_dsq_usable())
		scan_for_stranded(2, USCHED_WATCH_INTERVAL_MS * NSEC_PER_MSEC / 2);
}

SCXK_IDLE_WAKER(watch_timer, USCHED_WATCH_INTERVAL_MS * NSEC_PER_MSEC, work_unseen,
		rescue_stranded)

void BPF_STRUCT_OPS(usched_running, struct task_struct *p)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	u64 *running = running_vtime_of(scx_bpf_task_cpu(p));

	scxk_stat_set(USCHED_STAT_RUNNING, 1);
	watch_timer_stand_in();
	if (running)
		*running = tctx ? tctx->vtime : 0;
	if (!tctx)
		return;
	tctx->started_ns = bpf_ktime_get_ns();
	clock_started(tctx->vtime);
	tctx->vtime = 0;
}

void BPF_STRUCT_OPS(usched_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	u64 *running = running_vtime_of(scx_bpf_task_cpu(p));
	u64 now, ran_ns;

	scxk_stat_set(USCHED_STAT_RUNNING, 0);
	if (running)
		*running = 0;
	if (!tctx || !tctx->started_ns)
		return;
	now = bpf_ktime_get_ns();
	if (runnable)
		wait_started(tctx, now);
	ran_ns = now - tctx->started_ns;
	clock_ran(ran_ns);
	tctx->run_ns += ran_ns;
	tctx->since_sleep_ns += ran_ns;
	/* Stopping while not runnable: it went to sleep of its own accord. */
	if (!runnable) {
		tctx->nvcsw++;
		tctx->since_sleep_ns = 0;
	}
}

void BPF_STRUCT_OPS(usched_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = task_ctx(p);

	if (!tctx)
		return;
	wait_started(tctx, bpf_ktime_get_ns());
	clock_runnable(p, tctx);
}

void BPF_STRUCT_OPS(usched_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);

	if (tctx)
		clock_quiescent(tctx);
}

/* A hotplug event needs no restart: the kernel moves the tasks of a CPU that goes away (once
 * those in our queues are handed back to it, scxkit/dsq_walk.bpf.h) and turns a decision for
 * an offline CPU into one for any CPU; the policy sees the new count. */
void BPF_STRUCT_OPS(usched_cpu_online, s32 cpu)
{
	__sync_fetch_and_add(&nr_cpus_online, 1);
	scxk_record_online(cpu, true);
}

void BPF_STRUCT_OPS(usched_cpu_offline, s32 cpu)
{
	__sync_fetch_and_sub(&nr_cpus_online, 1);
	scxk_record_online(cpu, false);
	if (scx_bpf_create_dsq_usable()) {
		scxk_rescue_from_offline(USCHED_SHARED_DSQ, cpu);
		scxk_rescue_from_offline(USCHED_KERNEL_DSQ, cpu);
	}
}

s32 BPF_STRUCT_OPS_SLEEPABLE(usched_init)
{
	s32 err;

	if (scx_bpf_create_dsq_usable()) {
		err = scx_bpf_create_dsq(USCHED_SHARED_DSQ, -1);
		if (err)
			return err;
		err = scx_bpf_create_dsq(USCHED_KERNEL_DSQ, -1);
		if (err)
			return err;
	}
	return watch_timer_start();
}

/* The framework's state in the kernel's debug dump: the queues' clock (each task listed there
 * shows the vtime it was queued with as dsq_vtime; a FIFO policy's vtimes are sequence
 * numbers), the queues (where the kernel has user queues), what the policy has yet to decide
 * (as of its last count: while it is stopped, what it held then), whether BPF schedules on
 * its own (as of the last dispatch), and the idle waker. */
void BPF_STRUCT_OPS(usched_dump, struct scx_dump_ctx *dctx)
{
	if (queues_countable())
		scxk_dump("usched: queued shared %d, BPF's own %d\n",
			  scx_bpf_dsq_nr_queued(USCHED_SHARED_DSQ),
			  scx_bpf_dsq_nr_queued(USCHED_KERNEL_DSQ));
	scxk_dump("usched: vtime_now %llu, sent %llu, undecided %llu, in fallback %d, CPUs online %llu\n",
		  vtime_now, nr_sent, user_backlog(), fallback_since_ns != 0, nr_cpus_online);
	SCXK_DUMP_WAKER("usched", bpf_ktime_get_ns());
}

SCXK_OPS(usched, 0, select_cpu, enqueue, dispatch, dequeue, runnable, running, stopping,
	 quiescent, cpu_online, cpu_offline, init, dump);
