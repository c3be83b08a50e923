/*
 * Bounded walks of a shared queue (a DSQ) from BPF, paced between CPUs, and the moves of what
 * they find to a CPU's local queue: what the hotplug rescues (hotplug.bpf.h, stranded.bpf.h)
 * and the long-wait taker (long_wait.bpf.h) share.
 */
#ifndef __SCXKIT_DSQ_WALK_BPF_H
#define __SCXKIT_DSQ_WALK_BPF_H

#include "common.bpf.h"
#include "cpumask.bpf.h"

SCXK_KFUNC(int, bpf_iter_scx_dsq_new, (struct bpf_iter_scx_dsq *it, u64 dsq_id, u64 flags))
SCXK_KFUNC(struct task_struct *, bpf_iter_scx_dsq_next, (struct bpf_iter_scx_dsq *it))
SCXK_KFUNC(void, bpf_iter_scx_dsq_destroy, (struct bpf_iter_scx_dsq *it))
SCXK_KFUNC(bool, scx_bpf_dsq_move, (struct bpf_iter_scx_dsq *it__iter, struct task_struct *p,
				    u64 dsq_id, u64 enq_flags))

/* The iterator of the innermost bpf_for_each() (its variable in libbpf's macro). */
#define SCXK_FOR_EACH_ITER (&___it)

/* Whether this kernel lets BPF walk a queue and move what it finds. */
static __always_inline bool scxk_dsq_walk_usable(void)
{
	return bpf_iter_scx_dsq_new_usable() && bpf_iter_scx_dsq_next_usable() &&
	       bpf_iter_scx_dsq_destroy_usable() && scx_bpf_dsq_move_usable();
}

/* Whether this CPU takes the turn that *last_ns paces: none was taken in the last
 * `interval_ns`, and no other CPU takes this one (it moves *last_ns to now first). *last_ns may
 * be ahead of now (a walk paced later, scxkit/long_wait.bpf.h): hence the signed difference,
 * which as unsigned wrapped and made every dispatch walk. */
static __always_inline bool scxk_claim_turn(u64 *last_ns, u64 now, u64 interval_ns)
{
	u64 last = *last_ns;

	return (s64)(now - last) >= (s64)interval_ns &&
	       __sync_bool_compare_and_swap(last_ns, last, now);
}

/* Whether this CPU may walk a queue now: the kernel lets BPF walk queues, and it claims the
 * turn of the walks *last_ns paces (scxk_claim_turn). */
static __always_inline bool scxk_walk_due(u64 *last_ns, u64 now, u64 interval_ns)
{
	return scxk_dsq_walk_usable() && scxk_claim_turn(last_ns, now, interval_ns);
}

/* Counts one more task of a bounded walk in *seen; false once the walk has seen `max`. *seen
 * is a global (a per-CPU slot), not a local, and read through a volatile lest the compiler
 * keep it in a register: the verifier follows a local counter exactly, and so went through a
 * walk's steps one by one ("the sequence of 8193 jumps is too complex"). */
static __always_inline bool scxk_walk_count(u32 *seen, u32 max)
{
	volatile u32 *count = seen;
	u32 nr = *count;

	if (nr >= max)
		return false;
	*count = nr + 1;
	return true;
}

/* The flags of a bounded walk from the head or the tail of the queue, either at random: a
 * turn kept per walker would give two queues walked in alternation one end each. */
static __always_inline u64 scxk_walk_from_either_end(void)
{
	return bpf_get_prandom_u32() & 1 ? SCX_DSQ_ITER_REV : 0;
}

/* Whether queued task p may be moved to `cpu` now: allowed there, and not held on another
 * CPU with migration disabled (a task preempted in such a section). */
static __always_inline bool scxk_movable_to(struct task_struct *p, s32 cpu)
{
	return bpf_cpumask_test_cpu(cpu, p->cpus_ptr) &&
	       (!p->migration_disabled || scx_bpf_task_cpu(p) == cpu);
}

/* Whether p can run on `cpu` alone: bound to it (a per-CPU kthread, as cpuhp/N), or held
 * there with migration disabled. A task allowed on one CPU is on that CPU's runqueue. */
static __always_inline bool scxk_bound_to(struct task_struct *p, s32 cpu)
{
	return (p->nr_cpus_allowed == 1 || scxk_migration_disabled(p)) && scx_bpf_task_cpu(p) == cpu;
}

/* Moves to the local queue of `cpu` the tasks waiting in queue `dsq_id` that are on its
 * runqueue (all of them, or only those bound to it); returns how many moved. */
static __always_inline u32 scxk_move_to_own_cpu(u64 dsq_id, s32 cpu, bool bound_only)
{
	struct task_struct *p;
	u32 moved = 0;

	if (!scxk_dsq_walk_usable())
		return 0;
	bpf_for_each(scx_dsq, p, dsq_id, 0) {
		if (bound_only ? !scxk_bound_to(p, cpu) : scx_bpf_task_cpu(p) != cpu)
			continue;
		if (scx_bpf_dsq_move(SCXK_FOR_EACH_ITER, p, SCX_DSQ_LOCAL_ON | cpu, 0))
			moved++;
	}
	return moved;
}

/* Moves the tasks of `cpu` waiting in queue `dsq_id` to that CPU's local queue. Call from
 * ops.cpu_offline for each queue of the scheduler; returns how many moved. */
static __always_inline u32 scxk_rescue_from_offline(u64 dsq_id, s32 cpu)
{
	return scxk_move_to_own_cpu(dsq_id, cpu, false);
}

/* Takes the tasks of queue `dsq_id` that can run only on `cpu`, the CPU running ops.dispatch.
 * For a CPU on its way offline, which takes no other work (scxk_dispatching_cpu_leaving):
 * the hotplug waits for its own kthread on that CPU (cpuhp/N sleeps in an RCU grace period
 * after the CPU stops being active), which nothing else can run; left queued, it stalled
 * the hotplug until the kernel ejected the scheduler. Returns how many moved. */
static __always_inline u32 scxk_take_bound(u64 dsq_id, s32 cpu)
{
	return scxk_move_to_own_cpu(dsq_id, cpu, true);
}

#endif /* __SCXKIT_DSQ_WALK_BPF_H */
