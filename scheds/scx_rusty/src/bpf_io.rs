//! The one place that reads scx_rusty's BPF maps into the balancer's input and writes its
//! decisions (and the tuner's) back.

use crate::intf::{dom_stat, lb_request, task_dump, tune_input};
use anyhow::{Context, Result};
use libbpf_rs::{Iter, Link, MapCore, MapFlags};
use std::io::Read;
use scxkit::ravg::{Ravg, RAVG_ONE};
use scxkit_runtime::maps::{as_bytes, from_bytes, PlainC};

// SAFETY: bindgen's twins of intf.h's structs: integers and arrays of them.
unsafe impl PlainC for task_dump {}
// SAFETY: as above.
unsafe impl PlainC for dom_stat {}
// SAFETY: as above.
unsafe impl PlainC for tune_input {}
// SAFETY: as above.
unsafe impl PlainC for lb_request {}

/// A task as the balancer needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskView {
    pub pid: i32,
    pub dom: usize,
    /// Domains it may run in (bit n: domain n).
    pub dom_mask: u64,
    /// p->scx.weight (nice 0: 100).
    pub weight: u64,
    /// Runnable duty cycle now, 0..=1.
    pub duty: f64,
    /// Runnable now (its weight is in a domain's load).
    pub runnable: bool,
    /// When it last started or stopped running, CLOCK_MONOTONIC ns.
    pub last_ran_ns: u64,
}

pub use scxkit_runtime::clock::monotonic_ns;

pub fn ravg_of(r: &crate::intf::scxk_ravg) -> Ravg {
    Ravg { val: r.val, cur: r.cur, period: r.period, amount: r.amount, last_ns: r.last_ns }
}

/// The tasks of one read of the task iterator.
#[derive(Debug, Default)]
pub struct TaskDump {
    /// Every task with state, with its duty cycle at the time of the read.
    pub tasks: Vec<TaskView>,
    /// Tasks the scheduler has initialized that have no state (its allocation failed): they
    /// run from the global queue, left out of balancing.
    pub left_out: usize,
}

/// Every task the BPF side knows, read through the `dump_tasks` iterator (task.bpf.h), with
/// its duty cycle at `now_ns`.
pub fn read_tasks(dump_tasks: &Link, now_ns: u64, half_life_ns: u64) -> Result<TaskDump> {
    let mut bytes = Vec::new();
    Iter::new(dump_tasks).context("starting the task iterator")?.read_to_end(&mut bytes).context("reading the task iterator")?;
    Ok(parse_dump(&bytes, now_ns, half_life_ns))
}

/// Decodes the iterator's records (whole `task_dump`s, back to back).
fn parse_dump(bytes: &[u8], now_ns: u64, half_life_ns: u64) -> TaskDump {
    let mut dump = TaskDump::default();
    for rec in bytes.chunks_exact(std::mem::size_of::<task_dump>()).filter_map(from_bytes::<task_dump>) {
        if rec.tracked == 0 {
            dump.left_out += 1;
            continue;
        }
        let ctx = &rec.ctx;
        let duty = ravg_of(&ctx.duty).read(now_ns, half_life_ns) as f64 / RAVG_ONE as f64;
        dump.tasks.push(TaskView {
            pid: rec.pid,
            dom: ctx.dom as usize,
            dom_mask: ctx.dom_mask,
            weight: ctx.weight as u64,
            duty,
            runnable: ctx.load_dom != crate::intf::RUSTY_NO_DOM,
            last_ran_ns: ctx.start_ns,
        });
    }
    dump
}

/// Entries of the move request map: a pass asks at most one move per task, and the kernel
/// keeps the tasks under kernel.threads-max (home.bpf.h).
pub fn request_map_entries() -> Result<u32> {
    const PATH: &str = "/proc/sys/kernel/threads-max";
    let text = std::fs::read_to_string(PATH).with_context(|| format!("reading {PATH}"))?;
    text.trim().parse::<u32>().with_context(|| format!("{PATH} holds {:?}, not a count", text.trim()))
}

/// Each domain's load at `now_ns`, in busy nice-0 tasks, as the BPF side keeps it.
pub fn read_dom_loads(map: &dyn MapCore, nr_doms: usize, now_ns: u64, half_life_ns: u64) -> Result<Vec<f64>> {
    (0..nr_doms as u32)
        .map(|dom| {
            let bytes = map.lookup(&dom.to_ne_bytes(), MapFlags::ANY)?.unwrap_or_default();
            let stat = from_bytes::<dom_stat>(&bytes).with_context(|| format!("domain {dom}'s load"))?;
            let fixed = ravg_of(&stat.load).read(now_ns, half_life_ns);
            Ok(fixed as f64 / RAVG_ONE as f64 / f64::from(scxkit::weight::NICE0_WEIGHT))
        })
        .collect()
}

pub fn write_tune(map: &dyn MapCore, tune: &tune_input) -> Result<()> {
    map.update(&0u32.to_ne_bytes(), as_bytes(tune), MapFlags::ANY).context("writing the tuner's decisions")
}

/// Requests of a pass that no task took up before the next one, by whether the task ran,
/// per level (index: level - 1).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Expired {
    /// The task ran after the request was written, and still did not take it up: the BPF
    /// side missed it.
    pub ran: [u64; NR_LEVELS],
    /// The task did not run (asleep, or waiting in a queue), or exited: nothing could take
    /// the move up.
    pub not_run: [u64; NR_LEVELS],
}

const NR_LEVELS: usize = crate::intf::RUSTY_NR_LB_LEVELS as usize;

impl Expired {
    pub fn add(&mut self, other: &Expired) {
        for level in 0..NR_LEVELS {
            self.ran[level] += other.ran[level];
            self.not_run[level] += other.not_run[level];
        }
    }
}

/// Removes the requests of the previous pass that no task took up, and counts them by level
/// and by whether their task ran since they were written (`ran_since`, by pid).
pub fn clear_requests(map: &dyn MapCore, ran_since: impl Fn(i32) -> bool) -> Result<Expired> {
    let keys: Vec<Vec<u8>> = map.keys().collect();
    let mut expired = Expired::default();
    for key in keys {
        // The BPF side deletes a request as it applies it: one gone meanwhile was taken up.
        let Ok(Some(value)) = map.lookup(&key, MapFlags::ANY) else { continue };
        if map.delete(&key).is_err() {
            continue;
        }
        let level = from_bytes::<lb_request>(&value).map_or(1, |r| r.level as usize).clamp(1, NR_LEVELS) - 1;
        match from_bytes::<i32>(&key) {
            Some(pid) if ran_since(pid) => expired.ran[level] += 1,
            _ => expired.not_run[level] += 1,
        }
    }
    Ok(expired)
}

/// Writes one pass's moves: (pid, new home, level 1 = node / 2 = domain).
pub fn write_requests(map: &dyn MapCore, moves: &[(i32, usize, usize)]) -> Result<()> {
    for &(pid, dom, level) in moves {
        let req = lb_request { dom: dom as u32, level: level as u32 };
        map.update(&pid.to_ne_bytes(), as_bytes(&req), MapFlags::ANY)
            .with_context(|| format!("asking task {pid} to move to domain {dom}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(pid: i32, tracked: u32, dom: u32) -> task_dump {
        // SAFETY: PlainC: all zeroes is a valid task_dump.
        let mut rec: task_dump = unsafe { std::mem::zeroed() };
        rec.pid = pid;
        rec.tracked = tracked;
        rec.ctx.dom = dom;
        rec.ctx.load_dom = crate::intf::RUSTY_NO_DOM;
        rec
    }

    #[test]
    fn the_dump_gives_tracked_tasks_and_counts_the_rest() {
        let recs = [record(10, 1, 2), record(11, 0, 0), record(12, 1, 1)];
        let bytes: Vec<u8> = recs.iter().flat_map(|r| as_bytes(r).to_vec()).collect();
        let dump = parse_dump(&bytes, 0, 1_000_000_000);
        let got: Vec<(i32, usize, bool)> = dump.tasks.iter().map(|t| (t.pid, t.dom, t.runnable)).collect();
        assert_eq!(got, vec![(10, 2, false), (12, 1, false)]);
        assert_eq!(dump.left_out, 1);
    }
}
