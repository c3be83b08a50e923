/*
 * A running average that decays exponentially with a given half-life, in integer fixed
 * point, computed the same way here (BPF C, and host C) and in crates/scxkit/src/ravg.rs:
 * the two must agree bit for bit (crates/scxkit/tests/ravg_matches_c.rs checks it).
 *
 * What it averages: a rate ("amount") that holds between updates: 1 while a task runs and
 * 0 while it does not gives its duty cycle; the sum of the weights of a domain's runnable
 * tasks gives the domain's load. The value read is that rate averaged over the past, the
 * past weighing half as much every half-life, in fixed point: SCXK_RAVG_ONE means an amount
 * of 1 all the time.
 *
 * Time is cut into periods of one half-life, aligned to multiples of it (period index =
 * time / half_life_ns). Within the current period, `cur` sums amount x ns; when a period
 * ends, it is folded into `val` (the average at the start of the period) by halving:
 * val' = (val + the period's average) / 2. A read in the middle of a period interpolates
 * between val and the fold to come, so the value is smooth across period boundaries.
 *
 * Periods skipped entirely at one amount are folded in closed form (k halvings towards
 * amount x ONE: one shift) rather than one by one: this code runs under bpf_spin_lock,
 * where loops and calls to other functions are not allowed.
 *
 * `cur` is divided by unit_ns = half_life_ns / 1024 rather than multiplied by ONE and
 * divided by the half-life: amount x ns stays below 2^64 for sums of weights up to ~1e5
 * over half-lives up to 10 s (1e5 x 1e10 = 1e15), and no 128-bit math is needed.
 * Callers keep half_life_ns within [SCXK_RAVG_HALF_LIFE_MIN_NS, SCXK_RAVG_HALF_LIFE_MAX_NS]
 * (so unit_ns >= 976) and the same for every call on a given average.
 *
 * Inside a BPF program (vmlinux.h included first) every function is __always_inline.
 */
#ifndef __SCXKIT_RAVG_H
#define __SCXKIT_RAVG_H

#include "types.h"

#ifndef __always_inline
#define __always_inline inline __attribute__((__always_inline__))
#endif

#ifdef __VMLINUX_H__
#define SCXK_RAVG_INLINE static __always_inline
#else
#define SCXK_RAVG_INLINE static inline
#endif

/* Fixed point: SCXK_RAVG_ONE means "amount 1, all the time". */
#define SCXK_RAVG_SHIFT 10
#define SCXK_RAVG_ONE (1ULL << SCXK_RAVG_SHIFT)

#define SCXK_RAVG_HALF_LIFE_MIN_NS 1000000ULL
#define SCXK_RAVG_HALF_LIFE_MAX_NS 10000000000ULL

struct scxk_ravg {
	u64 val;     /* the average at the start of the current period, x SCXK_RAVG_ONE */
	u64 cur;     /* sum of amount x ns within the current period */
	u64 period;  /* index of the current period: time / half_life_ns */
	u64 amount;  /* the current rate (1: busy, for a duty cycle; a sum of weights) */
	u64 last_ns; /* when cur was last brought up to date */
};

/* A fraction of a period: half_life_ns / SCXK_RAVG_ONE. */
SCXK_RAVG_INLINE u64 scxk_ravg_unit_ns(u64 half_life_ns)
{
	return half_life_ns >> SCXK_RAVG_SHIFT;
}

/* Starts an average at `now`, at rate `amount`, from a value of 0. */
SCXK_RAVG_INLINE void scxk_ravg_start(struct scxk_ravg *r, u64 now, u64 half_life_ns, u64 amount)
{
	r->val = 0;
	r->cur = 0;
	r->period = now / half_life_ns;
	r->amount = amount;
	r->last_ns = now;
}

/*
 * Brings the average up to `now` at the current amount: adds to cur, and folds the periods
 * that ended (the last one by its sum, the whole ones after it in closed form).
 */
SCXK_RAVG_INLINE void scxk_ravg_accumulate(struct scxk_ravg *r, u64 now, u64 half_life_ns)
{
	u64 unit_ns = scxk_ravg_unit_ns(half_life_ns);
	u64 p_now, boundary, skipped, full;

	if (now <= r->last_ns)
		return;
	p_now = now / half_life_ns;
	if (p_now <= r->period) {
		/* p_now < period cannot happen with monotonic time: counted as the same period. */
		if (p_now == r->period)
			r->cur += r->amount * (now - r->last_ns);
		r->last_ns = now;
		return;
	}

	boundary = (r->period + 1) * half_life_ns;
	if (r->last_ns < boundary)
		r->cur += r->amount * (boundary - r->last_ns);
	/* One period folded: the halving is the half-life. */
	r->val = (r->val + r->cur / unit_ns) / 2;

	/* Whole periods in between, at the same amount: each halves the distance to full. */
	skipped = p_now - r->period - 1;
	full = r->amount * SCXK_RAVG_ONE;
	if (skipped >= 64)
		r->val = full;
	else if (skipped > 0)
		r->val = r->val >= full ? full + ((r->val - full) >> skipped)
					: full - ((full - r->val) >> skipped);

	r->period = p_now;
	r->cur = r->amount * (now - p_now * half_life_ns);
	r->last_ns = now;
}

/* Accounts the time up to `now` at the old amount, then switches to `amount`. */
SCXK_RAVG_INLINE void scxk_ravg_update(struct scxk_ravg *r, u64 now, u64 half_life_ns, u64 amount)
{
	scxk_ravg_accumulate(r, now, half_life_ns);
	r->amount = amount;
}

/*
 * The average as of `now`, x SCXK_RAVG_ONE, without changing it: val decayed by the part of
 * the period gone, plus the period's sum so far, halved as its fold will. A `now` before the
 * last update reads the value as of that update.
 */
SCXK_RAVG_INLINE u64 scxk_ravg_read(const struct scxk_ravg *r, u64 now, u64 half_life_ns)
{
	u64 unit_ns = scxk_ravg_unit_ns(half_life_ns);
	struct scxk_ravg copy = *r;
	u64 elapsed_units;

	if (now < copy.last_ns)
		now = copy.last_ns;
	scxk_ravg_accumulate(&copy, now, half_life_ns);
	elapsed_units = (now - copy.period * half_life_ns) / unit_ns;
	if (elapsed_units > SCXK_RAVG_ONE)
		elapsed_units = SCXK_RAVG_ONE;
	return copy.val - copy.val * elapsed_units / (2 * SCXK_RAVG_ONE) + copy.cur / (2 * unit_ns);
}

#endif /* __SCXKIT_RAVG_H */
