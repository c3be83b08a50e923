//! The Debian package's parts (packaging/): the systemd unit, the launcher it runs, the
//! default configuration, cargo-deb's recipe in Cargo.toml. No code: the tests below keep
//! them in step with the schedulers in scheds/ and with each other, and run the launcher.

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    fn dir() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
    }

    fn read(name: &str) -> String {
        fs::read_to_string(dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// Every crate in scheds/ is a scheduler the package ships.
    fn schedulers() -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir().join("../scheds"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.starts_with("scx_"))
            .collect();
        names.sort();
        names
    }

    /// The value of `NAME=...` in a shell script or unit.
    fn setting(text: &str, name: &str) -> String {
        text.lines()
            .find_map(|line| line.strip_prefix(&format!("{name}=")))
            .unwrap_or_else(|| panic!("no {name}= line"))
            .trim_matches('"')
            .to_string()
    }

    #[test]
    fn every_scheduler_is_shipped_launchable_configurable_and_documented() {
        let launch = read("scxkit-launch");
        let mut launchable: Vec<String> = setting(&launch, "SCHEDULERS").split_whitespace().map(String::from).collect();
        launchable.sort();
        assert_eq!(launchable, schedulers(), "the launcher's SCHEDULERS");
        let recipe = read("Cargo.toml");
        let config = read("scxkit.default");
        let unit = read("debian/scxkit.service");
        for name in schedulers() {
            assert!(recipe.contains(&format!("[\"target/release/{name}\", \"usr/bin/\", \"755\"]")), "{name} is not in the package's assets");
            assert!(config.lines().any(|l| l.starts_with(&format!("#   {name} "))), "{name} is not described in scxkit.default");
            assert!(unit.contains(&format!("man:{name}(8)")), "{name}'s manual is not in the unit's Documentation=");
        }
        let default = setting(&launch, "DEFAULT_SCHEDULER");
        assert!(config.contains(&format!("(default {default})")) && config.contains(&format!("#SCX_SCHEDULER={default}")));
    }

    #[test]
    fn a_bad_option_is_the_status_the_unit_does_not_restart_on() {
        let usage = clap::Command::new("scx_x").try_get_matches_from(["scx_x", "--no-such-option"]).unwrap_err();
        let unit = read("debian/scxkit.service");
        let prevent = setting(&unit, "RestartPreventExitStatus");
        assert_eq!(prevent, usage.exit_code().to_string(), "clap's status for a bad option");
        assert_eq!(prevent, setting(&read("scxkit-launch"), "BAD_CONFIG"), "the launcher's status for a bad name");
        assert_eq!(setting(&unit, "Restart"), "on-failure");
        assert_eq!(setting(&unit, "ConditionPathExists"), "/sys/kernel/sched_ext");
        let files: Vec<&str> = unit.lines().filter_map(|l| l.strip_prefix("EnvironmentFile=-")).collect();
        assert_eq!(files, ["/etc/default/scx", "/etc/default/scxkit"], "upstream's file first, ours wins");
    }

    /// Runs the launcher with fake schedulers that print their arguments.
    fn launch(env: &[(&str, &str)]) -> (i32, String, String) {
        let bin = tempfile::tempdir().unwrap();
        for name in schedulers() {
            let path = bin.path().join(&name);
            fs::write(&path, format!("#!/bin/sh\necho {name} \"$#\" \"$@\"\n")).unwrap();
            make_executable(&path);
        }
        let mut command = Command::new(dir().join("scxkit-launch"));
        command.env_clear().env("PATH", "/usr/bin:/bin").env("SCXKIT_BIN_DIR", bin.path());
        for (name, value) in env {
            command.env(name, value);
        }
        let out = command.output().unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).trim().to_string(), String::from_utf8_lossy(&out.stderr).into_owned())
    }

    fn make_executable(path: &Path) {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_launcher_reads_upstreams_variables() {
        assert_eq!(launch(&[]).1, "scx_bpfland 0", "the default");
        assert_eq!(launch(&[("SCX_SCHEDULER", "scx_rusty"), ("SCX_FLAGS", "--stats 2  -v")]).1, "scx_rusty 3 --stats 2 -v");
        assert_eq!(launch(&[("SCX_SCHEDULER", "simple")]).1, "scx_simple 0", "the scx_ prefix may be left out");
        let overridden = launch(&[
            ("SCX_SCHEDULER", "scx_rusty"),
            ("SCX_FLAGS", "--stats 2"),
            ("SCX_SCHEDULER_OVERRIDE", "scx_rustland"),
            ("SCX_FLAGS_OVERRIDE", "--slice-us 5000"),
        ]);
        assert_eq!(overridden.1, "scx_rustland 2 --slice-us 5000");
        assert_eq!(launch(&[("SCX_FLAGS", "--watch-pid *")]).1, "scx_bpfland 2 --watch-pid *", "no globbing");
        let (rc, _, err) = launch(&[("SCX_SCHEDULER", "scx_lavd")]);
        assert_eq!(rc, 2);
        assert!(err.contains("'scx_lavd'") && err.contains("not one of scxkit's") && err.contains("scx_bpfland"), "{err}");
    }
}
