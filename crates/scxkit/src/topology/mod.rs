//! The machine's CPU topology, read from sysfs: CPUs, cores (identified by socket and core
//! ID, since core IDs repeat across sockets), caches of every level, the last-level cache
//! (LLC) of each CPU, NUMA nodes with distances, sockets, and each CPU's capacity and core
//! type on hybrid machines.
//!
//! Only online CPUs are placed in cores, caches and nodes; offline and missing CPU numbers
//! are simply absent from every mask. A CPU without cache information gets one LLC per NUMA
//! node (what virtual machines often show).

mod sysfs;

use crate::cpumask::Cpumask;
use anyhow::{Context, Result};
use std::collections::BTreeMap;
use std::path::Path;
use sysfs::{CacheKey, RawCpu, SysfsReader};

/// The kernel's full capacity of one CPU (SCHED_CAPACITY_SCALE).
pub const CAPACITY_SCALE: u32 = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoreType {
    /// Every core is alike (not a hybrid machine).
    Uniform,
    /// The fastest cores of a hybrid machine (P-cores, big cores).
    Performance,
    /// The slower, more efficient cores of a hybrid machine (E-cores, little cores).
    Efficiency,
}

#[derive(Debug, Clone)]
pub struct Cpu {
    pub id: usize,
    pub socket: usize,
    pub core_id: usize,
    /// Index into [`Topology::cores`].
    pub core: usize,
    /// Index into [`Topology::llcs`].
    pub llc: usize,
    pub node: usize,
    /// Relative speed, [`CAPACITY_SCALE`] for the fastest CPU.
    pub capacity: u32,
    pub max_freq_khz: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct Core {
    pub socket: usize,
    pub core_id: usize,
    /// The core's hardware threads (SMT siblings).
    pub cpus: Cpumask,
    pub core_type: CoreType,
    pub node: usize,
}

#[derive(Debug, Clone)]
pub struct Cache {
    /// Cache level; 0 for the stand-in LLC of CPUs without cache information.
    pub level: u32,
    pub cpus: Cpumask,
    pub node: usize,
}

#[derive(Debug, Clone)]
pub struct Node {
    pub id: usize,
    pub cpus: Cpumask,
    /// Distance to each node, by node id, as in `nodeN/distance` (10 = local).
    pub distances: Vec<u32>,
}

#[derive(Debug, Clone)]
pub struct Topology {
    /// Size of every mask: one past the highest possible CPU.
    pub nr_cpus: usize,
    pub possible: Cpumask,
    pub online: Cpumask,
    /// Online CPUs by id.
    pub cpus: BTreeMap<usize, Cpu>,
    pub cores: Vec<Core>,
    /// Last-level caches, ordered by their lowest CPU.
    pub llcs: Vec<Cache>,
    /// Caches of each level, ordered by their lowest CPU.
    pub caches_by_level: BTreeMap<u32, Vec<Cache>>,
    pub nodes: Vec<Node>,
    /// CPUs of each socket, by socket id.
    pub sockets: BTreeMap<usize, Cpumask>,
}

impl Topology {
    /// Reads the running machine's topology from `/sys`.
    pub fn from_system() -> Result<Topology> {
        Topology::from_sysfs(Path::new("/sys"))
    }

    /// Reads a topology from a sysfs tree rooted at `root` (holding `devices/system/...`).
    pub fn from_sysfs(root: &Path) -> Result<Topology> {
        let reader = SysfsReader::new(root);
        let possible = reader.possible()?;
        let nr_cpus = possible.nr_cpus();
        let online = reader.online(nr_cpus)?.and(&possible);
        let raw: Vec<RawCpu> = online
            .iter()
            .map(|id| reader.cpu(id).with_context(|| format!("CPU {id}")))
            .collect::<Result<_>>()?;
        let nodes = build_nodes(reader.nodes(nr_cpus)?, &online);
        let node_of = |cpu: usize| nodes.iter().find(|n| n.cpus.test(cpu)).map_or(0, |n| n.id);
        let capacities = capacities(&raw);

        let mut topo = Topology {
            nr_cpus,
            possible,
            online,
            cpus: BTreeMap::new(),
            cores: Vec::new(),
            llcs: Vec::new(),
            caches_by_level: BTreeMap::new(),
            nodes: Vec::new(),
            sockets: BTreeMap::new(),
        };
        let core_index = group(&raw, nr_cpus, |c| Some((c.socket, c.core_id)));
        let llc_index = group(&raw, nr_cpus, |c| Some(llc_key(c, node_of(c.id))));
        for level in raw.iter().flat_map(|c| c.caches.iter().map(|k| k.level)).collect::<std::collections::BTreeSet<_>>() {
            let by_key = group(&raw, nr_cpus, |c| c.caches.iter().find(|k| k.level == level).map(|k| k.key.clone()));
            let caches = by_key.masks.iter().map(|m| Cache { level, cpus: m.clone(), node: node_of(m.first().unwrap()) }).collect();
            topo.caches_by_level.insert(level, caches);
        }
        let max_capacity = capacities.values().copied().max().unwrap_or(CAPACITY_SCALE);
        let hybrid = capacities.values().any(|&c| c != max_capacity);
        for (i, mask) in core_index.masks.iter().enumerate() {
            let first = raw.iter().find(|c| c.id == mask.first().unwrap()).unwrap();
            let capacity = mask.iter().map(|cpu| capacities[&cpu]).max().unwrap();
            let core_type = match (hybrid, capacity == max_capacity) {
                (false, _) => CoreType::Uniform,
                (true, true) => CoreType::Performance,
                (true, false) => CoreType::Efficiency,
            };
            let node = node_of(first.id);
            topo.cores.push(Core { socket: first.socket, core_id: first.core_id, cpus: mask.clone(), core_type, node });
            debug_assert_eq!(topo.cores.len(), i + 1);
        }
        topo.llcs = llc_index
            .masks
            .iter()
            .map(|m| {
                let first = raw.iter().find(|c| c.id == m.first().unwrap()).unwrap();
                Cache { level: first.caches.iter().map(|k| k.level).max().unwrap_or(0), cpus: m.clone(), node: node_of(first.id) }
            })
            .collect();
        for c in &raw {
            topo.sockets.entry(c.socket).or_insert_with(|| Cpumask::new(nr_cpus)).set(c.id);
            topo.cpus.insert(c.id, Cpu {
                id: c.id,
                socket: c.socket,
                core_id: c.core_id,
                core: core_index.index_of[&c.id],
                llc: llc_index.index_of[&c.id],
                node: node_of(c.id),
                capacity: capacities[&c.id],
                max_freq_khz: c.max_freq_khz,
            });
        }
        topo.nodes = nodes;
        Ok(topo)
    }

    pub fn nr_online(&self) -> usize {
        self.online.weight()
    }

    /// Whether CPUs differ in capacity (P-cores and E-cores, big and little).
    pub fn is_hybrid(&self) -> bool {
        self.cores.iter().any(|c| c.core_type != CoreType::Uniform)
    }

    /// Whether any core has more than one hardware thread.
    pub fn has_smt(&self) -> bool {
        self.cores.iter().any(|c| c.cpus.weight() > 1)
    }

    /// Online CPUs of the cores of a type.
    pub fn cpus_of_type(&self, core_type: CoreType) -> Cpumask {
        self.cores
            .iter()
            .filter(|c| c.core_type == core_type)
            .fold(Cpumask::new(self.nr_cpus), |acc, c| acc.or(&c.cpus))
    }

    /// Online CPUs whose capacity is the highest (`fastest`) or the lowest of the machine.
    pub fn cpus_by_capacity(&self, fastest: bool) -> Cpumask {
        let caps = self.cpus.values().map(|c| c.capacity);
        let Some(target) = (if fastest { caps.max() } else { caps.min() }) else {
            return Cpumask::new(self.nr_cpus);
        };
        let ids = self.cpus.values().filter(|c| c.capacity == target).map(|c| c.id);
        Cpumask::from_cpus(self.nr_cpus, ids).expect("online CPUs fit the mask")
    }

    /// The caches of `level`, or the LLCs when no CPU reports that level.
    pub fn caches_at(&self, level: u32) -> Option<&[Cache]> {
        self.caches_by_level.get(&level).map(Vec::as_slice)
    }
}

/// A grouping of CPUs: masks in order of their lowest CPU, and each CPU's group index.
struct Groups {
    masks: Vec<Cpumask>,
    index_of: BTreeMap<usize, usize>,
}

fn group<K: Ord + Clone>(raw: &[RawCpu], nr_cpus: usize, key: impl Fn(&RawCpu) -> Option<K>) -> Groups {
    let mut by_key: BTreeMap<K, Cpumask> = BTreeMap::new();
    for c in raw {
        if let Some(k) = key(c) {
            by_key.entry(k).or_insert_with(|| Cpumask::new(nr_cpus)).set(c.id);
        }
    }
    let mut masks: Vec<Cpumask> = by_key.into_values().collect();
    masks.sort_by_key(|m| m.first());
    let index_of = masks.iter().enumerate().flat_map(|(i, m)| m.iter().map(move |cpu| (cpu, i))).collect();
    Groups { masks, index_of }
}

/// Identity of a CPU's last-level cache; CPUs without caches share one stand-in per node.
fn llc_key(cpu: &RawCpu, node: usize) -> (u32, Option<CacheKey>, usize) {
    match cpu.caches.iter().max_by_key(|k| k.level) {
        Some(k) => (k.level, Some(k.key.clone()), 0),
        None => (0, None, node),
    }
}

fn build_nodes(raw: Vec<sysfs::RawNode>, online: &Cpumask) -> Vec<Node> {
    if raw.is_empty() {
        return vec![Node { id: 0, cpus: online.clone(), distances: vec![10] }];
    }
    raw.into_iter()
        .map(|n| Node { id: n.id, cpus: n.cpus.and(online), distances: n.distances })
        .collect()
}

/// Each CPU's capacity: `cpu_capacity` where the kernel gives it, else derived from the
/// maximum frequency relative to the fastest CPU, else all equal.
fn capacities(raw: &[RawCpu]) -> BTreeMap<usize, u32> {
    if raw.iter().any(|c| c.capacity.is_some()) {
        return raw.iter().map(|c| (c.id, c.capacity.unwrap_or(CAPACITY_SCALE))).collect();
    }
    let max_freq = raw.iter().filter_map(|c| c.max_freq_khz).max();
    raw.iter()
        .map(|c| {
            let cap = match (c.max_freq_khz, max_freq) {
                (Some(f), Some(max)) if max > 0 => (f * CAPACITY_SCALE as u64 / max) as u32,
                _ => CAPACITY_SCALE,
            };
            (c.id, cap)
        })
        .collect()
}

/// Loads a sysfs tree of tests/fixtures/sysfs, for the library's tests.
#[cfg(test)]
pub(crate) fn fixture(name: &str) -> Topology {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sysfs").join(name);
    Topology::from_sysfs(&root).unwrap()
}

#[cfg(test)]
mod tests;
