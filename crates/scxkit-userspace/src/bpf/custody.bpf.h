/*
 * Custody: the tasks handed to userspace and not yet decided on. The kernel holds them in
 * no queue, so BPF remembers them (pid and hand-over number) in a FIFO for the fallback to
 * find them if the policy process goes silent. An entry is stale once its task was
 * dispatched, dequeued, enqueued again or has exited; stale entries are dropped as they
 * come out of the FIFO.
 *
 * A live entry taken out of the head to be put back at the tail must find its place again:
 * lost, its task would wait for a stopped policy until the watchdog ejects the scheduler.
 * So every entry holds one of USCHED_CUSTODY_MAX places (custody_places) from the moment
 * it is added until it is dropped or swept, including while it is out to be put back; a
 * hand-over that finds no place left is refused (counted), and BPF dispatches that task
 * itself. Putting back can still fail (see custody_recycle_head()): the task is then
 * dispatched by BPF, so entries are only recycled in ops.dispatch, where BPF may dispatch
 * any task it holds.
 *
 * A task leaves custody once: whoever dispatches it (a decision, the sweep, a failed put
 * back) first claims its hand-over, swapping custody_seq from that hand-over's number to 0.
 */
#ifndef __USCHED_CUSTODY_BPF_H
#define __USCHED_CUSTODY_BPF_H

/* On the host, tests/custody_host.rs includes this header after stubs of what it uses. */
#ifdef __bpf__
#include "state.bpf.h"
#endif

struct task_struct *bpf_task_from_pid(s32 pid) __ksym;
void bpf_task_release(struct task_struct *p) __ksym;

struct custody_entry {
	s32 pid;
	u32 pad;
	u64 seq;
};

struct {
	__uint(type, BPF_MAP_TYPE_QUEUE);
	__uint(max_entries, USCHED_CUSTODY_MAX);
	__type(value, struct custody_entry);
} custody SEC(".maps");

/* Places taken: entries in the FIFO, plus those out of it to be put back. */
u64 custody_places;
/* Places there are: the FIFO's size (fewer only for tests: SCXKIT_TEST_CUSTODY_PLACES). */
RODATA u64 custody_places_max = USCHED_CUSTODY_MAX;

/* Takes a place for a new entry; false when all are taken. */
static bool custody_take_place(void)
{
	if (__sync_fetch_and_add(&custody_places, 1) < custody_places_max)
		return true;
	__sync_fetch_and_sub(&custody_places, 1);
	return false;
}

static void custody_free_place(void)
{
	__sync_fetch_and_sub(&custody_places, 1);
}

/* The task of an entry, acquired, if it is still waiting for that hand-over's decision. */
static struct task_struct *custody_task(s32 pid, u64 seq)
{
	struct task_struct *p = bpf_task_from_pid(pid);
	struct task_ctx *tctx;

	if (!p)
		return NULL;
	tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	if (tctx && seq && tctx->custody_seq == seq)
		return p;
	bpf_task_release(p);
	return NULL;
}

/* Claims hand-over `seq` of the task whose context is `tctx`: true for one caller only, and
 * only while that hand-over is still waiting for a decision. */
static __always_inline bool custody_claim(struct task_ctx *tctx, u64 seq)
{
	return seq && __sync_val_compare_and_swap(&tctx->custody_seq, seq, 0) == seq;
}

/* The task of an entry, acquired and claimed (see custody_claim()), or NULL. */
static struct task_struct *custody_take(s32 pid, u64 seq)
{
	struct task_struct *p = bpf_task_from_pid(pid);
	struct task_ctx *tctx;

	if (!p)
		return NULL;
	tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
	if (tctx && custody_claim(tctx, seq))
		return p;
	bpf_task_release(p);
	return NULL;
}

/* Dispatches a claimed task for the fallback (ops.dispatch only), with a default slice. */
static void custody_dispatch(struct task_struct *p)
{
	scx_bpf_dsq_insert(p, fallback_dsq(p), fallback_slice_ns, 0);
	scxk_stat_inc(USCHED_STAT_FALLBACK);
}

/* What custody_recycle_head() did with the head entry. */
enum custody_head {
	CUSTODY_EMPTY,		/* there was none */
	CUSTODY_DROPPED,	/* stale, dropped */
	CUSTODY_REQUEUED,	/* live, back at the tail */
	CUSTODY_DISPATCHED,	/* live, could not be put back: dispatched (see below) */
};

/* Takes the head entry, drops it if stale and puts it back at the tail if live. Pop, then
 * look: a peek followed by a pop could take another CPU's entry in between. The entry's place
 * is kept, so the FIFO has room for it; but since 6.15 the map's lock is an rqspinlock, and
 * the push can still fail (-EBUSY: its holder stalled 250 ms, or a deadlock it detected).
 * The task is then dispatched here, counted, rather than left where the fallback would not
 * find it. ops.dispatch only. */
static enum custody_head custody_recycle_head(void)
{
	struct custody_entry e;
	struct task_struct *p;

	if (bpf_map_pop_elem(&custody, &e))
		return CUSTODY_EMPTY;
	p = custody_task(e.pid, e.seq);
	if (!p) {
		custody_free_place();
		return CUSTODY_DROPPED;
	}
	bpf_task_release(p);
	if (!bpf_map_push_elem(&custody, &e, 0))
		return CUSTODY_REQUEUED;
	custody_free_place();
	scxk_stat_inc(USCHED_STAT_CUSTODY_PUSH_FAILED);
	p = custody_take(e.pid, e.seq);
	if (p) {
		custody_dispatch(p);
		bpf_task_release(p);
	}
	return CUSTODY_DISPATCHED;
}

/* Whether a CPU is compacting now: one at a time, so that a crowded FIFO does not put every
 * CPU's ops.dispatch in line for the queue map's lock. */
static u64 custody_compacting;

/* Makes room, once the FIFO is three quarters full, by dropping stale entries from the head;
 * live ones go to the tail again. One CPU at a time, up to 64 entries and at most once round
 * the FIFO, stopping after 16 live entries in a row: a FIFO crowded with live entries (a
 * policy that holds many tasks) has nothing to drop, and rotating it only costs every
 * dispatch the map's lock. ops.dispatch only. */
static void custody_compact_if_crowded(void)
{
	enum custody_head head;
	u32 i, live = 0;

	if (custody_places < custody_places_max / 4 * 3 ||
	    !__sync_bool_compare_and_swap(&custody_compacting, 0, 1))
		return;
	bpf_for(i, 0, 64) {
		if (i >= custody_places)
			break;
		head = custody_recycle_head();
		if (head == CUSTODY_EMPTY || head == CUSTODY_DISPATCHED)
			break;
		if (head == CUSTODY_DROPPED)
			live = 0;
		else if (++live >= 16)
			break;
	}
	custody_compacting = 0;
}

/* Remembers a hand-over (hand-over `seq` of the task of `pid`, whose context is `tctx`);
 * false, counted, when the FIFO has no place left (the caller then dispatches the task
 * itself; ops.dispatch makes room). The task is marked as in custody before its entry goes
 * in: another CPU's trim may take the entry out at once, and would drop it as stale. */
static bool custody_add(struct task_ctx *tctx, s32 pid, u64 seq)
{
	struct custody_entry e = { .pid = pid, .seq = seq };

	if (!custody_take_place()) {
		scxk_stat_inc(USCHED_STAT_CUSTODY_FULL);
		return false;
	}
	tctx->custody_seq = seq;
	if (!bpf_map_push_elem(&custody, &e, 0))
		return true;
	tctx->custody_seq = 0;
	custody_free_place();
	scxk_stat_inc(USCHED_STAT_CUSTODY_PUSH_FAILED);
	return false;
}

/* Drops stale entries from the head, a few per call, so the FIFO does not fill up with them
 * in normal running; stops at the first live one, which goes to the tail again. */
static void custody_trim(void)
{
	u32 i;

	bpf_for(i, 0, 8) {
		if (custody_recycle_head() != CUSTODY_DROPPED)
			break;
	}
}

/* Fallback: queues up to one batch of the tasks userspace holds in the kernel's FIFO. */
static void custody_sweep(void)
{
	struct custody_entry e;
	struct task_struct *p;
	u32 i;

	bpf_for(i, 0, USCHED_DISPATCH_BATCH) {
		if (bpf_map_pop_elem(&custody, &e))
			break;
		custody_free_place();
		p = custody_take(e.pid, e.seq);
		if (!p)
			continue;
		custody_dispatch(p);
		bpf_task_release(p);
	}
}

/* Whether any entry, live or stale, is left. */
static bool custody_nonempty(void)
{
	struct custody_entry e;

	return !bpf_map_peek_elem(&custody, &e);
}

#endif /* __USCHED_CUSTODY_BPF_H */
