//! Library benchmarks (not tests): `cargo bench -p scxkit`. Prints the median and the fastest
//! of several timed runs of each operation.

use rand::{Rng, SeedableRng};
use scxkit::infeasible::{adjust_weights, TaskLoad};
use scxkit::{Cpumask, Topology};
use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn measure(name: &str, runs: usize, mut op: impl FnMut()) {
    op(); // warm-up: caches, page cache for the fixture files
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            op();
            start.elapsed()
        })
        .collect();
    times.sort();
    println!("{name:<48} median {:>12.3?}   fastest {:>12.3?}   ({runs} runs)", times[runs / 2], times[0]);
}

fn main() {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/sysfs/big-1024");
    measure("topology: build from sysfs, 1024 CPUs", 10, || {
        black_box(Topology::from_sysfs(&fixture).unwrap());
    });

    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let mask = Cpumask::from_cpus(1024, (0..1024).filter(|_| rng.random_bool(0.5))).unwrap();
    let hex = mask.to_hex();
    let list = mask.to_list();
    measure("cpumask: parse 1024-bit hex", 1000, || {
        black_box(Cpumask::parse_hex(black_box(&hex), 1024).unwrap());
    });
    measure("cpumask: parse 1024-CPU list", 1000, || {
        black_box(Cpumask::parse_list(black_box(&list), 1024).unwrap());
    });
    measure("cpumask: format 1024 CPUs as hex", 1000, || {
        black_box(mask.to_hex());
    });
    measure("cpumask: format 1024 CPUs as list", 1000, || {
        black_box(mask.to_list());
    });

    // Weights over four orders of magnitude, plus one task in 1,000 far heavier than the rest
    // so that some are infeasible and the pass over the sorted tasks does real work.
    let tasks: Vec<TaskLoad> = (0..100_000)
        .map(|i| {
            let exponent = if i % 1000 == 0 { rng.random_range(6.0..8.0) } else { rng.random_range(0.0..4.0) };
            TaskLoad { weight: 10f64.powf(exponent), duty_cycle: rng.random_range(0.01..=1.0) }
        })
        .collect();
    let mut nr_infeasible = 0;
    measure("infeasible weights: 100,000 tasks on 64 CPUs", 20, || {
        nr_infeasible = black_box(adjust_weights(black_box(&tasks), 64)).nr_infeasible;
    });
    println!("(infeasible tasks in that case: {nr_infeasible})");
}
