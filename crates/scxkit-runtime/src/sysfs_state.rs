//! What `/sys/kernel/sched_ext` says: is sched_ext built in, and is a scheduler loaded?

use anyhow::{bail, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// The sysfs directory the kernel creates when it has sched_ext.
pub const SCHED_EXT_SYSFS: &str = "/sys/kernel/sched_ext";
/// Test hook: a directory read in place of [`SCHED_EXT_SYSFS`], so that a test can show a
/// scheduler a kernel without sched_ext, or one that is taken, on any host.
const SYSFS_ENV: &str = "SCXKIT_TEST_SCHED_EXT_SYSFS";

/// [`SCHED_EXT_SYSFS`], unless a test put another directory in its place.
pub fn sched_ext_sysfs() -> PathBuf {
    std::env::var_os(SYSFS_ENV).map_or_else(|| PathBuf::from(SCHED_EXT_SYSFS), PathBuf::from)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SchedExtState {
    /// The kernel has no sched_ext (`CONFIG_SCHED_CLASS_EXT` unset).
    Unsupported,
    Disabled,
    /// A scheduler is loaded; `ops` is its name.
    Enabled { ops: String },
    /// Enabling or disabling is under way; the word the kernel printed.
    Transition(String),
}

impl SchedExtState {
    /// Reads the state below `root` (normally [`SCHED_EXT_SYSFS`]).
    pub fn read(root: &Path) -> SchedExtState {
        let Ok(state) = fs::read_to_string(root.join("state")) else {
            return SchedExtState::Unsupported;
        };
        match state.trim() {
            "disabled" => SchedExtState::Disabled,
            "enabled" => {
                let ops = fs::read_to_string(root.join("root/ops"))
                    .map(|s| s.trim().to_string())
                    .unwrap_or_else(|_| "an unnamed scheduler".into());
                SchedExtState::Enabled { ops }
            }
            other => SchedExtState::Transition(other.to_string()),
        }
    }
}

/// Refuses to start, with a message saying what to do, unless a scheduler can be loaded now.
pub fn preflight(scheduler: &str) -> Result<()> {
    let sysfs = sched_ext_sysfs();
    check_state(scheduler, &sysfs, &SchedExtState::read(&sysfs))
}

fn check_state(scheduler: &str, sysfs: &Path, state: &SchedExtState) -> Result<()> {
    match state {
        SchedExtState::Disabled => Ok(()),
        SchedExtState::Unsupported => bail!(
            "this kernel has no sched_ext ({} is missing; it needs CONFIG_SCHED_CLASS_EXT=y). \
             Run {scheduler} in the scxkit guest instead: ./demo.sh {scheduler}",
            sysfs.display()
        ),
        SchedExtState::Enabled { ops } => bail!(
            "another sched_ext scheduler is loaded: '{ops}'. Stop it first; {scheduler} was not loaded"
        ),
        SchedExtState::Transition(word) => {
            bail!("sched_ext is {word}; try again in a moment ({scheduler} was not loaded)")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(state: Option<&str>, ops: Option<&str>) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        if let Some(s) = state {
            fs::write(dir.path().join("state"), format!("{s}\n")).unwrap();
        }
        if let Some(o) = ops {
            fs::create_dir(dir.path().join("root")).unwrap();
            fs::write(dir.path().join("root/ops"), format!("{o}\n")).unwrap();
        }
        dir
    }

    #[test]
    fn reads_each_state() {
        assert_eq!(SchedExtState::read(tree(None, None).path()), SchedExtState::Unsupported);
        assert_eq!(SchedExtState::read(tree(Some("disabled"), None).path()), SchedExtState::Disabled);
        assert_eq!(
            SchedExtState::read(tree(Some("enabled"), Some("bpfland_1.0")).path()),
            SchedExtState::Enabled { ops: "bpfland_1.0".into() }
        );
        assert_eq!(
            SchedExtState::read(tree(Some("disabling"), None).path()),
            SchedExtState::Transition("disabling".into())
        );
    }

    fn check(state: SchedExtState) -> Result<()> {
        check_state("scx_simple", Path::new(SCHED_EXT_SYSFS), &state)
    }

    #[test]
    fn refuses_when_taken_naming_the_other_scheduler() {
        let err = check(SchedExtState::Enabled { ops: "rusty".into() }).unwrap_err();
        assert!(err.to_string().contains("'rusty'"), "{err}");
    }

    #[test]
    fn refuses_without_sched_ext_and_points_at_the_guest() {
        let err = check(SchedExtState::Unsupported).unwrap_err();
        assert!(err.to_string().contains("guest"), "{err}");
        assert!(check(SchedExtState::Disabled).is_ok());
    }
}
