#!/usr/bin/env python3
"""Checks scripts/trace_link_utilisation.py's windows: a packet straddling a window's edge counts
in both, and the last window ends with the trace, so a trace shorter than a window is not read as
idle for the rest of it (session 41: 61 us of packets at ~68% of line rate read as 8% of 500 us).
Usage: trace_link_utilisation_test.py SCRIPTS_DIR"""
import sys
import unittest

sys.dont_write_bytecode = True  # importing a script must not leave __pycache__ in the source tree
sys.path.insert(0, sys.argv.pop(1))
import trace_link_utilisation  # noqa: E402


class WindowShares(unittest.TestCase):
    def test_a_trace_shorter_than_a_window_is_one_window_as_long_as_the_trace(self):
        # 60 us busy out of a 100 us trace: 60%, not 12% of a 500 us window.
        self.assertEqual(trace_link_utilisation.window_shares([(20.0, 60.0)], 500.0, 100.0), [60.0])

    def test_a_packet_across_an_edge_counts_in_both_windows_and_the_last_is_partial(self):
        shares = trace_link_utilisation.window_shares([(5.0, 10.0), (22.0, 2.0)], 10.0, 24.0)
        self.assertEqual(shares, [50.0, 50.0, 50.0])

    def test_a_trace_ending_on_an_edge_has_no_empty_window_after_it(self):
        self.assertEqual(trace_link_utilisation.window_shares([(0.0, 10.0), (10.0, 5.0)], 10.0, 20.0), [100.0, 50.0])


if __name__ == "__main__":
    unittest.main()
