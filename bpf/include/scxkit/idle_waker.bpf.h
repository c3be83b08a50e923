/*
 * The idle waker (SCXK_IDLE_WAKER): a BPF timer that wakes idle CPUs while work waits, the
 * CPUs that sleep on their own local queue, and those on their way offline; and the CPUs
 * that run tasks standing in for it when it is late around a hotplug.
 */
#ifndef __SCXKIT_IDLE_WAKER_BPF_H
#define __SCXKIT_IDLE_WAKER_BPF_H

#include "hotplug.bpf.h"
#include "dsq_walk.bpf.h"
#include "kick.bpf.h"

#define CLOCK_MONOTONIC 1

/* For SCXK_IDLE_WAKER: no upkeep at each wakeup. */
static __always_inline void scxk_tend_nothing(void)
{
}

/* Where and when the idle waker's timer last fired (SCXK_IDLE_WAKER), or was armed by
 * ops.init: for the dumps, and to tell when it is late (scxk_waker_stand_in_due). */
s32 scxk_waker_cpu SCXK_SHARED;
u64 scxk_waker_fired_ns SCXK_SHARED;

/* When a CPU running tasks last did the idle waker's kicks in its stead, ns, and how many
 * times it did. */
u64 scxk_waker_stand_in_ns SCXK_SHARED;
u64 scxk_waker_stand_ins SCXK_SHARED;

/* Whether the CPU running this should do the idle waker's kicks now: some CPU is told
 * offline, the timer is late by more than two of its periods (`period_ns`), this CPU is not
 * leaving (scxk_may_kick), and no CPU stood in for it in the last period (one CPU claims
 * each turn). Around a hotplug the waker's kicks did not arrive: a CPU coming up, idle with
 * its hotplug thread in its local queue, was woken by nothing (scx_bpfland, 6.19, a hotplug
 * storm under load: cpuhp/3 runnable for 30 s until the watchdog ejected it, once in 2 runs
 * of the scenario). A BPF timer is a soft hrtimer, whose callback a loaded CPU may leave to
 * its ksoftirqd, a task like the others: the CPUs that run tasks do not depend on it. Costs
 * one read while no CPU is told offline, and a clock read while the timer is on time. */
static __always_inline bool scxk_waker_stand_in_due(u64 period_ns)
{
	u64 now;

	if (!scxk_nr_told_offline)
		return false;
	now = bpf_ktime_get_ns();
	if ((s64)(now - scxk_waker_fired_ns) <= (s64)(2 * period_ns) || !scxk_may_kick(false) ||
	    !scxk_claim_turn(&scxk_waker_stand_in_ns, now, period_ns))
		return false;
	__sync_fetch_and_add(&scxk_waker_stand_ins, 1);
	return true;
}

/* Notes that the idle waker's timer fired (or was armed) now, on this CPU. */
static __always_inline void scxk_waker_note_fired(void)
{
	scxk_waker_cpu = bpf_get_smp_processor_id();
	scxk_waker_fired_ns = bpf_ktime_get_ns();
}

/* How long ago `ns` was, in ms; -1 for never (0). */
static __always_inline s64 scxk_ms_since(u64 ns, u64 now)
{
	return ns ? (s64)((now - ns) / NSEC_PER_MSEC) : -1;
}

/* Adds to the kernel's debug dump (ops.dump only) where and how long ago the idle waker last
 * fired, and a CPU last stood in for it (scxk_waker_stand_in_due); `prefix`, a string
 * literal, starts the line. */
#define SCXK_DUMP_WAKER(prefix, now)                                                          \
	scxk_dump(prefix ": waker fired on CPU %d %lld ms ago, stood in %llu times, last %lld " \
			 "ms ago (-1: never), CPUs told offline %u, woken for overdue tasks %llu\n", \
		  scxk_waker_cpu, scxk_ms_since(scxk_waker_fired_ns, now),                   \
		  scxk_waker_stand_ins, scxk_ms_since(scxk_waker_stand_in_ns, now),          \
		  scxk_nr_told_offline, scxk_long_wait_wakes)

/* SCXK_IDLE_WAKER(name, period_ns, wanted, tend): a BPF timer that wakes the idle CPUs every
 * `period_ns` while `wanted()` says queued work waits with no CPU taking it: a CPU looks for
 * work only in ops.dispatch, which an idle CPU does not call. Each time it also wakes the
 * CPUs that may sleep on their own local queue (scxk_kick_stranded) and those on their way
 * offline (scxk_wake_dying_cpus); first, it calls `tend()` (scxk_tend_nothing, or a
 * scheduler's own upkeep of its queues). Defines the timer's map `name`, `name##_start()`,
 * to call from ops.init, and `name##_stand_in()`, to call from ops.running: it does the
 * kicks from there too while the timer is late around a hotplug (scxk_waker_stand_in_due). */
#define SCXK_IDLE_WAKER(name, period_ns, wanted, tend)                                 \
	struct name##_slot {                                                           \
		struct bpf_timer timer;                                                \
	};                                                                             \
	struct {                                                                       \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                      \
		__uint(max_entries, 1);                                                \
		__type(key, u32);                                                      \
		__type(value, struct name##_slot);                                     \
	} name SEC(".maps");                                                           \
	static __always_inline void name##_kick(bool from_timer)                       \
	{                                                                              \
		if (wanted())                                                          \
			scxk_kick_idle_cpus(from_timer);                               \
		scxk_kick_stranded(from_timer);                                        \
		scxk_wake_dying_cpus(from_timer);                                      \
	}                                                                              \
	static int name##_fire(void *map, int *key, struct bpf_timer *timer)           \
	{                                                                              \
		scxk_waker_note_fired();                                               \
		tend();                                                                \
		name##_kick(true);                                                     \
		bpf_timer_start(timer, (period_ns), 0);                                \
		return 0;                                                              \
	}                                                                              \
	static __always_inline void name##_stand_in(void)                              \
	{                                                                              \
		if (scxk_waker_stand_in_due(period_ns))                                \
			name##_kick(false);                                            \
	}                                                                              \
	static __always_inline s32 name##_start(void)                                  \
	{                                                                              \
		u32 zero = 0;                                                          \
		struct name##_slot *slot = bpf_map_lookup_elem(&name, &zero);          \
                                                                                       \
		if (!slot)                                                             \
			return -ENOENT;                                                \
		scxk_waker_note_fired();                                               \
		bpf_timer_init(&slot->timer, &name, CLOCK_MONOTONIC);                  \
		bpf_timer_set_callback(&slot->timer, name##_fire);                     \
		return bpf_timer_start(&slot->timer, (period_ns), 0);                  \
	}

#endif /* __SCXKIT_IDLE_WAKER_BPF_H */
