"""Regression reports from the results record (results.json): junit.xml (one testsuite and
testcase per run, named by test and run number, the seed a property), report.md and report.html
(one document model rendered twice: summary with totals and links, failure buckets with
reproduce commands, per-test results with the reason of each failure, coverage, testplan, all
runs with links to their logs and waves)."""

import html
import os
import re
import xml.etree.ElementTree as ET

from . import ROOT
from . import testplan as tpmod


class Code(str):
    """A table cell or paragraph shown as code."""


class Link(str):
    """A link: its text (shown as code) and its target, relative to the report's folder."""

    def __new__(cls, text, href):
        obj = str.__new__(cls, text)
        obj.href = href
        return obj


def href(res, path):
    """Target of a link to path (a display path: relative to the repository root, or absolute)
    from the report's folder (res["out"])."""
    base = os.path.join(ROOT, res["out"])
    return os.path.relpath(os.path.join(ROOT, path), base).replace(os.sep, "/")


def link(res, path, text=None):
    """A Link to path named by its part below the output folder; "" when path is empty."""
    if not path:
        return ""
    target = href(res, path)
    return Link(text or (target if not target.startswith("..") else path), target)


def run_names(runs):
    """Stable name of every run: '<test>#<k>', k = 1, 2, .. the run's number among the runs of its
    test in plan order (the same k as the seed derivation's), so a name does not change with the
    seed and every run of one report has its own."""
    seen, names = {}, []
    for r in runs:
        seen[r["test"]] = seen.get(r["test"], 0) + 1
        names.append(f"{r['test']}#{seen[r['test']]}")
    return names


def _tail(path, n=40):
    try:
        with open(path, "r", errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


# --------------------------------------------------------------------------------- junit

def write_junit(res, path, root):
    """JUnit XML. One <testsuite> per run, named '<regression>.<test>#<k>' (run_names), holding
    the run's properties (test, run, seed, build, master_seed) and one <testcase> with classname
    '<regression>.<test>' and name '<test>#<k>': no name carries the seed, so CI history follows a
    test across nights, and no two testcases of a report share classname and name (consumers
    that key test cases by them, as GitLab does, keep every run). A failed run is a <failure>
    (ERROR/FATAL report) or an <error> (crash, timeout, launch problem) with the first message;
    every testcase's <system-out> starts with its seed, reproduce command and log, and a failed
    one's continues with the log tail."""
    runs = res["runs"]
    n_fail = sum(1 for r in runs if r["status"] == "fail")
    n_err = sum(1 for r in runs if r["status"] in ("crash", "timeout", "error"))
    n_skip = sum(1 for r in runs if r["status"] == "skipped")
    total_time = f"{sum(r['duration'] for r in runs):.3f}"
    suites = ET.Element("testsuites", name=f"srnic regression {res['regression']}",
                        tests=str(len(runs)), failures=str(n_fail), errors=str(n_err),
                        skipped=str(n_skip), time=total_time)
    for r, name in zip(runs, run_names(runs)):
        st = r["status"]
        suite = ET.SubElement(suites, "testsuite", name=f"{res['regression']}.{name}", tests="1",
                              failures=str(int(st == "fail")),
                              errors=str(int(st in ("crash", "timeout", "error"))),
                              skipped=str(int(st == "skipped")), time=f"{r['duration']:.3f}",
                              timestamp=res["started"])
        props = ET.SubElement(suite, "properties")
        for k, v in (("test", r["test"]), ("run", name.rsplit("#", 1)[1]), ("seed", r["seed"]),
                     ("build", r["build"]), ("master_seed", res["master_seed"]),
                     ("regression", res["regression"]), ("out", res["out"])):
            ET.SubElement(props, "property", name=k, value=str(v))
        tc = ET.SubElement(suite, "testcase", classname=f"{res['regression']}.{r['test']}",
                           name=name, time=f"{r['duration']:.3f}")
        if st == "skipped":
            ET.SubElement(tc, "skipped", message=r["message"])
        elif st != "pass":
            el = ET.SubElement(tc, "failure" if st == "fail" else "error", message=r["message"], type=st)
            el.text = f"reproduce: {r['reproduce']}\nlog: {r['log']}\n"
        out = f"seed: {r['seed']}\nreproduce: {r['reproduce']}\nlog: {r['log']}\n"
        if st not in ("pass", "skipped"):
            tail = _tail(os.path.join(root, r["log"]))
            if tail:
                out += "--- log tail ---\n" + tail
        ET.SubElement(tc, "system-out").text = out
    ET.indent(suites)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


# ----------------------------------------------------------------------------- document

def pct(hit, total):
    return f"{100.0 * hit / total:.1f}% ({hit}/{total})" if total else "- (0 points)"


def verdict(c, stop_reason=""):
    """The one-word result: FAILED (a run failed), INCOMPLETE (none failed, some skipped),
    NO RUNS, or PASSED."""
    if c["failed"]:
        return "FAILED"
    if c["skipped"]:
        return "INCOMPLETE"
    return "PASSED" if c["total"] else "NO RUNS"


def test_reason(runs):
    """Why a test did not pass: its first failure (and how many), or why it did not run."""
    failed = [r for r in runs if r["status"] not in ("pass", "skipped")]
    if failed:
        more = f" (+{len(failed) - 1} more failed)" if len(failed) > 1 else ""
        return f"seed {failed[0]['seed']}: {failed[0]['message']}{more}"
    skipped = [r for r in runs if r["status"] == "skipped"]
    if skipped and len(skipped) == len(runs):
        return skipped[0]["message"] or "not run"
    if skipped:
        return f"{len(skipped)} of {len(runs)} runs skipped: {skipped[0]['message']}"
    return ""


def test_result(t):
    if t["failed"]:
        return "FAIL"
    if t["passed"] == 0:
        return "not run"
    return "pass" if not t["skipped"] else "pass (part)"


def build_document(res):
    """The report as blocks: ('h1'|'h2'|'h3', text), ('p', text or [parts]), ('code', text),
    ('table', head, rows), ('img', file relative to the report, alt text). Texts and cells are
    str, Code or Link."""
    c = res["counts"]
    d = [("h1", f"Regression {res['regression']}")]
    if res.get("desc"):
        d.append(("p", res["desc"]))
    tests = res["tests"]
    n_tpass = sum(1 for t in tests if test_result(t).startswith("pass"))
    n_tfail = sum(1 for t in tests if t["failed"])
    summary = [
        ["result", verdict(c)],
        ["runs", f"{c['total']}: {c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped"],
        ["failures by kind", f"{c['fail']} failed, {c['crash']} crashed, {c['timeout']} timed out, "
                             f"{c['error']} errors (not launched or not registered)"],
        ["tests", f"{len(tests)}: {n_tpass} passed, {n_tfail} failed, {len(tests) - n_tpass - n_tfail} not run"],
        ["failure buckets", str(len(res["buckets"]))],
    ]
    if res.get("testplan") is not None:
        tp = res["testplan"]
        summary.append(["testpoints", f"{len(tp)}: {sum(1 for t in tp if t['passing'])} passing, "
                                      f"{sum(1 for t in tp if not t['passing'])} not passing, "
                                      f"{sum(1 for t in tp if t['covered'])} covered"])
    summary += [
        ["master seed", Code(f"--seed {res['master_seed']}")],
        ["build", res["build"] + (", coverage collected" if res["coverage_enabled"] else ", no coverage")],
        ["commit", Code(res.get("git_rev") or "not recorded")],   # the last one outside docs/
        ["started", res["started"]],
        ["wall time", f"{res['wall_s']:.1f} s {where_run(res)}"],
        ["output", Code(res["out"])],
        ["command", Code(res["command"])],
    ]
    if len(res.get("parts") or []) > 1:
        summary.append(["parts", "; ".join(
            f"{pt['started']}: {pt['wall_s']:.0f} s" + (f", {pt['ran']} runs" if pt.get("ran") is not None else "")
            + (f" ({pt['stop_reason']})" if pt.get("stop_reason") else "") for pt in res["parts"])])
    if res.get("stop_reason"):
        summary.append(["stopped early", res["stop_reason"]])
    cov = res.get("coverage")
    if cov:
        summary.append(["line coverage (rtl/)", pct(cov["line"]["hit"], cov["line"]["total"])])
        if "toggle" in cov:
            summary.append(["toggle coverage (rtl/)", pct(cov["toggle"]["hit"], cov["toggle"]["total"])])
        summary.append(["functional coverage", pct(cov["functional"]["hit"], cov["functional"]["total"])])
    d.append(("table", ["", ""], summary))
    files = [link(res, os.path.join(res["out"], f), f) for f in ("results.json", "junit.xml", "report.md")]
    for f in ("build.log", "build-debug.log"):
        if os.path.exists(os.path.join(ROOT, res["out"], f)):
            files.append(link(res, os.path.join(res["out"], f), f))
    if cov and cov.get("html"):
        files.append(link(res, cov["html"], "coverage report (HTML)"))
    if cov and cov.get("merged_dat"):
        files.append(link(res, os.path.join(res["out"], "coverage", "bins.md"), "covergroup bins"))
    d.append(("p", ["Files: "] + _join(files)))

    d.append(("h2", "Failure buckets"))
    if not res["buckets"]:
        d.append(("p", "No failures."))
    for i, b in enumerate(res["buckets"], start=1):
        d.append(("h3", f"Bucket {i}: {b['count']} failure{'s' if b['count'] != 1 else ''} "
                        f"in {', '.join(b['tests'])}"))
        d.append(("p", Code(b["key"])))
        d.append(("p", "First message:"))
        d.append(("code", b["first_message"]))
        rr = b.get("rerun")
        if rr:
            d.append(("p", f"Debug rerun of {rr['test']} seed {rr['seed']}: {rr['outcome']}"))
            parts = []
            if rr.get("waves"):
                parts += ["waves ", link(res, rr["waves"])]
            if rr.get("log"):
                parts += [", " if parts else "", "log ", link(res, rr["log"])]
            if parts:
                d.append(("p", ["Rerun: "] + parts))
        rows = [[f["test"], str(f["seed"]), f["status"], f["message"], Code(f["reproduce"]),
                 link(res, f["log"])] for f in b["failures"]]
        d.append(("table", ["test", "seed", "status", "message", "reproduce", "log"], rows))

    d.append(("h2", "Tests"))
    by_test = {}
    for r in res["runs"]:
        by_test.setdefault(r["test"], []).append(r)
    rows = [[t["test"], str(t["runs"]), str(t["passed"]), str(t["failed"]), str(t["skipped"]),
             test_result(t), test_reason(by_test.get(t["test"], []))] for t in tests]
    rows.append(["total", str(sum(t["runs"] for t in tests)), str(sum(t["passed"] for t in tests)),
                 str(sum(t["failed"] for t in tests)), str(sum(t["skipped"] for t in tests)),
                 f"{n_tpass} pass, {n_tfail} FAIL, {len(tests) - n_tpass - n_tfail} not run", ""])
    d.append(("table", ["test", "runs", "passed", "failed", "skipped", "result", "reason"], rows))

    if not res["coverage_enabled"]:
        d.append(("h2", "Coverage"))
        d.append(("p", f"Not collected: this run used the {res['build']} build (coverage needs "
                       "--build coverage or a coverage regression)."))
    else:
        d.append(("h2", "Coverage"))
        if not cov:
            d.append(("p", "Coverage was not merged."))
        else:
            for note in cov["notes"]:
                d.append(("p", f"Note: {note}"))
            parts = [f"{cov['inputs']} coverage files merged into ", link(res, cov["merged_dat"]) or "-"]
            if cov["html"]:
                parts += ["; HTML: ", link(res, cov["html"])]
            d.append(("p", parts))
            tog = cov.get("toggle", {"hit": 0, "total": 0, "files": []})
            d.append(("h3", "RTL coverage of rtl/: "
                            f"lines {pct(cov['line']['hit'], cov['line']['total'])}, "
                            f"toggles {pct(tog['hit'], tog['total'])}"))
            d.append(("p", "Lines: line and branch points, a line covered when all of its points are; "
                           "toggles: one point per signal bit, covered when it "
                           + (tog.get("basis") or "changed") + ". Counted separately from the .dat files."))
            tfiles = {f["file"]: f for f in tog["files"]}
            names = sorted({f["file"] for f in cov["line"]["files"]} | set(tfiles))
            lfiles = {f["file"]: f for f in cov["line"]["files"]}
            rows = []
            for n in names:
                lf, tf = lfiles.get(n, {"hit": 0, "total": 0}), tfiles.get(n, {"hit": 0, "total": 0})
                rows.append([n, f"{lf['hit']}/{lf['total']}", pct(lf["hit"], lf["total"]),
                             f"{tf['hit']}/{tf['total']}", pct(tf["hit"], tf["total"])])
            rows.append(["total", f"{cov['line']['hit']}/{cov['line']['total']}",
                         pct(cov["line"]["hit"], cov["line"]["total"]),
                         f"{tog['hit']}/{tog['total']}", pct(tog["hit"], tog["total"])])
            d.append(("table", ["file", "lines", "line coverage", "toggles", "toggle coverage"], rows))
            d.append(("h3", "Functional coverage "
                            f"({pct(cov['functional']['hit'], cov['functional']['total'])})"))
            d.append(("table", ["covergroup", "bins hit", "bins", "coverage", "missed bins",
                                "tests hitting its bins (passing runs)"],
                      [[g["name"], str(g["hit"]), str(g["total"]), pct(g["hit"], g["total"]),
                        _missed(g["missed"]), _tests(g.get("tests", {}))]
                       for g in cov["functional"]["groups"]]))
            if cov.get("merged_dat"):
                d.append(("p", ["Every bin with the tests that hit it: ",
                                link(res, os.path.join(res["out"], "coverage", "bins.md"))]))

    if res.get("history"):
        d += history_blocks(res["history"])

    d.append(("h2", "Testplan"))
    if res.get("testplan") is None:
        d.append(("p", res.get("testplan_note") or "No testplan."))
    else:
        keys = ("name", "stage", "desc", "tests", "covergroups", "missing", "runs", "failed",
                "passing", "covered")
        sts = [tpmod.TestpointStatus(**{k: t[k] for k in keys}, cov_detail=t["coverage"],
                                     test_runs=t.get("test_runs", {}),
                                     needs_coverage=t.get("needs_coverage", False), why=t.get("why", ""))
               for t in res["testplan"]]
        d.append(("p", "A testpoint passes when every test it names ran in this regression and all "
                       "their runs passed (and, where it needs coverage, coverage was collected from "
                       "each of its tests); the passing column says why not otherwise."))
        d.append(("table", tpmod.TABLE_HEAD, tpmod.table_rows(sts)))
        n, w, p, cv = tpmod.totals(sts)
        d.append(("table", ["stage", "testpoints", "written", "passing", "covered"],
                  [[s, str(n_), str(w_), str(p_), str(cv_)] for s, n_, w_, p_, cv_ in tpmod.stage_summary(sts)]
                  + [["total", str(n), str(w), str(p), str(cv)]]))

    d.append(("h2", "Runs"))
    waves = {}
    for b in res["buckets"]:
        rr = b.get("rerun")
        if rr and rr.get("waves"):
            waves[(rr["test"], rr["seed"])] = rr["waves"]
    d.append(("table", ["run", "test", "seed", "build", "status", "time (s)", "message", "log", "waves"],
              [[name, r["test"], str(r["seed"]), r["build"], r["status"], f"{r['duration']:.1f}",
                r["message"], link(res, r["log"]), link(res, waves.get((r["test"], r["seed"]), ""))]
               for r, name in zip(res["runs"], run_names(res["runs"]))]))
    return d


def _join(items, sep=", "):
    out = []
    for i, x in enumerate(items):
        if i:
            out.append(sep)
        out.append(x)
    return out


def where_run(res):
    """'on 2 jobs' (local backend) or what was submitted to Slurm."""
    b = res.get("backend") or {"name": "local"}
    if b["name"] != "slurm":
        return f"on {res['jobs']} jobs"
    jobs = b["jobs"]
    text = (f"on Slurm (job{'s' if len(jobs) != 1 else ''} {', '.join(jobs) or '-'}; {b['tasks']} array "
            f"task{'s' if b['tasks'] != 1 else ''} of at most {b['runs_per_task']} runs")
    if b["resubmitted"]:
        n = sum(x["runs"] for x in b["resubmitted"])
        text += (f"; {len(b['resubmitted'])} task{'s' if len(b['resubmitted']) != 1 else ''} ended "
                 f"without results and {n} run{'s' if n != 1 else ''} resubmitted")
    if b["lost_twice"]:
        text += f"; {b['lost_twice']} runs lost twice"
    return text + ")"


def _fmt_pct(v):
    return "-" if v is None else f"{v:.1f}%"


def history_blocks(h):
    """The History section: the trend plot and the latest records of the history file."""
    d = [("h2", "History"),
         ("p", f"{h['records']} runs of {h['regression']} in {h['file']} (and the tools/mutate runs "
               "recorded there); the latest below.")]
    if h["plot"]:
        d.append(("img", h["plot"], f"history of regression {h['regression']}"))
    elif h["note"]:
        d.append(("p", f"Note: {h['note']}"))
    rows = []
    for r in reversed(h["rows"]):
        if r["kind"] == "mutate":
            rows.append([r["date"], r["git_rev"], f"tools/mutate ({r['regression']})", str(r["mutants"]),
                         "", "", "", "", "", _fmt_pct(r["kill_rate_pct"]), f"{r['wall_s'] / 60:.1f}"])
        else:
            rows.append([r["date"], r["git_rev"], f"{r['regression']} ({r['backend']})", str(r["runs"]),
                         str(r["passed"]), str(r["failed"]), _fmt_pct(r["line_pct"]),
                         _fmt_pct(r["toggle_pct"]), _fmt_pct(r["functional_pct"]), "",
                         f"{r['wall_s'] / 60:.1f}"])
    d.append(("table", ["date", "revision", "what", "runs / mutants", "passed", "failed", "line",
                        "toggle", "functional", "kill rate", "wall time (min)"], rows))
    return d


def _tests(tests, limit=12):
    items = sorted(tests.items(), key=lambda kv: (-kv[1], kv[0]))
    s = ", ".join(f"{t} {n}" for t, n in items[:limit])
    return s + (f", ... ({len(items) - limit} more)" if len(items) > limit else "")


def write_bins(cov, path):
    """coverage/bins.md: every covergroup bin with its count and the tests (passing runs) that
    hit it."""
    out = ["# Covergroup bins and the tests that hit them", "",
           "Count: merged hits (goal: at_least); tests: passing runs of each test that hit the bin.", ""]
    for g in cov["functional"]["groups"]:
        out.append(f"## {g['name']}: {pct(g['hit'], g['total'])}")
        out.append("")
        out.append("| bin | count | at_least | tests (runs) |")
        out.append("|---|---|---|---|")
        for b in g.get("bins", []):
            mark = "" if b["count"] >= b["at_least"] else " **missed**"
            out.append(f"| {_md_cell(b['bin'])}{mark} | {b['count']} | {b['at_least']} | "
                       f"{_md_cell(_tests(b['tests'], limit=100)) or '-'} |")
        out.append("")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write("\n".join(out))
    return path


def _missed(bins, limit=8):
    if not bins:
        return ""
    s = ", ".join(bins[:limit])
    return s + (f", ... ({len(bins) - limit} more)" if len(bins) > limit else "")


# ----------------------------------------------------------------------------- renderers

def _md_text(v):
    """Markdown of a text or Code value (no raw HTML gets through)."""
    s = str(v).replace("\n", " ")
    if isinstance(v, Code):
        return f"`{s}`" if s else ""
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _md_cell(v):
    if isinstance(v, Link):
        return _md_link(v).replace("|", "\\|")
    return _md_text(v).replace("|", "\\|")


def _md_link(v):
    return f"[`{v}`](<{v.href}>)" if str(v) else ""


def _md_inline(v):
    """Markdown of a paragraph: one value or a list of parts."""
    parts = v if isinstance(v, list) else [v]
    return "".join(_md_link(x) if isinstance(x, Link) else _md_text(x) for x in parts)


def render_md(doc):
    out = []
    for blk in doc:
        kind = blk[0]
        if kind in ("h1", "h2", "h3"):
            out.append("#" * int(kind[1]) + " " + blk[1] + "\n")
        elif kind == "p":
            out.append(_md_inline(blk[1]) + "\n")
        elif kind == "code":
            out.append("```\n" + blk[1] + "\n```\n")
        elif kind == "img":
            out.append(f"![{_md_text(blk[2])}]({blk[1]})\n")
        elif kind == "table":
            head, rows = blk[1], blk[2]
            out.append("| " + " | ".join(head) + " |")
            out.append("|" + "|".join("---" for _ in head) + "|")
            for r in rows:
                out.append("| " + " | ".join(_md_cell(c) for c in r) + " |")
            out.append("")
    return "\n".join(out)


_CSS = """body{font-family:sans-serif;margin:1.5em;max-width:110em}
table{border-collapse:collapse;margin:.5em 0 1em}
td,th{border:1px solid #bbb;padding:2px 6px;text-align:left;vertical-align:top}
th{background:#eee}code,pre{font-family:monospace;font-size:90%}
pre{background:#f4f4f4;padding:.5em;white-space:pre-wrap}
td.good{color:#060}td.bad{color:#b00;font-weight:bold}td.warn{color:#a60}"""


_GOOD = ("pass", "yes", "PASSED")
_BAD = ("fail", "FAIL", "NO", "crash", "timeout", "error", "FAILED", "NO RUNS")
_WARN = ("not run", "pass (part)", "skipped", "INCOMPLETE")


def _html_text(v):
    s = html.escape(str(v))
    if isinstance(v, Link) and s:
        return f'<a href="{html.escape(v.href)}"><code>{s}</code></a>'
    if isinstance(v, Code) and s:
        return f"<code>{s}</code>"
    return s


def _html_cell(v, tag="td"):
    text = str(v)
    word = text.split(":")[0]
    cls = "" if tag != "td" else (' class="good"' if text in _GOOD else ' class="bad"' if word in _BAD else
                                  ' class="warn"' if text in _WARN else "")
    return f"<{tag}{cls}>{_html_text(v)}</{tag}>"


def render_html(doc, title):
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
           f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"]
    for blk in doc:
        kind = blk[0]
        if kind == "h2":      # sections get anchors: report.html#testplan, #runs, ...
            anchor = re.sub(r"[^a-z0-9]+", "-", blk[1].lower()).strip("-")
            out.append(f'<h2 id="{anchor}">{html.escape(blk[1])}</h2>')
        elif kind in ("h1", "h3"):
            out.append(f"<{kind}>{html.escape(blk[1])}</{kind}>")
        elif kind == "p":
            parts = blk[1] if isinstance(blk[1], list) else [blk[1]]
            out.append("<p>" + "".join(_html_text(x) for x in parts) + "</p>")
        elif kind == "code":
            out.append(f"<pre>{html.escape(blk[1])}</pre>")
        elif kind == "img":
            out.append(f'<p><img src="{html.escape(blk[1])}" alt="{html.escape(blk[2])}"></p>')
        elif kind == "table":
            head, rows = blk[1], blk[2]
            out.append("<table>")
            if any(head):
                out.append("<tr>" + "".join(_html_cell(h, "th") for h in head) + "</tr>")
            for r in rows:
                out.append("<tr>" + "".join(_html_cell(c) for c in r) + "</tr>")
            out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_reports(res, out_dir, root):
    """junit.xml, report.md and report.html in out_dir; returns their paths."""
    doc = build_document(res)
    paths = {k: os.path.join(out_dir, k) for k in ("junit.xml", "report.md", "report.html")}
    write_junit(res, paths["junit.xml"], root)
    with open(paths["report.md"], "w") as f:
        f.write(render_md(doc))
    with open(paths["report.html"], "w") as f:
        f.write(render_html(doc, f"srnic regression {res['regression']}"))
    return paths
