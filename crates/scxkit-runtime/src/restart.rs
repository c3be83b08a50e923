//! When to load a scheduler again after the kernel ejected it, and how a run ends.
//!
//! The kernel asks for a restart when a CPU goes on or offline. That is no failure of the
//! scheduler, however often or quickly it comes: such restarts are never limited. Other
//! restart requests are limited only when they come quickly, in a row: an attempt that
//! stayed attached for [`HEALTHY_RUN`] resets the count. Whatever ends the scheduler
//! without the user asking (an error, the restart limit, an ejection by the kernel or by
//! SysRq) is an error exit; only a stop on SIGINT/SIGTERM/SIGHUP exits with status 0.

use crate::exit_info::ExitInfo;
use std::time::Duration;

/// An attempt attached at least this long was healthy: the quick-failure count starts again.
pub const HEALTHY_RUN: Duration = Duration::from_secs(1);
/// Restarts allowed in a row after attempts that each ended within [`HEALTHY_RUN`].
pub const MAX_QUICK_RESTARTS: u32 = 8;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Load the scheduler again.
    Restart,
    /// The user asked to stop and the scheduler went: exit 0.
    Stopped,
    /// Exit non-zero with this explanation.
    Failed(String),
}

#[derive(Debug, Default)]
pub struct RestartPolicy {
    quick_in_a_row: u32,
}

impl RestartPolicy {
    /// Decides after an attempt that stayed attached for `attached` and ended with `info`;
    /// `stop_requested` is whether a signal asked the scheduler to stop.
    pub fn after(&mut self, info: &ExitInfo, attached: Duration, stop_requested: bool) -> Verdict {
        if info.is_error() {
            return Verdict::Failed(format!("ejected by the kernel: {info}"));
        }
        if stop_requested {
            return Verdict::Stopped;
        }
        if !info.restart {
            return Verdict::Failed(format!("ejected without being asked to stop: {info}"));
        }
        if info.for_hotplug() {
            return Verdict::Restart;
        }
        self.quick_in_a_row = if attached >= HEALTHY_RUN { 0 } else { self.quick_in_a_row + 1 };
        if self.quick_in_a_row > MAX_QUICK_RESTARTS {
            return Verdict::Failed(format!(
                "gave up after {MAX_QUICK_RESTARTS} restarts in a row that each ended within {HEALTHY_RUN:?}: {info}"
            ));
        }
        Verdict::Restart
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(kind: i32, restart: bool) -> ExitInfo {
        ExitInfo { kind, restart, reason: "r".into(), ..Default::default() }
    }
    fn hotplug() -> ExitInfo {
        ExitInfo { exit_code: (1 << 48) | (1 << 32), ..exit(UNREG_KERN, true) }
    }
    const UNREG_KERN: i32 = 66;
    const LONG: Duration = Duration::from_secs(30);
    const SHORT: Duration = Duration::from_millis(50);

    #[test]
    fn any_number_of_healthy_restarts_is_fine() {
        let mut policy = RestartPolicy::default();
        for _ in 0..100 {
            assert_eq!(policy.after(&exit(UNREG_KERN, true), LONG, false), Verdict::Restart);
        }
    }

    #[test]
    fn hotplug_restarts_are_never_limited_however_quick() {
        let mut policy = RestartPolicy::default();
        for _ in 0..100 {
            assert_eq!(policy.after(&hotplug(), SHORT, false), Verdict::Restart);
        }
    }

    #[test]
    fn quick_restarts_not_for_hotplug_are_limited_in_a_row_and_a_healthy_run_resets_them() {
        let mut policy = RestartPolicy::default();
        for _ in 0..MAX_QUICK_RESTARTS {
            assert_eq!(policy.after(&exit(UNREG_KERN, true), SHORT, false), Verdict::Restart);
        }
        assert_eq!(policy.after(&exit(UNREG_KERN, true), LONG, false), Verdict::Restart);
        for _ in 0..MAX_QUICK_RESTARTS {
            assert_eq!(policy.after(&exit(UNREG_KERN, true), SHORT, false), Verdict::Restart);
        }
        let Verdict::Failed(why) = policy.after(&exit(UNREG_KERN, true), SHORT, false) else { panic!("no limit") };
        assert!(why.contains("gave up after 8 restarts in a row"), "{why}");
    }

    #[test]
    fn only_a_requested_stop_is_a_clean_exit() {
        let mut policy = RestartPolicy::default();
        assert_eq!(policy.after(&exit(64, false), LONG, true), Verdict::Stopped);
        assert_eq!(policy.after(&exit(UNREG_KERN, true), LONG, true), Verdict::Stopped, "a signal wins over a restart");
        assert!(matches!(policy.after(&exit(67, false), LONG, false), Verdict::Failed(_)), "SysRq");
        assert!(matches!(policy.after(&exit(66, false), LONG, false), Verdict::Failed(_)));
        assert!(matches!(policy.after(&exit(1026, false), LONG, true), Verdict::Failed(_)), "a stall is an error even while stopping");
    }
}
