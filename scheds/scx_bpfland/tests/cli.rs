//! scx_bpfland's command line on the host: an upstream option it does not implement is
//! refused as a bad option (clap's exit status 2), before any check of the kernel.

use std::process::Command;

#[test]
fn an_upstream_option_it_does_not_implement_is_refused_before_anything_else() {
    // A sysfs that does not exist: a scheduler that got as far as the kernel's checks would
    // say that this kernel has no sched_ext.
    let out = Command::new(env!("CARGO_BIN_EXE_scx_bpfland"))
        .args(["-m", "performance", "-p"])
        .env("SCXKIT_TEST_SCHED_EXT_SYSFS", "/nonexistent/sched_ext")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("scx_bpfland does not implement upstream's -p/--local-pcpu"), "{stderr}");
    assert!(!stderr.contains("sched_ext"), "{stderr}");
}

#[test]
fn upstream_presets_get_as_far_as_the_kernel_checks() {
    // scx_loader's lowlatency preset: accepted, so it stops only at the missing sched_ext.
    let out = Command::new(env!("CARGO_BIN_EXE_scx_bpfland"))
        .args(["-s", "5000", "-S", "500", "-l", "5000", "-m", "performance"])
        .env("SCXKIT_TEST_SCHED_EXT_SYSFS", "/nonexistent/sched_ext")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("this kernel has no sched_ext"), "{stderr}");
}

#[test]
fn a_failed_option_check_exits_2_like_a_malformed_option() {
    let out = Command::new(env!("CARGO_BIN_EXE_scx_bpfland"))
        .args(["--slice-us", "1000", "--slice-min-us", "30000"])
        .env("SCXKIT_TEST_SCHED_EXT_SYSFS", "/nonexistent/sched_ext")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--slice-min-us"), "{stderr}");
}
