#!/usr/bin/python3
"""srnic-sim command-line misuse: each bad invocation must exit 2 with exactly one line on stderr
naming the problem, and print nothing on stdout.

usage: fullchip_cli.py SRNIC_SIM"""

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
]


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    sim = sys.argv[1]
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
