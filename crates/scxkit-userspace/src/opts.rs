//! The options every userspace-policy scheduler takes, flattened into its own parser.

use crate::intf;
use clap::Args;
use scxkit_bpf::CommonOpts;

#[derive(Debug, Clone, Args)]
pub struct FrameworkOpts {
    /// When the policy process gives no sign of life for this long (stopped, traced,
    /// stalled), BPF schedules every task itself, FIFO, until it is back; in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = intf::USCHED_FALLBACK_AFTER_MS_DEFAULT as u64,
          value_parser = clap::value_parser!(u64).range(100..=10_000))]
    pub fallback_after_ms: u64,

    /// Every task goes through the policy, even one waking up while a CPU is idle and the
    /// policy holds nothing (by default such a task runs there at once).
    #[arg(long)]
    pub full_user: bool,

    #[command(flatten)]
    pub common: CommonOpts,
}
