"""regresslib: the regression runner, testplan report and mutation tool behind tools/regress and
tools/mutate.

Modules: config (TOML files and their validation), logparse (verdict of one run, failure
bucketing), runner (parallel runs with timeouts), coverage (Verilator coverage merge, lcov info
and functional bins), testplan (testpoint status), report (junit.xml, report.md, report.html),
regress and mutate (the command lines)."""

import os

# Repository root: tools/regresslib/ -> tools/ -> root.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ToolError(Exception):
    """A user-facing error: printed as one line, exit code 2."""
