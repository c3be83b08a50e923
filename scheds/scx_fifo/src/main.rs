//! scx_fifo: the whole scxkit-userspace API in one file. The kernel hands each task that
//! needs a CPU to this process; it keeps them in arrival order and sends them back, each to
//! any CPU, with a fixed slice, at most as many per call as there are CPUs: the others it
//! holds, and the framework calls it again when a CPU runs out of work. Everything else (loading, stats, signals, hotplug restarts,
//! the fallback while this process is stopped) comes from the framework.

use anyhow::Result;
use clap::Parser;
use scxkit_userspace::{Decision, Dispatcher, FrameworkOpts, Policy, PolicyOptions, QueuedTask, Target};
use std::collections::VecDeque;

/// First come, first served, decided in userspace.
#[derive(Debug, Parser)]
#[command(name = "scx_fifo")]
struct Opts {
    /// Time slice of every task, in microseconds.
    #[arg(long, value_name = "US", default_value_t = 5000,
          value_parser = clap::value_parser!(u64).range(100..=1_000_000))]
    slice_us: u64,

    #[command(flatten)]
    framework: FrameworkOpts,
}

impl PolicyOptions for Opts {
    fn framework(&self) -> &FrameworkOpts {
        &self.framework
    }

    /// Its one option is checked by its parser.
    fn check(&self) -> Result<()> {
        Ok(())
    }
}

struct Fifo {
    slice_ns: u64,
    waiting: VecDeque<QueuedTask>,
    /// Arrival number of the next task sent: its vtime in the kernel's queue.
    sent: u64,
}

impl Policy for Fifo {
    /// A task that needs a CPU: it waits behind those that came before.
    fn enqueue(&mut self, task: QueuedTask) {
        self.waiting.push_back(task);
    }

    /// Sends the oldest waiting tasks, as many as there are CPUs, to any CPU. The arrival number is the
    /// vtime, so tasks that still wait for a free CPU keep their order in the kernel too.
    fn dispatch(&mut self, out: &mut Dispatcher) -> usize {
        for _ in 0..out.nr_cpus() {
            let Some(task) = self.waiting.pop_front() else { break };
            let decision = Decision { target: Target::AnyCpu, slice_ns: self.slice_ns, vtime: self.sent, grant: None };
            if out.dispatch(&task, decision) {
                self.sent += 1;
            } else {
                // The ring buffer is full: keep it, first in line for the next call.
                self.waiting.push_front(task);
                break;
            }
        }
        self.waiting.len()
    }
}

fn main() -> Result<()> {
    let opts = scxkit_runtime::parse::<Opts>();
    let slice_ns = opts.slice_us * 1000;
    scxkit_userspace::run("scx_fifo", &opts, |_topology| {
        Ok(Fifo { slice_ns, waiting: VecDeque::with_capacity(4096), sent: 0 })
    })
}
