//! A CPU hog that measures how it is served: the CPU time it got, and the longest stretch it
//! waited without running (a starved hog shows a gap of seconds long before its share drops).

use crate::cpu_time::thread_cpu_time;
use std::time::{Duration, Instant};

/// Wall time between two looks at the clock beyond which the hog counts as having waited.
const WAIT_MIN: Duration = Duration::from_micros(200);

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    pub cpu: Duration,
    pub longest_wait: Duration,
    /// Stretches of waiting longer than WAIT_MIN.
    pub waits: u64,
}

/// Spins for `duration` of wall time.
pub fn run(duration: Duration) -> Outcome {
    let cpu_start = thread_cpu_time();
    let start = Instant::now();
    let (mut last, mut longest_wait, mut waits) = (start, Duration::ZERO, 0);
    while last.duration_since(start) < duration {
        for _ in 0..100 {
            std::hint::spin_loop();
        }
        let now = Instant::now();
        let gap = now.duration_since(last);
        if gap > WAIT_MIN {
            waits += 1;
            longest_wait = longest_wait.max(gap);
        }
        last = now;
    }
    Outcome { cpu: thread_cpu_time() - cpu_start, longest_wait, waits }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unloaded_hog_gets_about_its_wall_time_and_a_short_longest_wait() {
        let outcome = run(Duration::from_millis(100));
        assert!(outcome.cpu >= Duration::from_millis(20), "{outcome:?}");
        assert!(outcome.longest_wait < Duration::from_millis(90), "{outcome:?}");
    }
}
