"""Testplan status: per testpoint of verif/testplan.toml
  written  - every test it names is registered in the test program (`<prog> --list`);
  passing  - every run of its tests in this regression passed, and there was at least one;
  covered  - every covergroup it names reached 100% in the merged coverage (only when coverage
             was collected; a testpoint without covergroups shows n/a).
Per testpoint the detail also lists each of its tests with its passing and total runs, and per
covergroup how many tests of the regression hit its bins."""

import subprocess
from dataclasses import dataclass, field

from . import ToolError, ROOT
from .runner import display_path


def list_tests(program, timeout=60):
    """Names a test program registers: the first word of each line of `<prog> --list`."""
    try:
        p = subprocess.run([program, "--list"], capture_output=True, text=True, timeout=timeout,
                           cwd=ROOT, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise ToolError(f"test program {display_path(program)} not found (build it, or pass --program)") from None
    except PermissionError:
        raise ToolError(f"test program {display_path(program)} is not executable") from None
    except subprocess.TimeoutExpired:
        raise ToolError(f"{display_path(program)} --list did not finish within {timeout} s") from None
    if p.returncode != 0:
        last = ((p.stderr or p.stdout).strip().splitlines() or ["(no output)"])[-1]
        raise ToolError(f"{display_path(program)} --list failed with exit code {p.returncode}: {last}")
    names = []
    for line in p.stdout.splitlines():
        w = line.split()
        if w and not w[0].endswith(":"):
            names.append(w[0])
    return names


@dataclass
class TestpointStatus:
    name: str
    stage: str
    desc: str
    tests: list
    covergroups: list
    missing: list = field(default_factory=list)   # tests not registered
    runs: int = 0
    failed: int = 0
    passing: object = None       # None: no regression data
    covered: object = None       # None: no coverage collected or no covergroups
    cov_detail: str = ""
    test_runs: dict = field(default_factory=dict)  # test -> [passed, runs]

    @property
    def written(self):
        return not self.missing

    def to_json(self):
        return {"name": self.name, "stage": self.stage, "desc": self.desc, "tests": self.tests,
                "covergroups": self.covergroups, "written": self.written, "missing": self.missing,
                "runs": self.runs, "failed": self.failed, "passing": self.passing,
                "covered": self.covered, "coverage": self.cov_detail, "test_runs": self.test_runs}


def evaluate(testpoints, listed, runs=None, groups=None, group_tests=None):
    """Status of each testpoint. listed: registered test names; runs: Run records of this
    regression (None: no regression); groups: covergroup name -> Group (None: no coverage);
    group_tests: covergroup name -> {test: runs} that hit its bins (optional)."""
    listed = set(listed)
    out = []
    for tp in testpoints:
        st = TestpointStatus(tp.name, tp.stage, tp.desc, list(tp.tests), list(tp.covergroups))
        st.missing = [t for t in tp.tests if t not in listed]
        if runs is not None:
            mine = [r for r in runs if r.test in tp.tests and r.status != "skipped"]
            st.runs = len(mine)
            st.failed = sum(1 for r in mine if r.failed)
            st.passing = st.runs > 0 and st.failed == 0
            for t in tp.tests:
                rs = [r for r in mine if r.test == t]
                st.test_runs[t] = [sum(1 for r in rs if r.status == "pass"), len(rs)]
        if groups is not None and tp.covergroups:
            parts, ok = [], True
            for cg in tp.covergroups:
                g = groups.get(cg)
                if g is None or g.total == 0:
                    parts.append(f"{cg} absent")
                    ok = False
                else:
                    by = (group_tests or {}).get(cg)
                    parts.append(f"{cg} {g.percent:.1f}%" + (f" (bins hit by {len(by)} tests)" if by else ""))
                    ok = ok and g.hit == g.total
            st.covered = ok
            st.cov_detail = ", ".join(parts)
        out.append(st)
    return out


def _mark(v, none="-"):
    return none if v is None else ("yes" if v else "NO")


def table_rows(statuses):
    """Rows (list of str) for text/markdown tables: testpoint, stage, written, passing,
    covered, tests, detail."""
    rows = []
    for s in statuses:
        detail = []
        if s.missing:
            names = s.missing[:4] + ([f"+{len(s.missing) - 4} more"] if len(s.missing) > 4 else [])
            detail.append("missing: " + ", ".join(names))
        if s.passing is not None:
            detail.append(f"{s.runs - s.failed}/{s.runs} runs passed" if s.runs else "no runs")
            if s.test_runs and len(s.test_runs) > 1:
                detail.append(", ".join(f"{t} {p}/{n}" for t, (p, n) in s.test_runs.items()))
        if s.cov_detail:
            detail.append(s.cov_detail)
        covered = _mark(s.covered, "n/a" if not s.covergroups else "-")
        rows.append([s.name, s.stage, _mark(s.written), _mark(s.passing), covered,
                     ", ".join(s.tests), "; ".join(detail)])
    return rows


TABLE_HEAD = ["testpoint", "stage", "written", "passing", "covered", "tests", "detail"]


def stage_summary(statuses):
    """Per stage: (stage, testpoints, written, passing, covered) counts."""
    out = []
    for stage in sorted({s.stage for s in statuses}):
        ss = [s for s in statuses if s.stage == stage]
        out.append((stage, len(ss), sum(s.written for s in ss), sum(bool(s.passing) for s in ss),
                    sum(bool(s.covered) for s in ss)))
    return out


def format_text(statuses):
    """Plain-text table (for the terminal; the tests column is left to the reports)."""
    rows = [r[:5] + r[6:] for r in [TABLE_HEAD] + table_rows(statuses)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = []
    for r in rows:
        lines.append("  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[-1])
    lines = [ln.rstrip() for ln in lines]
    lines.insert(1, "-" * len(lines[0]))
    for stage, n, w, p, c in stage_summary(statuses):
        lines.append(f"{stage}: {n} testpoints, {w} written, {p} passing, {c} covered")
    return "\n".join(lines)
