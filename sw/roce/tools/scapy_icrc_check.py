#!/usr/bin/python3
"""Verify the RoCEv2 ICRC of every frame in a pcap with scapy.contrib.roce (an independent
implementation). Exit status: 0 all checked frames match, 1 a mismatch, 2 usage or read error.

scapy 2.5 computes the ICRC for IPv4 only; IPv6 RoCE frames are counted as skipped."""

import argparse
import sys

from scapy.all import Ether, IP, UDP, IPv6, raw, PcapReader, conf
from scapy.contrib.roce import BTH


def check(path, max_listed):
    conf.verb = 0
    total = checked = skipped = bad = 0
    with PcapReader(path) as reader:
        for frame_no, pkt in enumerate(reader, start=1):
            total += 1
            p = Ether(raw(pkt))
            if BTH not in p or UDP not in p:
                skipped += 1
                continue
            if IPv6 in p or IP not in p:
                skipped += 1
                continue
            wire = p[BTH].icrc
            del p[BTH].icrc
            computed = Ether(raw(p))[BTH].icrc
            checked += 1
            if computed != wire:
                bad += 1
                if bad <= max_listed:
                    print(f"frame {frame_no}: ICRC mismatch, wire {wire:#010x} scapy {computed:#010x} "
                          f"(opcode {p[BTH].opcode:#04x}, dqpn {p[BTH].dqpn:#08x}, psn {p[BTH].psn})")
    print(f"frames: {total}  checked: {checked}  skipped (not RoCE over IPv4): {skipped}  ICRC mismatches: {bad}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pcap")
    ap.add_argument("--max-listed", type=int, default=10, help="mismatches to print")
    args = ap.parse_args()
    try:
        bad = check(args.pcap, args.max_listed)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
