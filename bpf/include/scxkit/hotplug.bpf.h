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
 *   to the CPU's own local queue, which a dying CPU still serves.
 * - A CPU on its way offline that still dispatches (7.x, see scxk_dispatching_cpu_leaving),
 *   or that no longer does, before ops.cpu_offline says so (6.19, see scxk_rescue_stranded).
 * - A dying CPU idling while its hotplug thread waits for its runqueue to empty
 *   (scxk_wake_dying_cpus).
 * - Idle CPUs, which look for work only when woken (scxk_kick_idle_cpus), by a timer and,
 *   when it is late around a hotplug, by the CPUs that run tasks (scxk_waker_stand_in_due).
 * - Irq_work left on a dying CPU: a kick or a ring buffer's wakeup (scxk_this_cpu_leaving).
 * - A slice running out on a CPU told offline (scxk_endless_slice_if_leaving).
 */
#ifndef __SCXKIT_HOTPLUG_BPF_H
#define __SCXKIT_HOTPLUG_BPF_H

#include "common.bpf.h"
#include "cpumask.bpf.h"

SCXK_KFUNC(int, bpf_iter_scx_dsq_new, (struct bpf_iter_scx_dsq *it, u64 dsq_id, u64 flags))
SCXK_KFUNC(struct task_struct *, bpf_iter_scx_dsq_next, (struct bpf_iter_scx_dsq *it))
SCXK_KFUNC(void, bpf_iter_scx_dsq_destroy, (struct bpf_iter_scx_dsq *it))
SCXK_KFUNC(bool, scx_bpf_dsq_move, (struct bpf_iter_scx_dsq *it__iter, struct task_struct *p,
				    u64 dsq_id, u64 enq_flags))

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

/* How long, in jiffies (10 to 100 ms), a task that can run on one CPU only may wait in a
 * shared queue before scxk_rescue_stranded moves it to that CPU's local queue. */
#define SCXK_STRANDED_JIFFIES 10

/* The most tasks one walk of a queue for scxk_rescue_stranded looks at: the timer that walks
 * runs in a softirq, inside an RCU read section, and a hotplug under load may find tens of
 * thousands of tasks queued (each walk went over the whole queue). A stranded task in the
 * middle of a longer queue is found once the tasks ahead of it or behind it have left. */
#define SCXK_STRANDED_MAX_WALK 1024

/* The next scan for scxk_rescue_stranded comes no sooner than this many times its walks' time
 * after they end, and at most SCXK_STRANDED_MAX_DELAY_NS later than its interval for each
 * queue walked (the cap is per walk). */
#define SCXK_STRANDED_WALK_COST_FACTOR 15
#define SCXK_STRANDED_MAX_DELAY_NS (500 * NSEC_PER_MSEC)

/* When a CPU last walked the queues for scxk_rescue_stranded, ns (ahead of now once paced). */
u64 scxk_stranded_scan_ns SCXK_SHARED;

/* Each CPU's count of the tasks its current walk for scxk_rescue_stranded has looked at (see
 * scxk_walk_count). Apart from the long-wait taker's: this one walks from a timer. */
static u32 scxk_stranded_seen[SCXK_MAX_CPUS];

/* Whether the queues are due for scxk_rescue_stranded: one CPU looks at most once every
 * `interval_ns` (the time first: the look at every CPU's runqueue costs more), and some
 * CPU may be inactive. */
static __always_inline bool scxk_stranded_scan_due(u64 interval_ns)
{
	return scxk_walk_due(&scxk_stranded_scan_ns, bpf_ktime_get_ns(), interval_ns) &&
	       scxk_any_cpu_maybe_inactive();
}

/* Puts the next scan for scxk_rescue_stranded later by SCXK_STRANDED_WALK_COST_FACTOR times a
 * walk that started at start_ns: the walks of one scan add up. */
static __always_inline void scxk_stranded_scan_pace(u64 start_ns)
{
	u64 delay_ns = SCXK_STRANDED_WALK_COST_FACTOR * (bpf_ktime_get_ns() - start_ns);

	if (delay_ns > SCXK_STRANDED_MAX_DELAY_NS)
		delay_ns = SCXK_STRANDED_MAX_DELAY_NS;
	__sync_fetch_and_add(&scxk_stranded_scan_ns, delay_ns);
}

/* Moves to their CPU's local queue the tasks of queue `dsq_id` that can run on that CPU
 * alone (scxk_only_cpu_left), have waited SCXK_STRANDED_JIFFIES or more, and whose CPU may be
 * inactive (scxk_cpu_maybe_inactive), among SCXK_STRANDED_MAX_WALK tasks from either end;
 * returns how many tasks it looked at. A CPU going offline stops calling ops.dispatch as soon
 * as it is no longer active, before ops.cpu_offline says so (6.19: after an RCU grace period).
 * A task bound to it and queued just before waited for good; one inside an RCU read section
 * held up that grace period, and the hotplug with it, until an RCU stall ejected the scheduler
 * (scx_simple, 6.19, a hotplug storm under load: once in about 13 rounds of 40 events, and in
 * CI). A CPU serves its local queue whatever its state. Call from a timer, when
 * scxk_stranded_scan_due: each walk paces the next scan (scxk_stranded_scan_pace). */
static __always_inline u32 scxk_rescue_stranded(u64 dsq_id)
{
	u32 *seen = &scxk_stranded_seen[bpf_get_smp_processor_id() & (SCXK_MAX_CPUS - 1)];
	u64 now_jiffies = bpf_jiffies64(), start_ns = bpf_ktime_get_ns();
	volatile u32 *nr_seen = seen;
	struct task_struct *p;
	s32 cpu;

	if (!scxk_dsq_walk_usable())
		return 0;
	*seen = 0;
	bpf_for_each(scx_dsq, p, dsq_id, scxk_walk_from_either_end()) {
		if (!scxk_walk_count(seen, SCXK_STRANDED_MAX_WALK))
			break;
		cpu = scx_bpf_task_cpu(p);
		if (now_jiffies - p->scx.runnable_at < SCXK_STRANDED_JIFFIES ||
		    !scxk_cpu_maybe_inactive(cpu) || !scxk_only_cpu_left(p, cpu))
			continue;
		scx_bpf_dsq_move(SCXK_FOR_EACH_ITER, p, SCX_DSQ_LOCAL_ON | cpu, 0);
	}
	scxk_stranded_scan_pace(start_ns);
	return *nr_seen;
}

/* SCXK_STRANDED_SCANNER(NAME, ON_SCANNED) defines
 *
 *     static __always_inline void NAME(u32 nr_dsqs, u64 interval_ns)
 *
 * which, when scxk_stranded_scan_due(interval_ns), walks queues 0 to nr_dsqs - 1 with
 * scxk_rescue_stranded and calls ON_SCANNED(nr_tasks, scan_ns) with the tasks it looked at
 * and its time (SCXK_WALK_COUNTER, stats.bpf.h, or scxk_scanned_uncounted). Call it from a
 * timer. */
#define SCXK_STRANDED_SCANNER(NAME, ON_SCANNED)                                              \
	static __always_inline void NAME(u32 nr_dsqs, u64 interval_ns)                       \
	{                                                                                    \
		u64 start_ns = bpf_ktime_get_ns();                                           \
		u32 dsq, nr_tasks = 0;                                                       \
                                                                                             \
		if (!scxk_stranded_scan_due(interval_ns))                                    \
			return;                                                              \
		bpf_for(dsq, 0, nr_dsqs)                                                     \
			nr_tasks += scxk_rescue_stranded(dsq);                               \
		ON_SCANNED(nr_tasks, bpf_ktime_get_ns() - start_ns);                         \
	}

/* For SCXK_STRANDED_SCANNER: a scheduler without statistics. */
static __always_inline void scxk_scanned_uncounted(u32 nr_tasks, u64 scan_ns)
{
}

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

/* How many times a walk for an overdue task woke a CPU that task may run on, the walking CPU
 * being one it may not (scxk_long_wait_wake_for, scxkit/long_wait.bpf.h). */
u64 scxk_long_wait_wakes SCXK_SHARED;

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

#endif /* __SCXKIT_HOTPLUG_BPF_H */
