//! Threads that only sleep: many tasks for a scheduler to track, at little cost; or that
//! only spin: a long queue of runnable tasks. A process
//! holds at most about 32,000 threads (each stack and its guard page are two of the 65,530
//! mappings vm.max_map_count allows by default), so a test starts several.

use anyhow::{Context, Result};
use std::sync::atomic::{AtomicBool, Ordering};

/// Each sleeper's stack: the least glibc takes (PTHREAD_STACK_MIN is 16 KiB) and some room;
/// only the pages a sleeper touches cost memory.
const SLEEPER_STACK_BYTES: usize = 32 * 1024;

/// What each thread does once started.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Work {
    /// Sleeps until the process exits.
    Sleep,
    /// Spins until the process exits, once every thread has started: spinning at once, the
    /// threads started first would leave the one starting the others a thousandth of a CPU.
    Spin,
}

/// Set once every spinner has started.
static SPIN_RELEASED: AtomicBool = AtomicBool::new(false);

fn wait_then_spin() {
    while !SPIN_RELEASED.load(Ordering::Acquire) {
        std::thread::park();
    }
    loop {
        std::hint::spin_loop();
    }
}

/// Starts `count` threads doing `work`; returns once all are started (and spinners spin).
pub fn start(count: u32, work: Work) -> Result<()> {
    let mut threads = Vec::with_capacity(count as usize);
    for n in 0..count {
        let handle = std::thread::Builder::new()
            .stack_size(SLEEPER_STACK_BYTES)
            .spawn(move || match work {
                Work::Sleep => loop {
                    std::thread::park();
                },
                Work::Spin => wait_then_spin(),
            })
            .with_context(|| format!("starting thread {} of {count}", n + 1))?;
        threads.push(handle.thread().clone());
    }
    if work == Work::Spin {
        SPIN_RELEASED.store(true, Ordering::Release);
        threads.iter().for_each(|t| t.unpark());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn threads_of_this_process() -> usize {
        std::fs::read_dir("/proc/self/task").unwrap().count()
    }

    #[test]
    fn starts_the_threads_asked() {
        let before = threads_of_this_process();
        start(50, Work::Sleep).unwrap();
        std::thread::sleep(Duration::from_millis(10));
        // Other tests of this binary may run threads at the same time.
        assert!(threads_of_this_process() >= before + 50);
    }
}
