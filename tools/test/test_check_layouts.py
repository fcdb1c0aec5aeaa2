"""tools/check_layouts: verif/blocks/pkg_layouts.hpp against the packed structs of rtl/pkg/srnic_pkg.sv."""
import os
import re
import subprocess
import sys
import tempfile
import unittest

import common

TOOL = os.path.join(common.TOOLS, "check_layouts")
PKG = os.path.join(common.ROOT, "rtl", "pkg", "srnic_pkg.sv")
LAYOUTS = os.path.join(common.ROOT, "verif", "blocks", "pkg_layouts.hpp")

MINI_PKG = """package p;
  localparam int W = 6, V = W + 2;   // two in one
  localparam logic [7:0] OP = 8'h1F;
  typedef enum logic [2:0] { A = 3'd0, B = 3'd1 } kind_e;
  typedef struct packed {
    kind_e            kind;
    logic [W-1:0]     qpn;
    logic [$clog2(V)-1:0] small;    // 3
    logic             a, b;         // two fields of one declaration
    logic [1:0][3:0]  pair;         /* 8 */
  } ev_t;
endpackage
"""
MINI_LAYOUTS = """// srnic_pkg::ev_t (W = 6)
enum EvF { kKind, kQpn, kSmall, kA, kB, kPair, kEvN };
constexpr Layout<6> kEv{{3, 6, 3, 1, 1, 8}};
"""


class CheckLayouts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_tool(self, pkg=PKG, layouts=LAYOUTS):
        r = subprocess.run([sys.executable, TOOL, "--pkg", pkg, "--layouts", layouts],
                           capture_output=True, text=True)
        return r.returncode, [l for l in r.stdout.splitlines() if not l.startswith("check_layouts: ")]

    def project_layouts(self, old, new):
        with open(LAYOUTS) as f:
            text = f.read()
        self.assertEqual(text.count(old), 1, old)
        return self.write("pkg_layouts.hpp", text.replace(old, new))

    def test_project_files_match(self):
        rc, errs = self.run_tool()
        self.assertEqual((rc, errs), (0, []))

    def test_mini_package(self):
        rc, errs = self.run_tool(self.write("p.sv", MINI_PKG), self.write("l.hpp", MINI_LAYOUTS))
        self.assertEqual((rc, errs), (0, []))

    def test_one_width_wrong(self):
        rc, errs = self.run_tool(layouts=self.project_layouts("1, 1, 1, 3, 3, 5, 5}}", "1, 1, 1, 3, 3, 4, 5}}"))
        self.assertEqual(rc, 1)
        self.assertEqual(len(errs), 1, errs)
        self.assertIn("kQpCmd (srnic_pkg::qp_cmd_t", errs[0])
        self.assertIn("field 22 timeout is 5 bits", errs[0])
        self.assertIn("the layout says 4", errs[0])

    def test_field_missing(self):
        # the last width of kRewind's list left out (its field count read from the project)
        with open(LAYOUTS) as f:
            m = re.search(r"Layout<(\d+)> kRewind\{\{([0-9, ]+)\}\}", f.read())
        n, widths = int(m.group(1)), m.group(2)
        short = widths.rsplit(",", 1)[0]
        rc, errs = self.run_tool(layouts=self.project_layouts("{{%s}}" % widths, "{{%s}}" % short))
        self.assertEqual(rc, 1)
        self.assertTrue(any(f"Layout<{n}> lists {n - 1} widths" in e for e in errs), errs)
        self.assertTrue(any(f"{n - 1} widths for the struct's {n} fields" in e for e in errs), errs)

    def test_rtl_change_and_reorder(self):
        with open(PKG) as f:
            pkg = f.read()
        swapped = pkg.replace("    logic [23:0]      psn2;", "    logic [23:0]      psnX;", 1)
        swapped = swapped.replace("logic [1:0]       rt_kind;", "logic [2:0]       rt_kind;", 1)
        swapped = swapped.replace("localparam int QPN_W  = 16;", "localparam int QPN_W  = 12;", 1)
        rc, errs = self.run_tool(pkg=self.write("pkg.sv", swapped))
        self.assertEqual(rc, 1)
        text = "\n".join(errs)
        self.assertIn("the note says QPN_W = 16, ", text)
        self.assertIn("field 0 qpn is 12 bits", text)
        self.assertIn("field 9 rt_kind is 3 bits", text)
        self.assertIn("enumerator 5 kCePsn2 does not name field 5 psnX", text)

    def test_unknown_type_and_duplicate(self):
        extra = MINI_LAYOUTS + "// srnic_pkg::nope_t\nconstexpr Layout<1> kNope{{1}};\n" + MINI_LAYOUTS
        rc, errs = self.run_tool(self.write("p.sv", MINI_PKG), self.write("l.hpp", extra))
        self.assertEqual(rc, 1)
        self.assertEqual(len(errs), 2, errs)
        self.assertIn("srnic_pkg::nope_t is not declared", errs[0])
        self.assertIn("srnic_pkg::ev_t is described twice", errs[1])

    def test_enum_type_width(self):
        pkg = MINI_PKG.replace("logic [2:0] { A", "logic [3:0] { A")
        rc, errs = self.run_tool(self.write("p.sv", pkg), self.write("l.hpp", MINI_LAYOUTS))
        self.assertEqual(rc, 1)
        self.assertEqual(len(errs), 1, errs)
        self.assertIn("field 0 kind is 4 bits", errs[0])


if __name__ == "__main__":
    unittest.main()
