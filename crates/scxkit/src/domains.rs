//! Scheduling domains: groups of CPUs that share a cache, grouped by NUMA node. By default one
//! domain per last-level cache; or per another cache level; or given by the user as cpumasks.

use crate::cpumask::Cpumask;
use crate::topology::Topology;
use anyhow::{bail, Result};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Domain {
    pub id: usize,
    pub cpus: Cpumask,
    pub node: usize,
}

#[derive(Debug, Clone)]
pub struct Domains {
    /// Ordered by node, then by lowest CPU; `id` is the index.
    pub domains: Vec<Domain>,
}

impl Domains {
    /// One domain per last-level cache.
    pub fn per_llc(topo: &Topology) -> Domains {
        Domains::from_groups(topo.llcs.iter().map(|c| (c.cpus.clone(), c.node)).collect())
    }

    /// One domain per cache of `level`; CPUs that report no such cache keep their LLC.
    pub fn per_cache_level(topo: &Topology, level: u32) -> Result<Domains> {
        let Some(caches) = topo.caches_at(level) else {
            let levels: Vec<String> = topo.caches_by_level.keys().map(|l| l.to_string()).collect();
            bail!("no CPU reports a level-{level} cache; levels present: {}", levels.join(", "));
        };
        let mut groups: Vec<(Cpumask, usize)> = caches.iter().map(|c| (c.cpus.clone(), c.node)).collect();
        let covered = groups.iter().fold(Cpumask::new(topo.nr_cpus), |acc, (m, _)| acc.or(m));
        for llc in &topo.llcs {
            let rest = llc.cpus.and_not(&covered);
            if !rest.is_empty() {
                groups.push((rest, llc.node));
            }
        }
        Ok(Domains::from_groups(groups))
    }

    /// Domains given by the user. Each must be non-empty, hold only online CPUs, stay within
    /// one NUMA node and not overlap another; together they must cover every online CPU.
    pub fn from_masks(topo: &Topology, masks: &[Cpumask]) -> Result<Domains> {
        let mut seen = Cpumask::new(topo.nr_cpus);
        let mut groups = Vec::new();
        for (i, mask) in masks.iter().enumerate() {
            if mask.is_empty() {
                bail!("domain {i} is empty");
            }
            let offline = mask.and_not(&topo.online);
            if !offline.is_empty() {
                bail!("domain {i} ({mask}) holds CPUs that are not online: {offline}");
            }
            let overlap = mask.and(&seen);
            if !overlap.is_empty() {
                bail!("domain {i} ({mask}) overlaps an earlier domain on CPUs {overlap}");
            }
            let nodes: Vec<usize> = topo.nodes.iter().filter(|n| n.cpus.intersects(mask)).map(|n| n.id).collect();
            if nodes.len() > 1 {
                bail!("domain {i} ({mask}) spans NUMA nodes {nodes:?}; a domain must stay within one node");
            }
            seen = seen.or(mask);
            groups.push((mask.clone(), nodes.first().copied().unwrap_or(0)));
        }
        let uncovered = topo.online.and_not(&seen);
        if !uncovered.is_empty() {
            bail!("CPUs {uncovered} are in no domain; the domains must cover every online CPU");
        }
        Ok(Domains::from_groups(groups))
    }

    fn from_groups(mut groups: Vec<(Cpumask, usize)>) -> Domains {
        groups.sort_by_key(|(m, node)| (*node, m.first()));
        let domains = groups
            .into_iter()
            .enumerate()
            .map(|(id, (cpus, node))| Domain { id, cpus, node })
            .collect();
        Domains { domains }
    }

    /// Node ids in order, each with its domains.
    pub fn by_node(&self) -> Vec<(usize, Vec<&Domain>)> {
        let mut out: Vec<(usize, Vec<&Domain>)> = Vec::new();
        for d in &self.domains {
            match out.last_mut() {
                Some((node, doms)) if *node == d.node => doms.push(d),
                _ => out.push((d.node, vec![d])),
            }
        }
        out
    }

    pub fn domain_of_cpu(&self, cpu: usize) -> Option<usize> {
        self.domains.iter().position(|d| d.cpus.test(cpu))
    }

    /// One compact line per node: `node 0: dom0 [0-19,40-59]  dom1 [...]`.
    pub fn describe(&self) -> Vec<String> {
        self.by_node()
            .into_iter()
            .map(|(node, doms)| {
                let parts: Vec<String> = doms.iter().map(|d| format!("dom{} [{}]", d.id, d.cpus)).collect();
                format!("node {node}: {}", parts.join("  "))
            })
            .collect()
    }

    /// The tree for the log: per node `NODE[00] 0b...` (the union of its domains' CPUs,
    /// highest CPU first), then each of its domains indented, `  DOM[00] 0b...`.
    pub fn tree(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (node, doms) in self.by_node() {
            let cpus = doms.iter().skip(1).fold(doms[0].cpus.clone(), |acc, d| acc.or(&d.cpus));
            out.push(format!("NODE[{node:02}] {}", cpus.to_binary()));
            out.extend(doms.iter().map(|d| format!("  DOM[{:02}] {}", d.id, d.cpus.to_binary())));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::fixture;

    #[test]
    fn one_domain_per_llc_grouped_by_node() {
        let d = Domains::per_llc(&fixture("epyc-7702p-nps4"));
        assert_eq!(d.domains.len(), 16);
        let nodes = d.by_node();
        assert_eq!(nodes.len(), 4);
        assert!(nodes.iter().all(|(_, doms)| doms.len() == 4));
        assert_eq!(d.describe()[0], "node 0: dom0 [0-3,64-67]  dom1 [4-7,68-71]  dom2 [8-11,72-75]  dom3 [12-15,76-79]");
        assert_eq!(d.domain_of_cpu(127), Some(15));
    }

    #[test]
    fn per_cache_level_on_the_laptop() {
        let t = fixture("i7-13800h");
        let l2 = Domains::per_cache_level(&t, 2).unwrap();
        assert_eq!(l2.domains.len(), 8);
        assert_eq!(l2.domains[7].cpus.to_list(), "16-19");
        let err = Domains::per_cache_level(&t, 4).unwrap_err().to_string();
        assert!(err.contains("levels present: 1, 2, 3"), "{err}");
    }

    #[test]
    fn tree_lists_each_node_then_its_domains() {
        let t = fixture("xeon-gold-6138-2s");
        let m = |s: &str| Cpumask::parse_list(s, t.nr_cpus).unwrap();
        let d = Domains::from_masks(&t, &[m("0-9"), m("10-19,40-59"), m("20-39,60-79")]).unwrap();
        let bits = |list: &str| m(list).to_binary();
        assert_eq!(
            d.tree(),
            vec![
                format!("NODE[00] {}", bits("0-19,40-59")),
                format!("  DOM[00] {}", bits("0-9")),
                format!("  DOM[01] {}", bits("10-19,40-59")),
                format!("NODE[01] {}", bits("20-39,60-79")),
                format!("  DOM[02] {}", bits("20-39,60-79")),
            ]
        );
        let tree = d.tree();
        assert_eq!(tree[1].len(), "  DOM[00] 0b".len() + 80, "one digit per CPU");
        assert!(tree[1].ends_with(&"1".repeat(10)) && tree[1].contains("0b0000"), "highest CPU first");
        assert_eq!(Domains::per_llc(&t).tree().len(), 4);
    }

    #[test]
    fn user_masks_are_validated() {
        let t = fixture("xeon-gold-6138-2s");
        let m = |s: &str| Cpumask::parse_list(s, t.nr_cpus).unwrap();
        let ok = Domains::from_masks(&t, &[m("20-39,60-79"), m("0-19,40-59")]).unwrap();
        assert_eq!(ok.domains[0].node, 0, "ordered by node");
        let err = |masks: &[Cpumask]| Domains::from_masks(&t, masks).unwrap_err().to_string();
        assert!(err(&[m("0-19,40-59"), m("")]).contains("domain 1 is empty"));
        assert!(err(&[m("0-20,40-59"), m("20-39,60-79")]).contains("spans NUMA nodes [0, 1]"));
        assert!(err(&[m("0-19,40-59"), m("19-39,60-79")]).contains("overlaps an earlier domain on CPUs 19"));
        assert!(err(&[m("0-19,40-59")]).contains("CPUs 20-39,60-79 are in no domain"));
    }
}
