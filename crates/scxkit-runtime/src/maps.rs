//! Reading BPF maps the way every scheduler needs.

use anyhow::{Context, Result};
use libbpf_rs::{MapCore, MapFlags};
use scxkit::metrics::{set_counters, CounterSlot, Snapshot};

/// Sums one slot of a per-CPU array of u64 counters over all CPUs.
pub fn percpu_u64_sum(map: &dyn MapCore, slot: u32) -> Result<u64> {
    let per_cpu = map
        .lookup_percpu(&slot.to_ne_bytes(), MapFlags::ANY)
        .with_context(|| format!("reading slot {slot} of {:?}", map.name()))?
        .unwrap_or_default();
    Ok(sum_u64_values(&per_cpu))
}

/// Sets each statistic bound to a slot of a per-CPU array of u64 counters (a scheduler's
/// `stats` map) to that slot's sum over all CPUs.
pub fn set_percpu_counters(reading: &mut Snapshot, map: &dyn MapCore, slots: &[CounterSlot]) -> Result<()> {
    set_counters(reading, slots, |slot| percpu_u64_sum(map, slot))
}

/// A plain C struct shared with BPF (bindgen's twin of a struct in an `intf.h`): integers
/// and arrays of them, no padding that matters, so that any bit pattern is a valid value.
///
/// # Safety
/// Implement it only for such types: [`from_bytes`] builds values from arbitrary bytes.
pub unsafe trait PlainC: Copy {}

// SAFETY: integers; any bit pattern is valid.
unsafe impl PlainC for i32 {}
// SAFETY: as above.
unsafe impl PlainC for u32 {}
// SAFETY: as above.
unsafe impl PlainC for u64 {}

/// Decodes a map key or value of exactly `T`'s size; `None` for any other size.
pub fn from_bytes<T: PlainC>(bytes: &[u8]) -> Option<T> {
    (bytes.len() == std::mem::size_of::<T>()).then(|| from_prefix(bytes)).flatten()
}

/// Decodes a `T` from the first bytes of a record (a ring buffer's may be padded); `None`
/// when it is shorter than `T`.
pub fn from_prefix<T: PlainC>(bytes: &[u8]) -> Option<T> {
    // SAFETY: at least size_of::<T>() bytes are read, unaligned, and PlainC makes any bits a
    // valid T.
    (bytes.len() >= std::mem::size_of::<T>()).then(|| unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) })
}

/// A `T` as the bytes of a map value to write.
pub fn as_bytes<T: PlainC>(value: &T) -> &[u8] {
    // SAFETY: the bytes of a live value, for as long as its borrow.
    unsafe { std::slice::from_raw_parts((value as *const T).cast(), std::mem::size_of::<T>()) }
}

fn sum_u64_values(values: &[Vec<u8>]) -> u64 {
    values
        .iter()
        .filter_map(|v| from_prefix::<u64>(v))
        .fold(0u64, |acc, v| acc.wrapping_add(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct Pair {
        a: u32,
        b: u64,
    }
    // SAFETY: integers only (the padding after `a` is never read as a value).
    unsafe impl PlainC for Pair {}

    #[test]
    fn plain_c_round_trip_and_sizes() {
        let pair = Pair { a: 7, b: 1 << 40 };
        assert_eq!(from_bytes::<Pair>(as_bytes(&pair)), Some(pair));
        let mut padded = as_bytes(&pair).to_vec();
        padded.extend([0u8; 8]);
        assert_eq!(from_bytes::<Pair>(&padded), None, "a longer value is not a Pair");
        assert_eq!(from_prefix::<Pair>(&padded), Some(pair), "a padded record starts with one");
        assert_eq!(from_prefix::<Pair>(&padded[..8]), None, "too short");
        assert_eq!(from_bytes::<i32>(&(-5i32).to_ne_bytes()), Some(-5));
    }

    #[test]
    fn sums_per_cpu_values() {
        let vals = vec![5u64.to_ne_bytes().to_vec(), 7u64.to_ne_bytes().to_vec(), vec![1, 2]];
        assert_eq!(sum_u64_values(&vals), 12);
        assert_eq!(sum_u64_values(&[]), 0);
    }
}
