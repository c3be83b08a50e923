//! Reading the raw per-CPU and per-node facts from a sysfs tree (normally `/sys`).

use crate::cpumask::Cpumask;
use anyhow::{Context, Result};
use std::fs;
use std::path::{Path, PathBuf};

/// How one cache instance is told apart from another of the same level.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CacheKey {
    /// The `id` file (kernels since 5.x on x86).
    Id(u64),
    /// Without an `id`: the CPUs that share it.
    SharedCpus(String),
}

#[derive(Debug, Clone)]
pub struct RawCache {
    pub level: u32,
    pub key: CacheKey,
}

/// What sysfs says about one online CPU.
#[derive(Debug, Clone)]
pub struct RawCpu {
    pub id: usize,
    pub socket: usize,
    pub core_id: usize,
    /// Data and unified caches (instruction caches say nothing about sharing work).
    pub caches: Vec<RawCache>,
    pub capacity: Option<u32>,
    pub max_freq_khz: Option<u64>,
}

#[derive(Debug, Clone)]
pub struct RawNode {
    pub id: usize,
    pub cpus: Cpumask,
    pub distances: Vec<u32>,
}

pub struct SysfsReader {
    root: PathBuf,
}

impl SysfsReader {
    pub fn new(root: &Path) -> SysfsReader {
        SysfsReader { root: root.to_path_buf() }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn read(&self, rel: &str) -> Result<String> {
        let path = self.path(rel);
        fs::read_to_string(&path)
            .map(|s| s.trim().to_string())
            .with_context(|| format!("reading {}", path.display()))
    }

    fn read_opt<T: std::str::FromStr>(&self, rel: &str) -> Option<T> {
        self.read(rel).ok()?.parse().ok()
    }

    /// The possible CPUs; the mask size is one past the highest possible CPU.
    pub fn possible(&self) -> Result<Cpumask> {
        let text = self.read("devices/system/cpu/possible")?;
        let max = text
            .split([',', '-'])
            .filter_map(|t| t.trim().parse::<usize>().ok())
            .max()
            .with_context(|| format!("no CPU in devices/system/cpu/possible ('{text}')"))?;
        Cpumask::parse_list(&text, max + 1)
    }

    pub fn online(&self, nr_cpus: usize) -> Result<Cpumask> {
        Cpumask::parse_list(&self.read("devices/system/cpu/online")?, nr_cpus)
    }

    pub fn cpu(&self, id: usize) -> Result<RawCpu> {
        let dir = format!("devices/system/cpu/cpu{id}");
        let socket = self.read(&format!("{dir}/topology/physical_package_id"))?.parse::<i64>()?;
        let core_id = self.read(&format!("{dir}/topology/core_id"))?.parse::<i64>()?;
        Ok(RawCpu {
            id,
            // -1 is what some virtual machines print: treat as socket/core 0.
            socket: socket.max(0) as usize,
            core_id: core_id.max(0) as usize,
            caches: self.caches(&dir),
            capacity: self.read_opt(&format!("{dir}/cpu_capacity")),
            max_freq_khz: self.read_opt(&format!("{dir}/cpufreq/cpuinfo_max_freq")),
        })
    }

    fn caches(&self, cpu_dir: &str) -> Vec<RawCache> {
        let mut caches = Vec::new();
        for index in 0.. {
            let dir = format!("{cpu_dir}/cache/index{index}");
            let Some(level) = self.read_opt::<u32>(&format!("{dir}/level")) else { break };
            if self.read(&format!("{dir}/type")).is_ok_and(|t| t == "Instruction") {
                continue;
            }
            // The kernel's sharing mask first: the `id` files can disagree with it (a QEMU
            // guest can give L3 ids 0, 1, 2, 3 to CPUs whose shared_cpu_list says 0-1 and 2-3).
            let key = match (self.read(&format!("{dir}/shared_cpu_list")), self.read_opt::<u64>(&format!("{dir}/id"))) {
                (Ok(shared), _) if !shared.is_empty() => CacheKey::SharedCpus(shared),
                (_, Some(id)) => CacheKey::Id(id),
                _ => CacheKey::SharedCpus(String::new()),
            };
            caches.push(RawCache { level, key });
        }
        caches
    }

    /// NUMA nodes; empty when the kernel has no node directory (no NUMA).
    pub fn nodes(&self, nr_cpus: usize) -> Result<Vec<RawNode>> {
        let dir = self.path("devices/system/node");
        let Ok(entries) = fs::read_dir(&dir) else { return Ok(Vec::new()) };
        let mut nodes = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(id) = name.strip_prefix("node").and_then(|n| n.parse::<usize>().ok()) else { continue };
            let cpus = Cpumask::parse_list(&self.read(&format!("devices/system/node/{name}/cpulist"))?, nr_cpus)?;
            let distances = self
                .read(&format!("devices/system/node/{name}/distance"))
                .unwrap_or_default()
                .split_whitespace()
                .filter_map(|d| d.parse().ok())
                .collect();
            nodes.push(RawNode { id, cpus, distances });
        }
        nodes.sort_by_key(|n| n.id);
        Ok(nodes)
    }
}
