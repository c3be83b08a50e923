/*
 * Waking other CPUs (scx_bpf_kick_cpu) safely around a hotplug: a kick is queued as irq_work
 * on the kicking CPU, which a CPU on its way offline may never run (hotplug.bpf.h).
 */
#ifndef __SCXKIT_KICK_BPF_H
#define __SCXKIT_KICK_BPF_H

#include "hotplug.bpf.h"

/* Kicks `cpu` (scx_bpf_kick_cpu), unless the kernel cannot or this CPU is leaving (see
 * scxk_this_cpu_leaving). */
static __always_inline void scxk_kick_cpu(s32 cpu, u64 flags)
{
	if (scx_bpf_kick_cpu_usable() && !scxk_this_cpu_leaving())
		scx_bpf_kick_cpu(cpu, flags);
}

/* Whether the CPU running this may kick others now: the kernel can, and this CPU is not
 * leaving (see scxk_this_cpu_leaving), or the caller is a timer's callback. A timer on a
 * dying CPU is moved away (CPUHP_AP_HRTIMERS_DYING) before that CPU runs its irq_work a last
 * time (CPUHP_AP_SMPCFD_DYING), both with interrupts off: its callback never runs after that
 * last run, and a kick it queues before is delivered. Without this exception the idle
 * waker's timer, on a CPU told offline, kicked nobody for the whole teardown, while the
 * CPU's hotplug thread waited for its runqueue to empty (scxk_wake_dying_cpus): a hotplug
 * under scx_rustland did not return within 60 s (6.19, in CI, the first time CPU 1 went
 * offline; a review saw the timer start on CPU 1 at each load on 6.19). */
static __always_inline bool scxk_may_kick(bool from_timer)
{
	return scx_bpf_kick_cpu_usable() && (from_timer || !scxk_this_cpu_leaving());
}

/* Wakes every idle CPU told offline (`told_offline`), or every other one, if this CPU may
 * kick (scxk_may_kick). */
static __always_inline void scxk_kick_idle_told(bool told_offline, bool from_timer)
{
	s32 cpu;

	if (!scxk_may_kick(from_timer))
		return;
	bpf_for(cpu, 0, scx_bpf_nr_cpu_ids()) {
		if (scxk_cpu_told_offline(cpu) == told_offline)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	}
}

/* Wakes every idle CPU not told offline, so that it looks for work (an idle CPU calls
 * ops.dispatch() only when woken). Also those only guessed to be leaving: the guess
 * (scxk_dispatching_cpu_leaving) is wrong whenever other work set a balance callback, and a
 * CPU that idled on a wrong guess was never woken again; a task only it could run waited in
 * a shared queue until an RCU stall (scx_rustland, 6.19, twice in about 10 runs of the hotplug
 * scenario). Woken, it guesses again. */
static __always_inline void scxk_kick_idle_cpus(bool from_timer)
{
	scxk_kick_idle_told(false, from_timer);
}

/* Wakes each CPU with tasks in its local queue, in case it sleeps with them there: a CPU
 * looks at its local queue only when it schedules, and a task put there after the CPU chose
 * to idle (see scxk_endless_slice_if_leaving), with no wakeup, waits for an unrelated
 * interrupt. A busy CPU, or one already on its way out of idle, ignores the kick. */
static __always_inline void scxk_kick_stranded(bool from_timer)
{
	s32 cpu;

	if (!scx_bpf_dsq_nr_queued_usable() || !scxk_may_kick(from_timer))
		return;
	bpf_for(cpu, 0, scx_bpf_nr_cpu_ids()) {
		if (scx_bpf_dsq_nr_queued(SCX_DSQ_LOCAL_ON | cpu) > 0)
			scx_bpf_kick_cpu(cpu, SCX_KICK_IDLE);
	}
}

/* Kicks each CPU told offline. Late in its teardown a CPU's hotplug thread sleeps until the
 * CPU's runqueue holds nothing else (sched_cpu_wait_empty), and only that CPU's idle task
 * wakes it, as it schedules with an empty runqueue. A task of that runqueue taken by another
 * CPU from a shared queue empties it while the dying CPU already idles, and nothing wakes
 * the CPU again: the hotplug waited for good (scx_simple, 6.19, a hotplug storm under fork
 * and CPU hogs: once in about 60 rounds of 40 events). Kicked, the idle CPU schedules again
 * and wakes its hotplug thread; a busy CPU, or one already offline, ignores the kick. */
static __always_inline void scxk_wake_dying_cpus(bool from_timer)
{
	if (scxk_nr_told_offline)
		scxk_kick_idle_told(true, from_timer);
}

/* How many times a walk for an overdue task woke an idle CPU that task may run on, the
 * walking CPU being one it may not (scxk_long_wait_wake_for, scxkit/long_wait.bpf.h). */
u64 scxk_long_wait_wakes SCXK_SHARED;

#endif /* __SCXKIT_KICK_BPF_H */
