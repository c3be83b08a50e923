//! `-V/--version`: what was built (scxkit's version and the git commit) and what the running
//! kernel offers the scheduler, read now: its release, whether it has sched_ext (and whether
//! a scheduler is loaded), its BTF, and for each kfunc the scheduler uses whether BPF can call
//! it here, with the fallback where it cannot. Needs no root and loads nothing.

use crate::compat::KernelBtf;
use crate::spec::SchedulerSpec;
use crate::sysfs_state::{sched_ext_sysfs, SchedExtState};
use std::fmt::Write;

/// The git commit the binaries were built from, "unknown" outside a git tree (build.rs).
pub const GIT_COMMIT: &str = env!("SCXKIT_GIT_COMMIT");
/// scxkit's version (the workspace's, shared by every crate).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
const OSRELEASE: &str = "/proc/sys/kernel/osrelease";

/// Whether BPF can call a kfunc on this kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kfunc {
    Usable,
    Missing,
    /// Present, but its public prototype still carries the implicit aux argument.
    NotCallable,
}

/// What the running kernel offers, as far as `--version` reports it.
#[derive(Debug, Clone)]
pub struct KernelFeatures {
    pub release: Option<String>,
    pub sched_ext: SchedExtState,
    /// None when the kernel's BTF could not be read (then nothing is known of the kfuncs).
    pub kfuncs: Option<Vec<(&'static str, Kfunc)>>,
}

impl KernelFeatures {
    /// Reads them from this machine for the kfuncs `spec` uses.
    pub fn probe(spec: &SchedulerSpec) -> KernelFeatures {
        let release = std::fs::read_to_string(OSRELEASE).ok().map(|r| r.trim().to_string());
        let sched_ext = SchedExtState::read(&sched_ext_sysfs());
        let kfuncs = KernelBtf::from_vmlinux().ok().map(|btf| kfunc_names(spec).map(|k| (k, status(&btf, k))).collect());
        KernelFeatures { release, sched_ext, kfuncs }
    }
}

fn kfunc_names(spec: &SchedulerSpec) -> impl Iterator<Item = &'static str> + '_ {
    spec.required_kfuncs.iter().copied().chain(spec.optional_kfuncs.iter().map(|(k, _)| *k))
}

fn status(btf: &KernelBtf, kfunc: &str) -> Kfunc {
    match (btf.has_kfunc(kfunc), btf.kfunc_usable(kfunc)) {
        (_, true) => Kfunc::Usable,
        (true, false) => Kfunc::NotCallable,
        (false, false) => Kfunc::Missing,
    }
}

/// The text `--version` prints.
pub fn report(spec: &SchedulerSpec, kernel: &KernelFeatures) -> String {
    let mut out = format!("{} {VERSION} (scxkit, git {GIT_COMMIT})\n", spec.name);
    let release = kernel.release.as_deref().unwrap_or("unknown");
    let _ = writeln!(out, "kernel: {release}");
    let _ = writeln!(out, "sched_ext: {}", describe_state(&kernel.sched_ext));
    if kernel.sched_ext == SchedExtState::Unsupported {
        out.push_str("kfuncs: none (no sched_ext)\n");
        return out;
    }
    let Some(kfuncs) = &kernel.kfuncs else {
        out.push_str("kfuncs: unknown (the kernel's BTF, /sys/kernel/btf/vmlinux, could not be read)\n");
        return out;
    };
    out.push_str("kfuncs:\n");
    for (kfunc, found) in kfuncs {
        let _ = writeln!(out, "  {kfunc}: {}", describe_kfunc(spec, kfunc, *found));
    }
    out
}

fn describe_state(state: &SchedExtState) -> String {
    match state {
        SchedExtState::Unsupported => format!("no ({} is missing: CONFIG_SCHED_CLASS_EXT is not set)", sched_ext_sysfs().display()),
        SchedExtState::Disabled => "yes, no scheduler loaded".into(),
        SchedExtState::Enabled { ops } => format!("yes, '{ops}' loaded"),
        SchedExtState::Transition(word) => format!("yes, {word}"),
    }
}

fn describe_kfunc(spec: &SchedulerSpec, kfunc: &str, found: Kfunc) -> String {
    let why = match found {
        Kfunc::Usable => return "usable".into(),
        Kfunc::Missing => "missing",
        Kfunc::NotCallable => "not callable (its prototype carries the implicit aux argument)",
    };
    match spec.optional_kfuncs.iter().find(|(k, _)| *k == kfunc) {
        Some((_, fallback)) => format!("{why}; fallback: {fallback}"),
        None => format!("{why}; required: {} cannot start on this kernel", spec.name),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scxkit::metrics::Snapshot;

    fn no_line(_: &Snapshot, _: &Snapshot) -> String {
        String::new()
    }

    const SPEC: SchedulerSpec = SchedulerSpec {
        name: "scx_test",
        hotplug: crate::spec::Hotplug::Follows,
        required_kfuncs: &["scx_bpf_dsq_insert"],
        optional_kfuncs: &[("scx_bpf_create_dsq", "the global FIFO")],
        metrics: &[],
        log_line: no_line,
    };

    #[test]
    fn names_the_commit_the_kernel_and_each_kfunc() {
        let kernel = KernelFeatures {
            release: Some("7.1.13-cloud-amd64".into()),
            sched_ext: SchedExtState::Enabled { ops: "rusty_1.0".into() },
            kfuncs: Some(vec![("scx_bpf_dsq_insert", Kfunc::Missing), ("scx_bpf_create_dsq", Kfunc::NotCallable)]),
        };
        let text = report(&SPEC, &kernel);
        assert!(text.starts_with(&format!("scx_test {VERSION} (scxkit, git {GIT_COMMIT})\n")), "{text}");
        assert!(!GIT_COMMIT.is_empty());
        assert!(text.contains("kernel: 7.1.13-cloud-amd64\n"), "{text}");
        assert!(text.contains("sched_ext: yes, 'rusty_1.0' loaded\n"), "{text}");
        assert!(text.contains("scx_bpf_dsq_insert: missing; required: scx_test cannot start"), "{text}");
        assert!(text.contains("scx_bpf_create_dsq: not callable (its prototype carries the implicit aux argument); fallback: the global FIFO"), "{text}");
    }

    #[test]
    fn says_what_is_unknown() {
        let kernel = KernelFeatures { release: None, sched_ext: SchedExtState::Unsupported, kfuncs: None };
        let text = report(&SPEC, &kernel);
        assert!(text.contains("kernel: unknown\n"), "{text}");
        assert!(text.contains("sched_ext: no (") && text.contains("CONFIG_SCHED_CLASS_EXT is not set"), "{text}");
        assert!(text.contains("kfuncs: none (no sched_ext)"), "{text}");
        let kernel = KernelFeatures { sched_ext: SchedExtState::Disabled, ..kernel };
        assert!(report(&SPEC, &kernel).contains("kfuncs: unknown (the kernel's BTF"));
    }
}
