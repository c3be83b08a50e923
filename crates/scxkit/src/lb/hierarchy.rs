//! The balancing hierarchy: a tree whose root holds the machine, whose leaves are the
//! scheduling domains (those hold tasks), and whose inner levels group them (NUMA nodes; a
//! package, a die or a cluster level fits in the same way). Each leaf has a capacity (the
//! sum of its online CPUs' capacities); a group's capacity is its leaves'.

use super::policy::LevelPolicy;
use crate::domains::Domains;
use crate::topology::Topology;
use anyhow::{bail, Result};

pub type GroupId = usize;

#[derive(Debug, Clone)]
pub struct Group {
    /// 0 for the root, 1 for its children, ...
    pub depth: usize,
    pub parent: Option<GroupId>,
    pub children: Vec<GroupId>,
    /// The domain a leaf stands for.
    pub domain: Option<usize>,
    /// Sum of the capacities of the leaves below (1024 per full-speed CPU).
    pub capacity: u64,
    /// The key that names it at its level (node id, domain id).
    pub key: usize,
}

#[derive(Debug, Clone)]
pub struct Hierarchy {
    /// Parents come before their children; groups[0] is the root.
    pub groups: Vec<Group>,
    /// `policies[d - 1]` balances the groups at depth d that share a parent.
    pub policies: Vec<LevelPolicy>,
    /// The leaf group of each domain.
    pub leaf_of_domain: Vec<GroupId>,
}

/// One leaf to build: its domain, the keys of its ancestors below the root (outermost first,
/// e.g. `[node]`), and its capacity.
pub struct LeafSpec {
    pub domain: usize,
    pub path: Vec<usize>,
    pub capacity: u64,
}

impl Hierarchy {
    /// Builds the tree from leaves whose paths all have `policies.len() - 1` keys. Domains
    /// must be numbered 0..n.
    pub fn build(leaves: &[LeafSpec], policies: Vec<LevelPolicy>) -> Result<Hierarchy> {
        let depth = policies.len();
        if depth == 0 || leaves.is_empty() {
            bail!("a hierarchy needs at least one level and one leaf");
        }
        let mut groups = vec![Group { depth: 0, parent: None, children: vec![], domain: None, capacity: 0, key: 0 }];
        let mut leaf_of_domain = vec![usize::MAX; leaves.len()];
        for leaf in leaves {
            if leaf.path.len() + 1 != depth {
                bail!("domain {}: a path of {} keys for {} levels", leaf.domain, leaf.path.len(), depth);
            }
            if leaf.domain >= leaves.len() || leaf_of_domain[leaf.domain] != usize::MAX {
                bail!("domain {} is out of range or given twice", leaf.domain);
            }
            let mut at = 0;
            for (d, &key) in leaf.path.iter().enumerate() {
                at = child_with_key(&mut groups, at, d + 1, key);
            }
            let id = groups.len();
            groups.push(Group { depth, parent: Some(at), children: vec![], domain: Some(leaf.domain), capacity: 0, key: leaf.domain });
            groups[at].children.push(id);
            leaf_of_domain[leaf.domain] = id;
            let mut up = Some(id);
            while let Some(g) = up {
                groups[g].capacity += leaf.capacity;
                up = groups[g].parent;
            }
        }
        Ok(Hierarchy { groups, policies, leaf_of_domain })
    }

    /// NUMA nodes, then the given domains (normally one per LLC), with the default policies.
    pub fn numa_domains(topo: &Topology, domains: &Domains) -> Result<Hierarchy> {
        let capacities = online_capacities(topo, domains, &topo.online);
        let leaves: Vec<LeafSpec> =
            domains.domains.iter().map(|d| LeafSpec { domain: d.id, path: vec![d.node], capacity: capacities[d.id] }).collect();
        Hierarchy::build(&leaves, vec![LevelPolicy::node(), LevelPolicy::domain()])
    }

    /// Sets each domain's capacity (indexed by domain) and its ancestors' sums: for the CPUs
    /// online now, when a scheduler follows CPUs going on and offline instead of rebuilding.
    pub fn set_domain_capacities(&mut self, capacities: &[u64]) {
        for g in &mut self.groups {
            g.capacity = 0;
        }
        for (domain, &leaf) in self.leaf_of_domain.iter().enumerate() {
            let capacity = capacities.get(domain).copied().unwrap_or(0);
            let mut up = Some(leaf);
            while let Some(g) = up {
                self.groups[g].capacity += capacity;
                up = self.groups[g].parent;
            }
        }
    }

    pub fn nr_domains(&self) -> usize {
        self.leaf_of_domain.len()
    }

    /// The leaves below `g`, in tree order.
    pub fn leaves_under(&self, g: GroupId) -> Vec<GroupId> {
        let mut out = Vec::new();
        let mut stack = vec![g];
        while let Some(x) = stack.pop() {
            if self.groups[x].domain.is_some() {
                out.push(x);
            }
            stack.extend(self.groups[x].children.iter().rev());
        }
        out
    }

    /// The groups at `depth` (0 is the root).
    pub fn at_depth(&self, depth: usize) -> impl Iterator<Item = GroupId> + '_ {
        (0..self.groups.len()).filter(move |&g| self.groups[g].depth == depth)
    }
}

/// Each domain's capacity (indexed by domain): the sum of its CPUs' in `online`. A CPU the
/// topology does not know (offline when it was read) counts as none.
pub fn online_capacities(topo: &Topology, domains: &Domains, online: &crate::Cpumask) -> Vec<u64> {
    let capacity_of = |cpu: usize| topo.cpus.get(&cpu).map_or(0, |c| c.capacity as u64);
    domains.domains.iter().map(|d| d.cpus.iter().filter(|&c| online.test(c)).map(capacity_of).sum()).collect()
}

fn child_with_key(groups: &mut Vec<Group>, parent: GroupId, depth: usize, key: usize) -> GroupId {
    if let Some(&c) = groups[parent].children.iter().find(|&&c| groups[c].key == key && groups[c].domain.is_none()) {
        return c;
    }
    let id = groups.len();
    groups.push(Group { depth, parent: Some(parent), children: vec![], domain: None, capacity: 0, key });
    groups[parent].children.push(id);
    id
}
