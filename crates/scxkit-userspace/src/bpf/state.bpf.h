/*
 * The framework's shared state: per-task context, counters, the policy process's heartbeat
 * and the fallback that takes over when that heartbeat stops.
 */
#ifndef __USCHED_STATE_BPF_H
#define __USCHED_STATE_BPF_H

#include <scxkit/common.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include <scxkit/stats.bpf.h>
#include <scxkit/task_storage.bpf.h>
#include <scxkit/weight.h>
#include "intf.h"

/* Set by userspace before load. */
RODATA s32 policy_tid;			/* the thread that runs the policy's loop */
RODATA s32 policy_tgid;			/* its process: stats and exporter threads too */
RODATA u64 fallback_after_ns = USCHED_FALLBACK_AFTER_MS_DEFAULT * NSEC_PER_MSEC;
RODATA u64 fallback_slice_ns = USCHED_FALLBACK_SLICE_US * 1000ULL;
RODATA bool idle_bypass = true;		/* wakeups on an idle CPU skip userspace when it holds nothing */
RODATA bool grants_allowed = true;	/* BPF queues the wakeups a decision granted */
RODATA u64 bypass_slice_ns = USCHED_SELF_SLICE_US * 1000ULL;	/* the policy's own slice for them */
/* Non-zero where the policy's vtimes are run time weighted by nice: the queue's clock then
 * also advances as tasks run, at a fair share's rate divided by this (clock.bpf.h). */
RODATA u32 clock_runtime_divisor;

/* Written by the policy process through the mmap'ed .bss; plain loads and stores. */
volatile u64 user_heartbeat;	/* +1 on every turn of its loop (at least every 100 ms) */
volatile u64 user_received;	/* messages it has taken from the ring buffer */
volatile u64 user_held;		/* tasks it holds, not yet dispatched */
volatile u64 nudge_pending;	/* set here when a nudge is sent, cleared by userspace */
/* The most a waker keeps of its slice when its wakeup waits (wakeup_may_wait), ns; 0:
 * USCHED_DEFER_MAX_US. Written after every turn (Policy::deferred_waker_slice_ns, at most
 * USCHED_DEFER_CEILING_MS; BPF takes anything above as 0). */
volatile u64 defer_slice_max_ns;

/* Online CPUs: userspace sets it before load from the topology it read (an attach after a
 * hotplug event since is refused), ops.cpu_online and ops.cpu_offline keep it. */
u64 nr_cpus_online;

/* BPF's own. */
u64 nr_sent;			/* messages sent (tasks handed over) */
u64 heartbeat_seen;		/* the last heartbeat value seen, and when it changed */
u64 heartbeat_seen_ns;
u64 fallback_since_ns;		/* non-zero while BPF schedules on its own */
u64 fallback_total_ns;		/* time spent in fallback, ended periods */
u64 fallback_entries;
/* The policy's "now": the largest vtime the policy gave a task that then started running,
 * or later (clock.bpf.h). */
u64 vtime_now;
/* The sum of the weights of this scheduler's runnable tasks (running or waiting). */
u64 runnable_weight_sum;
/* Tasks waiting in the shared queue for any CPU, as last seen by ops.dispatch. */
u64 nr_shared_queued;

struct task_ctx {
	/* Bumped by every ops.enqueue: a decision quoting an older value is stale. */
	u64 enq_seq;
	/* The enq_seq of the hand-over userspace has yet to decide on, or 0. */
	u64 custody_seq;
	u64 started_ns;
	u64 run_ns;
	u64 since_sleep_ns;
	u64 nvcsw;
	/* The vtime of the decision it was dispatched with, or 0. */
	u64 vtime;
	/* The grant of its last decision (usched_decision), that decision's slice, and when
	 * the grant lapses (USCHED_GRANT_MAX_AGE_MS after the decision). */
	u64 grant_budget_ns;
	u64 grant_credit_ns;
	u64 grant_slice_ns;
	u64 grant_expires_ns;
	/* Its weight as counted in runnable_weight_sum while it is runnable, else 0. */
	u64 runnable_weight;
	/* When it last became runnable or was preempted, ns (long_wait.bpf.h). */
	u64 waiting_since_ns;
};

SCXK_TASK_STORAGE(task_ctxs, struct task_ctx);

/* The vtime of the decision (or grant) each CPU's running task was queued with; 0 for one
 * BPF dispatched itself, or none. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SCXK_MAX_CPUS);
	__type(key, u32);
	__type(value, u64);
} running_vtimes SEC(".maps");

static __always_inline u64 *running_vtime_of(s32 cpu)
{
	u32 key = cpu;

	return bpf_map_lookup_elem(&running_vtimes, &key);
}

/* Whether each CPU's last task from the two queues came from BPF's own. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, bool);
} bpf_queue_served_last SEC(".maps");

SCXK_STATS(USCHED_NR_STATS)

static __always_inline struct task_ctx *task_ctx(struct task_struct *p)
{
	return bpf_task_storage_get(&task_ctxs, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
}

/* On builds without user queues (see kfuncs.bpf.h) both queues are the built-in global one. */
static __always_inline u64 shared_dsq(void)
{
	return scx_bpf_create_dsq_usable() ? USCHED_SHARED_DSQ : SCX_DSQ_GLOBAL;
}

static __always_inline u64 kernel_dsq(void)
{
	return scx_bpf_create_dsq_usable() ? USCHED_KERNEL_DSQ : SCX_DSQ_GLOBAL;
}

/* Where BPF queues a held task it schedules itself: the kernel's queue, or for a task bound
 * to a CPU that went offline meanwhile, that CPU's own queue (an offline CPU serves no other,
 * see scxkit/hotplug.bpf.h). */
static __always_inline u64 fallback_dsq(const struct task_struct *p)
{
	s32 cpu = scx_bpf_task_cpu(p);

	if (p->nr_cpus_allowed == 1 && scxk_cpu_offline(cpu))
		return SCX_DSQ_LOCAL_ON | cpu;
	return kernel_dsq();
}

/* The bypass slice for p: as the policy's for nice 0, shorter in proportion to a lighter weight. */
static __always_inline u64 bypass_slice(const struct task_struct *p)
{
	u64 weight = p->scx.weight < SCXK_NICE0_WEIGHT ? p->scx.weight : SCXK_NICE0_WEIGHT;
	u64 slice = bypass_slice_ns * weight / SCXK_NICE0_WEIGHT;

	return slice > USCHED_MIN_SLICE_US * 1000ULL ? slice : USCHED_MIN_SLICE_US * 1000ULL;
}

/* Tasks sent and not yet taken, plus those the policy holds (0, not a wrapped count, when a
 * newer count of taken messages is read than of sent ones). */
static __always_inline u64 user_backlog(void)
{
	u64 handed = nr_sent + user_held, received = user_received;

	return handed > received ? handed - received : 0;
}

/*
 * Whether BPF schedules on its own now: the policy's heartbeat has not moved for
 * fallback_after_ns (stopped, traced, stalled). It ends at the first heartbeat that moves;
 * the time in between is added to fallback_total_ns.
 */
static bool fallback_active(u64 now)
{
	u64 beat = user_heartbeat, since, seen_ns;

	if (beat != heartbeat_seen) {
		heartbeat_seen = beat;
		heartbeat_seen_ns = now;
		since = fallback_since_ns;
		/* Signed comparisons: another CPU may have stored a later time than our now. */
		if (since && __sync_bool_compare_and_swap(&fallback_since_ns, since, 0) &&
		    time_before(since, now))
			__sync_fetch_and_add(&fallback_total_ns, now - since);
		return false;
	}
	if (fallback_since_ns)
		return true;
	seen_ns = heartbeat_seen_ns;
	if (seen_ns && time_before(seen_ns + fallback_after_ns, now)) {
		if (__sync_bool_compare_and_swap(&fallback_since_ns, 0, now))
			__sync_fetch_and_add(&fallback_entries, 1);
		return true;
	}
	return false;
}

#endif /* __USCHED_STATE_BPF_H */
