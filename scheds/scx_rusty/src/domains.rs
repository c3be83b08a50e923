//! The domains of one attempt, from the options and the topology read for it.

use crate::intf;
use crate::opts::Opts;
use anyhow::{bail, Context, Result};
use scxkit::domains::Domains;
use scxkit::{Cpumask, Topology};

/// One domain per LLC, or per cache of --cache-level, or one per -C mask. Offline CPUs are
/// left out (a restart follows their return), and a domain left without CPUs is dropped.
pub fn build(opts: &Opts, topo: &Topology) -> Result<Domains> {
    let masks: Vec<Cpumask> = if !opts.cpumasks.is_empty() {
        opts.cpumasks
            .iter()
            .map(|text| Cpumask::parse_hex(text, topo.nr_cpus).with_context(|| format!("-C/--cpumasks '{text}'")))
            .collect::<Result<_>>()?
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
