"""Verdicts of single runs and the failure-bucket normalisation (regresslib.logparse)."""
import unittest

import common  # noqa: F401
from regresslib.logparse import judge, normalise, parse_report_line


class Normalise(unittest.TestCase):
    def test_numbers_hex_and_addresses_become_hash(self):
        self.assertEqual(normalise("byte 17 at 0x1f40 differs: got 0xab, want 0xcd"),
                         "byte # at # differs: got #, want #")
        self.assertEqual(normalise("qp 3 psn 0x00ffff00 len 4096"), "qp # psn # len #")
        self.assertEqual(normalise("from 10.0.0.2 mac 02:00:00:00:00:01"), "from # mac #")
        self.assertEqual(normalise("value 16'h3f or 'b101 at 4.5us seed -12"), "value # or # at #us seed #")
        self.assertEqual(normalise("digest deadbeef12 vs 0000abcd"), "digest # vs #")

    def test_words_stay(self):
        self.assertEqual(normalise("  expected   SEND_ONLY, got WRITE_FIRST "),
                         "expected SEND_ONLY, got WRITE_FIRST")
        # hex-looking words without a digit are words
        self.assertEqual(normalise("a bad cafe face"), "a bad cafe face")

    def test_same_failure_different_numbers_same_key(self):
        a = parse_report_line("ERROR   @     1234: env.host0.sb [SB_MISMATCH] byte 17 at 0x1f40 differs")
        b = parse_report_line("ERROR   @       99: env.host1.sb [SB_MISMATCH] byte 3 at 0x80 differs")
        c = parse_report_line("ERROR   @       99: env.host1.sb [SB_MISSING] byte 3 at 0x80 differs")
        self.assertEqual(a.key(), b.key())
        self.assertEqual(a.key(), "ERROR env.host#.sb [SB_MISMATCH] byte # at # differs")
        self.assertNotEqual(a.key(), c.key())

    def test_severity_is_part_of_the_key(self):
        e = parse_report_line("ERROR @ 1: x [ID] boom")
        f = parse_report_line("FATAL @ 1: x [ID] boom")
        self.assertNotEqual(e.key(), f.key())


class ReportLines(unittest.TestCase):
    def test_fields(self):
        r = parse_report_line("WARNING @       23: test [COVERAGE] below goal\n")
        self.assertEqual((r.severity, r.time, r.path, r.id, r.text), ("WARNING", "23", "test", "COVERAGE", "below goal"))
        r = parse_report_line("FATAL   @        0: (top) [EXCEPTION] vector::_M_range_check: 5")
        self.assertEqual((r.path, r.id), ("(top)", "EXCEPTION"))

    def test_verilator_assertion_line(self):
        line = ("[7] %Error: srnic_cq_writer.sv:162: Assertion failed in top.srnic_cq_writer.a_ring_not_overfull: "
                "srnic_cq_writer: CQ 63 holds 32768 entries, more than its size 16")
        r = parse_report_line(line)
        self.assertEqual((r.severity, r.time, r.path, r.id), ("ERROR", "7", "top.srnic_cq_writer.a_ring_not_overfull", "SVA"))
        self.assertEqual(r.text, "srnic_cq_writer: CQ 63 holds 32768 entries, more than its size 16 (srnic_cq_writer.sv:162)")
        self.assertEqual(r.key(), "ERROR top.srnic_cq_writer.a_ring_not_overfull [SVA] "
                                  "srnic_cq_writer: CQ # holds # entries, more than its size # (srnic_cq_writer.sv:#)")
        v = judge("SEED 5\n" + line + "\nERROR   @     9: env [SVA] 1 RTL assertion failure(s)\n", 1, 5)
        self.assertEqual(v.status, "fail")
        self.assertEqual(v.message, line)
        self.assertIsNone(parse_report_line("-Info: srnic_sched.sv:115: Verilog $stop, ignored due to +verilator+error+limit"))

    def test_non_report_lines(self):
        for line in ("INFO    @       23: test.sb [SB_SUMMARY] 20 matched", "SEED 1  test x",
                     "reproduce: prog --test x --seed 1", "ERROR without format", ""):
            self.assertIsNone(parse_report_line(line), line)


PASS_OUT = """SEED 5  test t
INFO    @       23: test.sb [SB_SUMMARY] 20 matched, 0 mismatched
WARNING @       23: test [COVERAGE] below goal
TEST PASSED: t
reproduce: prog --test t --seed 5
"""


class Judge(unittest.TestCase):
    def test_pass(self):
        v = judge(PASS_OUT, 0, 5)
        self.assertEqual(v.status, "pass")
        self.assertEqual((v.errors, v.fatals, v.warnings), (0, 0, 1))
        self.assertEqual(v.reproduce_line, "prog --test t --seed 5")

    def test_first_error_decides_the_bucket(self):
        out = ("SEED 5\nERROR   @      100: env.sb [SB_MISMATCH] byte 4 differs\n"
               "FATAL   @      200: env [DEAD] gone\nreproduce: x\n")
        v = judge(out, 1, 5)
        self.assertEqual(v.status, "fail")
        self.assertEqual(v.message, "ERROR   @      100: env.sb [SB_MISMATCH] byte 4 differs")
        self.assertEqual(v.key, "ERROR env.sb [SB_MISMATCH] byte # differs")
        self.assertEqual((v.errors, v.fatals), (1, 1))

    def test_error_with_exit_zero_fails(self):
        v = judge("SEED 5\nERROR @ 1: a [B] c\n", 0, 5)
        self.assertEqual(v.status, "fail")
        self.assertIn("exit code 0 despite", v.message)

    def test_crash_timeout_noreport_noseed(self):
        self.assertEqual(judge("SEED 5\n", -11, 5).key, "RUNNER [CRASH] killed by SIGSEGV")
        v = judge("SEED 5\nERROR @ 7: a [B] c 9\n", -6, 5)
        self.assertEqual((v.status, v.key), ("crash", "ERROR a [B] c #"))
        v = judge("SEED 5\nERROR @ 7: a [B] c\n", None, 5, timed_out=True, timeout=30)
        self.assertEqual(v.status, "timeout")
        self.assertEqual(v.key, "RUNNER [TIMEOUT] no end within the timeout")
        self.assertIn("30 s", v.message)
        v = judge("SEED 5\nboom 42\nreproduce: x\n", 3, 5)
        self.assertEqual(v.status, "fail")
        self.assertEqual(v.key, "RUNNER [NO_REPORT] exit code # without an ERROR/FATAL report; last output: boom #")
        self.assertEqual(judge("hello\n", 0, 5).key, "RUNNER [NO_SEED] output does not start with 'SEED #'")
        self.assertEqual(judge("SEED 6\n", 0, 5).status, "fail")
        self.assertEqual(judge("", 0, 5).status, "fail")


if __name__ == "__main__":
    unittest.main()
