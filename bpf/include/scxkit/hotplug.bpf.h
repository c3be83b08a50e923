/*
 * CPU hotplug without a restart: what a scheduler implementing ops.cpu_online and
 * ops.cpu_offline must take care of, each seen to stall or hang a guest under a storm of
 * hotplug events with load.
 *
 * - Tasks bound to a dying CPU. Going offline, a CPU stops calling ops.dispatch() and only
 *   later waits until every task of its runqueue has left (sched_cpu_wait_empty). A task of
 *   that CPU still in one of the scheduler's queues is taken by another CPU if it may run
 *   there; one bound to the dying CPU (a per-CPU kernel thread) is taken by nobody, and the
 *   hotplug waits forever. 6.19 leaves them there (7.x kernels re-enqueue them): move them
 *   to the CPU's own local queue, which a dying CPU still serves (scxk_rescue_from_offline,
 *   scxk_take_bound, dsq_walk.bpf.h).
 * - A CPU on its way offline that still dispatches (7.x, see scxk_dispatching_cpu_leaving),
 *   or that no longer does, before ops.cpu_offline says so (6.19, see scxk_rescue_stranded,
 *   stranded.bpf.h).
 * - A dying CPU idling while its hotplug thread waits for its runqueue to empty
 *   (scxk_wake_dying_cpus, kick.bpf.h).
 * - Idle CPUs, which look for work only when woken (scxk_kick_idle_cpus, kick.bpf.h), by a
 *   timer and, when it is late around a hotplug, by the CPUs that run tasks
 *   (scxk_waker_stand_in_due, idle_waker.bpf.h).
 * - Irq_work left on a dying CPU: a kick or a ring buffer's wakeup (scxk_this_cpu_leaving).
 * - A slice running out on a CPU told offline (scxk_endless_slice_if_leaving).
 */
#ifndef __SCXKIT_HOTPLUG_BPF_H
#define __SCXKIT_HOTPLUG_BPF_H

#include "common.bpf.h"
#include "cpumask.bpf.h"
#include "dsq_walk.bpf.h"

SCXK_KFUNC(struct rq *, scx_bpf_locked_rq, (void))

/* Which CPUs are offline now, as ops.cpu_online and ops.cpu_offline told (call
 * scxk_record_online() from both). A CPU offline when the scheduler was loaded counts as
 * online here until it comes and goes: no task can be bound to it meanwhile. */
#define SCXK_MAX_CPUS 1024

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SCXK_MAX_CPUS);
	__type(key, u32);
	__type(value, u8);
} scxk_offline_cpus SEC(".maps") SCXK_SHARED;

/* What the map holds per CPU: offline as ops.cpu_offline said (until ops.cpu_online), and
 * seen on its way offline by ops.dispatch (scxk_dispatching_cpu_leaving), a guess. */
#define SCXK_OFFLINE_TOLD 1
#define SCXK_LEAVING_SEEN 2

static __always_inline void scxk_set_offline_bit(s32 cpu, u8 bit, bool set)
{
	u32 key = cpu;
	u8 *offline = bpf_map_lookup_elem(&scxk_offline_cpus, &key);

	if (offline)
		*offline = set ? (*offline | bit) : (*offline & ~bit);
}

static __always_inline u8 scxk_offline_bits(s32 cpu)
{
	u32 key = cpu;
	u8 *offline = bpf_map_lookup_elem(&scxk_offline_cpus, &key);

	return offline ? *offline : 0;
}

/* Whether ops.cpu_offline told that `cpu` is offline (not the leaving guess). */
static __always_inline bool scxk_cpu_told_offline(s32 cpu)
{
	return scxk_offline_bits(cpu) & SCXK_OFFLINE_TOLD;
}

/* How many CPUs are told offline now: work needed only then may be skipped while it is 0. */
u32 scxk_nr_told_offline SCXK_SHARED;

static __always_inline void scxk_record_online(s32 cpu, bool online)
{
	struct task_struct *hotplug_thread = bpf_get_current_task_btf();
	bool was_offline = scxk_cpu_told_offline(cpu);

	if (online && was_offline)
		__sync_fetch_and_sub(&scxk_nr_told_offline, 1);
	else if (!online && !was_offline)
		__sync_fetch_and_add(&scxk_nr_told_offline, 1);
	scxk_set_offline_bit(cpu, SCXK_OFFLINE_TOLD | SCXK_LEAVING_SEEN, !online);
	/* The hotplug thread of this CPU calls this, and goes on with the teardown: see
	 * scxk_endless_slice_if_leaving. */
	if (!online)
		scxk_set_slice(hotplug_thread, SCX_SLICE_INF);
	else if (hotplug_thread->scx.slice == SCX_SLICE_INF)
		scxk_set_slice(hotplug_thread, SCX_SLICE_DFL);
}

/* Whether no work should be placed on `cpu`: told offline, or seen leaving. */
static __always_inline bool scxk_cpu_offline(s32 cpu)
{
	return scxk_offline_bits(cpu) != 0;
}

/* Whether the CPU running ops.dispatch() is on its way offline. No longer active, it still
 * asks for work on 7.x kernels until its tasks are handed back after an RCU grace period,
 * but the kernel pushes away whatever it picks (balance_push, armed as the runqueue's
 * balance callback for as long as it lasts): work taken there only bounces, and a task the
 * grace period waits for (the RCU kthread) may bounce for good. Also marks the CPU as
 * leaving meanwhile (see scxk_cpu_offline). A guess: other work sets a balance callback
 * too, for a moment. False where the kernel cannot tell. */
static __always_inline bool scxk_dispatching_cpu_leaving(s32 cpu)
{
	struct rq *rq;
	bool leaving;

	if (!scx_bpf_locked_rq_usable())
		return false;
	rq = scx_bpf_locked_rq();
	leaving = rq && rq->balance_callback;
	scxk_set_offline_bit(cpu, SCXK_LEAVING_SEEN, leaving);
	return leaving;
}

/* Whether the CPU running this is on its way offline, or offline (from ops.cpu_offline()
 * until ops.cpu_online(), which bracket the end of the teardown; not the guess of
 * scxk_dispatching_cpu_leaving, as other work sets a balance callback too). Nothing may be
 * left for its irq_work there: a kick (scx_bpf_kick_cpu queues it on the calling CPU) or a
 * ring buffer's wakeup. Late in the teardown the CPU runs its irq_work no more, and an entry
 * left pending blocks that irq_work for good: no later kick or wakeup of it is delivered,
 * and the scheduler's unload spins in irq_work_sync. Seen under hotplug storms: a policy
 * never woken again for its ring buffer, and an unload that never ended. */
static __always_inline bool scxk_this_cpu_leaving(void)
{
	return scxk_cpu_told_offline(bpf_get_smp_processor_id());
}

/* Gives p a slice that does not run out while this CPU is told offline, and takes it back
 * once the CPU is online again. On 6.19 the kernel puts a task whose slice ran out on such a
 * CPU back on the CPU's local queue itself, without ops.enqueue; with SCX_OPS_ENQ_LAST it
 * leaves the follow-up to the scheduler and, picking nothing, idles the CPU with the task
 * still queued and nothing to wake it. Seen under hotplug storms with scx_bpfland, 3 rounds
 * of 200 events in 8: cpuhp/N (or ksoftirqd/N that it was parking) runnable mid-teardown
 * for 30-45 s until the watchdog ejected the scheduler. Only the tasks that cannot leave the
 * CPU get it (per-CPU kthreads, tasks with migration disabled: scxk_bound_to), and they soon
 * sleep; a task that could go elsewhere (a kernel thread while the CPU comes up, a user task
 * before balance_push moves it) keeps its slice, and scxk_kick_stranded wakes the CPU if it
 * is left queued. Call from ops.running. */
static __always_inline void scxk_endless_slice_if_leaving(struct task_struct *p)
{
	s32 cpu = bpf_get_smp_processor_id();

	if (scxk_this_cpu_leaving() && scxk_bound_to(p, cpu))
		scxk_set_slice(p, SCX_SLICE_INF);
	else if (p->scx.slice == SCX_SLICE_INF)
		scxk_set_slice(p, SCX_SLICE_DFL);
}

/* Every CPU's runqueue (weak: a kernel without it in its BTF cannot tell). */
extern const struct rq runqueues __ksym __weak;

/* Whether `cpu` may be inactive: going offline, offline or coming up. The kernel keeps its
 * push callback (balance_push) armed on the CPU's runqueue from the start of a teardown
 * until the CPU is active again; other work arms one for a moment too, so this is a guess.
 * False where the kernel cannot tell. */
static __always_inline bool scxk_cpu_maybe_inactive(s32 cpu)
{
	struct rq *rq;

	if (!bpf_ksym_exists(&runqueues))
		return false;
	rq = bpf_per_cpu_ptr(&runqueues, cpu);
	return rq && rq->balance_callback;
}

/* Whether any CPU may be inactive (scxk_cpu_maybe_inactive): otherwise no task is stranded,
 * and the queues need no walk. */
static __always_inline bool scxk_any_cpu_maybe_inactive(void)
{
	s32 cpu;

	bpf_for(cpu, 0, scx_bpf_nr_cpu_ids()) {
		if (scxk_cpu_maybe_inactive(cpu))
			return true;
	}
	return false;
}

/* Whether p, on `cpu`, may run nowhere else now: bound to it (scxk_bound_to), or allowed
 * elsewhere only on CPUs told offline (a task allowed on CPUs 1 and 3, with CPU 1 gone). */
static __always_inline bool scxk_only_cpu_left(struct task_struct *p, s32 cpu)
{
	s32 other;

	if (scxk_bound_to(p, cpu))
		return true;
	if (scx_bpf_task_cpu(p) != cpu || p->nr_cpus_allowed > scxk_nr_told_offline + 1)
		return false;
	bpf_for(other, 0, scx_bpf_nr_cpu_ids()) {
		if (other != cpu && bpf_cpumask_test_cpu(other, p->cpus_ptr) &&
		    !scxk_cpu_told_offline(other))
			return false;
	}
	return true;
}

#endif /* __SCXKIT_HOTPLUG_BPF_H */
