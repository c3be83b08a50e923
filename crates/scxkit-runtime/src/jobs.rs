//! Periodic jobs with their own intervals (stats every `--stats`, load balancing every
//! `--interval`, a tuner every `--tune-interval`), run from the scheduler's monitor loop or
//! from a userspace policy's own loop.
//!
//! Each job keeps one deadline. When the process was held up (stopped, swapped, a slow
//! pass) past more than one interval, the missed runs are not made up in a burst: the next
//! deadline is clamped to one interval after now.

use anyhow::Result;
use std::time::{Duration, Instant};

/// When a periodic job is next due.
#[derive(Debug, Clone)]
pub struct Deadline {
    interval: Duration,
    next: Instant,
}

impl Deadline {
    /// The first run is due one interval after `start`.
    pub fn new(interval: Duration, start: Instant) -> Deadline {
        Deadline { interval, next: start + interval }
    }

    pub fn next(&self) -> Instant {
        self.next
    }

    /// Whether the job is due at `now`; if so, moves the deadline on by one interval, or to
    /// one interval after `now` when more than one was missed (the catch-up clamp).
    pub fn fire(&mut self, now: Instant) -> bool {
        if now < self.next {
            return false;
        }
        self.next += self.interval;
        if self.next <= now {
            self.next = now + self.interval;
        }
        true
    }
}

/// One step of a group: a named piece of work on the group's owner, at its own interval.
pub type Step<S> = (&'static str, Duration, fn(&mut S) -> Result<()>);

/// Periodic steps that act on one owner, each at its own interval: each is handed the
/// owner in turn, so steps that write the same things (a BPF map) need no shared state.
struct Group<S> {
    owner: S,
    steps: Vec<Scheduled<S>>,
}

/// A step with its deadline.
struct Scheduled<S> {
    name: &'static str,
    deadline: Deadline,
    work: fn(&mut S) -> Result<()>,
}

/// What [`Jobs`] asks of a group, whatever its owner.
trait Periodic {
    fn next_due(&self) -> Option<Instant>;
    fn run_due(&mut self, now: Instant);
}

impl<S> Periodic for Group<S> {
    fn next_due(&self) -> Option<Instant> {
        self.steps.iter().map(|step| step.deadline.next()).min()
    }

    fn run_due(&mut self, now: Instant) {
        for step in &mut self.steps {
            if step.deadline.fire(now) {
                if let Err(e) = (step.work)(&mut self.owner) {
                    log::warn!("{}: {e:#}", step.name);
                }
            }
        }
    }
}

/// The periodic jobs of one attempt.
#[derive(Default)]
pub struct Jobs<'a> {
    groups: Vec<Box<dyn Periodic + 'a>>,
}

impl<'a> Jobs<'a> {
    pub fn new() -> Jobs<'a> {
        Jobs::default()
    }

    /// Adds `work`, to run every `interval` from now on.
    pub fn every<F: FnMut() -> Result<()> + 'a>(self, name: &'static str, interval: Duration, work: F) -> Jobs<'a> {
        self.owned(work, &[(name, interval, |work: &mut F| work())])
    }

    /// Adds `steps` on one owner, each to run every its own interval from now on, in the
    /// order given when several are due at once.
    pub fn owned<S: 'a>(mut self, owner: S, steps: &[Step<S>]) -> Jobs<'a> {
        let start = Instant::now();
        let steps = steps.iter().map(|&(name, interval, work)| Scheduled { name, deadline: Deadline::new(interval, start), work }).collect();
        self.groups.push(Box::new(Group { owner, steps }));
        self
    }

    /// The earliest deadline, if any job is registered.
    pub fn next_due(&self) -> Option<Instant> {
        self.groups.iter().filter_map(|g| g.next_due()).min()
    }

    /// Runs every job due at `now`, in registration order. A failing job is logged and
    /// stays scheduled: one bad reading must not stop the scheduler.
    pub fn run_due(&mut self, now: Instant) {
        for group in &mut self.groups {
            group.run_due(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn fires_once_per_interval_on_time() {
        let t0 = Instant::now();
        let mut d = Deadline::new(100 * MS, t0);
        assert!(!d.fire(t0 + 99 * MS));
        assert!(d.fire(t0 + 100 * MS));
        assert!(!d.fire(t0 + 150 * MS));
        assert!(d.fire(t0 + 205 * MS), "a little late still fires");
        assert_eq!(d.next(), t0 + 300 * MS, "and keeps the original cadence");
    }

    #[test]
    fn a_long_stall_fires_once_not_a_burst() {
        let t0 = Instant::now();
        let mut d = Deadline::new(100 * MS, t0);
        let after_stall = t0 + 1050 * MS;
        let fired = (0..10).filter(|_| d.fire(after_stall)).count();
        assert_eq!(fired, 1, "ten missed intervals make one run");
        assert_eq!(d.next(), after_stall + 100 * MS);
    }

    #[test]
    fn jobs_run_at_their_own_intervals() {
        let (fast, slow) = (Cell::new(0), Cell::new(0));
        let mut jobs = Jobs::new()
            .every("fast", 100 * MS, || { fast.set(fast.get() + 1); Ok(()) })
            .every("slow", 250 * MS, || { slow.set(slow.get() + 1); anyhow::bail!("a failing job stays scheduled") });
        let t0 = Instant::now();
        assert!(jobs.next_due().unwrap() <= t0 + 100 * MS);
        for step in 1..=10 {
            jobs.run_due(t0 + step * 100 * MS + MS);
        }
        assert_eq!(fast.get(), 10);
        assert_eq!(slow.get(), 4, "at 250, 500, 750, 1000 ms");
    }

    #[test]
    fn steps_on_one_owner_run_at_their_own_intervals_in_order() {
        let log = std::cell::RefCell::new(Vec::new());
        let steps: &[Step<&std::cell::RefCell<Vec<&str>>>] = &[
            ("fast", 100 * MS, |log| { log.borrow_mut().push("fast"); Ok(()) }),
            ("slow", 250 * MS, |log| { log.borrow_mut().push("slow"); Ok(()) }),
        ];
        let mut jobs = Jobs::new().owned(&log, steps);
        let t0 = Instant::now();
        assert!(jobs.next_due().unwrap() <= t0 + 100 * MS);
        for step in 1..=5 {
            jobs.run_due(t0 + step * 100 * MS + MS);
        }
        drop(jobs);
        assert_eq!(log.into_inner(), ["fast", "fast", "fast", "slow", "fast", "fast", "slow"]);
    }
}
