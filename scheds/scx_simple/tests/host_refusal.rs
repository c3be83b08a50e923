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
