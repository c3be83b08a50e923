/*
 * Custody: the tasks handed to userspace and not yet decided on. The kernel holds them in
 * no queue, so BPF remembers them (pid and hand-over number) in a FIFO for the fallback to
 * find them if the policy process goes silent. An entry is stale once its task was
 * dispatched, dequeued, enqueued again or has exited; stale entries are dropped as they
 * come out of the FIFO.
 */
#ifndef __USCHED_CUSTODY_BPF_H
#define __USCHED_CUSTODY_BPF_H

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

/* What custody_recycle_head() did with the head entry. */
enum custody_head {
	CUSTODY_EMPTY,		/* there was none */
	CUSTODY_DROPPED,	/* stale, dropped */
	CUSTODY_REQUEUED,	/* live, back at the tail */
	CUSTODY_LOST,		/* live, but the FIFO filled up in between */
};

/* Takes the head entry, drops it if stale and puts it back at the tail if live. Pop, then
 * look: a peek followed by a pop could take another CPU's entry in between. */
static enum custody_head custody_recycle_head(void)
{
	struct custody_entry e;
	struct task_struct *p;

	if (bpf_map_pop_elem(&custody, &e))
		return CUSTODY_EMPTY;
	p = custody_task(e.pid, e.seq);
	if (!p)
		return CUSTODY_DROPPED;
	bpf_task_release(p);
	return bpf_map_push_elem(&custody, &e, 0) ? CUSTODY_LOST : CUSTODY_REQUEUED;
}

/* Makes room by dropping stale entries from the head; live ones go to the tail again. */
static void custody_compact(void)
{
	enum custody_head head;
	u32 i;

	bpf_for(i, 0, 64) {
		head = custody_recycle_head();
		if (head == CUSTODY_EMPTY || head == CUSTODY_LOST)
			break;
	}
}

static bool custody_add(s32 pid, u64 seq)
{
	struct custody_entry e = { .pid = pid, .seq = seq };

	if (!bpf_map_push_elem(&custody, &e, 0))
		return true;
	custody_compact();
	return !bpf_map_push_elem(&custody, &e, 0);
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
	struct task_ctx *tctx;
	u32 i;

	bpf_for(i, 0, USCHED_DISPATCH_BATCH) {
		if (bpf_map_pop_elem(&custody, &e))
			break;
		p = custody_task(e.pid, e.seq);
		if (!p)
			continue;
		tctx = bpf_task_storage_get(&task_ctxs, p, 0, 0);
		if (tctx)
			tctx->custody_seq = 0;
		scx_bpf_dsq_insert(p, kernel_dsq(), fallback_slice_ns, 0);
		scxk_count(&stats, USCHED_STAT_FALLBACK);
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
