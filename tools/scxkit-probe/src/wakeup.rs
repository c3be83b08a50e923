//! A request/response wakeup benchmark in the style of schbench: each group has a message
//! thread that posts a request to each of its workers and waits for all their replies; a
//! worker wakes up, notes how long the wakeup took, works for a while and replies. The
//! figures: wakeup latency percentiles and requests served per second.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Wakeups recorded per worker at most (the first ones are kept).
const MAX_SAMPLES_PER_WORKER: usize = 1 << 20;

#[derive(Debug, Clone, Copy)]
pub struct Setup {
    pub groups: usize,
    pub workers_per_group: usize,
    pub work: Duration,
    pub duration: Duration,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub p50_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub requests_per_s: f64,
    pub samples: usize,
}

/// A worker's mailbox: the time a request was posted, until the worker takes it.
#[derive(Default)]
struct Mailbox {
    posted: Mutex<Option<Instant>>,
    wake: Condvar,
}

/// How many replies a message thread still waits for.
#[derive(Default)]
struct Pending {
    count: Mutex<usize>,
    done: Condvar,
}

/// Busy-waits for `work`: the CPU time a request costs.
fn spin(work: Duration) {
    let start = Instant::now();
    while start.elapsed() < work {
        std::hint::spin_loop();
    }
}

fn worker(mailbox: &Mailbox, pending: &Pending, work: Duration, stop: &Mutex<bool>) -> Vec<u64> {
    let mut latencies_ns = Vec::with_capacity(4096);
    loop {
        let posted = {
            let mut slot = mailbox.posted.lock().unwrap();
            while slot.is_none() {
                slot = mailbox.wake.wait(slot).unwrap();
            }
            slot.take().unwrap()
        };
        if *stop.lock().unwrap() {
            return latencies_ns;
        }
        if latencies_ns.len() < MAX_SAMPLES_PER_WORKER {
            latencies_ns.push(posted.elapsed().as_nanos() as u64);
        }
        spin(work);
        let mut count = pending.count.lock().unwrap();
        *count -= 1;
        if *count == 0 {
            pending.done.notify_one();
        }
    }
}

fn post(mailbox: &Mailbox) {
    *mailbox.posted.lock().unwrap() = Some(Instant::now());
    mailbox.wake.notify_one();
}

/// One group's message thread: requests until `deadline`; returns the rounds completed.
fn message_thread(mailboxes: &[Arc<Mailbox>], pending: &Pending, deadline: Instant) -> u64 {
    let mut rounds = 0;
    while Instant::now() < deadline {
        *pending.count.lock().unwrap() = mailboxes.len();
        for mailbox in mailboxes {
            post(mailbox);
        }
        let mut count = pending.count.lock().unwrap();
        while *count > 0 {
            count = pending.done.wait(count).unwrap();
        }
        rounds += 1;
    }
    rounds
}

/// The nearest-rank quantile of ascending values.
pub fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((sorted.len() as f64 * q).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

pub fn run(setup: Setup) -> Outcome {
    let start = Instant::now();
    let deadline = start + setup.duration;
    let stop = Arc::new(Mutex::new(false));
    let mut workers = Vec::new();
    let mut messengers = Vec::new();
    for _ in 0..setup.groups {
        let pending = Arc::new(Pending::default());
        let mailboxes: Vec<Arc<Mailbox>> = (0..setup.workers_per_group).map(|_| Arc::new(Mailbox::default())).collect();
        for mailbox in &mailboxes {
            let (mailbox, pending, stop) = (mailbox.clone(), pending.clone(), stop.clone());
            workers.push(std::thread::spawn(move || worker(&mailbox, &pending, setup.work, &stop)));
        }
        let boxes = mailboxes.clone();
        messengers.push((mailboxes, std::thread::spawn(move || message_thread(&boxes, &pending, deadline))));
    }
    let mut rounds = 0;
    let mut all_boxes = Vec::new();
    for (boxes, handle) in messengers {
        rounds += handle.join().unwrap() * boxes.len() as u64;
        all_boxes.extend(boxes);
    }
    let elapsed_s = start.elapsed().as_secs_f64();
    *stop.lock().unwrap() = true;
    for mailbox in &all_boxes {
        post(mailbox);
    }
    let mut latencies: Vec<u64> = workers.into_iter().flat_map(|w| w.join().unwrap()).collect();
    latencies.sort_unstable();
    let us = |q| quantile(&latencies, q) as f64 / 1000.0;
    Outcome { p50_us: us(0.5), p99_us: us(0.99), p999_us: us(0.999), requests_per_s: rounds as f64 / elapsed_s, samples: latencies.len() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(quantile(&v, 0.5), 500);
        assert_eq!(quantile(&v, 0.99), 990);
        assert_eq!(quantile(&v, 0.999), 999);
        assert_eq!(quantile(&[7], 0.999), 7);
        assert_eq!(quantile(&[], 0.5), 0);
    }

    #[test]
    fn serves_requests_and_measures_each_wakeup() {
        let setup = Setup { groups: 2, workers_per_group: 2, work: Duration::from_micros(200), duration: Duration::from_millis(300) };
        let outcome = run(setup);
        assert!(outcome.samples > 10, "{outcome:?}");
        assert!(outcome.requests_per_s > 0.0);
        // Every request is a wakeup measured once: served = samples (up to the last round).
        let served = outcome.requests_per_s * 0.3;
        assert!((outcome.samples as f64 - served).abs() <= 4.0 + served * 0.1, "{outcome:?}");
        assert!(outcome.p50_us <= outcome.p99_us && outcome.p99_us <= outcome.p999_us);
    }
}
