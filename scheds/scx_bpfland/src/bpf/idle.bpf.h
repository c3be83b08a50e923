/*
 * scx_bpfland, CPU placement: the primary domain, per-CPU idle and busy state, and the
 * idle-CPU selection (previous CPU, then a fully idle SMT core, the same LLC, the same node,
 * which is the order of the kernel's built-in selection that scx_bpf_select_cpu_and() runs
 * inside the mask we give it).
 */
#ifndef __BPFLAND_IDLE_BPF_H
#define __BPFLAND_IDLE_BPF_H

#include <scxkit/cpumask.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include "counters.bpf.h"
#include "task.bpf.h"

/* Written by userspace before load; the defaults live in intf.h. */
RODATA u64 overflow_delay_ns = BPFLAND_OVERFLOW_DELAY_DEFAULT_US * 1000ULL;
RODATA u32 nr_cpus = 1;
RODATA bool primary_all = true;
RODATA u64 primary_cpus[BPFLAND_MAX_CPUS / 64];
RODATA u64 online_cpus[BPFLAND_MAX_CPUS / 64];

struct cpu_ctx {
	/* When the CPU last left idle, ns; 0 while idle. */
	u64 busy_since_ns;
	/* When the task running here started, ns. */
	u64 running_since_ns;
	/* The ext task running here is regular, so an interactive wakeup may preempt it. */
	u32 running_regular;
	/* The CPU is offline (ops.cpu_offline; set from online_cpus at init). */
	u32 offline;
	/* Its last turn went to an overdue regular task ahead of interactive ones. */
	u32 overdue_turn;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, BPFLAND_MAX_CPUS);
	__type(key, u32);
	__type(value, struct cpu_ctx);
} cpu_ctxs SEC(".maps");

private(BPFLAND) struct bpf_cpumask __kptr *primary_mask;

static __always_inline struct cpu_ctx *cpu_ctx_get(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&cpu_ctxs, &key);
}

static __always_inline bool in_primary(s32 cpu)
{
	return primary_all || bitmap_test(primary_cpus, BPFLAND_MAX_CPUS / 64, cpu);
}

/* Whether every online primary CPU has been busy for at least overflow_delay_ns. Short
 * bursts that happen to overlap (a kworker, a light task's work) do not count: only a
 * sustained load overflows. With no primary CPU online, work goes anywhere. */
static __always_inline bool primary_saturated(void)
{
	u64 now = bpf_ktime_get_ns();
	u32 cpu;

	bpf_for(cpu, 0, nr_cpus) {
		struct cpu_ctx *cctx;

		if (!in_primary(cpu))
			continue;
		cctx = cpu_ctx_get(cpu);
		if ((cctx && cctx->offline) || scxk_cpu_offline(cpu))
			continue;
		if (!cctx || !cctx->busy_since_ns || now - cctx->busy_since_ns < overflow_delay_ns)
			return false;
	}
	return true;
}

/* Keeps primary_mask to the primary CPUs online now: a task that may use only offline ones
 * is then placed like one kept off the primary domain. */
static __always_inline void primary_mask_set(s32 cpu, bool online)
{
	struct bpf_cpumask *mask;

	if (primary_all || !in_primary(cpu))
		return;
	bpf_rcu_read_lock();
	mask = primary_mask;
	if (mask) {
		if (online)
			bpf_cpumask_set_cpu(cpu, mask);
		else
			bpf_cpumask_clear_cpu(cpu, mask);
	}
	bpf_rcu_read_unlock();
}

/* CPUs online now, among which the regular queue's tasks share the time (shared_slice). */
static u32 nr_online_cpus;
/* Primary CPUs online now. */
static u32 nr_primary_online;

/* Whether the primary domain is every CPU: by the options, or because every primary CPU is
 * offline (as in a suspend). A task is then never kept off it: were every task to wait on its
 * own CPU as one that the primary domain excludes, work already queued would starve (the
 * CPUs' local queues never empty, so ops.dispatch never runs). */
static __always_inline bool primary_everywhere(void)
{
	return primary_all || !nr_primary_online;
}

/* A CPU came or went: an offline CPU is neither idle nor busy, and runs nothing. The mask
 * changes after the counts going offline, before them coming online: an empty primary mask
 * always comes with nr_primary_online at 0 (else every task would wait on its own CPU, see
 * primary_everywhere). */
static __always_inline void cpu_set_online(s32 cpu, bool online)
{
	struct cpu_ctx *cctx = cpu_ctx_get(cpu);

	if (online)
		primary_mask_set(cpu, true);
	if (cctx && cctx->offline == online) {
		__sync_fetch_and_add(&nr_online_cpus, online ? 1 : -1);
		if (in_primary(cpu))
			__sync_fetch_and_add(&nr_primary_online, online ? 1 : -1);
	}
	if (!online)
		primary_mask_set(cpu, false);
	if (!cctx)
		return;
	cctx->offline = !online;
	cctx->busy_since_ns = 0;
	cctx->running_regular = 0;
}

/* Marks the CPUs that were offline when the topology was read (the kernel refuses the
 * attach if one came or went since, so this is the state at attach). After primary_mask. */
static __always_inline void cpus_init_online(void)
{
	u32 cpu;

	nr_online_cpus = nr_cpus;
	bpf_for(cpu, 0, nr_cpus)
		nr_primary_online += in_primary(cpu);
	bpf_for(cpu, 0, nr_cpus)
		cpu_set_online(cpu, bitmap_test(online_cpus, BPFLAND_MAX_CPUS / 64, cpu));
}

/* An idle CPU in `domain` for p, claimed; negative when there is none. */
static __always_inline s32 pick_idle_cpu(struct task_struct *p, s32 prev_cpu, u64 wake_flags,
					 const struct cpumask *domain)
{
	if (scx_bpf_test_and_clear_cpu_idle_usable() &&
	    bpf_cpumask_test_cpu(prev_cpu, domain) && bpf_cpumask_test_cpu(prev_cpu, p->cpus_ptr) &&
	    scx_bpf_test_and_clear_cpu_idle(prev_cpu))
		return prev_cpu;
	return scx_bpf_select_cpu_and(p, prev_cpu, wake_flags, domain, 0);
}

/* Counts a dispatch by its path and, apart, an overflow when `cpu` is outside the primary
 * domain. */
static __always_inline void count_dispatch(enum bpfland_stat_idx path, s32 cpu)
{
	scxk_stat_inc(path);
	if (!in_primary(cpu))
		scxk_stat_inc(BPFLAND_STAT_OVERFLOW);
}

/* Where a waking task should run: an idle primary CPU, else, when the primary domain is
 * saturated, any idle CPU it may use; negative when it has to queue. */
static __always_inline s32 place_task(struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	const struct cpumask *primary = cast_mask(primary_mask);
	s32 cpu;

	if (primary_everywhere() || !primary)
		return pick_idle_cpu(p, prev_cpu, wake_flags, p->cpus_ptr);
	cpu = pick_idle_cpu(p, prev_cpu, wake_flags, primary);
	if (cpu >= 0 || !primary_saturated())
		return cpu;
	return scx_bpf_select_cpu_and(p, prev_cpu, wake_flags, p->cpus_ptr, 0);
}

/* Whether p may run on some primary CPU. */
static __always_inline bool allowed_on_primary(const struct task_struct *p)
{
	const struct cpumask *primary = cast_mask(primary_mask);

	return primary_everywhere() || !primary || bpf_cpumask_intersects(primary, p->cpus_ptr);
}

#endif /* __BPFLAND_IDLE_BPF_H */
