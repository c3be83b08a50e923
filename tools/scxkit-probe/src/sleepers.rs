//! Threads that only sleep: many tasks for a scheduler to track, at little cost. A process
//! holds at most about 32,000 threads (each stack and its guard page are two of the 65,530
//! mappings vm.max_map_count allows by default), so a test starts several.

use anyhow::{Context, Result};

/// Each sleeper's stack: the least glibc takes (PTHREAD_STACK_MIN is 16 KiB) and some room;
/// only the pages a sleeper touches cost memory.
const SLEEPER_STACK_BYTES: usize = 32 * 1024;

/// Starts `count` threads that sleep until the process exits; returns once all are started.
pub fn start(count: u32) -> Result<()> {
    for n in 0..count {
        std::thread::Builder::new()
            .stack_size(SLEEPER_STACK_BYTES)
            .spawn(|| loop {
                std::thread::park();
            })
            .with_context(|| format!("starting sleeper {} of {count}", n + 1))?;
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
        start(50).unwrap();
        std::thread::sleep(Duration::from_millis(10));
        // Other tests of this binary may run threads at the same time.
        assert!(threads_of_this_process() >= before + 50);
    }
}
