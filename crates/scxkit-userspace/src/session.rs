//! One attempt of a userspace-policy scheduler: load the framework's BPF part, attach, then
//! run the policy loop until the runtime says stop.

use crate::bpf_skel::{types, MainSkelBuilder};
use crate::memory::{gettid, monotonic_ns, process_cpu_s, thread_page_faults, Usage};
use crate::policy::{Dispatcher, KernelView, Policy, QueuedTask};
use crate::stats::{self, BssReading};
use crate::{intf, FrameworkOpts};
use anyhow::{Context, Result};
use libbpf_rs::skel::{OpenSkel, Skel, SkelBuilder};
use libbpf_rs::{RingBufferBuilder, UserRingBuffer};
use scxkit_runtime::{Attempt, ExitInfo, Jobs, Stats};
use std::cell::RefCell;
use std::mem::MaybeUninit;
use std::num::NonZeroU32;
use std::rc::Rc;
use std::time::Duration;

/// The longest the loop sleeps: its heartbeat must move well within the fallback delay
/// (at most a quarter of it), or an idle policy would look stopped.
const MAX_POLL: Duration = Duration::from_millis(100);

fn max_poll(fallback_after_ms: u64) -> Duration {
    MAX_POLL.min(Duration::from_millis(fallback_after_ms) / 4)
}
/// Waits up to `wait` for messages and reads them. A poll that times out reads too: a
/// message may come without a wakeup (sent from a CPU on its way offline, see
/// scxkit/hotplug.bpf.h), and would otherwise wait for the next one that has a wakeup.
fn read_ring(ring: &libbpf_rs::RingBuffer, wait: Duration) -> Result<()> {
    let mut read = ring.poll_raw(whole_ms_up(wait));
    if read == 0 {
        read = ring.consume_raw();
    }
    if read < 0 && read != -libc::EINTR {
        return Err(std::io::Error::from_raw_os_error(-read)).context("reading the ring buffer");
    }
    Ok(())
}

/// `wait` rounded up to whole milliseconds, the poll's unit: rounded down, a wait of less
/// than 1 ms before the runtime's next duty would be a poll that returns at once, over and
/// over until the duty is due (an idle policy would spin dozens of empty turns before each).
fn whole_ms_up(wait: Duration) -> Duration {
    Duration::from_millis(wait.as_micros().div_ceil(1000) as u64)
}

/// Messages the kernel's ring buffer can hold at most: the inbox never grows past this.
const INBOX_CAPACITY: usize = intf::USCHED_RING_BYTES as usize / std::mem::size_of::<intf::usched_task>();

/// The framework's .bss, shared with the kernel through the skeleton's mapping. Fields are
/// reached through raw pointers, one at a time: BPF writes the others concurrently.
struct SharedState(*mut types::bss);

/// A pointer to one field of the shared .bss.
macro_rules! field {
    ($state:expr, $name:ident) => {
        // SAFETY: the pointer is the skeleton's mmap'ed .bss, alive for the whole attempt.
        unsafe { std::ptr::addr_of_mut!((*$state.0).$name) }
    };
}

impl SharedState {
    fn store(field: *mut u64, value: u64) {
        // SAFETY: a naturally aligned u64 of the live mapping, written whole.
        unsafe { field.write_volatile(value) }
    }

    fn load(field: *const u64) -> u64 {
        // SAFETY: as above, read whole.
        unsafe { field.read_volatile() }
    }

    fn read(&self) -> BssReading {
        BssReading {
            nr_sent: Self::load(field!(self, nr_sent)),
            user_received: Self::load(field!(self, user_received)),
            user_held: Self::load(field!(self, user_held)),
            fallback_total_ns: Self::load(field!(self, fallback_total_ns)),
            fallback_since_ns: Self::load(field!(self, fallback_since_ns)),
            fallback_entries: Self::load(field!(self, fallback_entries)),
            user_heartbeat: Self::load(field!(self, user_heartbeat)),
        }
    }
}

/// The ops name shown in /sys/kernel/sched_ext/root/ops: the scheduler's, without "scx_".
fn ops_name(name: &str) -> [std::ffi::c_char; 128] {
    let mut out = [0 as std::ffi::c_char; 128];
    for (slot, byte) in out.iter_mut().zip(name.trim_start_matches("scx_").bytes().take(127)) {
        *slot = byte as std::ffi::c_char;
    }
    out
}

/// For tests only: fewer custody places than the FIFO's size, so that a guest can fill it.
const CUSTODY_PLACES_ENV: &str = "SCXKIT_TEST_CUSTODY_PLACES";

pub fn run_once(name: &str, opts: &FrameworkOpts, policy: &mut dyn Policy, attempt: &mut Attempt) -> Result<ExitInfo> {
    let mut storage = MaybeUninit::uninit();
    let mut open = MainSkelBuilder::default().open(&mut storage).context("opening the framework's BPF object")?;
    scxkit_runtime::prepare_ops!(attempt, open.struct_ops.usched_ops_mut(), open.open_object_mut())?;
    open.struct_ops.usched_ops_mut().name = ops_name(name);
    let rodata = open.maps.rodata_data.as_deref_mut().context("no .rodata")?;
    rodata.policy_tid = gettid();
    rodata.policy_tgid = std::process::id() as i32;
    rodata.bypass_slice_ns = policy.bypass_slice_ns();
    rodata.clock_runtime_divisor = policy.clock_runtime_divisor().map_or(0, NonZeroU32::get);
    rodata.fallback_after_ns = opts.fallback_after_ms * 1_000_000;
    rodata.idle_bypass = !opts.full_user;
    rodata.grants_allowed = !opts.full_user;
    if let Some(places) = std::env::var(CUSTODY_PLACES_ENV).ok().and_then(|v| v.parse::<u64>().ok()) {
        rodata.custody_places_max = places.clamp(1, intf::USCHED_CUSTODY_MAX as u64);
        log::info!("{CUSTODY_PLACES_ENV}: custody holds at most {} tasks", rodata.custody_places_max);
    }
    open.maps.bss_data.as_deref_mut().context("no .bss")?.nr_cpus_online = attempt.topology().nr_online() as u64;
    let mut skel = open.load().context("loading the BPF scheduler into the kernel")?;
    let shared = SharedState(skel.maps.bss_data.as_deref_mut().context("no .bss")? as *mut types::bss);
    SharedState::store(field!(shared, user_heartbeat), 1);
    let link = skel.maps.usched_ops.attach_struct_ops().context("attaching the scheduler")?;

    let inbox: Rc<RefCell<Vec<QueuedTask>>> = Rc::new(RefCell::new(Vec::with_capacity(INBOX_CAPACITY)));
    let mut builder = RingBufferBuilder::new();
    let sink = inbox.clone();
    let messages = Rc::new(std::cell::Cell::new(0u64));
    let counted = messages.clone();
    // Tasks only: a nudge is not counted in the kernel's nr_sent either.
    builder.add(&skel.maps.to_user, move |bytes: &[u8]| {
        if let Some(task) = QueuedTask::decode(bytes) {
            counted.set(counted.get() + 1);
            sink.borrow_mut().push(task);
        }
        0
    })?;
    let ring = builder.build().context("opening the ring buffer to userspace")?;
    let user_ring = UserRingBuffer::new(&skel.maps.from_user).context("opening the ring buffer from userspace")?;

    // Page faults taken while the loop reads tasks and decides (not while the runtime
    // samples and publishes statistics on the same thread).
    let loop_faults = std::cell::Cell::new(0u64);
    let stats = Stats::new(|reading| {
        scxkit_runtime::maps::set_percpu_counters(reading, &skel.maps.stats, stats::COUNTERS)?;
        let usage = Usage { page_faults: loop_faults.get(), cpu_s: process_cpu_s() };
        stats::set_figures(reading, &shared.read(), usage, monotonic_ns());
        Ok(())
    });
    let poll_limit = max_poll(opts.fallback_after_ms);
    let mut heartbeat = 1u64;
    let mut received = 0u64;
    let mut batch: Vec<QueuedTask> = Vec::with_capacity(INBOX_CAPACITY);
    let step = |wait: Duration| -> Result<()> {
        // From before the poll: the ring buffer's callback (decoding, the inbox) counts too.
        let faults_before = thread_page_faults();
        read_ring(&ring, wait.min(poll_limit))?;
        heartbeat += 1;
        SharedState::store(field!(shared, user_heartbeat), heartbeat);
        batch.extend(inbox.borrow_mut().drain(..));
        received = messages.get();
        // Every message is read by now, any nudge included: the next one may come.
        SharedState::store(field!(shared, nudge_pending), 0);
        SharedState::store(field!(shared, user_received), received);
        for task in batch.drain(..) {
            policy.enqueue(task);
        }
        let kernel = KernelView {
            vtime_now: SharedState::load(field!(shared, vtime_now)),
            nr_queued: SharedState::load(field!(shared, nr_shared_queued)),
        };
        let nr_cpus = SharedState::load(field!(shared, nr_cpus_online)).max(1) as usize;
        let held = policy.dispatch(&mut Dispatcher::new(&user_ring, nr_cpus, kernel));
        SharedState::store(field!(shared, user_held), held as u64);
        SharedState::store(field!(shared, defer_slice_max_ns), crate::deferred_waker_slice_kept_ns(&*policy));
        loop_faults.set(loop_faults.get() + thread_page_faults() - faults_before);
        Ok(())
    };
    attempt.drive(skel.object(), link, stats, Jobs::new(), step)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_beats_at_least_four_times_per_fallback_delay() {
        assert_eq!(max_poll(500), MAX_POLL);
        assert_eq!(max_poll(100), Duration::from_millis(25));
        assert_eq!(max_poll(10_000), MAX_POLL);
    }

    #[test]
    fn a_poll_waits_at_least_as_long_as_asked() {
        let ms = Duration::from_millis;
        assert_eq!(whole_ms_up(Duration::ZERO), Duration::ZERO, "a due duty: no wait");
        assert_eq!(whole_ms_up(Duration::from_micros(300)), ms(1));
        assert_eq!(whole_ms_up(ms(1)), ms(1));
        assert_eq!(whole_ms_up(Duration::from_micros(1200)), ms(2));
    }

    #[test]
    fn the_ops_name_drops_the_prefix() {
        let name = ops_name("scx_rustland");
        let text: String = name.iter().take_while(|&&c| c != 0).map(|&c| c as u8 as char).collect();
        assert_eq!(text, "rustland");
    }
}
