#!/usr/bin/python3
"""Full-chip pcap test: for write, read and send, runs srnic-sim with --pcap and checks the file
with tools/check_pcap.sh (roce-pcap-check, scapy ICRC, tshark decode with the expected opcodes,
QPNs, first PSNs and frame count).

usage: fullchip_pcap.py SRNIC_SIM ROCE_PCAP_CHECK CHECK_PCAP_SH OUT_DIR"""

import json
import os
import subprocess
import sys


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    sim, checker, script, out = sys.argv[1:]
    bad = 0
    for op in ("write", "read", "send"):
        pcap = os.path.join(out, f"fullchip_{op}.pcap")
        args = [sim, "--json", "--op", op, "--size", "5000", "--mtu", "1024", "--qps", "2", "--iters", "3",
                "--seed", "11", "--pcap", pcap]
        p = subprocess.run(args, capture_output=True, text=True)
        try:
            r = json.loads(p.stdout)
        except json.JSONDecodeError:
            print(f"FAIL: {' '.join(args)}: exit {p.returncode}, no JSON; stderr: {p.stderr.strip()}")
            bad += 1
            continue
        if p.returncode != 0 or not r["data_ok"]:
            print(f"FAIL: {' '.join(args)}: exit {p.returncode}, data_ok {r['data_ok']}, {r.get('failure')}")
            bad += 1
            continue
        h0, h1 = r["hosts"]  # labelled: host0 (requester), host1 (responder)
        qa, qb = h0["qpns"], h1["qpns"]
        pa = h0["sq_psns"]
        # Requests of host 0's QP q go to host 1's QP q starting at host 0's send PSN.
        psns = ",".join(f"{qb[i]}:{pa[i]}" for i in range(len(qa)))
        qpns = ",".join(str(q) for q in sorted(set(qa + qb)))
        frames = sum(h["eth"]["tx_frames"] for h in r["hosts"])
        cmd = [script, "--roce-pcap-check", checker, "--mtu", "1024", "--op", op, "--qpns", qpns, "--psns", psns,
               "--frames", str(frames), pcap]
        c = subprocess.run(cmd, capture_output=True, text=True)
        print(c.stdout + c.stderr)
        if c.returncode != 0:
            print(f"FAIL: {' '.join(cmd)} exited {c.returncode}")
            bad += 1
        else:
            print(f"ok: {op}: {frames} frames")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
