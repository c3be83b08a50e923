#!/usr/bin/env python3
"""Turns the consoles of a bench/run.sh run into a table per mode (median and spread over
boots, ratio to the same boot's EEVDF, marked "~" where EEVDF's own drift covers it), a JSON
record and a PNG with one panel per figure.

  report.py RUN_DIR KERNEL

RUN_DIR holds names.tsv (label, scheduler as given) and MODE-bootN.log consoles.
"""
import glob
import json
import os
import re
import statistics
import subprocess
import sys

# Figures per guest mode; True where lower is better.
FIGURES = {
    "throughput": [("hackbench_pipe_s", True), ("hackbench_switches_k", True), ("cpu_bogo_per_s", False), ("matrix_bogo_per_s", False),
                   ("forkexec_per_s", False), ("sched_cpu_pct", True)],
    "latency": [("cyclic_p50_us", True), ("cyclic_p99_us", True), ("shell_p50_ms", True),
                ("shell_p90_ms", True), ("shell_p99_ms", True), ("wakeup_p50_us", True),
                ("wakeup_p99_us", True), ("wakeup_p999_us", True), ("requests_per_s", False),
                ("sched_cpu_pct", True)],
}
# The desktop's background loads (bench/scenario.sh DESKTOP_LEVELS) and its figures at each.
DESKTOP_LEVELS = (1, 2, 4)
DESKTOP_FIGURES = [("frames_fps", False), ("frames_dropped_pct", True), ("frame_p99_ms", True),
                   ("uname_p50_ms", True), ("uname_p99_ms", True), ("ps_p50_ms", True),
                   ("ps_p99_ms", True), ("build_jobs_per_s", False)]
FIGURES["desktop"] = [(f"{name}_x{level}", lower) for level in DESKTOP_LEVELS for name, lower in DESKTOP_FIGURES] + \
    [("sched_cpu_pct", True)]
FIGURES["build"] = [("build_files_per_s", False), ("build_s", True), ("uname_p50_ms", True), ("uname_p99_ms", True),
                    ("ps_p50_ms", True), ("ps_p99_ms", True), ("hogs_bogo_per_s", False), ("migrations_per_file", True),
                    ("node_changes_per_file", True), ("rusty_node_homes_per_file", True)]
MODE_KIND = {"throughput": "throughput", "throughput1": "throughput", "latency1": "latency", "latency": "latency",
             "desktop1": "desktop", "desktop": "desktop", "build": "build", "compile": "build"}
MODE_TITLE = {
    "throughput": "throughput, reproducible (icount)",
    "throughput1": "throughput on one vCPU, reproducible (icount)",
    "latency1": "latency on one vCPU, reproducible (icount)",
    "latency": "latency on several vCPUs, real-time TCG",
    "desktop1": "desktop under a build on one vCPU, reproducible (icount); _xN: N times the background",
    "desktop": "desktop under a build on several vCPUs, real-time TCG; _xN: N times the background",
    "build": "a real make -j beside CPU hogs, Debian guest, reproducible (icount); uname, ps axuw timed",
    "compile": "a real make -j alone, Debian guest, reproducible (icount); uname, ps axuw timed",
}
# A ratio to EEVDF this much worse than the previous run's of the same settings is flagged.
REGRESSION_FACTOR = 1.10
EEVDF_RUNS = ("eevdf1", "eevdf2")


def quantile(sorted_values, q):
    """Nearest-rank quantile of an ascending list; None when it is empty."""
    if not sorted_values:
        return None
    rank = min(len(sorted_values), max(1, int(-(-len(sorted_values) * q // 1))))
    return sorted_values[rank - 1]


def histogram_quantile(hist, overflows, max_us, q):
    """Quantile of cyclictest's histogram (bucket us -> count); the max bounds overflows."""
    samples = sum(hist.values()) + overflows
    target, seen = q * samples, 0
    for bucket in sorted(hist):
        seen += hist[bucket]
        if seen >= target:
            return bucket
    return max_us


def command_quantiles(f, command, runs, percents, suffix=""):
    """Sets f["COMMAND_pP_msSUFFIX"] for each percent P from runs timed in microseconds."""
    ms = sorted(int(r[0]) / 1000 for r in runs if r[0].isdigit())
    for p in percents:
        if ms:
            f[f"{command}_p{p}_ms{suffix}"] = quantile(ms, p / 100)


def parse_log(text):
    """BENCH lines -> {label: {figure: value}}, plus {label: overhead} and failures."""
    raw = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 4 or parts[0] != "BENCH":
            continue
        label, kind, rest = parts[1], parts[2], parts[3:]
        raw.setdefault(label, {}).setdefault(kind, []).append(rest)
    figures, overheads, failures = {}, {}, {}
    for label, kinds in raw.items():
        f = figures.setdefault(label, {})
        hist, overflows, max_us = {}, 0, None
        for rest in kinds.get("cyclictest", []):
            text = " ".join(rest)
            if re.fullmatch(r"\d+ \d+", text):
                bucket, count = (int(x, 10) for x in rest)
                hist[bucket] = hist.get(bucket, 0) + count
            elif text.startswith("# Max Latencies:"):
                max_us = int(rest[-1], 10)
            elif text.startswith("# Histogram Overflows:"):
                overflows = int(rest[-1], 10)
        if hist:
            f["cyclic_p50_us"] = histogram_quantile(hist, overflows, max_us, 0.50)
            f["cyclic_p99_us"] = histogram_quantile(hist, overflows, max_us, 0.99)
        command_quantiles(f, "shell", kinds.get("shell_us", []), (50, 90, 99))
        # uname and ps: the build mode's (no suffix), and the desktop's at each load.
        for suffix in ("",) + tuple(f"_x{level}" for level in DESKTOP_LEVELS):
            for command in ("uname", "ps"):
                command_quantiles(f, command, kinds.get(f"{command}_us{suffix}", []), (50, 99), suffix)
        for level in DESKTOP_LEVELS:
            for name in ("frames_fps", "frames_dropped_pct", "frame_p99_ms", "build_jobs_per_s"):
                numbers = [float(r[0]) for r in kinds.get(f"{name}_x{level}", []) if re.fullmatch(r"[0-9.]+", r[0])]
                if numbers:
                    f[f"{name}_x{level}"] = numbers[0]
        # hackbench's time, and the context switches its runs took (what separates schedulers
        # on a pipe hand-off load): each the median of the runs.
        for name in ("hackbench_pipe_s", "hackbench_switches_k"):
            runs = sorted(float(r[0]) for r in kinds.get(name, []) if re.fullmatch(r"[0-9.]+", r[0]))
            if runs:
                f[name] = statistics.median(runs)
        for name in ("cpu_bogo_per_s", "matrix_bogo_per_s", "forkexec_per_s", "wakeup_p50_us",
                     "wakeup_p99_us", "wakeup_p999_us", "requests_per_s", "build_files_per_s", "build_s",
                     "migrations_per_file", "node_changes_per_file", "rusty_node_homes_per_file", "hogs_bogo_per_s",
                     "sched_cpu_pct"):
            numbers = [float(r[0]) for r in kinds.get(name, []) if re.fullmatch(r"[0-9.]+", r[0])]
            if numbers:
                f[name] = numbers[0]
        if "overhead" in kinds:
            decisions, cpu_ms, attached_ms = (int(x) for x in kinds["overhead"][-1][:3])
            overheads[label] = {"decisions": decisions, "cpu_ms": cpu_ms, "attached_ms": attached_ms}
        if "failed" in kinds:
            failures[label] = [" ".join(r) for r in kinds["failed"]]
    return figures, overheads, failures


def summarize(values):
    values = [v for v in values if v is not None]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "values": values}


def aggregate(boots, labels, figures):
    """boots: [{label: {figure: value}}] of one mode. Per figure: EEVDF's values and drift,
    each scheduler's values and ratios to its boot's EEVDF (the mean of its two runs)."""
    result = {}
    for fig, lower_better in figures:
        eevdf_values, drifts, per_sched = [], [], {label: ([], []) for label in labels}
        for boot in boots:
            e = [boot.get(run, {}).get(fig) for run in EEVDF_RUNS]
            # A figure only a scheduler reports (its own counters), or EEVDF at 0 (no frame
            # delivered, none dropped): the values count, no ratio does.
            ref = sum(e) / 2 if None not in e and 0 not in e else None
            if None not in e:
                eevdf_values += e
            if ref:
                drifts.append(e[1] / e[0])
            for label in labels:
                v = boot.get(label, {}).get(fig)
                if v is not None:
                    per_sched[label][0].append(v)
                    if ref:
                        per_sched[label][1].append(v / ref)
        noise = max((abs(d - 1) for d in drifts), default=None)
        entry = {"lower_is_better": lower_better, "eevdf": summarize(eevdf_values),
                 "eevdf_drift": summarize(drifts), "noise": noise, "schedulers": {}}
        for label, (values, ratios) in per_sched.items():
            r = summarize(ratios)
            if r is not None:
                r["significant"] = noise is not None and abs(r["median"] - 1) > noise
            entry["schedulers"][label] = {"value": summarize(values), "ratio": r}
        result[fig] = entry
    return result


def fmt(x):
    if x is None:
        return "-"
    if abs(x) >= 100:
        return f"{x:.0f}"
    return f"{x:.3g}" if abs(x) < 10 else f"{x:.1f}"


def cell(s):
    value, ratio = s.get("value"), s.get("ratio")
    if not value:
        return "-"
    text = f"{fmt(value['median'])} [{fmt(value['min'])}-{fmt(value['max'])}]"
    if ratio:
        text += f" {ratio['median']:.2f}x" + ("" if ratio["significant"] else "~")
    return text


def eevdf_cell(entry):
    e, d = entry["eevdf"], entry["eevdf_drift"]
    if not e:
        return "-"
    drift = f" drift {d['median']:.2f}" if d else ""
    return f"{fmt(e['median'])} [{fmt(e['min'])}-{fmt(e['max'])}]{drift}"


def print_table(mode, result, labels, names, nboots):
    print(f"\n{MODE_TITLE[mode]}: {nboots} boot(s); median [min-max] over boots, ratio to the same boot's EEVDF")
    columns = ["figure", "EEVDF"] + [names[l] for l in labels]
    rows = [[fig + (" (lower better)" if e["lower_is_better"] else "")] + [eevdf_cell(e)] +
            [cell(e["schedulers"].get(l, {})) for l in labels] for fig, e in result.items()]
    widths = [max(len(str(r[i])) for r in rows + [columns]) for i in range(len(columns))]
    for row in [columns, ["-" * w for w in widths]] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))


def chart(panels, names, png, kernel):
    """panels: [(title, {label: (median, min, max)})]: one panel per figure, error bars."""
    n = len(panels)
    cols = 4
    rows = -(-n // cols)
    script = [f"set terminal pngcairo size {cols * 330},{rows * 300 + 40} noenhanced font ',8'",
              f"set output '{png}'",
              f"set multiplot layout {rows},{cols} title 'ratio to EEVDF in the same boot (1 = EEVDF), median and range over boots, Linux {kernel}'",
              "set style fill solid 0.5", "set boxwidth 0.6", "set yrange [0:*]", "set grid ytics",
              "set xtics rotate by -30"]
    for title, bars in panels:
        data = "\n".join(f'"{names[l]}" {m:.4f} {lo:.4f} {hi:.4f}' for l, (m, lo, hi) in bars.items())
        script += [f"set title '{title}'", "set arrow 1 from graph 0, first 1 to graph 1, first 1 nohead dt 2",
                   "plot '-' using 0:2:xtic(1) with boxes notitle, '-' using 0:2:3:4 with yerrorbars notitle",
                   data, "e", data, "e"]
    script.append("unset multiplot")
    subprocess.run(["gnuplot"], input="\n".join(script) + "\n", text=True, check=True)


def ratios_by_name(record):
    """{(mode, figure, scheduler as given): (median ratio to EEVDF, lower is better)}."""
    out = {}
    for mode, m in record.get("modes", {}).items():
        for fig, e in m["figures"].items():
            for label, s in e["schedulers"].items():
                if s.get("ratio"):
                    out[(mode, fig, record["schedulers"][label])] = (s["ratio"]["median"], e["lower_is_better"])
    return out


def regressed(change, lower_is_better):
    """Whether a ratio of ratios (this run / the previous) is a regression."""
    worse = change if lower_is_better else 1 / change
    return worse > REGRESSION_FACTOR


def print_changes(record, previous):
    """Each ratio against the same one in the previous run (a ratio of ratios), when both
    runs had the same settings (kernel, vCPUs, run length, build)."""
    if (record.get("kernel"), record.get("settings")) != (previous.get("kernel"), previous.get("settings")):
        print(f"not compared with the previous run: its settings differ ({previous.get('settings')})")
        return
    now, before = ratios_by_name(record), ratios_by_name(previous)
    common = sorted(k for k in now if k in before and before[k][0])
    if not common:
        return
    print(f"against the previous run (this ratio / that ratio; REGRESSION: {REGRESSION_FACTOR:.2f}x worse or more):")
    for key in common:
        mode, fig, name = key
        change = now[key][0] / before[key][0]
        flag = "  REGRESSION" if regressed(change, now[key][1]) else ""
        print(f"  {mode:<10} {fig:<22} {name}: {change:.2f}{flag}")


def main():
    run_dir, kernel = sys.argv[1:3]
    names = {}
    with open(os.path.join(run_dir, "names.tsv")) as f:
        for line in f:
            label, name = line.rstrip("\n").split("\t", 1)
            names[label] = name
    labels = sorted(names, key=lambda l: int(l[1:]))
    settings_path = os.path.join(run_dir, "settings.txt")
    settings = open(settings_path).read().strip() if os.path.exists(settings_path) else None
    record = {"kernel": kernel, "settings": settings, "schedulers": names, "modes": {}}
    panels = []
    for mode in MODE_KIND:
        logs = sorted(glob.glob(os.path.join(run_dir, f"{mode}-boot*.log")))
        if not logs:
            continue
        boots, overheads, failures = [], {}, {}
        for path in logs:
            figures, over, fails = parse_log(open(path, errors="replace").read())
            boots.append(figures)
            for label, o in over.items():
                overheads.setdefault(label, []).append(o)
            for label, why in fails.items():
                failures.setdefault(names.get(label, label), []).extend(why)
        result = aggregate(boots, labels, FIGURES[MODE_KIND[mode]])
        print_table(mode, result, labels, names, len(boots))
        for label, runs in overheads.items():
            decisions = sum(o["decisions"] for o in runs)
            cpu_ms = sum(o["cpu_ms"] for o in runs)
            secs = sum(o["attached_ms"] for o in runs) / 1000
            if decisions and secs:
                print(f"  {names[label]}: policy process {1000 * cpu_ms / decisions:.1f} us of CPU per decision, "
                      f"{decisions / secs:.0f} decisions/s")
        for name, why in failures.items():
            print(f"  {name}: {'; '.join(why)}")
        record["modes"][mode] = {"boots": len(boots), "figures": result, "overheads": overheads,
                                 "failures": failures, "raw": boots}
        for fig, e in result.items():
            bars = {l: (s["ratio"]["median"], s["ratio"]["min"], s["ratio"]["max"])
                    for l, s in e["schedulers"].items() if s.get("ratio")}
            if bars:
                panels.append((f"{mode}: {fig}", bars))
    print("\n~ : within EEVDF's own drift between its first and last run of a boot (not significant)")
    last_path = os.path.join(os.path.dirname(os.path.abspath(run_dir)), "last.json")
    if os.path.exists(last_path):
        print_changes(record, json.load(open(last_path)))
    json_path = os.path.join(run_dir, "bench.json")
    json.dump(record, open(json_path, "w"), indent=1)
    json.dump(record, open(last_path, "w"), indent=1)
    print(f"record: {json_path}")
    if panels:
        png = os.path.join(run_dir, "bench.png")
        chart(panels, names, png, kernel)
        print(f"chart: {png}")


if __name__ == "__main__":
    main()
