//! A domain's candidates for a move, and their sort by load: a stable radix sort on the load
//! alone, a byte at a time and only as many bytes as the heaviest load has. The balancer
//! sorts the tasks of a pile-up's source node at every pass (35,000 of them in `lb_sim`'s
//! 1,024-CPU case), where a comparison sort took more than a millisecond.

/// A domain's candidate for a move, as the searches read it without touching the task:
/// ordered by load, then index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Candidate {
    pub load: u64,
    pub index: u32,
    /// Whether the task may run in some domains only (its mask must then be read).
    pub restricted: bool,
}

/// Below this many entries a comparison sort is cheaper than the byte passes.
const RADIX_MIN_LEN: usize = 256;

/// Sorts `list` by (load, index), given that it is in index order: the radix passes are
/// stable, so entries of equal load keep that order. `scratch` is a buffer kept between calls.
pub(crate) fn sort_by_load_then_index(list: &mut Vec<Candidate>, scratch: &mut Vec<Candidate>) {
    debug_assert!(list.is_sorted_by_key(|c| c.index), "entries must come in index order");
    if list.len() < RADIX_MIN_LEN {
        list.sort_unstable();
        return;
    }
    let heaviest = list.iter().map(|c| c.load).max().unwrap_or(0);
    let bytes = (u64::BITS - heaviest.leading_zeros()).div_ceil(8);
    scratch.clear();
    scratch.resize(list.len(), Candidate { load: 0, index: 0, restricted: false });
    for byte in 0..bytes {
        scatter_by_byte(list, scratch, byte * 8);
        std::mem::swap(list, scratch);
    }
}

/// Copies `from` into `to`, ordered by the byte of the load at bit `shift`, stably.
fn scatter_by_byte(from: &[Candidate], to: &mut [Candidate], shift: u32) {
    let digit = |load: u64| ((load >> shift) & 0xff) as usize;
    let mut starts = [0usize; 256];
    for c in from {
        starts[digit(c.load)] += 1;
    }
    let mut next = 0;
    for slot in starts.iter_mut() {
        let count = *slot;
        *slot = next;
        next += count;
    }
    for &entry in from {
        let d = digit(entry.load);
        to[starts[d]] = entry;
        starts[d] += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn orders_as_a_comparison_sort_of_load_then_index() {
        let mut rng = StdRng::seed_from_u64(3);
        let mut scratch = Vec::new();
        for len in [0, 1, 255, 256, 1000, 20_000] {
            for max_load in [0u64, 1, 255, 256, 70_000, u64::MAX] {
                let mut list: Vec<Candidate> = (0..len)
                    .map(|i| Candidate { load: rng.random_range(0..=max_load), index: i as u32, restricted: rng.random_bool(0.1) })
                    .collect();
                let mut expected = list.clone();
                expected.sort_unstable();
                sort_by_load_then_index(&mut list, &mut scratch);
                assert_eq!(list, expected, "{len} entries, loads up to {max_load}");
            }
        }
    }
}
