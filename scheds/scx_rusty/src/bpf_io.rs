//! The one place that reads scx_rusty's BPF maps into the balancer's input and writes its
//! decisions (and the tuner's) back.

use crate::intf::{dom_stat, lb_request, task_ctx, tune_input};
use anyhow::{Context, Result};
use libbpf_rs::{MapCore, MapFlags};
use scxkit::ravg::{Ravg, RAVG_ONE};
use scxkit_runtime::maps::{as_bytes, from_bytes, PlainC};

// SAFETY: bindgen's twins of intf.h's structs: integers and arrays of them.
unsafe impl PlainC for task_ctx {}
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

/// Every task the BPF side knows, with its duty cycle at `now_ns`.
pub fn read_tasks(map: &dyn MapCore, now_ns: u64, half_life_ns: u64) -> Result<Vec<TaskView>> {
    let mut tasks = Vec::new();
    for key in map.keys() {
        // A task may exit between the key and the lookup.
        let Some(bytes) = map.lookup(&key, MapFlags::ANY).context("reading the task map")? else { continue };
        let (Some(pid), Some(ctx)) = (from_bytes::<i32>(&key), from_bytes::<task_ctx>(&bytes)) else { continue };
        let duty = ravg_of(&ctx.duty).read(now_ns, half_life_ns) as f64 / RAVG_ONE as f64;
        tasks.push(TaskView {
            pid,
            dom: ctx.dom as usize,
            dom_mask: ctx.dom_mask,
            weight: ctx.weight as u64,
            duty,
            runnable: ctx.load_dom != crate::intf::RUSTY_NO_DOM,
            last_ran_ns: ctx.start_ns,
        });
    }
    Ok(tasks)
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
