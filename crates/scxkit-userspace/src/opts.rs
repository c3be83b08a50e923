//! The options every userspace-policy scheduler takes, flattened into its own parser.

use crate::intf;
use anyhow::{bail, Result};
use clap::Args;
use scxkit_runtime::{CommonOpts, SchedulerOptions};

#[derive(Debug, Clone, Args)]
pub struct FrameworkOpts {
    /// When the policy process gives no sign of life for this long (stopped, traced,
    /// stalled), BPF schedules every task itself, FIFO, until it is back; in milliseconds.
    /// At most half of --watchdog-timeout-ms when that is given.
    #[arg(long, value_name = "MS", default_value_t = intf::USCHED_FALLBACK_AFTER_MS_DEFAULT as u64,
          value_parser = clap::value_parser!(u64).range(100..=10_000))]
    pub fallback_after_ms: u64,

    /// Every task goes through the policy, even one waking up while a CPU is idle and the
    /// policy holds nothing, or one whose next wakeups the policy granted (by default such a
    /// task runs there at once, and granted wakeups are queued by BPF).
    #[arg(long)]
    pub full_user: bool,

    #[command(flatten)]
    pub common: CommonOpts,
}

/// A userspace-policy scheduler's options: the framework's, flattened into its own, and one
/// check of its own, which the runtime calls after the framework's, before anything loads.
pub trait PolicyOptions {
    /// The framework's options.
    fn framework(&self) -> &FrameworkOpts;

    /// Refuses what the parser cannot see (options that contradict each other), with a
    /// message naming the option.
    fn check(&self) -> Result<()>;
}

/// A scheduler's options as the runtime checks them: the framework's check, then its own.
pub(crate) struct Checked<'a, O>(pub &'a O);

impl<O: PolicyOptions> SchedulerOptions for Checked<'_, O> {
    fn common(&self) -> &CommonOpts {
        &self.0.framework().common
    }

    fn check(&self) -> Result<()> {
        self.0.framework().check()?;
        self.0.check()
    }
}

impl FrameworkOpts {
    /// Refuses options that contradict each other. The fallback must start well before the
    /// kernel's watchdog gives up on a task the stopped policy holds: at most half of it.
    fn check(&self) -> Result<()> {
        let watchdog_ms = u64::from(self.common.watchdog_timeout_ms);
        if watchdog_ms != 0 && self.fallback_after_ms * 2 > watchdog_ms {
            bail!(
                "--fallback-after-ms ({} ms) must be at most half of --watchdog-timeout-ms ({} ms): \
                 tasks held by a stopped policy would wait past the watchdog and the kernel would eject the scheduler",
                self.fallback_after_ms,
                watchdog_ms
            );
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        framework: FrameworkOpts,
    }

    fn check(args: &[&str]) -> Result<()> {
        let cli = Cli::try_parse_from(std::iter::once("test").chain(args.iter().copied())).expect("parses");
        cli.framework.check()
    }

    #[test]
    fn the_fallback_must_start_within_half_the_watchdog() {
        assert!(check(&[]).is_ok(), "kernel's default watchdog");
        assert!(check(&["--watchdog-timeout-ms", "1000"]).is_ok(), "500 ms of 1000");
        let err = check(&["--watchdog-timeout-ms", "300", "--fallback-after-ms", "2000"]).unwrap_err().to_string();
        assert!(err.contains("--fallback-after-ms (2000 ms)") && err.contains("--watchdog-timeout-ms (300 ms)"), "{err}");
        assert!(check(&["--watchdog-timeout-ms", "900"]).is_err(), "the default 500 ms is over half of 900");
    }
}
