//! Work measured in CPU time, not wall time: a thread that gets less of the CPU takes longer
//! to finish it, which is what a benchmark of a scheduler must see.

use std::time::Duration;

/// This thread's CPU time so far.
pub fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: ts is a valid timespec for the call to fill.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "CLOCK_THREAD_CPUTIME_ID is always available on Linux");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Spins until this thread has used `work` more CPU time.
pub fn burn_cpu(work: Duration) {
    let until = thread_cpu_time() + work;
    while thread_cpu_time() < until {
        for _ in 0..1000 {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    #[test]
    fn burns_at_least_the_cpu_time_asked() {
        let (cpu, wall) = (thread_cpu_time(), Instant::now());
        burn_cpu(Duration::from_millis(20));
        assert!(thread_cpu_time() - cpu >= Duration::from_millis(20));
        assert!(wall.elapsed() >= Duration::from_millis(20));
    }
}
