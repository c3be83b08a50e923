//! A running average that decays exponentially with a given half-life: the Rust twin of
//! `bpf/include/scxkit/ravg.h`. BPF keeps the averages (a task's duty cycle, a domain's
//! load) and userspace reads or replays them, so both sides must compute the very same
//! integers: every operation here is the header's, in the same order, with the same
//! truncations, in plain `u64` (no wrapping or saturating arithmetic; values that would
//! overflow in C are out of the supported range and panic here in debug builds).
//! `tests/ravg_matches_c.rs` compiles the header and checks that they agree bit for bit.
//!
//! Time is cut into periods of one half-life, aligned to multiples of it. Within the current
//! period `cur` sums amount x ns; when the period ends it is folded into `val` by halving.
//! Whole periods skipped at one amount are folded in closed form, as the BPF side cannot
//! loop under a spin lock. `cur` is divided by `unit_ns = half_life_ns >> RAVG_SHIFT` so
//! that products stay within 64 bits for sums of weights up to ~1e5 and half-lives up to
//! 10 s. The half-life must lie within [`RAVG_HALF_LIFE_MIN_NS`], [`RAVG_HALF_LIFE_MAX_NS`]
//! and be the same for every call on a given average.

/// Fixed-point shift of the averages.
pub const RAVG_SHIFT: u32 = 10;
/// An amount of 1 all the time, in fixed point.
pub const RAVG_ONE: u64 = 1 << RAVG_SHIFT;
pub const RAVG_HALF_LIFE_MIN_NS: u64 = 1_000_000;
pub const RAVG_HALF_LIFE_MAX_NS: u64 = 10_000_000_000;

/// `struct scxk_ravg`, field for field.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Ravg {
    /// The average at the start of the current period, x [`RAVG_ONE`].
    pub val: u64,
    /// Sum of amount x ns within the current period.
    pub cur: u64,
    /// Index of the current period: time / half_life_ns.
    pub period: u64,
    /// The current rate (1: busy, for a duty cycle; a sum of weights for a domain).
    pub amount: u64,
    /// When `cur` was last brought up to date.
    pub last_ns: u64,
}

/// A fraction of a period: half_life_ns / RAVG_ONE.
fn unit_ns(half_life_ns: u64) -> u64 {
    half_life_ns >> RAVG_SHIFT
}

impl Ravg {
    /// An average started at `now_ns`, at rate `amount`, from a value of 0.
    pub fn start(now_ns: u64, half_life_ns: u64, amount: u64) -> Ravg {
        Ravg { val: 0, cur: 0, period: now_ns / half_life_ns, amount, last_ns: now_ns }
    }

    /// Brings the average up to `now_ns` at the current amount (`scxk_ravg_accumulate`).
    pub fn accumulate(&mut self, now_ns: u64, half_life_ns: u64) {
        if now_ns <= self.last_ns {
            return;
        }
        let period_now = now_ns / half_life_ns;
        if period_now <= self.period {
            // An earlier period cannot happen with monotonic time: counted as the same one.
            if period_now == self.period {
                self.cur += self.amount * (now_ns - self.last_ns);
            }
            self.last_ns = now_ns;
            return;
        }
        self.fold_current(half_life_ns);
        self.fold_skipped(period_now - self.period - 1);
        self.period = period_now;
        self.cur = self.amount * (now_ns - period_now * half_life_ns);
        self.last_ns = now_ns;
    }

    /// Completes the current period at the current amount and folds it into `val`: the
    /// halving is the half-life.
    fn fold_current(&mut self, half_life_ns: u64) {
        let boundary_ns = (self.period + 1) * half_life_ns;
        if self.last_ns < boundary_ns {
            self.cur += self.amount * (boundary_ns - self.last_ns);
        }
        self.val = (self.val + self.cur / unit_ns(half_life_ns)) / 2;
    }

    /// Folds `skipped` whole periods at the current amount in closed form: each halves the
    /// distance between `val` and the full amount.
    fn fold_skipped(&mut self, skipped: u64) {
        let full = self.amount * RAVG_ONE;
        if skipped >= 64 {
            self.val = full;
        } else if skipped > 0 {
            self.val = if self.val >= full {
                full + ((self.val - full) >> skipped)
            } else {
                full - ((full - self.val) >> skipped)
            };
        }
    }

    /// Accounts the time up to `now_ns` at the old amount, then switches to `amount`.
    pub fn update(&mut self, now_ns: u64, half_life_ns: u64, amount: u64) {
        self.accumulate(now_ns, half_life_ns);
        self.amount = amount;
    }

    /// The average as of `now_ns`, x [`RAVG_ONE`], smooth across period boundaries. A time
    /// before the last update reads the value as of that update.
    pub fn read(&self, now_ns: u64, half_life_ns: u64) -> u64 {
        let unit = unit_ns(half_life_ns);
        let now_ns = now_ns.max(self.last_ns);
        let mut copy = *self;
        copy.accumulate(now_ns, half_life_ns);
        let elapsed_units = ((now_ns - copy.period * half_life_ns) / unit).min(RAVG_ONE);
        copy.val - copy.val * elapsed_units / (2 * RAVG_ONE) + copy.cur / (2 * unit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HALF_LIFE_NS: u64 = 100_000_000;
    const STEP_NS: u64 = 1_000_000;

    /// Within `tolerance` (a fraction) of `expected`.
    fn near(value: u64, expected: f64, tolerance: f64) -> bool {
        (value as f64 - expected).abs() <= expected * tolerance
    }

    /// Runs `r` from `from_ns` to `to_ns` by steps, busy (amount 1) when `busy(t)`.
    fn drive(r: &mut Ravg, from_ns: u64, to_ns: u64, busy: impl Fn(u64) -> bool) {
        let mut t = from_ns;
        while t < to_ns {
            r.update(t, HALF_LIFE_NS, busy(t) as u64);
            t += STEP_NS;
        }
        r.accumulate(to_ns, HALF_LIFE_NS);
    }

    #[test]
    fn always_busy_converges_to_one() {
        let mut r = Ravg::start(0, HALF_LIFE_NS, 1);
        let end_ns = 10 * HALF_LIFE_NS;
        drive(&mut r, 0, end_ns, |_| true);
        assert!(near(r.read(end_ns, HALF_LIFE_NS), RAVG_ONE as f64, 0.01), "{r:?}");
    }

    #[test]
    fn half_busy_converges_to_a_half() {
        let mut r = Ravg::start(0, HALF_LIFE_NS, 1);
        let end_ns = 20 * HALF_LIFE_NS;
        // Busy the first half of every 10 ms: half of every period.
        drive(&mut r, 0, end_ns, |t| t % 10_000_000 < 5_000_000);
        assert!(near(r.read(end_ns, HALF_LIFE_NS), 512.0, 0.02), "{}", r.read(end_ns, HALF_LIFE_NS));
    }

    /// The decay is exact at period granularity and linear within a period, so the half-life
    /// in which a task goes idle mixes both (its read lands within 15% of a half); from then
    /// on each half-life halves the value, up to truncation.
    #[test]
    fn idle_halves_every_half_life() {
        for idle_from_ns in [12 * HALF_LIFE_NS, 12 * HALF_LIFE_NS + HALF_LIFE_NS / 3, 12 * HALF_LIFE_NS + 9 * HALF_LIFE_NS / 10] {
            let mut r = Ravg::start(0, HALF_LIFE_NS, 1);
            drive(&mut r, 0, idle_from_ns, |_| true);
            r.update(idle_from_ns, HALF_LIFE_NS, 0);
            let reads: Vec<u64> = (0..=5).map(|k| r.read(idle_from_ns + k * HALF_LIFE_NS, HALF_LIFE_NS)).collect();
            assert!(near(reads[1], reads[0] as f64 / 2.0, 0.15), "{reads:?}");
            for k in 2..=5 {
                assert!(near(reads[k], reads[k - 1] as f64 / 2.0, 0.03), "after {k} half-lives: {reads:?}");
            }
        }
    }

    #[test]
    fn read_is_continuous_across_a_period_boundary() {
        for busy_until_ns in [0, HALF_LIFE_NS / 2, 3 * HALF_LIFE_NS + 7] {
            let mut r = Ravg::start(0, HALF_LIFE_NS, 1);
            r.update(busy_until_ns, HALF_LIFE_NS, 0);
            r.update(3 * HALF_LIFE_NS + HALF_LIFE_NS / 2, HALF_LIFE_NS, 1);
            let boundary_ns = 4 * HALF_LIFE_NS;
            let before = r.read(boundary_ns - 1, HALF_LIFE_NS) as f64;
            let after = r.read(boundary_ns + 1, HALF_LIFE_NS) as f64;
            assert!(after > 0.0 && (after - before).abs() / after < 0.02, "{before} -> {after}");
        }
    }

    /// Folds `r` to `now_ns` period by period, as if an update came at every boundary.
    fn fold_each_period(r: &mut Ravg, now_ns: u64, half_life_ns: u64) {
        while r.period + 1 < now_ns / half_life_ns {
            r.accumulate((r.period + 1) * half_life_ns, half_life_ns);
        }
        r.accumulate(now_ns, half_life_ns);
    }

    /// The closed form of skipped periods against folding each of them. They differ by:
    /// - the full value: the closed form tends to `amount x RAVG_ONE`, the reference to a
    ///   period's sum `amount x half_life_ns / unit_ns`, which is higher by
    ///   `amount x (half_life_ns mod 1024) / unit_ns` (under 0.11% as unit_ns >= 976);
    /// - truncation: each fold of the reference drops under 1 in `/ 2` and under 1 in
    ///   `/ unit_ns`, and that loss halves at every later fold, so it stays under 2; the
    ///   closed form's one shift drops under 1.
    ///
    /// Tolerance: the first bound, rounded up, plus 4.
    #[test]
    fn skipped_periods_in_closed_form_equal_folding_each() {
        for half_life_ns in [3_000_000, 1024 * 1000] {
            let excess_per_amount = (half_life_ns % 1024) as f64 / unit_ns(half_life_ns) as f64;
            for amount in [0, 1, 7, 1000, 100_000] {
                let tolerance = (amount as f64 * excess_per_amount).ceil() as u64 + 4;
                for start_amount in [0, 1, 50_000] {
                    for skipped in [1, 2, 5, 13, 40, 63, 64, 70] {
                        let mut r = Ravg::start(5 * half_life_ns + 123, half_life_ns, start_amount);
                        r.update(7 * half_life_ns + 4567, half_life_ns, amount);
                        let now_ns = (r.period + 1 + skipped) * half_life_ns + half_life_ns / 3;
                        let mut reference = r;
                        r.accumulate(now_ns, half_life_ns);
                        fold_each_period(&mut reference, now_ns, half_life_ns);
                        assert_eq!((r.period, r.cur, r.last_ns), (reference.period, reference.cur, reference.last_ns));
                        let diff = r.val.abs_diff(reference.val);
                        assert!(
                            diff <= tolerance,
                            "half-life {half_life_ns}, amount {amount}, skipped {skipped}: {} vs {} (tolerance {tolerance})",
                            r.val,
                            reference.val
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn a_read_in_the_past_reads_the_last_update() {
        let mut r = Ravg::start(0, HALF_LIFE_NS, 1);
        r.update(2 * HALF_LIFE_NS + 5, HALF_LIFE_NS, 0);
        assert_eq!(r.read(HALF_LIFE_NS, HALF_LIFE_NS), r.read(r.last_ns, HALF_LIFE_NS));
    }

    #[test]
    fn supported_extremes_do_not_overflow() {
        let mut r = Ravg::start(1, RAVG_HALF_LIFE_MAX_NS, 100_000);
        r.update(RAVG_HALF_LIFE_MAX_NS * 3 / 2, RAVG_HALF_LIFE_MAX_NS, 100_000);
        let value = r.read(RAVG_HALF_LIFE_MAX_NS * 100, RAVG_HALF_LIFE_MAX_NS);
        assert!(near(value, 100_000.0 * RAVG_ONE as f64, 0.01), "{value}");
    }
}
