//! Task weights as sched_ext sees them (p->scx.weight, 1 to 10000).

/// Weight of a nice-0 task. The Rust twin of `SCXK_NICE0_WEIGHT` (bpf/include/scxkit/weight.h),
/// which BPF code uses; a test of scxkit-userspace holds the two equal.
pub const NICE0_WEIGHT: u32 = 100;
