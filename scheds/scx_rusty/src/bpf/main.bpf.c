/*
 * scx_rusty: one scheduling domain per LLC (or per cache level, or per given cpumask),
 * grouped by NUMA node, with load balancing decided in userspace.
 *
 * BPF places and queues tasks within their home domain (place.bpf.h, queue.bpf.h) by
 * each domain's vruntime clock (clock.bpf.h), keeps each task's duty cycle and each
 * domain's load (load.bpf.h), and applies the homes that userspace's balancer and the
 * affinity dictate (home.bpf.h, domain.bpf.h). Userspace reads the loads every --interval,
 * moves tasks between nodes then between domains, and tunes the slice and the greedy domain
 * sets every --tune-interval (tune.bpf.h). This file holds the callbacks.
 */
#include <scxkit/common.bpf.h>
#include <scxkit/cpumask.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include <scxkit/idle_waker.bpf.h>
#include <scxkit/kick.bpf.h>
#include <scxkit/ops.bpf.h>
#include <scxkit/slice.bpf.h>
#include "intf.h"
#include "counters.bpf.h"
#include "task.bpf.h"
#include "tune.bpf.h"
#include "domain.bpf.h"
#include "load.bpf.h"
#include "clock.bpf.h"
#include "home.bpf.h"
#include "place.bpf.h"
#include "queue.bpf.h"

s32 BPF_STRUCT_OPS(rusty_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	struct task_ctx *tctx = task_ctx_get(p);
	enum rusty_stat_idx path;
	s32 cpu;

	if (!tctx)
		return prev_cpu;
	refresh_home(p, tctx);
	cpu = place_task(p, prev_cpu, wake_flags, tctx, &path);
	if (cpu < 0)
		return prev_cpu;
	/* The kernel's selection may give a synchronous wakeup the waker's CPU, busy. Put
	 * straight on that CPU while its domain's queue waits unserved, a ping-pong pair kept
	 * the CPU from ever taking from it (with every CPU but 0 offline, the queue waited 30 s,
	 * until the watchdog): it is queued instead (ops.enqueue). Not whenever the queue holds
	 * tasks: a shell's command then waited behind the hogs (one vCPU, `uname` p50 12.8 ->
	 * 16.4 ms). */
	if (cpu == bpf_get_smp_processor_id() && (wake_flags & SCX_WAKE_SYNC) &&
	    dom_waited_unserved(cpu_dom(cpu), bpf_ktime_get_ns()))
		return cpu;
	scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, current_slice_ns(), 0);
	scxk_stat_inc(path);
	return cpu;
}


/* After an enqueue with SCX_ENQ_LAST (the task was its CPU's last, and dispatch let it go
 * for a move): the CPU is about to go idle, so it is woken to run the task again if the
 * task still belongs here (the kernel leaves that follow-up to the scheduler). */
static __always_inline void keep_last_task(struct task_struct *p, u64 enq_flags, u32 dom)
{
	s32 cpu = scx_bpf_task_cpu(p);

	if ((enq_flags & SCX_ENQ_LAST) && cpu_dom(cpu) == dom)
		scxk_kick_cpu(cpu, SCX_KICK_IDLE);
}

void BPF_STRUCT_OPS(rusty_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = task_ctx_get(p);
	u64 slice = current_slice_ns();

	scxk_stat_inc(RUSTY_STAT_ENQUEUE);
	if (!tctx) {
		scxk_stat_inc(RUSTY_STAT_QUEUED);
		scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, slice, enq_flags);
		keep_last_task(p, enq_flags, cpu_dom(scx_bpf_task_cpu(p)));
		return;
	}
	refresh_home(p, tctx);
	/* A task that may not leave its CPU now runs there. Tasks allowed on fewer CPUs (one,
	 * or part of their home domain) are queued in their home domain like the others: put
	 * on a CPU's local queue instead, they keep that CPU from ever consuming its domain's
	 * queue, and a task there that only that CPU may run waits until the watchdog ejects
	 * the scheduler (a task allowed on CPUs 1-2, homed on CPUs 0-1, behind two tasks
	 * pinned to CPU 1). */
	if (scxk_migration_disabled(p)) {
		scxk_stat_inc(RUSTY_STAT_PINNED);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL_ON | scx_bpf_task_cpu(p), slice, enq_flags);
		keep_last_task(p, enq_flags, cpu_dom(scx_bpf_task_cpu(p)));
		return;
	}
	queue_task(p, tctx, slice, enq_flags);
	keep_last_task(p, enq_flags, tctx->dom);
}

void BPF_STRUCT_OPS(rusty_dispatch, s32 cpu, struct task_struct *prev)
{
	struct task_ctx *tctx;
	u64 now;

	/* On its way offline (7.x), a CPU would push away whatever it took: it takes nothing,
	 * and its domain's queue is served by others (dom_unserved). */
	if (scxk_dispatching_cpu_leaving(cpu)) {
		if (scx_bpf_create_dsq_usable())
			scxk_take_bound(cpu_dom(cpu), cpu);
		return;
	}
	if (scx_bpf_create_dsq_usable() && take_work(cpu))
		return;
	/* Nothing queued (where there are no queues of ours, the kernel has just found its
	 * global queue empty): the previous task goes on with a fresh slice. */
	if (!prev || !(prev->scx.flags & SCX_TASK_QUEUED))
		return;
	tctx = task_ctx_get(prev);
	if (tctx) {
		/* It keeps the CPU without passing through stopping and running, so what it ran
		 * is charged here. */
		now = bpf_ktime_get_ns();
		task_charge(prev, tctx, now);
		/* Nor through enqueue, where a balancer move is applied: a CPU-bound task alone
		 * on its CPU would never move. Its move is applied here, and when it leaves this
		 * CPU's domain the task gets no fresh slice: the kernel enqueues it
		 * (SCX_ENQ_LAST) and it is queued on its new home. */
		if (scx_bpf_kick_cpu_usable() && apply_lb_request(prev, tctx, now) && tctx->dom != cpu_dom(cpu))
			return;
	}
	scxk_set_slice(prev, current_slice_ns());
}

void BPF_STRUCT_OPS(rusty_runnable, struct task_struct *p, u64 enq_flags)
{
	struct task_ctx *tctx = task_ctx_get(p);

	if (tctx)
		task_runnable(tctx, bpf_ktime_get_ns());
}

void BPF_STRUCT_OPS(rusty_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct task_ctx *tctx = task_ctx_get(p);

	if (tctx)
		task_quiescent(tctx, bpf_ktime_get_ns());
}

/* The slice of a task of domain `dom` starting to run: short enough for the domain's queue to
 * go round within RUSTY_QUEUE_ROUND_MS (scxkit/slice.bpf.h). The tuner's slice is the
 * machine's: with 3,000 threads spinning in one domain while the other idled, it stayed at
 * 20 ms, a thread waited 37 s for a turn, and the kernel's watchdog ejected scx_rusty. */
static __always_inline u64 queue_round_slice_ns(u64 slice_ns, u32 dom)
{
	return scxk_round_slice_ns(slice_ns, scxk_nr_queued(dom), dom_nr_cpus[dom & (RUSTY_MAX_DOMS - 1)],
				   RUSTY_QUEUE_ROUND_MS * NSEC_PER_MSEC, RUSTY_MIN_SLICE_US * NSEC_PER_USEC);
}

void BPF_STRUCT_OPS(rusty_running, struct task_struct *p)
{
	u64 round_slice_ns;
	struct task_ctx *tctx = task_ctx_get(p);
	u64 *clock;

	if (!tctx)
		return;
	tctx->start_ns = bpf_ktime_get_ns();
	if (tctx->long_wait_pick) {
		/* Out of vruntime order (take_long_waiting): a short turn, and the domain's
		 * clock stays where it is. */
		tctx->long_wait_pick = 0;
		if (p->scx.slice > RUSTY_LONG_WAIT_SLICE_US * NSEC_PER_USEC)
			scxk_set_slice(p, RUSTY_LONG_WAIT_SLICE_US * NSEC_PER_USEC);
	} else if ((clock = dom_clock_get(tctx->dom)) && time_before(*clock, p->scx.dsq_vtime)) {
		*clock = p->scx.dsq_vtime;
	}
	round_slice_ns = queue_round_slice_ns(p->scx.slice, tctx->dom);
	if (round_slice_ns < p->scx.slice)
		scxk_set_slice(p, round_slice_ns);
	scxk_endless_slice_if_leaving(p);
	unserved_waker_stand_in();
}

void BPF_STRUCT_OPS(rusty_stopping, struct task_struct *p, bool runnable)
{
	struct task_ctx *tctx = task_ctx_get(p);

	if (tctx)
		task_charge(p, tctx, bpf_ktime_get_ns());
}

void BPF_STRUCT_OPS(rusty_set_weight, struct task_struct *p, u32 weight)
{
	struct task_ctx *tctx = task_ctx_get(p);

	if (tctx)
		task_set_weight(tctx, weight, bpf_ktime_get_ns());
}

void BPF_STRUCT_OPS(rusty_set_cpumask, struct task_struct *p, const struct cpumask *cpumask)
{
	struct task_ctx *tctx = task_ctx_get(p);

	/* The home is checked against the new mask at the next placement (refresh_home). */
	if (tctx)
		tctx->dom_mask = doms_allowed(cpumask);
}

void BPF_STRUCT_OPS(rusty_enable, struct task_struct *p)
{
	struct task_ctx *tctx = task_ctx_get(p);
	u64 *clock = tctx ? dom_clock_get(tctx->dom) : NULL;

	if (clock)
		scxk_set_dsq_vtime(p, *clock);
}

s32 BPF_STRUCT_OPS(rusty_init_task, struct task_struct *p, struct scx_init_task_args *args)
{
	struct task_ctx *tctx = bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	u64 now = bpf_ktime_get_ns();

	if (!tctx) {
		/* Out of memory: the task still runs, from the global queue, and the task dump
		 * reports it as left out. */
		scxk_stat_inc(RUSTY_STAT_NO_CTX);
		return 0;
	}
	*tctx = (struct task_ctx){};
	tctx->dom_mask = doms_allowed(p->cpus_ptr);
	tctx->dom = pick_home(tctx->dom_mask, scx_bpf_task_cpu(p));
	tctx->load_dom = RUSTY_NO_DOM;
	tctx->weight = p->scx.weight;
	scxk_ravg_start(&tctx->duty, now, load_half_life_ns, 0);
	return 0;
}

void BPF_STRUCT_OPS(rusty_exit_task, struct task_struct *p, struct scx_exit_task_args *args)
{
	struct task_ctx *tctx = task_ctx_get(p);
	s32 pid = p->pid;

	if (tctx) {
		load_detach(tctx, bpf_ktime_get_ns());
		tctx->exited = 1;
	}
	bpf_map_delete_elem(&lb_requests, &pid);
}

/* Whether `cpu` is in domain `dom`'s row of dom_cpus. The word's index is checked right
 * before the access: the verifier forgets the bound of a value kept across a loop. */
static __always_inline bool dom_has_cpu(u32 dom, u32 cpu)
{
	u32 word = dom * DOM_WORDS + cpu / 64;

	if (word >= RUSTY_MAX_DOMS * DOM_WORDS)
		return false;
	return (((const volatile u64 *)dom_cpus)[word] >> (cpu % 64)) & 1;
}

/* Fills a domain's BPF cpumask from its row of dom_cpus. */
static __always_inline s32 build_dom_mask(struct dom_mask_slot *slot, u32 dom)
{
	struct bpf_cpumask *mask = bpf_cpumask_create();
	u32 cpu;

	if (!mask)
		return -ENOMEM;
	bpf_for(cpu, 0, nr_cpus) {
		if (dom_has_cpu(dom, cpu))
			bpf_cpumask_set_cpu(cpu, mask);
	}
	mask = bpf_kptr_xchg(&slot->cpus, mask);
	if (mask)
		bpf_cpumask_release(mask);
	return 0;
}

/* The domains are those of the CPUs online at load, and they stay through hotplug events:
 * a task whose domain has no online CPU it may use gets a home elsewhere (refresh_home), what
 * waits in such a domain's queue is taken by other CPUs (take_work), and a CPU that no domain
 * holds serves domain 0. Once such a CPU has come online and the CPUs settled, userspace loads
 * the scheduler again for them (Hotplug::RebuildsForNewCpus). No exit for a restart here: the
 * kernel would then unload the scheduler inside the hotplug. */
void BPF_STRUCT_OPS(rusty_cpu_online, s32 cpu)
{
	scxk_record_online(cpu, true);
}

void BPF_STRUCT_OPS(rusty_cpu_offline, s32 cpu)
{
	scxk_record_online(cpu, false);
	if (scx_bpf_create_dsq_usable())
		scxk_rescue_from_offline(cpu_dom(cpu), cpu);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(rusty_init)
{
	u32 dom;
	s32 err;

	bpf_for(dom, 0, nr_doms) {
		/* Masked, not range-checked: see cpu_dom(). */
		u32 idx = dom & (RUSTY_MAX_DOMS - 1);
		struct dom_mask_slot *slot = bpf_map_lookup_elem(&dom_masks, &idx);

		if (!slot)
			return -ENOENT;
		err = build_dom_mask(slot, idx);
		if (err)
			return err;
	}
	if (!scx_bpf_create_dsq_usable())
		return 0;
	/* A loop of its own: the verifier forgets the bound of `dom` across the nested loop
	 * above. */
	bpf_for(dom, 0, nr_doms) {
		err = scx_bpf_create_dsq(dom, dom_nodes[dom & (RUSTY_MAX_DOMS - 1)]);
		if (err)
			return err;
	}
	return unserved_waker_start();
}

/* rusty's own state in the kernel's debug dump: each domain's queue, how long it has waited
 * for its own CPUs, its clock, and whether one of its CPUs is leaving; then the idle waker. */
void BPF_STRUCT_OPS(rusty_dump, struct scx_dump_ctx *dctx)
{
	u64 now = bpf_ktime_get_ns();
	u32 dom;

	bpf_for(dom, 0, nr_doms) {
		u64 *clock = dom_clock_get(dom);

		scxk_dump("rusty: domain %u (node %u): queued %d, waiting for %lld ms (-1: not), "
			  "clock %llu ms, losing a CPU %d\n",
			  dom, dom_nodes[dom & (RUSTY_MAX_DOMS - 1)], scxk_nr_queued(dom),
			  scxk_ms_since(*dom_waiting_since(dom), now),
			  clock ? *clock / NSEC_PER_MSEC : 0, dom_losing_cpu(dom));
	}
	SCXK_DUMP_WAKER("rusty", now);
}

/* The kernel's idle tracking serves the idle-CPU selection. A CPU's last task, let go by
 * dispatch for a move, passes through enqueue (SCX_OPS_ENQ_LAST); so does a task that may not
 * migrate at the moment (SCX_OPS_ENQ_MIGRATION_DISABLED: without it the kernel puts such a
 * task on its CPU itself, and the `pinned` path is never taken). */
SCXK_OPS(rusty, SCX_OPS_KEEP_BUILTIN_IDLE | SCX_OPS_ENQ_LAST | SCX_OPS_ENQ_MIGRATION_DISABLED,
	 select_cpu, enqueue, dispatch, runnable, quiescent, running, stopping, set_weight,
	 set_cpumask, enable, init_task, exit_task, cpu_online, cpu_offline, init, dump);
