//! The command line of scx_simple on the host: refusals before anything is loaded, help.
//! Where sched_ext cannot take a scheduler, it must refuse to start and say why; the kernel's
//! sysfs directory is replaced by a made-up one (SCXKIT_TEST_SCHED_EXT_SYSFS), so that each
//! refusal is tested on any host, with or without sched_ext.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

/// scx_simple started against `sysfs` in place of /sys/kernel/sched_ext.
fn run_with_sysfs(sysfs: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scx_simple")).env("SCXKIT_TEST_SCHED_EXT_SYSFS", sysfs).output().unwrap()
}

/// The refusal scx_simple prints against a sysfs directory holding these files.
fn refusal_with(files: &[(&str, &str)]) -> String {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        let file = dir.path().join(name);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, format!("{text}\n")).unwrap();
    }
    let out = run_with_sysfs(dir.path());
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "started: {stderr}");
    stderr
}

#[test]
fn refuses_without_sched_ext_and_points_at_the_guest() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("sched_ext");
    let out = run_with_sysfs(&missing);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "started: {stderr}");
    assert!(stderr.contains(&format!("this kernel has no sched_ext ({} is missing", missing.display())), "{stderr}");
    assert!(stderr.contains("./demo.sh"), "{stderr}");
}

#[test]
fn refuses_while_another_scheduler_is_loaded_naming_it() {
    let stderr = refusal_with(&[("state", "enabled"), ("root/ops", "rusty_1.0")]);
    assert!(stderr.contains("another sched_ext scheduler is loaded: 'rusty_1.0'"), "{stderr}");
}

#[test]
fn refuses_while_sched_ext_is_switching() {
    let stderr = refusal_with(&[("state", "disabling")]);
    assert!(stderr.contains("sched_ext is disabling; try again"), "{stderr}");
}

#[test]
fn bad_options_are_refused_before_anything_else() {
    let out = Command::new(env!("CARGO_BIN_EXE_scx_simple")).arg("--slice-us=0").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--slice-us"), "{stderr}");
}

#[test]
fn help_stats_lists_every_statistic_without_loading() {
    let out = Command::new(env!("CARGO_BIN_EXE_scx_simple")).arg("--help-stats").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("dispatched_tasks_total{type=\"local\"}"), "{stdout}");
    assert!(stdout.contains("dispatched_tasks_total{type=\"shared\"}"), "{stdout}");
    assert!(stdout.lines().all(|l| l.len() > 60), "each line has a description: {stdout}");
}

#[test]
fn help_names_units_and_defaults() {
    let out = Command::new(env!("CARGO_BIN_EXE_scx_simple")).arg("--help").output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("in microseconds") && stdout.contains("[default: 20000]"), "{stdout}");
    assert!(stdout.contains("--enable-prometheus") && stdout.contains("--statsd"), "{stdout}");
}

/// The commit `git` says this tree is at, when the tests run inside git.
fn head_commit() -> Option<String> {
    let out = Command::new("git").args(["rev-parse", "--short", "HEAD"]).current_dir(env!("CARGO_MANIFEST_DIR")).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

#[test]
fn version_names_the_commit_and_what_the_kernel_offers_without_loading() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_scx_simple"))
        .arg("--version")
        .env("SCXKIT_TEST_SCHED_EXT_SYSFS", dir.path().join("missing"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.starts_with(&format!("scx_simple {} (scxkit, git ", env!("CARGO_PKG_VERSION"))), "{stdout}");
    if let (Some(commit), None) = (head_commit(), option_env!("SCXKIT_GIT_COMMIT")) {
        // A commit made since the build is not named; `cargo test` builds again first.
        assert!(stdout.contains(&format!("git {commit})")), "HEAD is {commit}: {stdout}");
    }
    assert!(stdout.contains("\nkernel: "), "{stdout}");
    assert!(stdout.contains("sched_ext: no (") && stdout.contains("kfuncs: none (no sched_ext)"), "{stdout}");
}
