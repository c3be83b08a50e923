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

    #[test]
    fn missing_lists_only_absent_names_in_order() {
        let have = ["a", "c"];
        assert_eq!(missing(&["a", "b", "c", "d"], |k| have.contains(&k)), vec!["b", "d"]);
        assert!(missing(&["a"], |k| have.contains(&k)).is_empty());
    }
}
