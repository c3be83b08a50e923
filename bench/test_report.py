"""Unit tests of bench/report.py's statistics (run by ./test.sh --host)."""
import contextlib
import io
import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(__file__))
import report  # noqa: E402


class Quantiles(unittest.TestCase):
    def test_nearest_rank(self):
        values = list(range(1, 101))
        self.assertEqual(report.quantile(values, 0.5), 50)
        self.assertEqual(report.quantile(values, 0.99), 99)
        self.assertEqual(report.quantile([3], 0.99), 3)
        self.assertIsNone(report.quantile([], 0.5))

    def test_histogram_overflow_is_bounded_by_the_max(self):
        hist = {10: 98, 20: 1}
        self.assertEqual(report.histogram_quantile(hist, 0, 25, 0.5), 10)
        self.assertEqual(report.histogram_quantile(hist, 1, 5000, 0.999), 5000)


class Parsing(unittest.TestCase):
    def test_figures_from_bench_lines(self):
        log = "\n".join([
            "BENCH s1 hackbench_pipe_s 3.0", "BENCH s1 hackbench_pipe_s 2.0", "BENCH s1 hackbench_pipe_s 1.0",
            "BENCH s1 hackbench_switches_k 118", "BENCH s1 hackbench_switches_k 24", "BENCH s1 hackbench_switches_k 20",
            "BENCH s1 shell_us 1000", "BENCH s1 shell_us 3000",
            "BENCH s1 cyclictest 000010 000005", "BENCH s1 cyclictest # Max Latencies: 00040",
            "BENCH s1 wakeup_p99_us 12.5", "BENCH s1 matrix_bogo_per_s 128.4",
            "BENCH s1 matrix_bogo_per_s mean", "BENCH s1 overhead 100 50 2000", "BENCH s1 sched_cpu_pct 3.25",
            "BENCH s2 failed did not load", "unrelated line",
        ])
        figures, overheads, failures = report.parse_log(log)
        self.assertEqual(figures["s1"]["hackbench_pipe_s"], 2.0)
        self.assertEqual(figures["s1"]["hackbench_switches_k"], 24.0)
        self.assertEqual(figures["s1"]["shell_p50_ms"], 1.0)
        self.assertEqual(figures["s1"]["shell_p99_ms"], 3.0)
        self.assertEqual(figures["s1"]["cyclic_p50_us"], 10)
        self.assertEqual(figures["s1"]["wakeup_p99_us"], 12.5)
        self.assertEqual(figures["s1"]["matrix_bogo_per_s"], 128.4, "words after the figure are skipped")
        self.assertEqual(figures["s1"]["sched_cpu_pct"], 3.25)
        self.assertEqual(overheads["s1"], {"decisions": 100, "cpu_ms": 50, "attached_ms": 2000})
        self.assertEqual(failures["s2"], ["did not load"])

    def test_desktop_figures_per_background_load(self):
        log = "\n".join(["BENCH s1 frames_fps_x2 59.9", "BENCH s1 frames_dropped_pct_x2 0.20",
                         "BENCH s1 uname_us_x2 4000", "BENCH s1 uname_us_x2 2000",
                         "BENCH s1 ps_us_x4 30000", "BENCH s1 build_jobs_per_s_x1 17.3"])
        f = report.parse_log(log)[0]["s1"]
        self.assertEqual(f["frames_fps_x2"], 59.9)
        self.assertEqual(f["uname_p50_ms_x2"], 2.0)
        self.assertEqual(f["uname_p99_ms_x2"], 4.0)
        self.assertEqual(f["ps_p50_ms_x4"], 30.0)
        self.assertEqual(f["build_jobs_per_s_x1"], 17.3)
        names = [name for name, _ in report.FIGURES["desktop"]]
        self.assertTrue(set(f) <= set(names), set(f) - set(names))

    def test_build_figures(self):
        log = "\n".join(["BENCH s1 build_files_per_s 3.50", "BENCH s1 build_s 41.20", "BENCH s1 uname_us 4000",
                         "BENCH s1 uname_us 2000", "BENCH s1 ps_us 90000", "BENCH s1 ps_us 30000",
                         "BENCH s1 ps_us 50000", "BENCH s1 hogs_bogo_per_s 812.5", "BENCH s1 migrations_per_file 61.5",
                         "BENCH s1 node_changes_per_file 7.25", "BENCH s1 rusty_node_homes_per_file 0.50"])
        f = report.parse_log(log)[0]["s1"]
        self.assertEqual(f["build_files_per_s"], 3.5)
        self.assertEqual(f["build_s"], 41.2)
        self.assertEqual(f["node_changes_per_file"], 7.25)
        self.assertEqual(f["uname_p50_ms"], 2.0)
        self.assertEqual(f["ps_p50_ms"], 50.0)
        self.assertEqual(f["ps_p99_ms"], 90.0)
        names = [name for name, _ in report.FIGURES["build"]]
        self.assertEqual(set(f), set(names))


class Significance(unittest.TestCase):
    def boot(self, e1, e2, s1):
        return {"eevdf1": {"x": e1}, "eevdf2": {"x": e2}, "s1": {"x": s1}}

    def test_ratio_to_the_same_boot_and_noise(self):
        boots = [self.boot(100, 104, 204), self.boot(200, 196, 396)]
        r = report.aggregate(boots, ["s1"], [("x", True)])["x"]
        self.assertAlmostEqual(r["noise"], 0.04)
        ratio = r["schedulers"]["s1"]["ratio"]
        self.assertAlmostEqual(ratio["median"], 2.0)
        self.assertTrue(ratio["significant"])
        self.assertEqual(r["schedulers"]["s1"]["value"]["median"], 300)

    def test_a_ratio_inside_eevdfs_drift_is_not_significant(self):
        boots = [self.boot(100, 110, 103)]
        ratio = report.aggregate(boots, ["s1"], [("x", True)])["x"]["schedulers"]["s1"]["ratio"]
        self.assertFalse(ratio["significant"])

    def test_a_missing_eevdf_run_leaves_the_boot_out(self):
        boots = [{"eevdf1": {"x": 100}, "s1": {"x": 50}}]
        r = report.aggregate(boots, ["s1"], [("x", True)])["x"]
        self.assertIsNone(r["noise"])
        self.assertIsNone(r["schedulers"]["s1"]["ratio"])

    def test_eevdf_at_zero_keeps_the_values_without_a_ratio(self):
        boots = [self.boot(0, 0, 60)]
        r = report.aggregate(boots, ["s1"], [("x", False)])["x"]
        self.assertEqual(r["schedulers"]["s1"]["value"]["median"], 60)
        self.assertIsNone(r["schedulers"]["s1"]["ratio"])
        self.assertEqual(report.eevdf_cell(r), "0 [0-0]")

    def test_changes_only_against_a_run_with_the_same_settings(self):
        def record(settings, ratio):
            fig = {"lower_is_better": True, "schedulers": {"s1": {"ratio": {"median": ratio}}}}
            return {"kernel": "7.3.4", "settings": settings, "schedulers": {"s1": "scx_x"},
                    "modes": {"throughput": {"figures": {"x": fig}}}}
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            report.print_changes(record("2 vCPUs", 1.2), record("2 vCPUs", 0.6))
        self.assertIn("scx_x: 2.00  REGRESSION", out.getvalue())
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            report.print_changes(record("2 vCPUs", 0.6), record("2 vCPUs", 0.62))
        self.assertNotIn("REGRESSION", out.getvalue().split("\n", 1)[1])
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            report.print_changes(record("2 vCPUs", 1.2), record("4 vCPUs", 0.6))
        self.assertIn("settings differ", out.getvalue())
        self.assertNotIn("scx_x:", out.getvalue())


class Scenario(unittest.TestCase):
    def test_every_guest_mode_has_its_suite_once(self):
        text = open(os.path.join(os.path.dirname(__file__), "scenario.sh")).read()
        for kind in set(report.MODE_KIND.values()):
            self.assertEqual(text.count(f"\n{kind}_suite() {{"), 1, kind)
            self.assertIn(f"{kind}) {kind}_suite", text)

    def test_every_mode_of_run_sh_is_reported(self):
        text = open(os.path.join(os.path.dirname(__file__), "run.sh")).read()
        accepted = re.search(r"case \$mode in ([a-z0-9|]+)\)", text).group(1).split("|")
        self.assertEqual(sorted(accepted), sorted(report.MODE_KIND))


if __name__ == "__main__":
    unittest.main()
