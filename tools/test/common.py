"""Shared paths for the tests of the regression tools (run: python3 -m unittest discover -s tools/test)."""
import os
import sys

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.dirname(TEST_DIR)
ROOT = os.path.dirname(TOOLS)
FIXTURES = os.path.join(TEST_DIR, "fixtures")
FAKE = os.path.join(FIXTURES, "fake_uvm.py")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)
