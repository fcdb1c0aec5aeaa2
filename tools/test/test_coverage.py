"""Coverage data: .dat and lcov info parsing, RTL line coverage, functional bins, filtering and
the verilator_coverage merge (regresslib.coverage)."""
import os
import shutil
import tempfile
import unittest

import common
from regresslib import coverage

INFO = os.path.join(common.FIXTURES, "sample.info")


def write_dat(path, points):
    """points: list of (list of (key, value), count)."""
    with open(path, "w") as f:
        f.write("# SystemC::Coverage-3\n")
        for keys, count in points:
            f.write("C '" + "".join(f"\x01{k}\x02{v}" for k, v in keys) + f"\x01' {count}\n")


def bin_point(group, line, name, count, thresh=None):
    keys = [("t", "user"), ("page", f"v_user/{group}"), ("f", f"uvm_cov/{group}"), ("l", line),
            ("n", 0), ("o", name), ("h", f"env.{group}")]
    if thresh:
        keys.append(("s", thresh))
    return keys, count


def line_point(path, line, count, page="v_line/top"):
    return [("page", page), ("f", path), ("l", line), ("n", 0), ("o", "block"), ("h", "TOP.top")], count


def toggle_point(path, line, signal, count, hier="TOP.top"):
    return [("page", "v_toggle/top"), ("f", path), ("l", line), ("n", 0), ("o", signal), ("h", hier)], count


class RtlFromDat(unittest.TestCase):
    def test_lines_and_toggles_separate(self):
        pts = [(dict(k), c) for k, c in [
            line_point("/r/rtl/a.sv", 10, 4),
            (line_point("/r/rtl/a.sv", 20, 0)[0] + [("S", "20-22,25")], 0),
            line_point("/r/rtl/a.sv", 21, 2, page="v_branch/top"),    # branch point on a line of the block
            toggle_point("/r/rtl/a.sv", 3, "cnt[0]", 7),
            toggle_point("/r/rtl/a.sv", 3, "cnt[1]", 0),
            toggle_point("/r/rtl/a.sv", 3, "cnt[0]", 0, hier="TOP.top.u1"),  # another instance
            toggle_point("/r/rtl/a.sv", 4, "flag", 1),
            line_point("/r/sim/tb.sv", 1, 1),                          # not RTL
            bin_point("cg", 1, "x", 1),
        ]]
        line, tog = coverage.rtl_coverage(pts)
        # lines 10, 20, 21, 22, 25; only 10 has all of its points hit (21: the block's point is 0);
        # a toggle's declaration line 3 / 4 is no line
        self.assertEqual([(f.file, f.hit, f.total) for f in line], [("rtl/a.sv", 1, 5)])
        # an else branch point without 'S' counts on its line 'l' too
        line2, _ = coverage.rtl_coverage([(dict(line_point("/r/rtl/b.sv", 7, 5, page="v_branch/b")[0] + [("S", "7")]), 5),
                                          (dict(line_point("/r/rtl/b.sv", 7, 0, page="v_branch/b")[0] + [("S", "8")]), 0)])
        self.assertEqual([(f.file, f.hit, f.total) for f in line2], [("rtl/b.sv", 0, 2)])
        self.assertEqual([(f.file, f.hit, f.total) for f in tog], [("rtl/a.sv", 2, 4)])

    def test_toggles_after_reset(self):
        with tempfile.TemporaryDirectory() as d:
            e1, r1, e2, r2 = (os.path.join(d, n) for n in ("e1.dat", "r1.dat", "e2.dat", "r2.dat"))
            # a: only reset activity; b: 2 changes after reset in run 1; c: 1 in each run (not 2 in one)
            write_dat(r1, [toggle_point("/r/rtl/a.sv", 1, "a", 2), toggle_point("/r/rtl/a.sv", 1, "b", 1),
                           toggle_point("/r/rtl/a.sv", 1, "c", 1), line_point("/r/rtl/a.sv", 5, 1)])
            write_dat(e1, [toggle_point("/r/rtl/a.sv", 1, "a", 2), toggle_point("/r/rtl/a.sv", 1, "b", 3),
                           toggle_point("/r/rtl/a.sv", 1, "c", 2), line_point("/r/rtl/a.sv", 5, 9)])
            write_dat(r2, [toggle_point("/r/rtl/a.sv", 1, "c", 0)])
            write_dat(e2, [toggle_point("/r/rtl/a.sv", 1, "c", 1), toggle_point("/r/rtl/b.sv", 1, "d", 4)])
            got = coverage.toggles_after_reset([(e1, r1), (e2, r2)])
            self.assertEqual([(f.file, f.hit, f.total) for f in got], [("rtl/a.sv", 1, 3), ("rtl/b.sv", 1, 1)])

    def test_per_test_bins(self):
        with tempfile.TemporaryDirectory() as d:
            a1, a2, b1 = (os.path.join(d, n) for n in ("a1.dat", "a2.dat", "b1.dat"))
            write_dat(a1, [bin_point("cg", 1, "x", 1), bin_point("cg", 2, "y", 0), line_point("/r/rtl/a.sv", 1, 1)])
            write_dat(a2, [bin_point("cg", 1, "x", 3), bin_point("cg", 2, "y", 0)])
            write_dat(b1, [bin_point("cg", 1, "x", 0), bin_point("cg", 2, "y", 2)])
            got = coverage.per_test_bins({"ta": [a1, a2], "tb": [b1]})
            self.assertEqual(got, {"cg": {"x": {"ta": 2}, "y": {"tb": 1}}})
            self.assertEqual(len(coverage.parse_dat(a1, functional_only=True)), 2)


class Info(unittest.TestCase):
    def test_parse_merges_records_of_one_file(self):
        info = coverage.parse_info(INFO)
        self.assertEqual(info["/work/main/rtl/srnic_a.sv"], {10: 5, 11: 2, 12: 1, 20: 0, 30: 0})
        self.assertEqual(info["uvm_cov/cg_wr"], {1: 4, 2: 0, 3: 1})

    def test_line_coverage_only_rtl_sv(self):
        files = coverage.line_coverage(coverage.parse_info(INFO))
        self.assertEqual([(f.file, f.hit, f.total) for f in files],
                         [("rtl/lib/fifo.sv", 2, 2), ("rtl/srnic_a.sv", 3, 5)])
        self.assertAlmostEqual(files[1].percent, 60.0)

    def test_functional_from_info(self):
        g = coverage.functional_from_info(coverage.parse_info(INFO))
        self.assertEqual((g["cg_wr"].hit, g["cg_wr"].total), (2, 3))

    def test_filter(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "rtl.info")
            n = coverage.write_filtered_info(INFO, out, lambda p: coverage.rtl_name(p) is not None)
            self.assertEqual(n, 3)
            self.assertEqual(set(coverage.parse_info(out)),
                             {"/work/main/rtl/srnic_a.sv", "/elsewhere/build/mutate/mutants/rtl/lib/fifo.sv"})

    def test_bad_info(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "x.info")
            with open(p, "w") as f:
                f.write("DA:1,1\n")
            with self.assertRaisesRegex(ValueError, "outside a file"):
                coverage.parse_info(p)
            with open(p, "w") as f:
                f.write("SF:a\nDA:x,1\n")
            with self.assertRaisesRegex(ValueError, "bad DA record"):
                coverage.parse_info(p)

    def test_rtl_name(self):
        self.assertEqual(coverage.rtl_name("/a/rtl/b/mutants/rtl/lib/y.sv"), "rtl/lib/y.sv")
        self.assertEqual(coverage.rtl_name("rtl/x.sv"), "rtl/x.sv")
        for p in ("uvm_cov/cg", "/x/foo_rtl/x.sv", "/x/rtl/x.v", "/x/sim/x.sv"):
            self.assertIsNone(coverage.rtl_name(p), p)


class Dat(unittest.TestCase):
    def test_functional_groups_with_thresholds(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "a.dat")
            write_dat(p, [bin_point("cg_wr", 1, "op:write", 4), bin_point("cg_wr", 2, "op:read", 1, 2),
                          bin_point("cg_wr", 3, "op:send", 2, 2), bin_point("cg_cqe", 1, "st:ok", 0),
                          line_point("/r/rtl/a.sv", 10, 9)])
            pts = coverage.parse_dat(p)
            self.assertEqual(len(pts), 5)
            g = coverage.functional_groups(pts)
            self.assertEqual(list(g), ["cg_cqe", "cg_wr"])
            self.assertEqual((g["cg_wr"].hit, g["cg_wr"].total), (2, 3))
            self.assertEqual(g["cg_wr"].missed(), ["op:read"])
            self.assertEqual((g["cg_cqe"].hit, g["cg_cqe"].percent), (0, 0.0))
            # the same bin in two unmerged files adds up
            g2 = coverage.functional_groups(pts + pts)
            self.assertEqual(g2["cg_wr"].missed(), [])

    def test_not_a_dat(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "a.dat")
            with open(p, "w") as f:
                f.write("hello\n")
            with self.assertRaisesRegex(ValueError, "not a Verilator coverage file"):
                coverage.parse_dat(p)


@unittest.skipUnless(shutil.which("verilator_coverage"), "verilator_coverage not installed")
class Merge(unittest.TestCase):
    def test_merge_two_runs(self):
        with tempfile.TemporaryDirectory() as d:
            a, b = os.path.join(d, "a.dat"), os.path.join(d, "b.dat")
            write_dat(a, [bin_point("cg", 1, "x", 1), bin_point("cg", 2, "y", 0, 2),
                          line_point("/r/rtl/top.sv", 1, 3), line_point("/r/rtl/top.sv", 2, 0),
                          toggle_point("/r/rtl/top.sv", 9, "q", 0), line_point("/r/sim/tb.cpp", 1, 1)])
            write_dat(b, [bin_point("cg", 1, "x", 0), bin_point("cg", 2, "y", 1, 2),
                          line_point("/r/rtl/top.sv", 1, 0), line_point("/r/rtl/top.sv", 3, 0),
                          toggle_point("/r/rtl/top.sv", 9, "q", 2)])
            res = coverage.merge([a, b], os.path.join(d, "cov"), run_tests={a: "ta", b: "tb"})
            if shutil.which("genhtml"):      # sources are missing: genhtml warns, still writes HTML
                self.assertTrue(res.html.endswith("index.html"), res.notes)
            self.assertEqual([(f.file, f.hit, f.total) for f in res.files], [("rtl/top.sv", 1, 3)])
            self.assertEqual((res.func_hit, res.func_total), (1, 2))     # y: 1 hit of 2 needed
            self.assertEqual(res.groups["cg"].missed(), ["y"])
            self.assertTrue(os.path.exists(os.path.join(d, "cov", "merged.info")))
            j = res.to_json()
            self.assertEqual(j["line"], {"hit": 1, "total": 3, "files": [{"file": "rtl/top.sv", "hit": 1, "total": 3}]})
            self.assertEqual({k: v for k, v in j["toggle"].items() if k != "basis"},
                             {"hit": 1, "total": 1, "files": [{"file": "rtl/top.sv", "hit": 1, "total": 1}]})
            self.assertEqual(res.bin_tests, {"cg": {"x": {"ta": 1}, "y": {"tb": 1}}})
            self.assertEqual(res.group_tests("cg"), {"ta": 1, "tb": 1})
            self.assertIn("include the reset", res.toggle_basis)
            # with after-reset snapshots: q changed 2 times after reset in b, never in a
            ra, rb = os.path.join(d, "a.reset.dat"), os.path.join(d, "b.reset.dat")
            write_dat(ra, [toggle_point("/r/rtl/top.sv", 9, "q", 0)])
            write_dat(rb, [toggle_point("/r/rtl/top.sv", 9, "q", 1)])
            res = coverage.merge([a, b], os.path.join(d, "cov2"), reset_dats={a: ra, b: rb})
            self.assertEqual((res.toggle_hit, res.toggle_total), (0, 1))   # b: 2 - 1 = 1 change
            self.assertIn("after reset", res.toggle_basis)

    def test_no_inputs(self):
        with tempfile.TemporaryDirectory() as d:
            res = coverage.merge([], d)
            self.assertEqual(res.notes, ["no run wrote a coverage file"])


if __name__ == "__main__":
    unittest.main()
