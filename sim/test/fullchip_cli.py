#!/usr/bin/python3
"""srnic-sim command-line misuse: each bad invocation must exit 2 with exactly one line on stderr
naming the problem, and print nothing on stdout.

With --perftest instead: perftest's options in short runs (a few seconds in all): -V, -N,
--output, -b --report_both, --run_infinitely, -o, --write_with_imm / --send_with_imm (and that a
wrong immediate fails the run), each checked on what srnic-sim prints.

usage: fullchip_cli.py [--perftest] SRNIC_SIM"""

import json
import re
import subprocess
import sys

CASES = [
    (["--op", "atomic"], "unknown op 'atomic'"),
    (["--size", "1073741825"], "message size must be in 0..1073741824"),
    (["--mtu", "1000"], "MTU must be a power of two in 256..4096"),
    (["--mtu", "8192"], "MTU must be a power of two in 256..4096"),
    (["--qps", "0"], "number of QPs must be in 1..16382"),
    (["--qps", "16383"], "number of QPs must be in 1..16382"),
    (["--iters", "0"], "iterations must be in 1.."),
    # Refused up front instead of running out of memory.
    (["--iters", "1099511627776"], "above --max-ram-gib 16"),
    (["--size", "1073741824"], "needs --mem-mib 1024 or more"),
    # perftest's options: bad values and combinations named.
    (["-s"], "-s"),
    (["-D", "0"], "duration must be a positive simulated time"),
    (["-D", "10us", "-n", "5"], "excludes"),
    (["-D", "10us", "--latency"], "-D is for the bandwidth tests"),
    (["-b", "--latency"], "-b is for the bandwidth tests"),
    (["-a", "-s", "64"], "excludes"),
    (["-l", "4", "--post-batch", "4"], "excludes"),
    (["-l", "256", "-t", "128", "-n", "1000"], "-l 256 exceeds the 128 WRs in flight"),
    (["-q", "16382", "-s", "512", "-D", "1"], "above --max-ram-gib"),
    (["-d", "mlx5_0", "-s", "64"], "-d (perftest's device): srnic-sim simulates its two srnic NICs itself"),
    (["-s", "64", "192.0.2.1"], "'192.0.2.1' (perftest's server address)"),
    (["--mode", "ext"], "not supported until the SRNIC header extensions exist"),
    (["--loss", "2"], "loss probability"),
    # Link impairments: bad values named.
    (["--burst-loss", "0.9,1"], "needs p(good->bad) > 1"),
    (["--drop", "op=FOO"], "drop rule 'op=FOO': op must be an RC opcode name"),
    (["--reorder", "2"], "reorder probability must be >= 0 and <= 1"),
    (["--dup", "3:0.01"], "direction must be 0 or 1"),
    (["--jitter", "-1"], "jitter must be >= 0"),
    (["--no-such-option"], "--no-such-option"),
    # Simulated time is expensive: perftest's -D 5 (seconds) is hours of simulation.
    (["-D", "5"], "-D 5 is 5 s of simulated time: about 2.1 h of wall time"),
    (["-n", "1000000"], "or add --yes to run it anyway"),
    # perftest's options srnic-sim takes, misused.
    (["-o", "16"], "-o (outstanding READs) is for --op read"),
    (["--op", "read", "-o", "65"], "srnic keeps at most 64 READs outstanding"),
    (["-N", "--latency"], "-N is for the bandwidth tests"),
    (["--report_both"], "add -b"),
    (["--output=foo"], "perftest's output levels are bandwidth, message_rate and latency"),
    (["--output=latency"], "--output=latency is for the latency tests"),
    (["--output=bandwidth", "--json"], "--output and --json both choose what is printed"),
    (["--run_infinitely", "-D", "10us"], "give --periods N"),
    (["--run_infinitely", "--periods", "2"], "--run_infinitely needs -D"),
    (["--periods", "2", "-D", "10us"], "--periods needs --run_infinitely"),
    (["--write_with_imm", "--op", "read"], "--write_with_imm is for --op write"),
    (["--send_with_imm", "--op", "write"], "--send_with_imm is for --op send"),
    (["--inject-fault", "imm"], "--inject-fault imm needs --write_with_imm or --send_with_imm"),
]


def run(sim, args, timeout=120):
    return subprocess.run([sim] + args, capture_output=True, text=True, timeout=timeout)


def perftest_checks(sim):
    """Problems with perftest's options in short runs, one string each."""
    bad = []

    def need(cond, what, p=None):
        if not cond:
            bad.append(what + (f" (exit {p.returncode}, stderr {p.stderr.strip()[-300:]!r})" if p else ""))
        return cond

    def as_json(args):
        p = run(sim, ["--json"] + args)
        try:
            return p, json.loads(p.stdout)
        except json.JSONDecodeError:
            need(False, f"srnic-sim --json {' '.join(args)}: stdout is not JSON", p)
            return p, None

    # -V: one line naming the commit, the tree, the model and the compiler.
    for v in ("-V", "--version"):
        p = run(sim, [v])
        need(p.returncode == 0 and len(p.stdout.splitlines()) == 1 and not p.stderr, f"{v}: one line, exit 0", p)
        need(re.search(r"commit ([0-9a-f]{7,}|unknown) \(working tree (clean|modified[^)]*|unknown) when built\), "
                       r"RTL last changed in ([0-9a-f]{7,}|unknown); model Vsrnic_core \(Verilator [^)]+\); .*"
                       r"(clang|g\+\+) \d", p.stdout), f"{v}: commit, tree, model, compiler in {p.stdout.strip()!r}")
    # --output: the number alone on stdout, as perftest.
    base = ["-s", "4096", "-n", "16", "-m", "1024"]
    p = run(sim, base + ["--output=bandwidth"])
    need(p.returncode == 0 and re.fullmatch(r"\d+\.\d{6}\n", p.stdout) and float(p.stdout) > 1000,
         f"--output=bandwidth prints one MB/sec number, got {p.stdout!r}", p)
    p = run(sim, base + ["--output=message_rate"])
    need(p.returncode == 0 and re.fullmatch(r"\d+\.\d{6}\n", p.stdout) and 0.1 < float(p.stdout) < 10,
         f"--output=message_rate prints one Mpps number, got {p.stdout!r}", p)
    p = run(sim, ["--latency", "-s", "64", "-n", "8", "--output=latency"])
    need(p.returncode == 0 and re.fullmatch(r"\d+\.\d{6}\n", p.stdout) and 1 < float(p.stdout) < 20,
         f"--output=latency prints t_avg in usec, got {p.stdout!r}", p)
    # -N: no peak (0.00 in its column, null in the JSON), the average still there.
    p = run(sim, base + ["-N"])
    rows = [l.split() for l in p.stdout.splitlines() if l.startswith(" 4096 ")]
    need(p.returncode == 0 and len(rows) == 1 and rows[0][2] == "0.00" and float(rows[0][3]) > 1000,
         f"-N: BW peak column 0.00, got {rows}", p)
    p, j = as_json(base + ["-N"])
    if j:
        need(j["peak_gbps"] is None and j["goodput_gbps"] > 10 and j["data_ok"], "-N: JSON peak_gbps null", p)
    # -b --report_both: perftest's title, a Local and a Remote section that add up to the row.
    p = run(sim, ["-b", "--report_both", "-s", "4096", "-n", "16", "-q", "2", "-m", "1024"])
    out = p.stdout
    if need(p.returncode == 0, "-b --report_both runs", p):
        need("                    RDMA_Write Bidirectional BW Test\n" in out, "-b: title 'RDMA_Write Bidirectional BW Test'")
        parts = re.split(r"\n (Local|Remote) results:\n", out)
        if need(len(parts) == 5, f"-b --report_both: a Local and a Remote section, got {len(parts)} parts"):
            row = lambda t: [l.split() for l in t.splitlines() if l.startswith(" 4096 ")]
            total, local, remote = row(parts[0]), row(parts[2]), row(parts[4])
            if need(len(total) == 1 and len(local) == 1 and len(remote) == 1, "one row in each section"):
                need(total[0][1] == local[0][1] == "32" and remote[0][1] == "32",
                     f"#iterations: 16 x 2 QPs per host, got {total[0][1]}, {local[0][1]}, {remote[0][1]}")
                need(abs(float(local[0][3]) + float(remote[0][3]) - float(total[0][3])) < 0.02,
                     f"Local + Remote BW average = the row's: {local[0][3]} + {remote[0][3]} vs {total[0][3]}")
    # --run_infinitely: --periods rows of -D each; their messages are the run's.
    p, j = as_json(["-D", "10us", "--run_infinitely", "--periods", "3", "-s", "4096", "-q", "2"])
    if j:
        per = j.get("period_results", [])
        need(j["data_ok"] and len(per) == 3 and j["duration_us"] == 30 and j["period_us"] == 10,
             f"--run_infinitely --periods 3: 3 periods of 10 us, got {len(per)}", p)
        need(sum(x["messages"] for x in per) == j["messages"] and all(x["messages"] > 0 for x in per),
             "--run_infinitely: the periods' messages are the run's, each period has some")
        need(len(j["perftest"]["period_rows"]) == 3, "--run_infinitely: perftest rows per period")
    p = run(sim, ["-D", "10us", "--run_infinitely", "--periods", "3", "-s", "4096"])
    rows = [l for l in p.stdout.splitlines() if l.startswith(" 4096 ")]
    need(p.returncode == 0 and len(rows) == 3, f"--run_infinitely --periods 3 prints 3 rows, got {len(rows)}", p)
    # -o: READs in flight per QP.
    p, j = as_json(["--op", "read", "-o", "4", "-s", "4096", "-n", "32", "-m", "1024"])
    if j:
        need(j["data_ok"] and j["inflight"] == 4 and j["outs"] == 4, f"-o 4: 4 READs in flight, got {j['inflight']}", p)
    # Immediates: every receive completion carries its message's own; a wrong one fails the run.
    for args, recvs in ((["--write_with_imm", "-s", "4096", "-n", "24", "-q", "2", "-m", "1024"], 48),
                        (["--send_with_imm", "-s", "3000", "-n", "24", "-q", "2", "-m", "1024"], 48),
                        (["--write_with_imm", "-b", "-s", "1024", "-n", "16", "-q", "2"], 64),
                        (["--write_with_imm", "--latency", "-s", "64", "-n", "10"], 20)):
        p, j = as_json(args)
        if j:
            need(j["data_ok"] and j["imm"] and j["imm_checked"] == recvs and j["completions"] == j["expected_completions"],
                 f"{' '.join(args)}: data_ok, {recvs} immediates checked, got {j['imm_checked']}", p)
    for imm in ("--write_with_imm", "--send_with_imm"):
        p, j = as_json([imm, "-s", "1024", "-n", "16", "--inject-fault", "imm"])
        if j:
            need(p.returncode == 1 and not j["data_ok"] and (j["failure"] or "").startswith("immediate: host 1 QP 0 iteration 8"),
                 f"{imm} --inject-fault imm must fail on iteration 8's immediate, got {j['failure']!r}", p)
    return bad


def main():
    args = sys.argv[1:]
    perftest = "--perftest" in args
    args = [a for a in args if a != "--perftest"]
    if len(args) != 1:
        print(__doc__)
        return 2
    sim = args[0]
    if perftest:
        problems = perftest_checks(sim)
        for m in problems:
            print("FAIL: " + m)
        print("perftest options: " + ("ok" if not problems else f"{len(problems)} problem(s)"))
        return 1 if problems else 0
    bad = 0
    for args, needle in CASES:
        p = subprocess.run([sim] + args, capture_output=True, text=True, timeout=60)
        lines = p.stderr.splitlines()
        problems = []
        if p.returncode != 2:
            problems.append(f"exit status {p.returncode}, expected 2")
        if len(lines) != 1:
            problems.append(f"{len(lines)} lines on stderr, expected 1")
        if needle not in p.stderr:
            problems.append(f"stderr lacks '{needle}'")
        if p.stdout:
            problems.append("unexpected stdout")
        print(("ok  " if not problems else "FAIL") + f": srnic-sim {' '.join(args)}: {p.stderr.strip()}")
        for m in problems:
            print(f"      {m}")
        bad += bool(problems)
    # --trace needs the debug build: the fast build must refuse it clearly.
    p = subprocess.run([sim, "--trace", "/tmp/unused.fst", "--iters", "1"], capture_output=True, text=True,
                       timeout=120)
    if "Vsrnic_core_dbg" not in p.stdout + p.stderr:
        if p.returncode == 0 or "debug build" not in p.stderr:
            print(f"FAIL: --trace in the fast build: exit {p.returncode}, stderr {p.stderr.strip()!r}")
            bad += 1
        else:
            print(f"ok  : --trace in the fast build refused: {p.stderr.strip()}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
