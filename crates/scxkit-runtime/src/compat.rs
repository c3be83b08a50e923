//! Compatibility decided from the running kernel's BTF, not from its version number:
//! which kfuncs BPF can call, and which `sched_ext_ops` fields exist.
//!
//! A kfunc is usable when it exists and its public prototype does not still carry the
//! implicit `struct bpf_prog_aux *` argument: builds that leave it there (7.1.x, 7.2.x cloud)
//! also lack the `_impl` twin the verifier needs, so the call can never load (the reasoning
//! and the verifier's words are in bpf/include/scxkit/kfuncs.bpf.h). The BPF side makes the
//! same decision with `name_usable()`; this side explains it and refuses early.

use anyhow::{bail, Context, Result};
use libbpf_rs::btf::types::{Func, FuncProto, Struct};
use libbpf_rs::btf::Btf;
use libbpf_rs::ReferencesType;

/// Type of the implicit argument some builds leave in public kfunc prototypes.
const IMPLICIT_ARG_STRUCT: &str = "bpf_prog_aux";

pub struct KernelBtf {
    btf: Btf<'static>,
}

impl KernelBtf {
    /// Reads BTF from a file: raw BTF or an ELF with a .BTF section (e.g. an extracted vmlinux).
    pub fn from_path(path: &std::path::Path) -> Result<KernelBtf> {
        let btf = Btf::from_path(path).with_context(|| format!("reading BTF from {}", path.display()))?;
        Ok(KernelBtf { btf })
    }

    /// Reads `/sys/kernel/btf/vmlinux`.
    pub fn from_vmlinux() -> Result<KernelBtf> {
        let btf = Btf::from_vmlinux().context("reading the kernel's BTF (/sys/kernel/btf/vmlinux)")?;
        Ok(KernelBtf { btf })
    }

    pub fn has_kfunc(&self, name: &str) -> bool {
        self.btf.type_by_name::<Func<'_>>(name).is_some()
    }

    /// Whether the kfunc's public prototype ends with a `struct bpf_prog_aux *` argument.
    pub fn kfunc_has_implicit_arg(&self, name: &str) -> bool {
        let Some(func) = self.btf.type_by_name::<Func<'_>>(name) else { return false };
        let Ok(proto) = FuncProto::try_from(func.referenced_type()) else { return false };
        let Some(last) = proto.iter().last() else { return false };
        let Some(pointee) = self.btf.type_by_id::<libbpf_rs::btf::BtfType<'_>>(last.ty)
            .and_then(|ptr| ptr.next_type())
            .map(|pointee| pointee.skip_mods_and_typedefs())
        else {
            return false;
        };
        pointee.name().is_some_and(|n| n == IMPLICIT_ARG_STRUCT)
    }

    pub fn has_ops_field(&self, field: &str) -> bool {
        self.btf
            .type_by_name::<Struct<'_>>("sched_ext_ops")
            .is_some_and(|ops| ops.iter().any(|m| m.name.is_some_and(|n| n == field)))
    }

    /// Whether BPF can call the kfunc with its documented prototype.
    pub fn kfunc_usable(&self, name: &str) -> bool {
        self.has_kfunc(name) && !self.kfunc_has_implicit_arg(name)
    }

    /// Fails naming every kfunc of `required` that BPF cannot call on this kernel.
    pub fn require_kfuncs(&self, required: &[&str]) -> Result<()> {
        let missing = missing(required, |k| self.kfunc_usable(k));
        if !missing.is_empty() {
            bail!(
                "this kernel's sched_ext cannot serve this scheduler: the kfuncs {} are missing \
                 or not callable (their BTF prototype carries the implicit aux argument)",
                missing.join(", ")
            );
        }
        Ok(())
    }

    /// Logs the kfuncs of `optional` that are not usable here and the fallback each gets.
    pub fn report_fallbacks(&self, optional: &[(&str, &str)]) {
        for (kfunc, fallback) in optional {
            if !self.kfunc_usable(kfunc) {
                log::info!("{kfunc} cannot be called on this kernel: {fallback}");
            }
        }
    }
}

fn missing<'a>(required: &[&'a str], present: impl Fn(&str) -> bool) -> Vec<&'a str> {
    required.iter().copied().filter(|k| !present(k)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// BTF shaped like the 7.1 cloud kernel's: build.rs compiles it from
    /// tests/fixtures/kfunc_protos.bpf.c.
    const FIXTURE_7_1_BTF: &str = concat!(env!("OUT_DIR"), "/kfunc_protos.bpf.o");

    /// What any 7.1-shaped BTF, the fixture's or a real kernel's, must be found to offer.
    fn assert_7_1_usability(btf: &KernelBtf) {
        assert!(btf.kfunc_usable("scx_bpf_dsq_insert"));
        assert!(btf.has_kfunc("scx_bpf_create_dsq"));
        assert!(btf.kfunc_has_implicit_arg("scx_bpf_create_dsq"));
        assert!(!btf.kfunc_usable("scx_bpf_create_dsq"));
        assert!(!btf.kfunc_usable("scx_bpf_no_such_kfunc"));
        assert!(btf.has_ops_field("select_cpu") && !btf.has_ops_field("no_such_op"));
    }

    #[test]
    fn decides_usability_from_7_1_shaped_btf() {
        let btf = KernelBtf::from_path(std::path::Path::new(FIXTURE_7_1_BTF)).unwrap();
        assert_7_1_usability(&btf);
        // A pointer last argument that is not the aux one, and no argument at all.
        assert!(btf.kfunc_usable("scx_bpf_task_cpu"));
        assert!(btf.kfunc_usable("scx_bpf_nr_cpu_ids"));
        // The aux argument behind const is still the aux argument.
        assert!(btf.kfunc_has_implicit_arg("fixture_kfunc_const_aux"));
        assert!(!btf.kfunc_usable("fixture_kfunc_const_aux"));
        let required = ["scx_bpf_dsq_insert", "scx_bpf_create_dsq", "scx_bpf_no_such_kfunc"];
        let refusal = btf.require_kfuncs(&required).unwrap_err().to_string();
        assert!(refusal.contains("scx_bpf_create_dsq, scx_bpf_no_such_kfunc"), "{refusal}");
        assert!(btf.require_kfuncs(&["scx_bpf_dsq_insert", "scx_bpf_task_cpu"]).is_ok());
    }

    /// The same checks on a real kernel's BTF: run with SCXKIT_TEST_VMLINUX_71 naming an
    /// extracted 7.1 vmlinux and `cargo test -- --ignored`.
    #[test]
    #[ignore = "needs SCXKIT_TEST_VMLINUX_71, an extracted 7.1 vmlinux"]
    fn decides_usability_from_a_7_1_vmlinux() {
        let var = "SCXKIT_TEST_VMLINUX_71";
        let path = std::env::var(var).unwrap_or_else(|_| panic!("{var} is not set"));
        assert_7_1_usability(&KernelBtf::from_path(std::path::Path::new(&path)).unwrap());
    }

    #[test]
    fn missing_lists_only_absent_names_in_order() {
        let have = ["a", "c"];
        assert_eq!(missing(&["a", "b", "c", "d"], |k| have.contains(&k)), vec!["b", "d"]);
        assert!(missing(&["a"], |k| have.contains(&k)).is_empty());
    }
}
