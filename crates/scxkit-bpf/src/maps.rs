//! Reading BPF maps the way every scheduler needs.

use anyhow::{Context, Result};
use libbpf_rs::{MapCore, MapFlags};

/// Sums each slot of a per-CPU array of u64 counters over all CPUs.
pub fn percpu_u64_sums(map: &dyn MapCore, slots: u32) -> Result<Vec<u64>> {
    (0..slots)
        .map(|slot| {
            let per_cpu = map
                .lookup_percpu(&slot.to_ne_bytes(), MapFlags::ANY)
                .with_context(|| format!("reading slot {slot} of {:?}", map.name()))?
                .unwrap_or_default();
            Ok(sum_u64_values(&per_cpu))
        })
        .collect()
}

fn sum_u64_values(values: &[Vec<u8>]) -> u64 {
    values
        .iter()
        .filter_map(|v| v.get(..8).map(|b| u64::from_ne_bytes(b.try_into().unwrap())))
        .fold(0u64, |acc, v| acc.wrapping_add(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_per_cpu_values() {
        let vals = vec![5u64.to_ne_bytes().to_vec(), 7u64.to_ne_bytes().to_vec(), vec![1, 2]];
        assert_eq!(sum_u64_values(&vals), 12);
        assert_eq!(sum_u64_values(&[]), 0);
    }
}
