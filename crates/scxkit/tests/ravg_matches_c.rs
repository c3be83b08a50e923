//! `scxkit::ravg` against `bpf/include/scxkit/ravg.h`: a C driver built from the header with
//! the host compiler replays the same pseudo-random events as the Rust code, and both print
//! every field and the value read after each event; the outputs must be identical. The
//! header must also build for the BPF target with vmlinux.h (its BPF flavour).

use scxkit::ravg::{Ravg, RAVG_HALF_LIFE_MAX_NS, RAVG_HALF_LIFE_MIN_NS};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const INCLUDE_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bpf/include");

/// Reads `half_life start_ns start_amount` then lines `dt_ns amount peek_ns`: after each,
/// updates at now += dt_ns and prints the fields, read(now) and read(now + peek_ns).
const DRIVER_C: &str = r#"
#include <stdio.h>
#include "scxkit/ravg.h"

static void print(const struct scxk_ravg *r, u64 now, u64 peek_ns, u64 half_life_ns)
{
	printf("%llu %llu %llu %llu %llu %llu %llu\n", (unsigned long long)r->val,
	       (unsigned long long)r->cur, (unsigned long long)r->period,
	       (unsigned long long)r->amount, (unsigned long long)r->last_ns,
	       (unsigned long long)scxk_ravg_read(r, now, half_life_ns),
	       (unsigned long long)scxk_ravg_read(r, now + peek_ns, half_life_ns));
}

int main(void)
{
	unsigned long long half_life_ns, now, amount, dt_ns, peek_ns;
	struct scxk_ravg r;

	if (scanf("%llu %llu %llu", &half_life_ns, &now, &amount) != 3)
		return 2;
	scxk_ravg_start(&r, now, half_life_ns, amount);
	print(&r, now, 0, half_life_ns);
	while (scanf("%llu %llu %llu", &dt_ns, &amount, &peek_ns) == 3) {
		now += dt_ns;
		scxk_ravg_update(&r, now, half_life_ns, amount);
		print(&r, now, peek_ns, half_life_ns);
	}
	return 0;
}
"#;

/// Checks that the header builds as BPF code, inlined, with the kernel's types.
const BPF_PROBE_C: &str = r#"
#include "vmlinux.h"
#include "scxkit/ravg.h"

struct scxk_ravg probe_avg;

__attribute__((section("tc"), used)) int probe(void *ctx)
{
	scxk_ravg_update(&probe_avg, 5000000, SCXK_RAVG_HALF_LIFE_MIN_NS, 3);
	return (int)scxk_ravg_read(&probe_avg, 7000000, SCXK_RAVG_HALF_LIFE_MIN_NS);
}
"#;

/// The first compiler of clang-19, clang, cc that runs; a failure, not a skip, without one.
fn host_compiler(candidates: &[&str]) -> String {
    let runs = |cc: &str| Command::new(cc).arg("--version").output().is_ok_and(|o| o.status.success());
    match candidates.iter().find(|cc| runs(cc)) {
        Some(cc) => cc.to_string(),
        None => panic!("no C compiler found (tried {candidates:?}): ravg.h cannot be checked against scxkit::ravg"),
    }
}

fn compile(cc: &str, args: &[&str], source: &Path, out: &Path) {
    let output = Command::new(cc)
        .args(args)
        .arg("-I")
        .arg(INCLUDE_DIR)
        .arg(source)
        .arg("-o")
        .arg(out)
        .output()
        .unwrap_or_else(|e| panic!("running {cc}: {e}"));
    assert!(output.status.success(), "{cc} {args:?} {}: {}", source.display(), String::from_utf8_lossy(&output.stderr));
}

fn build_driver(dir: &Path) -> PathBuf {
    let source = dir.join("ravg_driver.c");
    std::fs::write(&source, DRIVER_C).unwrap();
    let binary = dir.join("ravg_driver");
    let cc = host_compiler(&["clang-19", "clang", "cc"]);
    compile(&cc, &["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror"], &source, &binary);
    binary
}

/// A 64-bit LCG (Knuth's MMIX constants): the same sequence on every run.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }
}

struct Event {
    dt_ns: u64,
    amount: u64,
    peek_ns: u64,
}

/// Events that reach every branch: steps within a period, across one, across a few, across
/// over 64; amounts from 0 (idle) to a domain's sum of weights; reads ahead by up to a few
/// half-lives.
fn events(rng: &mut Lcg, half_life_ns: u64, count: usize) -> Vec<Event> {
    (0..count)
        .map(|_| {
            let dt_ns = match rng.below(10) {
                0 => 0,
                1..=5 => rng.below(half_life_ns / 4 + 1),
                6..=7 => rng.below(2 * half_life_ns),
                8 => rng.below(20 * half_life_ns),
                _ => 60 * half_life_ns + rng.below(10 * half_life_ns),
            };
            let amount = match rng.below(4) {
                0 => 0,
                1 => 1,
                2 => rng.below(1000),
                _ => rng.below(100_001),
            };
            let peek_ns = if rng.below(2) == 0 { 0 } else { rng.below(3 * half_life_ns) };
            Event { dt_ns, amount, peek_ns }
        })
        .collect()
}

fn line(r: &Ravg, now_ns: u64, peek_ns: u64, half_life_ns: u64) -> String {
    let (read_now, read_later) = (r.read(now_ns, half_life_ns), r.read(now_ns + peek_ns, half_life_ns));
    format!("{} {} {} {} {} {read_now} {read_later}\n", r.val, r.cur, r.period, r.amount, r.last_ns)
}

/// What the driver must print for these inputs.
fn rust_output(half_life_ns: u64, start_ns: u64, start_amount: u64, events: &[Event]) -> String {
    let mut r = Ravg::start(start_ns, half_life_ns, start_amount);
    let mut now_ns = start_ns;
    let mut out = line(&r, now_ns, 0, half_life_ns);
    for e in events {
        now_ns += e.dt_ns;
        r.update(now_ns, half_life_ns, e.amount);
        out += &line(&r, now_ns, e.peek_ns, half_life_ns);
    }
    out
}

fn driver_input(half_life_ns: u64, start_ns: u64, start_amount: u64, events: &[Event]) -> String {
    let mut input = format!("{half_life_ns} {start_ns} {start_amount}\n");
    for e in events {
        let _ = writeln!(input, "{} {} {}", e.dt_ns, e.amount, e.peek_ns);
    }
    input
}

fn run_driver(binary: &Path, input: &str) -> String {
    let mut child = Command::new(binary).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "the driver failed: {:?}", output.status);
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn rust_and_c_agree_bit_for_bit() {
    let dir = tempfile::tempdir().unwrap();
    let binary = build_driver(dir.path());
    let mut rng = Lcg(0x5c4_2024);
    let half_lives = [RAVG_HALF_LIFE_MIN_NS, 32_000_000, 100_000_007, RAVG_HALF_LIFE_MAX_NS];
    for half_life_ns in half_lives {
        let start_ns = rng.next() * 1000;
        let start_amount = rng.below(3);
        let events = events(&mut rng, half_life_ns, 2000);
        let expected = rust_output(half_life_ns, start_ns, start_amount, &events);
        let actual = run_driver(&binary, &driver_input(half_life_ns, start_ns, start_amount, &events));
        assert_eq!(actual.lines().count(), events.len() + 1);
        for (i, (c, rust)) in actual.lines().zip(expected.lines()).enumerate() {
            assert_eq!(c, rust, "half-life {half_life_ns} ns, line {i} (val cur period amount last_ns read read_later)");
        }
    }
}

#[test]
fn header_builds_for_bpf() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("probe.bpf.c");
    std::fs::write(&source, BPF_PROBE_C).unwrap();
    let clang = host_compiler(&["clang-19", "clang"]);
    let object = dir.path().join("probe.bpf.o");
    // vmlinux.h itself trips -Wmissing-declarations (forward declarations inside structs).
    let flags = ["-target", "bpf", "-O2", "-g", "-Wall", "-Werror", "-Wno-missing-declarations", "-c"];
    compile(&clang, &flags, &source, &object);
    assert!(object.exists());
}
