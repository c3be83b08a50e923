#!/usr/bin/env python3
"""Turns the BENCH lines of one guest boot into a table of ratios against EEVDF (and against
the previous run of the same scheduler, kept in the cache), a JSON record and a PNG chart.

  report.py CONSOLE_LOG SCHEDULER KERNEL OUT_DIR
"""
import json
import os
import re
import subprocess
import sys

# Lower is better for these; higher for throughput.
LOWER_IS_BETTER = {"p50_us", "p99_us", "max_us", "hackbench_s", "shell_p50_ms", "shell_p90_ms", "shell_p99_ms"}
METRICS = ["samples", "p50_us", "p99_us", "max_us", "shell_p50_ms", "shell_p90_ms", "shell_p99_ms",
           "hackbench_s", "bogo_ops_per_s"]


def quantile(sorted_values, q):
    """The nearest-rank quantile of an ascending list, or None when it is empty."""
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * q // 1))
    return sorted_values[int(rank) - 1]


def parse(log, label):
    hist, max_us, overflows, times, bogo, shell_us, overhead = {}, None, 0, [], None, [], None
    for line in log.splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[0] != "BENCH" or parts[1] != label:
            continue
        kind, rest = parts[2], parts[3:]
        if kind == "cyclictest":
            text = " ".join(rest)
            if re.fullmatch(r"\d+ \d+", text):
                # Zero-padded decimal, never octal.
                bucket, count = (int(x, 10) for x in rest)
                hist[bucket] = hist.get(bucket, 0) + count
            elif text.startswith("# Max Latencies:"):
                max_us = int(rest[-1], 10)
            elif text.startswith("# Histogram Overflows:"):
                overflows = int(rest[-1], 10)
        elif kind == "shell":
            shell_us.append(int(rest[0]))
        elif kind == "overhead":
            # decisions, CPU ms of the policy process, ms attached
            overhead = [int(x) for x in rest[:3]]
        elif kind == "hackbench":
            times.append(float(rest[-1]))
        elif kind == "throughput":
            # stress-ng --metrics-brief: ... cpu BOGO_OPS REAL_S USR_S SYS_S OPS_PER_S_REAL ...
            i = rest.index("cpu")
            bogo = float(rest[i + 5])
    samples = sum(hist.values()) + overflows

    def percentile(q):
        target, seen = q * samples, 0
        for bucket in sorted(hist):
            seen += hist[bucket]
            if seen >= target:
                return bucket
        return max_us  # in the overflow range: the max is the best bound known

    times.sort()
    shell_ms = sorted(us / 1000 for us in shell_us)
    return {
        "shell_runs": len(shell_ms),
        "shell_p50_ms": quantile(shell_ms, 0.50),
        "shell_p90_ms": quantile(shell_ms, 0.90),
        "shell_p99_ms": quantile(shell_ms, 0.99),
        "overhead": overhead,
        "samples": samples,
        "p50_us": percentile(0.50) if samples else None,
        "p99_us": percentile(0.99) if samples else None,
        "max_us": max_us,
        "hackbench_s": times[len(times) // 2] if times else None,
        "bogo_ops_per_s": bogo,
    }


def ratio(new, old):
    if new is None or old in (None, 0):
        return None
    return new / old


def fmt(value):
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) and value < 100 else f"{value:.0f}"


def main():
    log_path, sched, kernel, out_dir = sys.argv[1:5]
    log = open(log_path, errors="replace").read()
    base, run = parse(log, "eevdf"), parse(log, sched)
    if not base["samples"] or not run["samples"]:
        sys.exit("bench: no cyclictest samples in the log; see " + log_path)
    os.makedirs(out_dir, exist_ok=True)
    previous_path = os.path.join(out_dir, f"{sched}-last.json")
    previous = json.load(open(previous_path)) if os.path.exists(previous_path) else None

    print(f"\n{sched} against EEVDF, same boot, Linux {kernel} (TCG: compare ratios only)")
    header = f"{'metric':<16}{'EEVDF':>12}{sched:>14}{'ratio':>9}{'vs previous':>13}"
    print(header)
    print("-" * len(header))
    for m in METRICS:
        r = ratio(run[m], base[m])
        prev_ratio = None
        if previous and m != "samples":
            prev_ratio = ratio(r, previous["ratios"].get(m))
        better = "" if r is None or m == "samples" else (" (better)" if (r < 1) == (m in LOWER_IS_BETTER) and r != 1 else "")
        print(f"{m:<16}{fmt(base[m]):>12}{fmt(run[m]):>14}{fmt(r):>9}{fmt(prev_ratio):>13}{better}")
    print(f"shell command runs: EEVDF {base['shell_runs']}, {sched} {run['shell_runs']}")
    if run["overhead"]:
        decisions, cpu_ms, attached_ms = run["overhead"]
        per_decision_us = 1000 * cpu_ms / decisions if decisions else float("nan")
        print(f"policy process: {decisions} decisions in {attached_ms / 1000:.0f} s "
              f"({1000 * decisions / attached_ms:.0f}/s), {cpu_ms} ms of CPU, "
              f"{per_decision_us:.1f} us of CPU per decision")
    print("targets: p99 <= 0.25x, throughput >= 0.97x, hackbench <= 1.05x")

    ratios = {m: ratio(run[m], base[m]) for m in METRICS if m != "samples"}
    record = {"scheduler": sched, "kernel": kernel, "eevdf": base, sched: run, "ratios": ratios}
    json.dump(record, open(previous_path, "w"), indent=2)
    chart(ratios, sched, kernel, os.path.join(out_dir, f"{sched}.png"))


def chart(ratios, sched, kernel, png):
    rows = [(m, v) for m, v in ratios.items() if v is not None]
    data = "\n".join(f'"{m}" {v:.4f}' for m, v in rows)
    script = f"""
set terminal pngcairo size 900,500 noenhanced
set output '{png}'
set title "{sched} / EEVDF, same boot, Linux {kernel}\\n1 = EEVDF; latencies and hackbench time: lower is better; bogo ops/s: higher is better"
set style fill solid 0.6
set boxwidth 0.6
set yrange [0:*]
set grid ytics
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2
plot '-' using 0:2:xtic(1) with boxes notitle, '' using 0:2:(sprintf('%.2f', $2)) with labels offset 0,1 notitle
{data}
e
{data}
e
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    print(f"chart: {png}")


if __name__ == "__main__":
    main()
