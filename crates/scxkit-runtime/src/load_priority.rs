//! The loading thread's CPU priority while it reads the topology, loads and attaches. A
//! restart for CPU hotplug (or a suspend, which takes every CPU but one away) runs while the
//! machine is on the default scheduler, often beside the very load that made the user want
//! another one: at nice 0 the loader gets its fair share beside every CPU hog, and the
//! machine stays on the default scheduler that many times longer. Raised to nice -20 for
//! the load, then put back once the scheduler is attached (or the attempt failed), so that
//! its threads run at the nice value the user gave.

use log::debug;

/// The nice value of the loading thread while it loads.
const LOADING_NICE: i32 = -20;

/// Holds the calling thread at [`LOADING_NICE`] until dropped; then the nice value it had.
pub struct LoadPriority {
    previous: Option<i32>,
}

impl LoadPriority {
    /// Raises the calling thread's priority (Linux keeps a nice value per thread). Without
    /// the right to (no CAP_SYS_NICE) it stays as it is: a slower load, nothing worse.
    pub fn raise() -> LoadPriority {
        let Some(previous) = thread_nice() else { return LoadPriority { previous: None } };
        if previous <= LOADING_NICE || !set_thread_nice(LOADING_NICE) {
            return LoadPriority { previous: None };
        }
        LoadPriority { previous: Some(previous) }
    }
}

impl Drop for LoadPriority {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            if !set_thread_nice(previous) {
                log::warn!("could not put the loading thread back at nice {previous}");
            }
        }
    }
}

/// The calling thread's nice value (getpriority may return -1 as a value: errno tells).
fn thread_nice() -> Option<i32> {
    // SAFETY: errno is the calling thread's; getpriority reads the calling thread's value.
    unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, 0);
        if nice == -1 && *libc::__errno_location() != 0 {
            debug!("getpriority: {}", std::io::Error::last_os_error());
            return None;
        }
        Some(nice)
    }
}

fn set_thread_nice(nice: i32) -> bool {
    // SAFETY: who = 0 is the calling thread under Linux's per-thread nice values.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
    if rc != 0 {
        debug!("setpriority({nice}): {}", std::io::Error::last_os_error());
    }
    rc == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn puts_the_thread_back_at_its_nice_value() {
        // In a thread of its own: the nice value is per thread, and the test may lower it.
        std::thread::spawn(|| {
            // A thread may always lower its priority: to 5, or stay lower if it already is
            // (a test run under `nice -n 10` may not go back up to 5).
            let start = thread_nice().unwrap();
            assert!(set_thread_nice(start.max(5)), "a thread may always lower its priority");
            let before = thread_nice().unwrap();
            {
                let _raised = LoadPriority::raise();
                let during = thread_nice().unwrap();
                // Raised with CAP_SYS_NICE (root), unchanged without it.
                assert!(during == LOADING_NICE || during == before, "nice {during} while loading");
            }
            assert_eq!(thread_nice(), Some(before));
        })
        .join()
        .unwrap();
    }
}
