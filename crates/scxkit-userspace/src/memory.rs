//! Keeps the policy loop free of page faults, and measures what it costs: the process's
//! memory is locked (nothing is paged out, and every later mapping is populated when it is
//! made), and freed heap is kept for reuse instead of being returned to the system.

use log::warn;

/// Heap grown once at start and kept: the policy's maps and queues grow into it without
/// asking the kernel for pages (each new page of a locked heap is a fault), in bytes.
const HEAP_RESERVE_BYTES: usize = 16 << 20;

/// Stack the policy loop may use without a fault, in bytes: a stack grows by faulting in
/// each page at its first use, locked or not, so a path deeper than any taken before (a rare
/// branch, an error message) would fault in the loop.
const STACK_RESERVE_BYTES: usize = 512 << 10;

/// Uses STACK_RESERVE_BYTES of this thread's stack once, so that its pages are in.
#[inline(never)]
fn touch_stack() {
    let mut reserve = [0u8; STACK_RESERVE_BYTES];
    for byte in reserve.iter_mut().step_by(4096) {
        *byte = 1;
    }
    std::hint::black_box(&mut reserve);
}

/// Tunes the allocator, grows the heap once, touches the calling thread's stack (call it
/// from the thread that runs the policy loop) and locks the process's memory; a failure is
/// logged, not fatal (the policy still works, it may fault).
pub fn keep_resident() {
    touch_stack();
    // SAFETY: plain libc calls with constant arguments.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
        libc::mallopt(libc::M_MMAP_MAX, 0);
    }
    // Locked pages may still be collapsed into huge pages by khugepaged (the default "always"
    // mode scans every heap): the loop faults when it touches a range while it is collapsed.
    // SAFETY: prctl with constant arguments.
    if unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) } != 0 {
        warn!("turning huge pages off for the policy failed ({}): its loop may page-fault", std::io::Error::last_os_error());
    }
    // Freed at once, but with trimming and mmap off the heap keeps its size.
    drop(std::hint::black_box(Vec::<u8>::with_capacity(HEAP_RESERVE_BYTES)));
    // SAFETY: as above.
    unsafe {
        if libc::mlockall(libc::MCL_CURRENT | libc::MCL_FUTURE) != 0 {
            warn!("locking the policy's memory failed ({}): its loop may page-fault", std::io::Error::last_os_error());
        }
    }
}

/// set_mempolicy(2)'s MPOL_LOCAL: allocate on the node of the CPU that allocates.
const MPOL_LOCAL: libc::c_long = 4;

/// Keeps automatic NUMA balancing away from the process's pages. It unmaps pages now and
/// then to see which node uses them and moves them there; each check or move is a page
/// fault, in the policy loop too (measured in a 2-node guest: 10 to 15 a second). Only
/// pages under the default memory policy are scanned, so an explicit "local" policy, set
/// before any thread starts (threads inherit it), places memory as before and stops that.
pub fn opt_out_of_numa_balancing() {
    // SAFETY: set_mempolicy with no node mask.
    let rc = unsafe { libc::syscall(libc::SYS_set_mempolicy, MPOL_LOCAL, std::ptr::null::<libc::c_ulong>(), 0 as libc::c_ulong) };
    if rc != 0 {
        warn!("setting a local memory policy failed ({}): NUMA balancing may fault the policy loop", std::io::Error::last_os_error());
    }
}

/// What the policy has cost: page faults in its loop, and the process's CPU seconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Usage {
    pub page_faults: u64,
    pub cpu_s: f64,
}

fn rusage(who: libc::c_int) -> libc::rusage {
    // SAFETY: getrusage fills the struct it is given.
    unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(who, &mut ru);
        ru
    }
}

/// Page faults (minor and major) the calling thread has taken so far.
pub fn thread_page_faults() -> u64 {
    let ru = rusage(libc::RUSAGE_THREAD);
    (ru.ru_minflt + ru.ru_majflt) as u64
}

/// CPU time the whole process has used (user and system), in seconds.
pub fn process_cpu_s() -> f64 {
    let ru = rusage(libc::RUSAGE_SELF);
    let seconds = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    seconds(ru.ru_utime) + seconds(ru.ru_stime)
}

/// The kernel's monotonic clock in ns: the clock of bpf_ktime_get_ns().
pub use scxkit_runtime::clock::monotonic_ns;

pub fn gettid() -> i32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { libc::gettid() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uses N bytes of stack below the caller, writing one byte per page.
    #[inline(never)]
    fn use_stack<const N: usize>() {
        let mut frame = [0u8; N];
        for byte in frame.iter_mut().step_by(4096) {
            *byte = 2;
        }
        std::hint::black_box(&mut frame);
    }

    /// The faults a fresh thread takes using 448 KiB of stack, after `prepare`.
    fn faults_of_deep_call(prepare: fn()) -> u64 {
        std::thread::spawn(move || {
            prepare();
            let before = thread_page_faults();
            use_stack::<{ 448 << 10 }>();
            thread_page_faults() - before
        })
        .join()
        .unwrap()
    }

    #[test]
    fn a_touched_stack_takes_no_fault_on_a_deeper_path() {
        assert!(faults_of_deep_call(|| ()) > 0, "an untouched stack faults: the check can fail");
        assert_eq!(faults_of_deep_call(touch_stack), 0);
    }
}
