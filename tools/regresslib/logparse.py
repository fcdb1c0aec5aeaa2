"""Verdict of one test run from its output and exit status, and failure bucketing.

A run passes when it exits with 0, printed no ERROR or FATAL report line and its output starts
with 'SEED <seed>'. Report lines have the form
    SEV @ <time>: <component.path> [ID] text
and a failed RTL assertion printed by Verilator ('[<time>] %Error: <file>:<line>: Assertion
failed in <scope>: <message>') counts as 'ERROR @ <time>: <scope> [SVA] <message> (<file>:<line>)'.
A failure is bucketed by its first ERROR/FATAL line reduced to a key: severity, component path,
[ID] and the words of the text, with every number, hex value, address and time replaced by '#'
(so 'byte 17 at 0x1f40' and 'byte 3 at 0x80' fall into one bucket). Failures without such a
line are bucketed by what the runner saw: [TIMEOUT], [CRASH] (signal), [NO_REPORT] (nonzero
exit without a report line) or [NO_SEED]."""

import re
import signal
from dataclasses import dataclass

REPORT_RE = re.compile(r"^(ERROR|FATAL|WARNING)\s+@\s*([^:]*?)\s*:\s+(\S+)\s+\[([^\]]*)\]\s?(.*)$")
# A failed RTL assertion or $error as Verilator prints it (assertion builds):
#   [<time>] %Error: <file>:<line>: Assertion failed in <scope>: <message>
# It counts as an ERROR report of component <scope> with the ID SVA.
SVA_RE = re.compile(r"^\[\s*([^\]]*)\]\s+%Error:\s+(\S+?):(\d+):\s+Assertion failed in\s+(\S+?):\s?(.*)$")
SEED_RE = re.compile(r"^SEED\s+(\d+)\b")
REPRODUCE_PREFIX = "reproduce:"

# Order matters: literals with letters first, then plain numbers, then runs of '#'.
_NORMALISERS = [
    (re.compile(r"\b0[xX][0-9a-fA-F_]+\b"), "#"),                          # 0x1f40
    (re.compile(r"(?<![\w'])\d*'[sS]?[bodhBODH][0-9a-fA-F_xXzZ]+\b"), "#"),  # 16'h3f, 'b101
    (re.compile(r"\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{4,}\b"), "#"),  # 1f40ab
    (re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"), "#"),            # 12, -3, 4.5, 1e9
    (re.compile(r"#(?:\s*[.:,/x-]\s*#)+"), "#"),                          # 10.0.0.1, 02:00:..., 3/4
    (re.compile(r"#+"), "#"),
    (re.compile(r"\s+"), " "),
]


def normalise(text):
    """Text of a report line with the run-specific values (numbers, hex, addresses, times,
    seeds) replaced by '#'."""
    for rx, rep in _NORMALISERS:
        text = rx.sub(rep, text)
    return text.strip()


@dataclass
class ReportLine:
    severity: str
    time: str
    path: str
    id: str
    text: str
    raw: str

    def key(self):
        return f"{self.severity} {normalise(self.path)} [{self.id}] {normalise(self.text)}"


def parse_report_line(line):
    m = REPORT_RE.match(line.rstrip("\n"))
    if not m:
        a = SVA_RE.match(line.rstrip("\n"))
        if not a:
            return None
        time, fname, lineno, scope, msg = a.groups()
        return ReportLine("ERROR", time, scope, "SVA", f"{msg.strip()} ({fname}:{lineno})", line.strip())
    sev, time, path, rid, text = m.groups()
    return ReportLine(sev, time, path, rid, text.strip(), line.strip())


@dataclass
class Verdict:
    status: str              # pass | fail | crash | timeout
    message: str = ""        # first failure message (raw), empty on pass
    key: str = ""            # bucket key, empty on pass
    errors: int = 0
    fatals: int = 0
    warnings: int = 0
    reproduce_line: str = ""  # the program's own 'reproduce:' line

    @property
    def passed(self):
        return self.status == "pass"


def signal_name(num):
    try:
        return signal.Signals(num).name
    except ValueError:
        return f"signal {num}"


def judge(output, returncode, seed, timed_out=False, timeout=None):
    """Verdict of a run. output: its text (stdout and stderr); returncode: exit code, negative
    for a signal (subprocess convention); seed: the seed it was given."""
    lines = output.splitlines()
    first_bad = None
    v = Verdict("pass")
    for line in lines:
        r = parse_report_line(line)
        if r is None:
            if line.startswith(REPRODUCE_PREFIX):
                v.reproduce_line = line[len(REPRODUCE_PREFIX):].strip()
            continue
        if r.severity == "ERROR":
            v.errors += 1
        elif r.severity == "FATAL":
            v.fatals += 1
        else:
            v.warnings += 1
        if r.severity in ("ERROR", "FATAL") and first_bad is None:
            first_bad = r

    if timed_out:
        v.status = "timeout"
        limit = f" of {timeout:g} s" if timeout else ""
        v.message = f"RUNNER [TIMEOUT] no end within the timeout{limit}"
        if first_bad:
            v.message += f"; first report: {first_bad.raw}"
        v.key = "RUNNER [TIMEOUT] no end within the timeout"
        return v
    if returncode is not None and returncode < 0:
        v.status = "crash"
        sig = signal_name(-returncode)
        if first_bad:
            v.message, v.key = f"{first_bad.raw} (then killed by {sig})", first_bad.key()
        else:
            v.message = v.key = f"RUNNER [CRASH] killed by {sig}"
        return v
    if first_bad:
        v.status = "fail"
        v.message, v.key = first_bad.raw, first_bad.key()
        if returncode == 0:
            v.message += " (exit code 0 despite ERROR/FATAL reports)"
        return v
    if returncode != 0:
        v.status = "fail"
        tail = [ln.strip() for ln in lines
                if ln.strip() and not ln.startswith(REPRODUCE_PREFIX)]
        last = tail[-1] if tail else "(no output)"
        v.message = f"RUNNER [NO_REPORT] exit code {returncode} without an ERROR/FATAL report; last output: {last}"
        v.key = f"RUNNER [NO_REPORT] exit code # without an ERROR/FATAL report; last output: {normalise(last)}"
        return v
    m = SEED_RE.match(lines[0]) if lines else None
    if not m or int(m.group(1)) != seed:
        v.status = "fail"
        got = lines[0].strip() if lines else "(no output)"
        v.message = f"RUNNER [NO_SEED] output does not start with 'SEED {seed}' (first line: {got})"
        v.key = "RUNNER [NO_SEED] output does not start with 'SEED #'"
    return v
