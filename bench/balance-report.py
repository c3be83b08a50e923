#!/usr/bin/env python3
"""Turns the BENCH lines of one balancing-benchmark boot into a table of ratios against EEVDF
(same boot) and against the previous run of the same scheduler, and a JSON record.

  balance-report.py CONSOLE_LOG SCHEDULER KERNEL OUT_DIR
"""
import json
import os
import sys
import time

FIGURES = [
    ("uneven_s", "work born on node 0: completion", "s", "lower"),
    ("uneven_node_changes", "work born on node 0: node changes seen", "", "lower"),
    ("build_s", "parallel build: completion", "s", "lower"),
    ("build_jobs_per_s", "parallel build: throughput", "jobs/s", "higher"),
]


def parse(log, label):
    values = {}
    for line in log.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] == "BENCH" and parts[1] == label:
            values[parts[2]] = float(parts[3])
    return values


def ratio(a, b):
    return None if a is None or not b else a / b


def fmt(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def main():
    log_path, sched, kernel, out_dir = sys.argv[1:5]
    log = open(log_path, errors="replace").read()
    base, run = parse(log, "eevdf"), parse(log, sched)
    if not base or not run:
        sys.exit(f"bench: no BENCH lines for eevdf and {sched}; see {log_path}")
    os.makedirs(out_dir, exist_ok=True)
    record_path = os.path.join(out_dir, f"balance-{sched}.json")
    previous = json.load(open(record_path)) if os.path.exists(record_path) else None
    print(f"\n{sched} against EEVDF, one boot, kernel {kernel}")
    print(f"{'figure':<58} {'EEVDF':>9} {sched:>11} {'ratio':>7} {'vs previous':>12}")
    for key, name, unit, better in FIGURES:
        b, r = base.get(key), run.get(key)
        p = previous["run"].get(key) if previous else None
        label = f"{name} ({unit}, {better} is better)" if unit else f"{name} ({better} is better)"
        print(f"{label:<58} {fmt(b, 2):>9} {fmt(r, 2):>11} {fmt(ratio(r, b)):>7} {fmt(ratio(r, p)):>12}")
    record = {"scheduler": sched, "kernel": kernel, "time": int(time.time()), "eevdf": base, "run": run}
    json.dump(record, open(record_path, "w"), indent=1)
    print(f"record: {record_path}")


if __name__ == "__main__":
    main()
