//! CPU sets named by users: a hex cpumask or one of the named sets a scheduler's
//! `--primary-domain` accepts.

use crate::cpumask::Cpumask;
use crate::topology::Topology;
use anyhow::{bail, Context, Result};

/// The names accepted besides a hex mask, for help texts and errors.
pub const NAMED_SETS: &str = "all, performance, powersave, auto";

/// Resolves `all` (every online CPU), `performance` (the fastest cores), `powersave` (the
/// most efficient cores), `auto` (the fastest cores on a hybrid machine, else all), or a hex
/// mask such as `0xff` or `ff000`. The result is never empty; a mask may name CPUs that are
/// offline now (the caller keeps the online ones, and looks again after a hotplug).
pub fn resolve_cpu_set(spec: &str, topo: &Topology) -> Result<Cpumask> {
    let mask = match spec.trim() {
        "all" => topo.online.clone(),
        "performance" => topo.cpus_by_capacity(true),
        "powersave" => topo.cpus_by_capacity(false),
        "auto" if topo.is_hybrid() => topo.cpus_by_capacity(true),
        "auto" => topo.online.clone(),
        hex => Cpumask::parse_hex(hex, topo.nr_cpus)
            .with_context(|| format!("expected a hex cpumask (e.g. 0xff) or one of: {NAMED_SETS}"))?,
    };
    if mask.is_empty() {
        bail!("cpumask '{spec}' selects no CPU; a non-empty set is needed");
    }
    let missing = mask.and_not(&topo.possible);
    if !missing.is_empty() {
        bail!("cpumask '{spec}' names CPUs {} that this machine does not have", missing.to_list());
    }
    Ok(mask)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    #[test]
    fn named_sets_on_a_hybrid_laptop() {
        let t = fixture("i7-13800h");
        assert_eq!(resolve_cpu_set("performance", &t).unwrap().to_list(), "0-11");
        assert_eq!(resolve_cpu_set("powersave", &t).unwrap().to_list(), "12-19");
        assert_eq!(resolve_cpu_set("auto", &t).unwrap().to_list(), "0-11");
        assert_eq!(resolve_cpu_set("all", &t).unwrap().to_list(), "0-19");
        assert_eq!(resolve_cpu_set("0x00fff", &t).unwrap().to_list(), "0-11");
        assert_eq!(resolve_cpu_set("ff000", &t).unwrap().to_list(), "12-19");
    }

    #[test]
    fn named_sets_on_a_uniform_server_are_all_cpus() {
        let t = fixture("xeon-gold-6138-2s");
        for name in ["performance", "powersave", "auto", "all"] {
            assert_eq!(resolve_cpu_set(name, &t).unwrap().weight(), 80, "{name}");
        }
    }

    #[test]
    fn bad_sets_are_refused_with_the_reason() {
        let t = fixture("i7-13800h");
        let msg = |s: &str| format!("{:#}", resolve_cpu_set(s, &t).unwrap_err());
        assert!(msg("0x100000").contains("CPU 20 is beyond this machine's 20 CPUs"), "{}", msg("0x100000"));
        assert!(msg("xyz").contains("'x' is not a hex digit"));
        assert!(msg("xyz").contains("all, performance"));
        assert!(msg("").contains("empty cpumask"));
        assert!(msg("0x0").contains("selects no CPU"));
    }
}
