/*
 * scx_simple: the smallest useful sched_ext scheduler, and the first file to read.
 *
 * Policy: a task waking up when an idle CPU is available runs there at once (the kernel's
 * default idle-CPU selection finds it). Every other task waits in one shared queue ordered
 * by weighted virtual time: a task's vtime grows by the time it ran, divided by its weight,
 * so heavier (lower nice) tasks advance more slowly and run more. A task that slept long
 * may bank at most one slice of credit, so it cannot starve the others when it wakes.
 *
 * The time a task ran is measured from timestamps, not from the slice it has left: the
 * kernel refills a slice with its own default behind our back (a task kept running when
 * nothing else wants the CPU, tasks already running when the scheduler attaches), so
 * "slice given minus slice left" can go negative, wrap around, and throw a task's vtime
 * so far ahead that it never runs again.
 *
 * An idle CPU does not look at the shared queue by itself: a timer wakes the idle CPUs every
 * few milliseconds while tasks wait there.
 *
 * A CPU going on or offline needs little of this policy, but it must say so: a scheduler
 * without ops.cpu_online and ops.cpu_offline is ejected by the kernel on every hotplug event
 * and has to be loaded again, with the default scheduler in charge in between. A CPU on its
 * way offline takes nothing from the shared queue: the tasks that only it may run are handed
 * to it, and the timer wakes it until it is gone (see scxkit/hotplug.bpf.h, idle_waker.bpf.h).
 *
 * On kernel builds where scx_bpf_create_dsq() cannot be called (see kfuncs.bpf.h) there is
 * no queue to order by vtime: tasks then wait in the kernel's built-in global FIFO.
 */
#include <scxkit/common.bpf.h>
#include <scxkit/hotplug.bpf.h>
#include <scxkit/idle_waker.bpf.h>
#include <scxkit/stranded.bpf.h>
#include <scxkit/ops.bpf.h>
#include <scxkit/slice.bpf.h>
#include <scxkit/stats.bpf.h>
#include <scxkit/task_storage.bpf.h>
#include <scxkit/vtime.bpf.h>
#include "intf.h"

/* Set by userspace before load. */
RODATA u64 slice_ns = SIMPLE_SLICE_DEFAULT_US * 1000ULL;

/* The largest vtime of a task that started running: the queue's "now". Userspace reports
 * it: it grows by at most the CPUs' time together (times 100 / weight for niced tasks). */
u64 vtime_now;

/* When each task last started running, ns. */
SCXK_TASK_STORAGE(started_ns, u64);

SCXK_STATS(SIMPLE_NR_STATS)

s32 BPF_STRUCT_OPS(simple_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	bool is_idle = false;
	s32 cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &is_idle);

	/* An idle CPU was found and claimed: skip the shared queue. */
	if (is_idle) {
		scxk_stat_inc(SIMPLE_STAT_LOCAL);
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, slice_ns, 0);
	}
	return cpu;
}

/* The slice of a task joining the shared queue: short enough for the queue to go round
 * within SIMPLE_QUEUE_ROUND_MS (scxkit/slice.bpf.h). With 3,000 threads spinning on two CPUs
 * at 20 ms each, one waited 30 s, and the kernel's watchdog ejected scx_simple. */
static __always_inline u64 queue_slice_ns(void)
{
	return scxk_round_slice_ns(slice_ns, scxk_nr_queued(SIMPLE_SHARED_DSQ), scx_bpf_nr_cpu_ids(),
				   SIMPLE_QUEUE_ROUND_MS * NSEC_PER_MSEC, SIMPLE_MIN_SLICE_US * NSEC_PER_USEC);
}

void BPF_STRUCT_OPS(simple_enqueue, struct task_struct *p, u64 enq_flags)
{
	u64 vtime = p->scx.dsq_vtime;

	/* Limit the credit a long sleeper brings back to one slice; a kernel thread holding up
	 * RCU gets all of it (see scxk_holds_up_rcu), and loses what it owed: user tasks keep
	 * their exact share. */
	if (time_before(vtime, vtime_now - slice_ns) ||
	    scxk_kthread_holds_up_rcu(p))
		vtime = vtime_now - slice_ns;

	scxk_stat_inc(SIMPLE_STAT_GLOBAL);
	if (scx_bpf_create_dsq_usable())
		scx_bpf_dsq_insert_vtime(p, SIMPLE_SHARED_DSQ, queue_slice_ns(), vtime, enq_flags);
	else
		scx_bpf_dsq_insert(p, SCX_DSQ_GLOBAL, slice_ns, enq_flags);
}

/* Whether tasks wait in the shared queue. A task queued without a wakeup (preempted, say)
 * wakes no CPU, and an idle CPU does not come to look by itself. */
static bool shared_queue_waits(void)
{
	u64 dsq_id = scx_bpf_create_dsq_usable() ? SIMPLE_SHARED_DSQ : SCX_DSQ_GLOBAL;

	return scxk_nr_queued(dsq_id) > 0;
}

SCXK_STRANDED_SCANNER(scan_for_stranded, scxk_scanned_uncounted)

/* Hands the tasks that only a CPU going offline may run to that CPU (see
 * scxk_rescue_stranded). The scanner walks queues 0 to n - 1: here the one queue,
 * SIMPLE_SHARED_DSQ (0). */
_Static_assert(SIMPLE_SHARED_DSQ == 0, "the stranded scan walks queue 0 only");
static void rescue_stranded(void)
{
	if (scx_bpf_create_dsq_usable())
		scan_for_stranded(1, SIMPLE_STRANDED_SCAN_MS * NSEC_PER_MSEC);
}

/* Wakes the idle CPUs every few milliseconds while tasks wait (see scxkit/idle_waker.bpf.h). */
SCXK_IDLE_WAKER(idle_waker, SIMPLE_IDLE_WAKE_MS * NSEC_PER_MSEC, shared_queue_waits,
		rescue_stranded)

void BPF_STRUCT_OPS(simple_dispatch, s32 cpu, struct task_struct *prev)
{
	/* The built-in global queue of the fallback is consumed by the kernel itself. */
	if (scx_bpf_create_dsq_usable())
		scx_bpf_dsq_move_to_local(SIMPLE_SHARED_DSQ);
}

void BPF_STRUCT_OPS(simple_running, struct task_struct *p)
{
	u64 *start = bpf_task_storage_get(&started_ns, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);

	if (start)
		*start = bpf_ktime_get_ns();
	if (time_before(vtime_now, p->scx.dsq_vtime))
		vtime_now = p->scx.dsq_vtime;
	idle_waker_stand_in();
}

void BPF_STRUCT_OPS(simple_stopping, struct task_struct *p, bool runnable)
{
	u64 *start = bpf_task_storage_get(&started_ns, p, 0, 0);
	u64 used_ns;

	/* A task that was running when we attached has no start time: charge nothing. */
	if (!start || !*start)
		return;
	/* Charge the time it ran, scaled by the inverse of its weight. */
	used_ns = bpf_ktime_get_ns() - *start;
	scxk_charge_vtime(p, used_ns);
}

void BPF_STRUCT_OPS(simple_enable, struct task_struct *p)
{
	scxk_set_dsq_vtime(p, vtime_now);
}

void BPF_STRUCT_OPS(simple_cpu_online, s32 cpu)
{
	scxk_record_online(cpu, true);
}

void BPF_STRUCT_OPS(simple_cpu_offline, s32 cpu)
{
	scxk_record_online(cpu, false);
	if (scx_bpf_create_dsq_usable())
		scxk_rescue_from_offline(SIMPLE_SHARED_DSQ, cpu);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(simple_init)
{
	s32 err;

	if (!scx_bpf_create_dsq_usable())
		return idle_waker_start();
	err = scx_bpf_create_dsq(SIMPLE_SHARED_DSQ, -1);
	return err ? err : idle_waker_start();
}

SCXK_OPS(simple, 0, select_cpu, enqueue, dispatch, running, stopping, enable, cpu_online,
	 cpu_offline, init);
