//! The domains of one attempt, from the options and the topology read for it.

use crate::intf;
use crate::opts::Opts;
use anyhow::{bail, Context, Result};
use scxkit::domains::Domains;
use scxkit::{Cpumask, Topology};

/// One domain per LLC, or per cache of --cache-level, or one per -C mask. Offline CPUs are
/// left out (a restart follows their return), and a domain left without CPUs is dropped.
/// One -C mask: hex, naming at least one CPU.
fn parse_cpumask_opt(text: &str, nr_cpus: usize) -> Result<Cpumask> {
    let what = || format!("-C/--cpumasks '{text}' (one hex mask per domain: -C 0x0f -C 0xf0, or -C 0x0f 0xf0)");
    let mask = Cpumask::parse_hex(text, nr_cpus).with_context(what)?;
    if mask.is_empty() {
        bail!("-C/--cpumasks '{text}' names no CPU");
    }
    Ok(mask)
}

pub fn build(opts: &Opts, topo: &Topology) -> Result<Domains> {
    let masks: Vec<Cpumask> = if !opts.cpumasks.is_empty() {
        opts.cpumasks.iter().map(|text| parse_cpumask_opt(text, topo.nr_cpus)).collect::<Result<_>>()?
    } else if let Some(level) = opts.cache_level {
        let doms = Domains::per_cache_level(topo, level).with_context(|| format!("--cache-level {level}"))?;
        doms.domains.into_iter().map(|d| d.cpus).collect()
    } else {
        Domains::per_llc(topo).domains.into_iter().map(|d| d.cpus).collect()
    };
    let named = masks.iter().fold(Cpumask::new(topo.nr_cpus), |acc, m| acc.or(m));
    let offline = named.and_not(&topo.online);
    if !offline.is_empty() {
        log::info!("CPUs {offline} are offline and left out of the domains");
    }
    let online: Vec<Cpumask> = masks.iter().map(|m| m.and(&topo.online)).filter(|m| !m.is_empty()).collect();
    if online.len() < masks.len() {
        log::info!("{} domains have no online CPU and are left out (numbered without them below)", masks.len() - online.len());
    }
    let what = if opts.cpumasks.is_empty() { "the domains" } else { "-C/--cpumasks" };
    let doms = Domains::from_masks(topo, &online).with_context(|| what.to_string())?;
    if doms.domains.len() > intf::RUSTY_MAX_DOMS as usize {
        bail!(
            "{} domains; scx_rusty supports up to {} (make bigger ones with --cache-level or -C)",
            doms.domains.len(),
            intf::RUSTY_MAX_DOMS
        );
    }
    Ok(doms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpumask_option_must_name_a_cpu_and_be_one_mask() {
        assert_eq!(parse_cpumask_opt("0xc", 4).unwrap().to_string(), Cpumask::parse_hex("c", 4).unwrap().to_string());
        let err = parse_cpumask_opt("0x0", 4).unwrap_err().to_string();
        assert!(err.contains("'0x0' names no CPU"), "{err}");
        let err = format!("{:#}", parse_cpumask_opt("0x3,0xc", 4).unwrap_err());
        assert!(err.contains("one hex mask per domain"), "{err}");
    }
}
