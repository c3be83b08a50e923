//! The runtime every scxkit scheduler uses.
//!
//! A scheduler's `main` parses its options (with [`CommonOpts`] flattened in), calls
//! [`preflight`], then [`run`] with a closure that opens, loads and attaches its skeleton and
//! hands the result to [`monitor`]. The runtime does the rest: refuses to start where
//! sched_ext is missing or taken, prints stats, detaches cleanly on SIGINT/SIGTERM, prints
//! why the kernel ejected the scheduler, and starts it again when the kernel asks (hotplug).

pub mod cli;
pub mod compat;
pub mod exit_info;
pub mod logging;
pub mod maps;
pub mod runner;
pub mod sysfs_state;

pub use cli::CommonOpts;
pub use compat::KernelBtf;
pub use exit_info::ExitInfo;
pub use runner::{run, SchedulerSpec, Session, Shutdown};
pub use sysfs_state::{preflight, SchedExtState};
