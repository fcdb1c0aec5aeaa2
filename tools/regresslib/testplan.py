"""Testplan status: per testpoint of verif/testplan.toml
  written  - every test it names is registered in the test program (`<prog> --list`);
  passing  - every test it names ran in this regression (at least one run that was not
             skipped), every one of those runs passed, and, for a testpoint marked
             needs_coverage, this run collected coverage from a passing run of each of its tests;
             otherwise `why` says what is missing (not run, failed, no coverage);
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
    needs_coverage: bool = False
    missing: list = field(default_factory=list)   # tests not registered
    runs: int = 0
    failed: int = 0
    passing: object = None       # None: no regression data
    covered: object = None       # None: no coverage collected or no covergroups
    cov_detail: str = ""
    test_runs: dict = field(default_factory=dict)  # test -> [passed, runs]
    why: str = ""                # why it is not passing ("" when passing or without runs)

    @property
    def written(self):
        return not self.missing

    def to_json(self):
        return {"name": self.name, "stage": self.stage, "desc": self.desc, "tests": self.tests,
                "covergroups": self.covergroups, "written": self.written, "missing": self.missing,
                "runs": self.runs, "failed": self.failed, "passing": self.passing,
                "covered": self.covered, "coverage": self.cov_detail, "test_runs": self.test_runs,
                "needs_coverage": self.needs_coverage, "why": self.why}


def _names(names, limit=4):
    return ", ".join(names[:limit]) + (f" +{len(names) - limit} more" if len(names) > limit else "")


def evaluate(testpoints, listed, runs=None, groups=None, group_tests=None, cov_tests=None):
    """Status of each testpoint. listed: registered test names; runs: Run records of this
    regression (None: no regression); groups: covergroup name -> Group (None: no coverage);
    group_tests: covergroup name -> {test: runs} that hit its bins (optional); cov_tests: the
    tests with a passing run whose coverage this run merged (None: no coverage collected)."""
    listed = set(listed)
    out = []
    for tp in testpoints:
        st = TestpointStatus(tp.name, tp.stage, tp.desc, list(tp.tests), list(tp.covergroups),
                             getattr(tp, "needs_coverage", False))
        st.missing = [t for t in tp.tests if t not in listed]
        if runs is not None:
            mine = [r for r in runs if r.test in tp.tests and r.status != "skipped"]
            st.runs = len(mine)
            st.failed = sum(1 for r in mine if r.failed)
            for t in tp.tests:
                rs = [r for r in mine if r.test == t]
                st.test_runs[t] = [sum(1 for r in rs if r.status == "pass"), len(rs)]
            why = []
            not_run = [t for t in tp.tests if st.test_runs[t][1] == 0]
            if not_run:
                why.append("not run: " + _names(not_run))
            failing = [t for t in tp.tests if st.test_runs[t][0] < st.test_runs[t][1]]
            if st.failed:
                why.append(f"failed: {st.failed}/{st.runs} runs ({_names(failing)})")
            if st.needs_coverage:
                if cov_tests is None:
                    why.append("no coverage collected in this run")
                else:
                    # a test without a passing run is reported as failed already
                    nocov = [t for t in tp.tests if st.test_runs[t][0] and t not in cov_tests]
                    if nocov:
                        why.append("no coverage from: " + _names(nocov))
            st.passing = not why
            st.why = "; ".join(why)
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


def passing_cell(s):
    """'yes', 'NO: <why>' or '-' (no regression data)."""
    if s.passing is None:
        return "-"
    return "yes" if s.passing else "NO: " + (s.why or "failed")


def table_rows(statuses):
    """Rows (list of str) for text/markdown tables: testpoint, stage, written, passing (with
    the reason when not), covered, tests, detail."""
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
        rows.append([s.name, s.stage, _mark(s.written), passing_cell(s), covered,
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


def totals(statuses):
    """Over all stages: (testpoints, written, passing, covered)."""
    return (len(statuses), sum(s.written for s in statuses), sum(bool(s.passing) for s in statuses),
            sum(bool(s.covered) for s in statuses))


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
    n, w, p, c = totals(statuses)
    lines.append(f"total: {n} testpoints, {w} written, {p} passing, {c} covered")
    return "\n".join(lines)
