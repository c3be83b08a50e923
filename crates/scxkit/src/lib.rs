//! scxkit: the pure-Rust part every scheduler shares (no BPF here): the machine's topology
//! read from sysfs, cpumasks, scheduling domains, infeasible weights and the metrics
//! definitions (their exporters live with the runtime, crates/scxkit-runtime), the decaying
//! average shared with BPF ([`ravg`]) and per-CPU utilization from /proc/stat ([`procstat`]).

pub mod cpumask;
pub mod cpuset;
pub mod domains;
pub mod infeasible;
pub mod lb;
pub mod metrics;
pub mod procstat;
pub mod ravg;
pub mod topology;
pub mod weight;

pub use cpumask::Cpumask;
pub use topology::{CoreType, Topology};
