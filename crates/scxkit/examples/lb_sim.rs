//! Runs the hierarchical load balancer on a machine's sysfs tree with a synthetic, seeded
//! load and prints what each level cost and what the passes achieved:
//!
//!   cargo run --release -p scxkit --example lb_sim -- --sysfs DIR --tasks N --passes K \
//!       [--mode propagate|rescan|compare] [--seed S] [--max-moves-per-pass N]
//!
//! `compare` runs both modes on the same input, checks they decide the same moves and
//! prints the ratio of their costs per level.

use anyhow::{bail, Context, Result};
use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scxkit::cpumask::Cpumask;
use scxkit::domains::Domains;
use scxkit::lb::load::LOAD_NICE0_BUSY;
use scxkit::lb::{Balancer, Hierarchy, Mode, Move, Task};
use scxkit::Topology;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Parser)]
struct Opts {
    /// A sysfs tree (e.g. tests/fixtures/sysfs/big-1024) or / for this machine.
    #[arg(long)]
    sysfs: PathBuf,
    /// Number of tasks.
    #[arg(long, default_value_t = 100_000)]
    tasks: usize,
    /// Balancing passes to run.
    #[arg(long, default_value_t = 10)]
    passes: usize,
    /// propagate (kept aggregates), rescan (summed at every read), or compare (both).
    #[arg(long, default_value = "propagate")]
    mode: String,
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Most moves a pass decides; the next pass goes on.
    #[arg(long, default_value_t = scxkit::lb::DEFAULT_MAX_MOVES_PER_PASS)]
    max_moves_per_pass: usize,
}

/// Tasks with a skewed load (many light, few heavy), piled towards the first domains, and
/// one in ten allowed in only a few domains.
fn make_tasks(opts: &Opts, nr_domains: usize) -> Vec<Task> {
    let mut rng = StdRng::seed_from_u64(opts.seed);
    (0..opts.tasks)
        .map(|_| {
            let u: f64 = rng.random();
            let load = 1 + (u * u * u * LOAD_NICE0_BUSY as f64) as u64;
            let v: f64 = rng.random();
            let domain = ((v * v) * nr_domains as f64) as usize;
            let allowed = rng.random_bool(0.1).then(|| {
                let mut m = Cpumask::new(nr_domains);
                m.set(domain);
                for _ in 0..rng.random_range(1..=3) {
                    m.set(rng.random_range(0..nr_domains));
                }
                m
            });
            Task { load, domain: domain.min(nr_domains - 1), allowed }
        })
        .collect()
}

struct Run {
    moves: Vec<Vec<Move>>,
    pass_ns: Vec<u64>,
    capped: Vec<bool>,
    /// The nodes as the last pass found them (load, imbalance, delta).
    last_nodes: Vec<String>,
    imbalance_before: f64,
    imbalance_after: f64,
    converged_at: Option<usize>,
    balancer: Balancer,
}

fn run(h: &Hierarchy, mode: Mode, mut tasks: Vec<Task>, passes: usize, max_moves: usize) -> Run {
    let balancer = Balancer::new(h.clone(), mode).with_max_moves_per_pass(max_moves);
    let mut out = Run { moves: vec![], pass_ns: vec![], capped: vec![], last_nodes: vec![], imbalance_before: 0.0, imbalance_after: 0.0, converged_at: None, balancer };
    for pass in 0..passes {
        let start = Instant::now();
        let report = out.balancer.pass(&mut tasks);
        out.pass_ns.push(start.elapsed().as_nanos() as u64);
        out.capped.push(report.capped);
        let mut groups = scxkit::metrics::Snapshot::new();
        scxkit::lb::metrics::set_groups(&mut groups, h, &report);
        out.last_nodes = scxkit::lb::metrics::hierarchy_lines(&groups).into_iter().filter(|l| !l.starts_with(' ')).collect();
        if pass == 0 {
            out.imbalance_before = report.imbalance_before;
        }
        out.imbalance_after = report.imbalance_after;
        if report.moves.is_empty() && out.converged_at.is_none() {
            out.converged_at = Some(pass + 1);
        }
        out.moves.push(report.moves);
    }
    out
}

fn print(name: &str, r: &Run) {
    println!("# mode={name}");
    let levels = r.balancer.hierarchy.policies.iter().zip(r.balancer.costs()).zip(r.balancer.outcomes());
    for ((policy, cost), o) in levels {
        let w = cost.worked_costs();
        println!(
            "level={} attempts={} worked={} min_ns={} avg_ns={:.0} p99_ns={} max_ns={} | moves={} balanced={} no_busier_group={} no_idler_group={} no_task={} capped={}",
            policy.name, cost.attempts(), w.count, w.min_ns, w.avg_ns, w.p99_ns, w.max_ns,
            o.moves, o.balanced, o.no_busier_group, o.no_idler_group, o.no_task, o.capped
        );
    }
    let moved: usize = r.moves.iter().map(Vec::len).sum();
    let pass_avg = r.pass_ns.iter().sum::<u64>() as f64 / r.pass_ns.len().max(1) as f64;
    let converged = r.converged_at.map_or("no".to_string(), |p| format!("pass {p}"));
    let per_pass: Vec<String> = r
        .pass_ns
        .iter()
        .zip(&r.moves)
        .zip(&r.capped)
        .map(|((ns, m), &capped)| format!("{}us/{}{}", ns / 1000, m.len(), if capped { " (capped)" } else { "" }))
        .collect();
    println!("passes (time/moves): {}", per_pass.join(" "));
    println!("nodes at the last pass: {}", r.last_nodes.join(", "));
    println!("pass_max_ns={}", r.pass_ns.iter().max().unwrap_or(&0));
    let later = &r.pass_ns[1.min(r.pass_ns.len())..];
    let later_max = later.iter().max().copied().unwrap_or(0);
    println!(
        "pass_avg_ns={pass_avg:.0} first_pass_ns={} later_passes_max_ns={later_max} imbalance_before={:.3} imbalance_after={:.3} moved={moved} converged={converged}",
        r.pass_ns.first().unwrap_or(&0), r.imbalance_before, r.imbalance_after
    );
}

fn main() -> Result<()> {
    let opts = Opts::parse();
    let topo = Topology::from_sysfs(&opts.sysfs).with_context(|| format!("--sysfs {}", opts.sysfs.display()))?;
    let domains = Domains::per_llc(&topo);
    let h = Hierarchy::numa_domains(&topo, &domains)?;
    println!("# {} CPUs, {} nodes, {} domains, {} tasks, seed {}", topo.nr_online(), topo.nodes.len(), h.nr_domains(), opts.tasks, opts.seed);
    let tasks = make_tasks(&opts, h.nr_domains());
    match opts.mode.as_str() {
        "propagate" => print("propagate", &run(&h, Mode::Propagate, tasks, opts.passes, opts.max_moves_per_pass)),
        "rescan" => print("rescan", &run(&h, Mode::Rescan, tasks, opts.passes, opts.max_moves_per_pass)),
        "compare" => {
            let fast = run(&h, Mode::Propagate, tasks.clone(), opts.passes, opts.max_moves_per_pass);
            let slow = run(&h, Mode::Rescan, tasks, opts.passes, opts.max_moves_per_pass);
            print("propagate", &fast);
            print("rescan", &slow);
            if fast.moves != slow.moves {
                bail!("the two modes decided different moves");
            }
            for (policy, (f, s)) in h.policies.iter().zip(fast.balancer.costs().iter().zip(slow.balancer.costs())) {
                if f.attempts() == 0 {
                    println!("level={} no attempt (every pass reached its move cap first), same moves", policy.name);
                    continue;
                }
                let ratio = s.all().avg_ns / f.all().avg_ns.max(1.0);
                println!("level={} rescan/propagate avg cost per attempt: {ratio:.1}x, same moves", policy.name);
            }
        }
        other => bail!("--mode '{other}': expected propagate, rescan or compare"),
    }
    Ok(())
}
