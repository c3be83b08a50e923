//! Topology tests: the fixtures of real machines (tests/fixtures/sysfs) checked for what a
//! person would count by hand, and small synthetic trees for the awkward cases.

use super::*;
use std::fs;

fn list(mask: &Cpumask) -> String {
    mask.to_list()
}

#[test]
fn xeon_gold_6138_two_sockets() {
    let t = fixture("xeon-gold-6138-2s");
    assert_eq!(t.nr_online(), 80);
    assert_eq!(t.cores.len(), 40, "core IDs repeat across sockets: cores are (socket, core_id)");
    assert!(t.cores.iter().all(|c| c.cpus.weight() == 2));
    assert!(t.has_smt() && !t.is_hybrid());
    assert_eq!(t.sockets.len(), 2);
    assert_eq!(t.nodes.len(), 2);
    assert_eq!(list(&t.nodes[0].cpus), "0-19,40-59");
    assert_eq!(list(&t.nodes[1].cpus), "20-39,60-79");
    assert_eq!(t.nodes[0].distances, vec![10, 21]);
    assert_eq!(t.llcs.len(), 2);
    assert_eq!(list(&t.llcs[1].cpus), "20-39,60-79");
    assert_eq!(t.llcs[1].node, 1);
    // CPU 41 is the sibling of CPU 1: same core (socket 0, core 1).
    assert_eq!(t.cpus[&41].core, t.cpus[&1].core);
    // CPU 21 has core ID 1 too, but on socket 1: another core.
    assert_eq!(t.cpus[&21].core_id, 1);
    assert_ne!(t.cpus[&21].core, t.cpus[&1].core);
    assert_eq!(t.caches_at(2).unwrap().len(), 40);
}

#[test]
fn i7_13800h_hybrid_from_cpufreq() {
    let t = fixture("i7-13800h");
    assert_eq!(t.nr_online(), 20);
    assert_eq!(t.cores.len(), 14);
    assert!(t.is_hybrid());
    assert_eq!(list(&t.cpus_of_type(CoreType::Performance)), "0-11");
    assert_eq!(list(&t.cpus_of_type(CoreType::Efficiency)), "12-19");
    assert_eq!(t.cpus[&0].capacity, CAPACITY_SCALE);
    assert_eq!(t.cpus[&12].capacity, 787, "4.0 GHz / 5.2 GHz of 1024");
    assert_eq!(t.llcs.len(), 1);
    assert_eq!(t.nodes.len(), 1);
    let l2 = t.caches_at(2).unwrap();
    assert_eq!(l2.len(), 8, "6 P-core L2s and 2 E-core cluster L2s");
    assert_eq!(list(&l2[7].cpus), "16-19");
}

#[test]
fn epyc_several_llcs_per_node() {
    let t = fixture("epyc-7702p-nps4");
    assert_eq!(t.nr_online(), 128);
    assert_eq!(t.cores.len(), 64);
    assert_eq!(t.nodes.len(), 4);
    assert_eq!(t.llcs.len(), 16);
    for node in &t.nodes {
        assert_eq!(t.llcs.iter().filter(|l| l.node == node.id).count(), 4);
    }
    assert_eq!(list(&t.llcs[0].cpus), "0-3,64-67");
    assert_eq!(t.nodes[2].distances, vec![12, 12, 10, 12]);
}

#[test]
fn big_1024_cpus_without_cache_ids() {
    let t = fixture("big-1024");
    assert_eq!(t.nr_online(), 1024);
    assert_eq!(t.nr_cpus, 1024);
    assert_eq!(t.cores.len(), 512);
    assert_eq!(t.nodes.len(), 8);
    assert_eq!(t.llcs.len(), 32);
    assert_eq!(t.sockets.len(), 8);
    assert!(t.llcs.iter().all(|l| l.cpus.weight() == 32));
    assert_eq!(list(&t.llcs[31].cpus), "496-511,1008-1023");
    assert_eq!(t.nodes[0].distances[7], 32);
}

/// A small sysfs tree: `cpus` are (id, socket, core_id, Some((llc level, llc id)) or None).
fn synthetic(possible: &str, online: &str, cpus: &[(usize, usize, usize, Option<(u32, u64)>)], extra: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let w = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, format!("{text}\n")).unwrap();
    };
    w("devices/system/cpu/possible", possible);
    w("devices/system/cpu/online", online);
    for &(id, socket, core, cache) in cpus {
        w(&format!("devices/system/cpu/cpu{id}/topology/physical_package_id"), &socket.to_string());
        w(&format!("devices/system/cpu/cpu{id}/topology/core_id"), &core.to_string());
        if let Some((level, cid)) = cache {
            w(&format!("devices/system/cpu/cpu{id}/cache/index0/level"), &level.to_string());
            w(&format!("devices/system/cpu/cpu{id}/cache/index0/type"), "Unified");
            w(&format!("devices/system/cpu/cpu{id}/cache/index0/id"), &cid.to_string());
        }
    }
    for (rel, text) in extra {
        w(rel, text);
    }
    dir
}

#[test]
fn offline_cpus_and_holes_in_numbering() {
    // Possible 0-7; 4 and 5 offline (no topology dir), 8+ do not exist.
    let cpus: Vec<_> = [0, 1, 2, 3, 6, 7].iter().map(|&c| (c, 0, c / 2, Some((3, 0)))).collect();
    let dir = synthetic("0-7", "0-3,6-7", &cpus, &[]);
    let t = Topology::from_sysfs(dir.path()).unwrap();
    assert_eq!(t.nr_cpus, 8);
    assert_eq!(list(&t.online), "0-3,6-7");
    assert!(!t.cpus.contains_key(&4));
    assert_eq!(t.cores.len(), 3);
    assert_eq!(list(&t.llcs[0].cpus), "0-3,6-7");
    assert_eq!(list(&t.nodes[0].cpus), "0-3,6-7", "no node directory: one node of all online CPUs");
}

#[test]
fn cpus_without_cache_information_get_one_llc_per_node() {
    let cpus = [(0, 0, 0, None), (1, 0, 1, None), (2, 1, 0, None), (3, 1, 1, None)];
    let nodes = [
        ("devices/system/node/node0/cpulist", "0-1"),
        ("devices/system/node/node0/distance", "10 20"),
        ("devices/system/node/node1/cpulist", "2-3"),
        ("devices/system/node/node1/distance", "20 10"),
    ];
    let t = Topology::from_sysfs(synthetic("0-3", "0-3", &cpus, &nodes).path()).unwrap();
    assert_eq!(t.llcs.len(), 2);
    assert_eq!(list(&t.llcs[1].cpus), "2-3");
    assert_eq!(t.llcs[1].level, 0);
    assert_eq!(t.cores.len(), 4, "core 0 of socket 0 and core 0 of socket 1 differ");
}

#[test]
fn single_cpu_machine() {
    let t = Topology::from_sysfs(synthetic("0", "0", &[(0, 0, 0, Some((2, 0)))], &[]).path()).unwrap();
    assert_eq!((t.nr_cpus, t.cores.len(), t.llcs.len(), t.nodes.len()), (1, 1, 1, 1));
    assert!(!t.has_smt() && !t.is_hybrid());
}

#[test]
fn capacity_from_cpu_capacity_files() {
    let cpus = [(0, 0, 0, Some((2, 0))), (1, 0, 1, Some((2, 0))), (2, 0, 2, Some((2, 1))), (3, 0, 3, Some((2, 1)))];
    let caps = [
        ("devices/system/cpu/cpu0/cpu_capacity", "1024"),
        ("devices/system/cpu/cpu1/cpu_capacity", "1024"),
        ("devices/system/cpu/cpu2/cpu_capacity", "446"),
        ("devices/system/cpu/cpu3/cpu_capacity", "446"),
    ];
    let t = Topology::from_sysfs(synthetic("0-3", "0-3", &cpus, &caps).path()).unwrap();
    assert_eq!(list(&t.cpus_by_capacity(true)), "0-1");
    assert_eq!(list(&t.cpus_by_capacity(false)), "2-3");
    assert_eq!(list(&t.cpus_of_type(CoreType::Efficiency)), "2-3");
}

#[test]
fn missing_tree_is_an_error_naming_the_file() {
    let err = Topology::from_sysfs(Path::new("/nonexistent")).unwrap_err();
    assert!(format!("{err:#}").contains("devices/system/cpu/possible"), "{err:#}");
}

#[test]
fn cache_sharing_follows_shared_cpu_list_over_ids() {
    // As a QEMU guest (2 sockets of 2 CPUs) reports its L3: one id per CPU, while the
    // kernel's sharing masks say 0-1 and 2-3.
    let cpus: Vec<_> = (0..4).map(|c| (c, c / 2, c % 2, Some((3, c as u64)))).collect();
    let shared: Vec<(String, &str)> =
        (0..4).map(|c| (format!("devices/system/cpu/cpu{c}/cache/index0/shared_cpu_list"), if c < 2 { "0-1" } else { "2-3" })).collect();
    let extra: Vec<(&str, &str)> = shared.iter().map(|(p, v)| (p.as_str(), *v)).collect();
    let t = Topology::from_sysfs(synthetic("0-3", "0-3", &cpus, &extra).path()).unwrap();
    assert_eq!(t.llcs.len(), 2, "{:?}", t.llcs);
    assert_eq!(list(&t.llcs[1].cpus), "2-3");
}
