"""Regression reports from the results record (results.json): junit.xml (one testcase per test
and seed), report.md and report.html (one document model rendered twice: summary, failure
buckets with reproduce commands, per-test results, coverage, testplan, all runs)."""

import html
import os
import xml.etree.ElementTree as ET

from . import testplan as tpmod


class Code(str):
    """A table cell or paragraph shown as code."""


def _tail(path, n=40):
    try:
        with open(path, "r", errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return ""


# --------------------------------------------------------------------------------- junit

def write_junit(res, path, root):
    """JUnit XML: a failed run is a <failure> (ERROR/FATAL report) or an <error> (crash,
    timeout, launch problem), with the first message, the reproduce command and the log tail."""
    runs = res["runs"]
    n_fail = sum(1 for r in runs if r["status"] == "fail")
    n_err = sum(1 for r in runs if r["status"] in ("crash", "timeout", "error"))
    n_skip = sum(1 for r in runs if r["status"] == "skipped")
    total_time = f"{sum(r['duration'] for r in runs):.3f}"
    suites = ET.Element("testsuites", name=f"srnic regression {res['regression']}",
                        tests=str(len(runs)), failures=str(n_fail), errors=str(n_err),
                        skipped=str(n_skip), time=total_time)
    suite = ET.SubElement(suites, "testsuite", name=res["regression"], tests=str(len(runs)),
                          failures=str(n_fail), errors=str(n_err), skipped=str(n_skip),
                          time=total_time, timestamp=res["started"])
    props = ET.SubElement(suite, "properties")
    for k in ("master_seed", "build", "out"):
        ET.SubElement(props, "property", name=k, value=str(res[k]))
    for r in runs:
        tc = ET.SubElement(suite, "testcase", classname=f"{res['regression']}.{r['test']}",
                           name=f"{r['test']} seed {r['seed']}", time=f"{r['duration']:.3f}")
        if r["status"] == "skipped":
            ET.SubElement(tc, "skipped", message=r["message"])
        elif r["status"] != "pass":
            tag = "failure" if r["status"] == "fail" else "error"
            el = ET.SubElement(tc, tag, message=r["message"], type=r["status"])
            el.text = f"reproduce: {r['reproduce']}\nlog: {r['log']}\n"
            tail = _tail(os.path.join(root, r["log"]))
            if tail:
                ET.SubElement(tc, "system-out").text = tail
    ET.indent(suites)
    ET.ElementTree(suites).write(path, encoding="utf-8", xml_declaration=True)


# ----------------------------------------------------------------------------- document

def pct(hit, total):
    return f"{100.0 * hit / total:.1f}% ({hit}/{total})" if total else "- (0 points)"


def build_document(res):
    """The report as blocks: ('h1'|'h2'|'h3'|'p', text), ('code', text), ('table', head, rows),
    ('img', file relative to the report, alt text)."""
    c = res["counts"]
    d = [("h1", f"Regression {res['regression']}")]
    if res.get("desc"):
        d.append(("p", res["desc"]))
    summary = [
        ["result", "PASSED" if c["failed"] == 0 else "FAILED"],
        ["runs", f"{c['total']} ({c['passed']} passed, {c['failed']} failed, {c['skipped']} skipped)"],
        ["failures by kind", f"{c['fail']} failed, {c['crash']} crashed, {c['timeout']} timed out, "
                             f"{c['error']} not run (launch/registration)"],
        ["failure buckets", str(len(res["buckets"]))],
        ["master seed", Code(f"--seed {res['master_seed']}")],
        ["build", res["build"] + (", coverage collected" if res["coverage_enabled"] else "")],
        ["started", res["started"]],
        ["wall time", f"{res['wall_s']:.1f} s {where_run(res)}"],
        ["output", Code(res["out"])],
        ["command", Code(res["command"])],
    ]
    if res.get("stop_reason"):
        summary.append(["stopped early", res["stop_reason"]])
    cov = res.get("coverage")
    if cov:
        summary.append(["line coverage (rtl/)", pct(cov["line"]["hit"], cov["line"]["total"])])
        if "toggle" in cov:
            summary.append(["toggle coverage (rtl/)", pct(cov["toggle"]["hit"], cov["toggle"]["total"])])
        summary.append(["functional coverage", pct(cov["functional"]["hit"], cov["functional"]["total"])])
    d.append(("table", ["", ""], summary))

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
            if rr.get("waves"):
                d.append(("p", f"Waves: {rr['waves']} (log {rr['log']})"))
        rows = [[f["test"], str(f["seed"]), f["status"], Code(f["reproduce"]), Code(f["log"])]
                for f in b["failures"]]
        d.append(("table", ["test", "seed", "status", "reproduce", "log"], rows))

    d.append(("h2", "Tests"))
    d.append(("table", ["test", "runs", "passed", "failed", "skipped", "result"],
              [[t["test"], str(t["runs"]), str(t["passed"]), str(t["failed"]), str(t["skipped"]),
                "pass" if t["failed"] == 0 and t["passed"] > 0 else
                ("FAIL" if t["failed"] else "not run")] for t in res["tests"]]))

    if res["coverage_enabled"]:
        d.append(("h2", "Coverage"))
        if not cov:
            d.append(("p", "Coverage was not merged."))
        else:
            for note in cov["notes"]:
                d.append(("p", f"Note: {note}"))
            d.append(("p", f"{cov['inputs']} coverage files merged into {cov['merged_dat'] or '-'}"
                           + (f"; HTML: {cov['html']}" if cov["html"] else "")))
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
            d.append(("table", ["file", "lines", "line coverage", "toggles", "toggle coverage"], rows))
            d.append(("h3", "Functional coverage "
                            f"({pct(cov['functional']['hit'], cov['functional']['total'])})"))
            d.append(("table", ["covergroup", "bins hit", "bins", "coverage", "missed bins",
                                "tests hitting its bins (passing runs)"],
                      [[g["name"], str(g["hit"]), str(g["total"]), pct(g["hit"], g["total"]),
                        _missed(g["missed"]), _tests(g.get("tests", {}))]
                       for g in cov["functional"]["groups"]]))
            d.append(("p", "Every bin with the tests that hit it: coverage/bins.md"))

    if res.get("history"):
        d += history_blocks(res["history"])

    d.append(("h2", "Testplan"))
    if res.get("testplan") is None:
        d.append(("p", res.get("testplan_note") or "No testplan."))
    else:
        sts = [tpmod.TestpointStatus(**{k: t[k] for k in ("name", "stage", "desc", "tests",
                                                             "covergroups", "missing", "runs",
                                                             "failed", "passing", "covered")},
                                     cov_detail=t["coverage"], test_runs=t.get("test_runs", {}))
               for t in res["testplan"]]
        d.append(("table", tpmod.TABLE_HEAD, tpmod.table_rows(sts)))
        d.append(("table", ["stage", "testpoints", "written", "passing", "covered"],
                  [[s, str(n), str(w), str(p), str(cv)] for s, n, w, p, cv in tpmod.stage_summary(sts)]))

    d.append(("h2", "Runs"))
    d.append(("table", ["test", "seed", "build", "status", "time (s)", "message", "log"],
              [[r["test"], str(r["seed"]), r["build"], r["status"], f"{r['duration']:.1f}",
                r["message"], Code(r["log"])] for r in res["runs"]]))
    return d


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
    return _md_text(v).replace("|", "\\|")


def render_md(doc):
    out = []
    for blk in doc:
        kind = blk[0]
        if kind in ("h1", "h2", "h3"):
            out.append("#" * int(kind[1]) + " " + blk[1] + "\n")
        elif kind == "p":
            out.append(_md_text(blk[1]) + "\n")
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
td.pass,td.yes{color:#060}td.fail,td.FAIL,td.NO,td.crash,td.timeout,td.error{color:#b00;font-weight:bold}"""


def _html_cell(v, tag="td"):
    s = html.escape(str(v))
    cls = f' class="{html.escape(str(v))}"' if str(v) in (
        "pass", "yes", "fail", "FAIL", "NO", "crash", "timeout", "error") else ""
    if isinstance(v, Code) and s:
        s = f"<code>{s}</code>"
    return f"<{tag}{cls}>{s}</{tag}>"


def render_html(doc, title):
    out = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">",
           f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"]
    for blk in doc:
        kind = blk[0]
        if kind in ("h1", "h2", "h3"):
            out.append(f"<{kind}>{html.escape(blk[1])}</{kind}>")
        elif kind == "p":
            text = html.escape(blk[1])
            out.append(f"<p><code>{text}</code></p>" if isinstance(blk[1], Code) else f"<p>{text}</p>")
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
