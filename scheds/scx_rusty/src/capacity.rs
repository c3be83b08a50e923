//! The balancer's capacities as CPUs go on and offline. The domains stay those built at
//! load (`Hotplug::RebuildsForNewCpus`); what each can run follows its CPUs online now, so
//! that a domain whose CPUs left gives its load away and receives none. A CPU no domain holds
//! (offline at load, online since, until the rebuild) serves domain 0 (main.bpf.c), and counts
//! there at full capacity.

use scxkit::lb::hierarchy::online_capacities;
use scxkit::lb::Hierarchy;
use scxkit::domains::Domains;
use scxkit::topology::CAPACITY_SCALE;
use scxkit::{Cpumask, Topology};

pub struct OnlineCapacity {
    topo: Topology,
    doms: Domains,
    /// The online CPU list the capacities were last set for.
    set_for: String,
}

impl OnlineCapacity {
    /// For the topology and domains read at load, whose capacities the hierarchy holds.
    pub fn new(topo: &Topology, doms: &Domains) -> OnlineCapacity {
        OnlineCapacity { topo: topo.clone(), doms: doms.clone(), set_for: topo.online.to_list() }
    }

    /// Sets the hierarchy's capacities for the CPUs online now (`online`, as sysfs lists
    /// them) if they changed; returns how many CPUs are online then.
    pub fn follow(&mut self, online: &str, hierarchy: &mut Hierarchy) -> Option<usize> {
        // An empty list is an unreadable one (online_cpu_list), not a machine without CPUs.
        if online == self.set_for || online.trim().is_empty() {
            return None;
        }
        let mask = match Cpumask::parse_list(online, self.topo.nr_cpus) {
            Ok(mask) => mask,
            Err(e) => {
                log::warn!("the online CPUs '{online}' could not be read ({e:#}): capacities kept");
                return None;
            }
        };
        let mut capacities = online_capacities(&self.topo, &self.doms, &mask);
        let held = self.doms.domains.iter().fold(Cpumask::new(self.topo.nr_cpus), |all, d| all.or(&d.cpus));
        let homeless = mask.and_not(&held).weight() as u64;
        if let Some(first) = capacities.first_mut() {
            *first += homeless * CAPACITY_SCALE as u64;
        }
        hierarchy.set_domain_capacities(&capacities);
        self.set_for = online.to_string();
        let nr_online = mask.weight();
        log::info!("balancing for CPUs {online}: domain capacities {capacities:?}");
        Some(nr_online)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Topology {
        let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sysfs").join(name);
        Topology::from_sysfs(&root).unwrap()
    }

    #[test]
    fn a_domain_whose_cpus_left_has_no_capacity_until_they_are_back() {
        let topo = fixture("xeon-gold-6138-2s");
        let doms = Domains::per_llc(&topo);
        let mut h = Hierarchy::numa_domains(&topo, &doms).unwrap();
        let full: Vec<u64> = h.leaf_of_domain.iter().map(|&l| h.groups[l].capacity).collect();
        let mut cap = OnlineCapacity { topo: topo.clone(), doms: doms.clone(), set_for: topo.online.to_list() };
        assert_eq!(cap.follow(&topo.online.to_list(), &mut h), None, "nothing changed");
        let first = doms.domains[0].cpus.to_list();
        let without_second = topo.online.and_not(&doms.domains[1].cpus).to_list();
        assert_eq!(cap.follow(&without_second, &mut h), Some(doms.domains[0].cpus.weight()));
        assert_eq!(h.groups[h.leaf_of_domain[1]].capacity, 0);
        assert_eq!(h.groups[0].capacity, full[0], "the root holds the first domain's alone");
        assert_eq!(first, without_second);
        assert_eq!(cap.follow(&topo.online.to_list(), &mut h), Some(topo.nr_online()));
        let back: Vec<u64> = h.leaf_of_domain.iter().map(|&l| h.groups[l].capacity).collect();
        assert_eq!(back, full);
        assert_eq!(cap.follow("0-x", &mut h), None, "an unreadable list keeps the capacities");
        assert_eq!(cap.follow("", &mut h), None, "so does an empty one");
    }

    #[test]
    fn a_cpu_no_domain_holds_counts_in_domain_0() {
        let topo = fixture("xeon-gold-6138-2s");
        let mut doms = Domains::per_llc(&topo);
        let last = doms.domains[1].cpus.iter().last().unwrap();
        doms.domains[1].cpus.clear(last);
        let mut h = Hierarchy::numa_domains(&topo, &doms).unwrap();
        let before: Vec<u64> = h.leaf_of_domain.iter().map(|&l| h.groups[l].capacity).collect();
        let mut cap = OnlineCapacity::new(&topo, &doms);
        let online = topo.online.to_list();
        // Loaded without CPU `last`; it is online now.
        cap.set_for = topo.online.and_not(&Cpumask::parse_list(&last.to_string(), topo.nr_cpus).unwrap()).to_list();
        assert_eq!(cap.follow(&online, &mut h), Some(topo.nr_online()));
        assert_eq!(h.groups[h.leaf_of_domain[0]].capacity, before[0] + CAPACITY_SCALE as u64);
        assert_eq!(h.groups[h.leaf_of_domain[1]].capacity, before[1]);
    }
}
