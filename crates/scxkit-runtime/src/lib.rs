//! The runtime every scxkit scheduler uses.
//!
//! A scheduler's `main` parses its options (with [`CommonOpts`] flattened in, and their own
//! check: [`SchedulerOptions`]) with [`parse`] (which also gives it a man page and shell
//! completions, [`docs`]) and calls [`run`] with a closure for one attempt: from [`Attempt::topology`] (read anew for every
//! attempt) it derives its settings, opens its skeleton, [`prepare_ops!`], loads, attaches,
//! and hands the link with its [`Stats`] and periodic [`Jobs`] to [`Attempt::monitor`] (or
//! [`Attempt::drive`] when it runs a loop of its own). The runtime does the rest: refuses
//! to start where sched_ext is missing or taken, samples and publishes statistics (log line,
//! monitor socket, Prometheus, StatsD), detaches cleanly on SIGINT/SIGTERM, prints why the
//! kernel ejected the scheduler with the kernel's debug dump, and starts it again when the
//! kernel asks (CPU hotplug, for a scheduler that does not follow it by itself).

pub mod backends;
pub mod cli;
pub mod clock;
pub mod compat;
pub mod docs;
pub mod exit_info;
pub mod hotplug;
pub mod jobs;
pub mod load_priority;
pub mod logging;
pub mod maps;
pub mod monitor;
pub mod publisher;
pub mod restart;
pub mod runner;
pub mod spec;
pub mod sysfs_state;
#[cfg(test)]
mod test_scheduler;
pub mod upstream;
pub mod version;

pub use cli::{CommonOpts, SchedulerOptions};
pub use compat::KernelBtf;
pub use docs::parse;
pub use exit_info::ExitInfo;
pub use jobs::Jobs;
pub use runner::{run, Attempt, Stats};
pub use spec::{Hotplug, SchedulerSpec};
pub use sysfs_state::{preflight, SchedExtState};

/// Declares a scheduler crate's generated modules, both written by its build.rs
/// (`scxkit_build::build_scheduler`): `bpf_skel`, the libbpf-rs skeleton of
/// src/bpf/main.bpf.c, and `intf`, the Rust twin of src/bpf/intf.h made by bindgen.
#[macro_export]
macro_rules! scheduler_modules {
    () => {
        mod bpf_skel {
            #![allow(clippy::all, unused_imports)]
            include!(concat!(env!("OUT_DIR"), "/bpf_skel.rs"));
        }

        #[allow(non_camel_case_types, non_upper_case_globals, dead_code)]
        mod intf {
            include!(concat!(env!("OUT_DIR"), "/intf.rs"));
        }
    };
}
