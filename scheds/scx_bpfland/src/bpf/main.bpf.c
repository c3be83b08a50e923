/*
 * scx_bpfland: an interactive-first scheduler.
 *
 * Tasks that often block by themselves (games, audio, UI threads) are told apart from the
 * CPU hogs by their rate of voluntary context switches (task.bpf.h) and are served first
 * (queue.bpf.h). Work is kept on the primary domain's CPUs until they are all busy, then
 * overflows to the others (idle.bpf.h). Each file holds one concern; this one holds the
 * sched_ext callbacks, each a few lines.
 */
#include <scxkit/common.bpf.h>
#include <scxkit/cpumask.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include <scxkit/idle_waker.bpf.h>
#include <scxkit/kick.bpf.h>
#include <scxkit/context.bpf.h>
#include <scxkit/ops.bpf.h>
#include "intf.h"

#include "counters.bpf.h"
#include "task.bpf.h"
#include "idle.bpf.h"
#include "queue.bpf.h"

/* Written by userspace before load. */
RODATA bool local_kthreads;
RODATA bool preempt_enabled = true;

s32 BPF_STRUCT_OPS(bpfland_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = task_ctx_get(p);
	s32 cpu;

	if (!tctx)
		return prev_cpu;
	tctx->woken_by_interrupt = scxk_in_interrupt();
	cpu = place_task(p, prev_cpu, wake_flags);
	if (cpu < 0) {
		/* Queued by the enqueue that follows. A sync waker is about to sleep: preempting
		 * it would only add a context switch. */
		tctx->wake_preempt = !(wake_flags & SCX_WAKE_SYNC);
		return prev_cpu;
	}
	tctx->wake_preempt = BPFLAND_WAKE_UNSEEN;
	tctx->slice_ns = task_slice(tctx);
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->slice_ns, 0);
	count_dispatch(BPFLAND_STAT_DIRECT, cpu);
	return cpu;
}

/* Whether a wakeup may preempt, from what select_cpu said of it. Where select_cpu did not
 * run (the kernel skips it for a task allowed on one CPU: on a one-CPU machine, for every
 * task), a wakeup from an interrupt may (a timer, a device); one from a task may not, as
 * that task often sleeps next (a pipe hand-off): see cut_waker_slice. Where the kernel
 * cannot tell the two apart, it may. */
static __always_inline bool wakeup_may_preempt(u32 wake_preempt, u64 enq_flags)
{
	if (!(enq_flags & SCX_ENQ_WAKEUP) || !wake_preempt)
		return false;
	if (wake_preempt != BPFLAND_WAKE_UNSEEN)
		return true;
	return !scxk_context_known() || scxk_in_interrupt();
}

/* An interactive task woken by the regular task running here, which did not preempt it:
 * the waker keeps at most the least slice of a regular task now (crowd_min_slice), so that
 * it either sleeps first, as a pipe's writer does, or gives way soon. */
static __always_inline void cut_waker_slice(void)
{
	struct task_struct *waker = bpf_get_current_task_btf();
	struct cpu_ctx *cctx = cpu_ctx_get(bpf_get_smp_processor_id());
	u64 floor_ns;

	if (!cctx || !cctx->running_regular || !(waker->scx.flags & SCX_TASK_QUEUED))
		return;
	if (waker->scx.slice <= slice_min_ns)
		return;
	floor_ns = crowd_min_slice(regular_waiting());
	if (waker->scx.slice > floor_ns)
		scxk_set_slice(waker, floor_ns);
}

/* Whether the wakeup being queued came from an interrupt: as select_cpu saw it, or where
 * select_cpu did not run, from here (false where the kernel cannot tell). */
static __always_inline bool woken_by_interrupt(const struct task_ctx *tctx)
{
	if (tctx->wake_preempt == BPFLAND_WAKE_UNSEEN)
		return scxk_in_interrupt();
	return tctx->woken_by_interrupt;
}

void BPF_STRUCT_OPS(bpfland_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = task_ctx_get(p);
	bool may_preempt, unseen_from_task;
	s32 cpu;

	scxk_stat_inc(BPFLAND_STAT_ENQUEUE);
	if (!tctx) {
		/* No state (it could not be allocated): still run the task, as a regular one. */
		scxk_stat_inc(BPFLAND_STAT_REGULAR);
		scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, slice_ns, enq_flags);
		return;
	}
	tctx->slice_ns = task_slice(tctx);
	credit_new_sleeper(tctx, enq_flags, woken_by_interrupt(tctx));
	may_preempt = wakeup_may_preempt(tctx->wake_preempt, enq_flags);
	unseen_from_task = !may_preempt && tctx->wake_preempt == BPFLAND_WAKE_UNSEEN &&
			   (enq_flags & SCX_ENQ_WAKEUP);
	tctx->wake_preempt = BPFLAND_WAKE_UNSEEN;

	if (local_kthreads && scxk_is_per_cpu_kthread(p)) {
		scxk_stat_inc(BPFLAND_STAT_KTHREAD);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, tctx->slice_ns, enq_flags);
		return;
	}
	/* A task kept off the primary domain by its affinity waits on its own CPU. */
	if (!allowed_on_primary(p)) {
		cpu = scx_bpf_task_cpu(p);
		if (!bpf_cpumask_test_cpu(cpu, p->cpus_ptr))
			cpu = bpf_cpumask_any_distribute(p->cpus_ptr);
		scxk_stat_inc(BPFLAND_STAT_PINNED);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | cpu, tctx->slice_ns, enq_flags);
		/* Wake the CPU, or it may sleep through the insert until its next interrupt
		 * (tickless): another CPU idle there, or this one when p was its last task
		 * (SCX_ENQ_LAST: the kernel has already chosen to idle, and 6.19 does not look
		 * again; a hog there got 6% of its CPU). */
		if (cpu != bpf_get_smp_processor_id() || (enq_flags & SCX_ENQ_LAST))
			scxk_kick_cpu(cpu, SCX_KICK_IDLE);
		return;
	}
	if (!(enq_flags & SCX_ENQ_WAKEUP) && run_on_idle(p, tctx->slice_ns, enq_flags))
		return;
	if (overflow_now(p, tctx->slice_ns, enq_flags))
		return;
	if (preempt_enabled && tctx->interactive && may_preempt &&
	    preempt_for(p, tctx->slice_ns, enq_flags))
		return;
	if (preempt_enabled && tctx->interactive && unseen_from_task)
		cut_waker_slice();
	queue_task(p, tctx, tctx->slice_ns, enq_flags);
}

void BPF_STRUCT_OPS(bpfland_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_ctx *tctx;

	if (!scx_bpf_create_dsq_usable())
		return;
	if (scxk_dispatching_cpu_leaving(cpu)) {
		scxk_take_bound(BPFLAND_PRIO_DSQ, cpu);
		scxk_take_bound(BPFLAND_SHARED_DSQ, cpu);
		return;
	}
	/* Outside the primary domain, only take work while the primary domain is saturated
	 * (the task running here then goes back through enqueue: SCX_OPS_ENQ_LAST), or does
	 * not serve the queues at all. */
	if (!in_primary(cpu) && !primary_saturated() && !queues_unserved())
		return;
	if (consume(cpu)) {
		if (!in_primary(cpu) && !primary_everywhere())
			scxk_stat_inc(BPFLAND_STAT_OVERFLOW);
		return;
	}
	/* Nothing else to run: the previous task goes on with a fresh slice. It keeps the CPU
	 * without passing through stopping and running, so what it ran is charged here. */
	if (prev && (prev->scx.flags & SCX_TASK_QUEUED) && (tctx = task_ctx_get(prev))) {
		task_charge(prev, tctx, bpf_ktime_get_ns());
		task_set_slice(prev, tctx, task_slice(tctx));
	}
}

void BPF_STRUCT_OPS(bpfland_running, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_get(p);
	struct cpu_ctx *cctx = cpu_ctx_get(scx_bpf_task_cpu(p));
	u64 slice;

	if (!tctx)
		return;
	if (time_before(vtime_now, tctx->vtime))
		vtime_now = tctx->vtime;
	tctx->start_ns = bpf_ktime_get_ns();
	slice = tctx->interactive ? p->scx.slice : shared_slice(p->scx.slice);
	if (slice < p->scx.slice)
		task_set_slice(p, tctx, slice);
	scxk_endless_slice_if_leaving(p);
	unserved_watch_stand_in();
	if (cctx) {
		cctx->running_regular = !tctx->interactive;
		cctx->running_since_ns = tctx->start_ns;
		/* A CPU busy since before the attach never went through update_idle. */
		if (!cctx->busy_since_ns)
			cctx->busy_since_ns = tctx->start_ns;
	}
}

void BPF_STRUCT_OPS(bpfland_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = task_ctx_get(p);
	struct cpu_ctx *cctx = cpu_ctx_get(scx_bpf_task_cpu(p));

	if (cctx)
		cctx->running_regular = 0;
	if (tctx)
		task_stop(p, tctx, runnable);
}

void BPF_STRUCT_OPS(bpfland_update_idle, s32 cpu, bool idle)
{
	struct cpu_ctx *cctx = cpu_ctx_get(cpu);

	if (cctx)
		cctx->busy_since_ns = idle ? 0 : bpf_ktime_get_ns();
}

/* A hotplug event needs no restart: the CPU is left out of (or back in) the primary domain's
 * saturation test and preemption; the kernel moves its tasks, once those still in our queues
 * are handed back to it (scxk_rescue_from_offline, scxkit/dsq_walk.bpf.h). The idle mask may
 * keep an offline CPU's bit: a pick from it is checked (scxk_cpu_offline). */
void BPF_STRUCT_OPS(bpfland_cpu_online, s32 cpu)
{
	cpu_set_online(cpu, true);
	scxk_record_online(cpu, true);
}

void BPF_STRUCT_OPS(bpfland_cpu_offline, s32 cpu)
{
	cpu_set_online(cpu, false);
	scxk_record_online(cpu, false);
	if (scx_bpf_create_dsq_usable()) {
		scxk_rescue_from_offline(BPFLAND_PRIO_DSQ, cpu);
		scxk_rescue_from_offline(BPFLAND_SHARED_DSQ, cpu);
	}
}

/* A new task starts from its parent's vruntime (bpfland_init_task), or with the credit of a
 * task waking from a long sleep when that is more: it has asked for nothing yet. A hog that
 * has waited long is at that floor too, but asks for its run so far on top (task_deadline):
 * a command forked by a shell goes before the hogs, while the children of a busy fork loop
 * queue with their parent rather than ahead of everyone. */
void BPF_STRUCT_OPS(bpfland_enable, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_get(p);

	if (tctx)
		task_vtime(tctx);
}

s32 BPF_STRUCT_OPS(bpfland_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (!tctx)
		return -ENOMEM;
	/* At fork, the task running is the parent. */
	if (args->fork) {
		struct task_ctx *parent = task_ctx_get(bpf_get_current_task_btf());

		if (parent)
			tctx->vtime = parent->vtime;
	}
	tctx->wake_preempt = BPFLAND_WAKE_UNSEEN;
	return 0;
}

void BPF_STRUCT_OPS(bpfland_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	struct task_ctx *tctx = task_ctx_get(p);

	if (tctx && tctx->interactive)
		__sync_fetch_and_sub(&nr_interactive, 1);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(bpfland_init)
{
	s32 err;

	if (!primary_all) {
		err = SCXK_CPUMASK_FROM_BITMAP(primary_mask, primary_cpus, nr_cpus);
		if (err)
			return err;
	}
	cpus_init_online();
	if (!scx_bpf_create_dsq_usable())
		return 0;
	err = scx_bpf_create_dsq(BPFLAND_PRIO_DSQ, -1);
	if (!err)
		err = scx_bpf_create_dsq(BPFLAND_SHARED_DSQ, -1);
	return err ? err : unserved_watch_start();
}

/* bpfland's own state in the kernel's debug dump: what decides whether queued work is taken,
 * and the idle waker. */
void BPF_STRUCT_OPS(bpfland_dump, struct scx_dump_ctx *dctx)
{
	u64 now = bpf_ktime_get_ns();
	s32 cpu;

	if (scx_bpf_dsq_nr_queued_usable() && scx_bpf_create_dsq_usable())
		scxk_dump("bpfland: queued interactive %d, regular %d\n",
			  scx_bpf_dsq_nr_queued(BPFLAND_PRIO_DSQ),
			  scx_bpf_dsq_nr_queued(BPFLAND_SHARED_DSQ));
	scxk_dump("bpfland: waiting since %llu ms ago (0: none), unserved %d, primary saturated %d, regular served %llu ms ago (0: never), CPUs online %u (primary %u)\n",
		  waiting_since_ns ? (now - waiting_since_ns) / NSEC_PER_MSEC : 0, queues_unserved(),
		  primary_saturated(), regular_served_ns ? (now - regular_served_ns) / NSEC_PER_MSEC : 0, nr_online_cpus,
		  nr_primary_online);
	SCXK_DUMP_WAKER("bpfland", now);
	bpf_for(cpu, 0, nr_cpus) {
		struct cpu_ctx *cctx = cpu_ctx_get(cpu);

		if (!cctx)
			break;
		scxk_dump("bpfland: CPU %d: primary %d, offline %u (bits %u), busy for %llu ms (0: idle), running regular %u, overdue turn %u\n",
			  cpu, in_primary(cpu), cctx->offline, scxk_offline_bits(cpu),
			  cctx->busy_since_ns ? (now - cctx->busy_since_ns) / NSEC_PER_MSEC : 0,
			  cctx->running_regular, cctx->overdue_turn);
	}
}

/* Keep the kernel's idle tracking: scx_bpf_select_cpu_and() relies on it. Have the last
 * runnable task of a CPU go through enqueue rather than keep the CPU: that is how a task left
 * outside the primary domain comes back once the primary domain frees up. */
SCXK_OPS(bpfland, SCX_OPS_KEEP_BUILTIN_IDLE | SCX_OPS_ENQ_LAST, select_cpu, enqueue, dispatch,
	 running, stopping, update_idle, cpu_online, cpu_offline, enable, init_task, exit_task,
	 init, dump);
