//! On a host kernel without sched_ext, the scheduler must refuse to start with a message that
//! says so and points at the guest. Skipped where the kernel has sched_ext.

use std::path::Path;
use std::process::Command;

#[test]
fn refuses_without_sched_ext_and_points_at_the_guest() {
    if Path::new("/sys/kernel/sched_ext").exists() {
        eprintln!("this kernel has sched_ext; the refusal is not testable here");
        return;
    }
    let out = Command::new(env!("CARGO_BIN_EXE_scx_simple")).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("this kernel has no sched_ext"), "{stderr}");
    assert!(stderr.contains("./demo.sh"), "{stderr}");
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
