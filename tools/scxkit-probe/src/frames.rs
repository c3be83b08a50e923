//! A game's frame loop under vsync: frame k is released at start + k x period (an absolute
//! deadline), costs a fixed amount of CPU time, and is delivered when it completes before the
//! next release. A frame that completes late has missed its vblank: the releases that passed
//! meanwhile are dropped, and the loop sleeps until the next one, as a game that presents
//! with vsync does. (A loop that started late frames at once would never sleep once behind:
//! no scheduler could tell it from a CPU hog.) The figures: frames delivered per second, the
//! share of frames due that were not delivered, and percentiles of each frame's response
//! (release to completion).

use crate::cpu_time::burn_cpu;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy)]
pub struct Setup {
    pub period: Duration,
    pub work: Duration,
    pub duration: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub delivered_per_s: f64,
    pub dropped_pct: f64,
    pub response_p50_ms: f64,
    pub response_p99_ms: f64,
    /// The late frames, as (release index, response in ms), the first `LATE_FRAMES_KEPT`:
    /// when in the run a loop fell behind tells start-up from a later stall.
    pub late_frames: Vec<(u64, f64)>,
}

const LATE_FRAMES_KEPT: usize = 16;

/// What happened to the frames due in a run: each frame run as (release index, response),
/// in order. Kept apart from the clock so that the rules can be tested.
#[derive(Debug, Default)]
struct Tally {
    due: u64,
    delivered: u64,
    responses_ns: Vec<u64>,
    late_frames: Vec<(u64, f64)>,
}

impl Tally {
    /// Records frame `index`, which completed `response` after its release, in period
    /// `completed_slot` since the start; returns the index of the next frame to run: the
    /// first released after that completion.
    fn record(&mut self, index: u64, response: Duration, period: Duration, completed_slot: u64) -> u64 {
        self.responses_ns.push(response.as_nanos() as u64);
        if response <= period {
            self.delivered += 1;
        } else if self.late_frames.len() < LATE_FRAMES_KEPT {
            self.late_frames.push((index, response.as_secs_f64() * 1e3));
        }
        (index + 1).max(completed_slot + 1)
    }

    fn outcome(mut self, duration: Duration) -> Outcome {
        self.responses_ns.sort_unstable();
        let ms = |q| crate::wakeup::quantile(&self.responses_ns, q) as f64 / 1e6;
        Outcome {
            delivered_per_s: self.delivered as f64 / duration.as_secs_f64(),
            dropped_pct: 100.0 * (self.due - self.delivered) as f64 / self.due.max(1) as f64,
            response_p50_ms: ms(0.50),
            response_p99_ms: ms(0.99),
            late_frames: self.late_frames,
        }
    }
}

pub fn run(setup: Setup) -> Outcome {
    let due = (setup.duration.as_nanos() / setup.period.as_nanos()) as u64;
    let mut tally = Tally { due, ..Default::default() };
    let start = Instant::now();
    let mut index = 0;
    while index < due {
        let release = start + setup.period * index as u32;
        if let Some(wait) = release.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
        burn_cpu(setup.work);
        let completed = Instant::now();
        let slot = (completed.duration_since(start).as_nanos() / setup.period.as_nanos()) as u64;
        index = tally.record(index, completed.duration_since(release), setup.period, slot);
    }
    tally.outcome(setup.duration)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PERIOD: Duration = Duration::from_millis(16);

    #[test]
    fn a_late_frame_drops_the_releases_it_ran_past_and_waits_for_the_next() {
        let mut tally = Tally { due: 10, ..Default::default() };
        assert_eq!(tally.record(0, Duration::from_millis(4), PERIOD, 0), 1);
        // Frame 1 completes 50 ms after its release, in slot 4: frames 2 to 4 are dropped,
        // and the loop waits for release 5.
        assert_eq!(tally.record(1, Duration::from_millis(50), PERIOD, 4), 5);
        assert_eq!(tally.delivered, 1);
        let outcome = tally.outcome(Duration::from_millis(160));
        assert_eq!(outcome.dropped_pct, 90.0);
        assert_eq!(outcome.response_p99_ms, 50.0);
        assert_eq!(outcome.late_frames, vec![(1, 50.0)]);
    }

    #[test]
    fn an_idle_machine_delivers_every_frame() {
        let outcome = run(Setup { period: Duration::from_millis(20), work: Duration::from_millis(2), duration: Duration::from_millis(400) });
        assert!(outcome.dropped_pct <= 10.0, "{outcome:?}");
        assert!(outcome.response_p50_ms >= 2.0, "a frame costs 2 ms of CPU: {outcome:?}");
    }
}
