//! A set of CPUs of a machine with `nr_cpus` possible CPUs: parsing from the forms users and
//! sysfs write, formatting for sysfs-style output and log lines.

use anyhow::{bail, Context, Result};
use std::fmt;

const BITS_PER_WORD: usize = 64;

#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Cpumask {
    nr_cpus: usize,
    words: Vec<u64>,
}

impl Cpumask {
    /// An empty mask for a machine of `nr_cpus` CPUs.
    pub fn new(nr_cpus: usize) -> Cpumask {
        Cpumask { nr_cpus, words: vec![0; nr_cpus.div_ceil(BITS_PER_WORD)] }
    }

    /// Every CPU of the machine.
    pub fn full(nr_cpus: usize) -> Cpumask {
        let mut mask = Cpumask::new(nr_cpus);
        (0..nr_cpus).for_each(|cpu| mask.set(cpu));
        mask
    }

    pub fn from_cpus(nr_cpus: usize, cpus: impl IntoIterator<Item = usize>) -> Result<Cpumask> {
        let mut mask = Cpumask::new(nr_cpus);
        for cpu in cpus {
            mask.try_set(cpu)?;
        }
        Ok(mask)
    }

    pub fn nr_cpus(&self) -> usize {
        self.nr_cpus
    }

    /// Sets a CPU; panics past the machine's CPUs (use [`Cpumask::try_set`] for input).
    pub fn set(&mut self, cpu: usize) {
        self.try_set(cpu).unwrap()
    }

    pub fn try_set(&mut self, cpu: usize) -> Result<()> {
        if cpu >= self.nr_cpus {
            bail!("CPU {cpu} is beyond this machine's {} CPUs (0-{})", self.nr_cpus, self.nr_cpus.saturating_sub(1));
        }
        self.words[cpu / BITS_PER_WORD] |= 1 << (cpu % BITS_PER_WORD);
        Ok(())
    }

    pub fn clear(&mut self, cpu: usize) {
        if cpu < self.nr_cpus {
            self.words[cpu / BITS_PER_WORD] &= !(1 << (cpu % BITS_PER_WORD));
        }
    }

    pub fn test(&self, cpu: usize) -> bool {
        cpu < self.nr_cpus && self.words[cpu / BITS_PER_WORD] & (1 << (cpu % BITS_PER_WORD)) != 0
    }

    /// Number of CPUs set.
    pub fn weight(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.words.iter().all(|&w| w == 0)
    }

    /// Whether no CPU but `cpu` is set (an empty mask is, too).
    pub fn is_within(&self, cpu: usize) -> bool {
        self.words.iter().enumerate().all(|(i, &w)| {
            let own = if i == cpu / BITS_PER_WORD { 1 << (cpu % BITS_PER_WORD) } else { 0 };
            w & !own == 0
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.nr_cpus).filter(|&cpu| self.test(cpu))
    }

    pub fn first(&self) -> Option<usize> {
        self.iter().next()
    }

    pub fn and(&self, other: &Cpumask) -> Cpumask {
        self.zip_with(other, |a, b| a & b)
    }

    pub fn or(&self, other: &Cpumask) -> Cpumask {
        self.zip_with(other, |a, b| a | b)
    }

    pub fn and_not(&self, other: &Cpumask) -> Cpumask {
        self.zip_with(other, |a, b| a & !b)
    }

    pub fn intersects(&self, other: &Cpumask) -> bool {
        !self.and(other).is_empty()
    }

    pub fn is_subset_of(&self, other: &Cpumask) -> bool {
        self.and_not(other).is_empty()
    }

    fn zip_with(&self, other: &Cpumask, op: impl Fn(u64, u64) -> u64) -> Cpumask {
        let nr_cpus = self.nr_cpus.max(other.nr_cpus);
        let mut out = Cpumask::new(nr_cpus);
        for (i, word) in out.words.iter_mut().enumerate() {
            *word = op(*self.words.get(i).unwrap_or(&0), *other.words.get(i).unwrap_or(&0));
        }
        out
    }

    /// The 64-bit words, CPU 0 in bit 0 of word 0: the layout BPF cpumask arrays use.
    pub fn as_words(&self) -> &[u64] {
        &self.words
    }

    /// Parses a hex mask of any length: `0xff`, `ff000`, sysfs's comma-separated 32-bit
    /// groups (`00000000,0000ffff`), or digits grouped by underscores as upstream's
    /// documentation writes them (`0xff_00ff`). Bits past `nr_cpus` are refused.
    pub fn parse_hex(text: &str, nr_cpus: usize) -> Result<Cpumask> {
        let trimmed = text.trim();
        let digits = trimmed.strip_prefix("0x").or_else(|| trimmed.strip_prefix("0X")).unwrap_or(trimmed);
        let digits = &digits.replace('_', "");
        if digits.is_empty() {
            bail!("empty cpumask '{text}': expected hex digits such as 0xff");
        }
        if let Some(bad) = digits.chars().find(|c| !c.is_ascii_hexdigit() && *c != ',') {
            bail!("cpumask '{text}': '{bad}' is not a hex digit");
        }
        let mut mask = Cpumask::new(nr_cpus);
        let mut bit = 0usize;
        for ch in digits.chars().rev() {
            if ch == ',' {
                if bit % 32 != 0 {
                    bail!("cpumask '{text}': comma-separated groups must hold 8 hex digits each");
                }
                continue;
            }
            let nibble = ch.to_digit(16).unwrap_or_default();
            for i in 0..4 {
                if nibble & (1 << i) != 0 {
                    mask.try_set(bit + i).with_context(|| format!("cpumask '{text}'"))?;
                }
            }
            bit += 4;
        }
        Ok(mask)
    }

    /// Parses a CPU list such as `0-5,12` (as in sysfs's `*_list` files; empty means none).
    pub fn parse_list(text: &str, nr_cpus: usize) -> Result<Cpumask> {
        let mut mask = Cpumask::new(nr_cpus);
        for part in text.trim().split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (first, last) = match part.split_once('-') {
                Some((a, b)) => (parse_cpu(a, text)?, parse_cpu(b, text)?),
                None => (parse_cpu(part, text)?, parse_cpu(part, text)?),
            };
            if first > last {
                bail!("CPU list '{text}': range {part} runs backwards");
            }
            for cpu in first..=last {
                mask.try_set(cpu).with_context(|| format!("CPU list '{text}'"))?;
            }
        }
        Ok(mask)
    }

    /// Hex, most significant digit first, `0x` prefixed, no leading zeros: `0xf0f`.
    pub fn to_hex(&self) -> String {
        let mut digits: String = (0..self.nr_cpus.div_ceil(4).max(1))
            .rev()
            .map(|nibble| {
                let value = (0..4).filter(|i| self.test(nibble * 4 + i)).fold(0, |acc, i| acc | 1 << i);
                char::from_digit(value, 16).unwrap()
            })
            .collect();
        let significant = digits.trim_start_matches('0').len().max(1);
        digits.drain(..digits.len() - significant);
        format!("0x{digits}")
    }

    /// CPU list with ranges: `0-5,12`; empty for no CPU.
    pub fn to_list(&self) -> String {
        let mut parts = Vec::new();
        let mut cpus = self.iter().peekable();
        while let Some(first) = cpus.next() {
            let mut last = first;
            while cpus.peek() == Some(&(last + 1)) {
                last = cpus.next().unwrap();
            }
            parts.push(if first == last { first.to_string() } else { format!("{first}-{last}") });
        }
        parts.join(",")
    }

    /// Compact binary for log lines: `0b` then one digit per CPU, highest CPU first (so it
    /// reads as the same number as the hex form): CPUs 0 and 2 of 4 give `0b0101`.
    pub fn to_binary(&self) -> String {
        let bits: String = (0..self.nr_cpus).rev().map(|c| if self.test(c) { '1' } else { '0' }).collect();
        format!("0b{bits}")
    }
}

fn parse_cpu(text: &str, whole: &str) -> Result<usize> {
    text.trim()
        .parse()
        .with_context(|| format!("CPU list '{whole}': '{text}' is not a CPU number"))
}

impl fmt::Debug for Cpumask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Cpumask({})", self.to_list())
    }
}

impl fmt::Display for Cpumask {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_hex_with_and_without_prefix() {
        assert_eq!(Cpumask::parse_hex("0x3", 4).unwrap().to_list(), "0-1");
        assert_eq!(Cpumask::parse_hex("ff000", 20).unwrap().to_list(), "12-19");
        assert_eq!(Cpumask::parse_hex("0x00fff", 20).unwrap().to_list(), "0-11");
        assert_eq!(Cpumask::parse_hex("0", 4).unwrap().weight(), 0);
        assert_eq!(Cpumask::parse_hex("0xff_00ff", 24).unwrap().to_list(), "0-7,16-23");
    }

    #[test]
    fn is_within_one_cpu_across_words() {
        let mask = |list: &str| Cpumask::parse_list(list, 130).unwrap();
        assert!(mask("70").is_within(70));
        assert!(mask("").is_within(3));
        assert!(!mask("70").is_within(6));
        assert!(!mask("6,70").is_within(70));
        assert!(!mask("3,129").is_within(3));
    }

    #[test]
    fn parses_sysfs_comma_groups_beyond_64_bits() {
        let mask = Cpumask::parse_hex("00000001,00000000,00000000,80000001", 128).unwrap();
        assert_eq!(mask.to_list(), "0,31,96");
        assert!(Cpumask::parse_hex("1,0000", 128).unwrap_err().to_string().contains("8 hex digits"));
    }

    #[test]
    fn refuses_bad_hex_naming_the_problem() {
        let beyond = Cpumask::parse_hex("0x100", 4).unwrap_err();
        assert!(format!("{beyond:#}").contains("CPU 8 is beyond this machine's 4 CPUs"), "{beyond:#}");
        let bad = Cpumask::parse_hex("xyz", 4).unwrap_err();
        assert!(bad.to_string().contains("'x' is not a hex digit"), "{bad}");
        assert!(Cpumask::parse_hex("", 4).unwrap_err().to_string().contains("empty cpumask"));
        assert!(Cpumask::parse_hex("0x", 4).unwrap_err().to_string().contains("empty cpumask"));
    }

    #[test]
    fn parses_and_formats_lists() {
        let mask = Cpumask::parse_list("0-5,12", 16).unwrap();
        assert_eq!(mask.weight(), 7);
        assert_eq!(mask.to_list(), "0-5,12");
        assert_eq!(mask.to_hex(), "0x103f");
        assert_eq!(Cpumask::parse_list("", 4).unwrap().weight(), 0);
        assert!(format!("{:#}", Cpumask::parse_list("0-9", 4).unwrap_err()).contains("beyond"));
        assert!(Cpumask::parse_list("3-1", 4).unwrap_err().to_string().contains("backwards"));
        assert!(Cpumask::parse_list("a", 4).unwrap_err().to_string().contains("'a' is not a CPU"));
    }

    #[test]
    fn formats_hex_and_binary() {
        let mask = Cpumask::from_cpus(4, [0, 2]).unwrap();
        assert_eq!(mask.to_binary(), "0b0101");
        assert_eq!(mask.to_hex(), "0x5");
        assert_eq!(Cpumask::new(8).to_hex(), "0x0");
        let big = Cpumask::from_cpus(1024, [1023]).unwrap();
        assert_eq!(big.to_hex().len(), 2 + 256);
        assert_eq!(Cpumask::parse_hex(&big.to_hex(), 1024).unwrap(), big);
    }

    #[test]
    fn set_operations() {
        let a = Cpumask::parse_list("0-3", 8).unwrap();
        let b = Cpumask::parse_list("2-5", 8).unwrap();
        assert_eq!(a.and(&b).to_list(), "2-3");
        assert_eq!(a.or(&b).to_list(), "0-5");
        assert_eq!(a.and_not(&b).to_list(), "0-1");
        assert!(a.intersects(&b) && !a.is_subset_of(&b));
        assert!(a.and(&b).is_subset_of(&a));
        assert_eq!(Cpumask::full(70).weight(), 70);
    }
}
