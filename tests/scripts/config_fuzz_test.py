#!/usr/bin/env python3
"""Checks scripts/config_fuzz.py's own logic, so that its ctests cannot pass by miscounting: each
outcome class from canned CLI outputs, configurations that are a function of (seed, index), and a
whole run against stand-in CLIs that fail in each way. Usage: config_fuzz_test.py SCRIPTS_DIR"""
import io
import os
import stat
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.dont_write_bytecode = True  # importing a script must not leave __pycache__ in the source tree
sys.path.insert(0, sys.argv.pop(1))
import config_fuzz  # noqa: E402

COLUMNS = ["size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong", "linkbw", "%line", "dispatch",
           "launch"]
HEADER = "# cclmesh: all_gather on t3k (8 chips, ring, 1 link, fabric mode)\n#" + "".join(
    f"{c:>10}" for c in COLUMNS) + "\n"


def row(wrong):
    cells = ["65536", "4096", "bfloat16", "none", "10.62", "6.17", "5.40", str(wrong), "2.70", "21.6", "3.50", "0.62"]
    return HEADER + " " + "".join(f"{c:>10}" for c in cells) + "\n"


class Classify(unittest.TestCase):
    def outcome(self, code, out="", err="", fault=False):
        return config_fuzz.classify(code, out, err, fault)[0]

    def test_verified_row_is_success(self):
        self.assertEqual(self.outcome(0, row(0)), "success")

    def test_wrong_elements_on_exit_0_are_wrong_data(self):
        self.assertEqual(self.outcome(0, row(3)), "wrong-data")

    def test_exit_0_without_a_row_is_internal(self):
        self.assertEqual(self.outcome(0, HEADER), "internal")

    def test_exit_1_is_wrong_data(self):
        self.assertEqual(self.outcome(1, row(5), "cclmesh: chip 3 output page 2 byte 7 differs"), "wrong-data")

    def test_one_error_line_on_exit_2_is_a_refusal(self):
        err = "cclmesh: error: --root: 3 given for all_gather; --root applies to --op reduce\n"
        self.assertEqual(self.outcome(2, "", err), "refused")

    def test_several_lines_or_no_prefix_on_exit_2_are_unclear(self):
        self.assertEqual(self.outcome(2, "", "cclmesh: error: --root: bad\nmore\n"), "unclear-refusal")
        self.assertEqual(self.outcome(2, "", "terminate called after throwing an instance of 'x'\n"),
                         "unclear-refusal")

    def test_exit_3_is_a_hang_without_a_fault_and_a_fault_stop_with_one(self):
        report = "cclmesh: the simulated op did not complete:\nhang at 5.3 us\n"
        self.assertEqual(self.outcome(3, "", report), "hang")
        self.assertEqual(self.outcome(3, "", report, fault=True), "fault-stopped")

    def test_internal_errors_exit_4_and_signals(self):
        self.assertEqual(self.outcome(4, "", "cclmesh: internal error: check failed\n"), "internal")
        self.assertEqual(self.outcome(2, "", "cclmesh: error: internal: CCLMESH_CHECK failed\n"), "internal")
        self.assertEqual(self.outcome(-11, "", ""), "crash")
        self.assertEqual(self.outcome(None), "timeout")


class Generate(unittest.TestCase):
    def test_a_configuration_is_a_function_of_seed_and_index(self):
        self.assertEqual(config_fuzz.generate(1, 17), config_fuzz.generate(1, 17))
        self.assertNotEqual(config_fuzz.generate(1, 17), config_fuzz.generate(1, 18))
        self.assertNotEqual(config_fuzz.generate(1, 17), config_fuzz.generate(2, 17))

    def test_every_configuration_names_an_op_a_system_and_a_seed(self):
        for i in range(200):
            argv, _ = config_fuzz.generate(3, i)
            self.assertEqual(argv[0], "--op")
            self.assertIn(argv[1], config_fuzz.OPS)
            self.assertIn("--system", argv)
            self.assertEqual(argv[-2], "--seed")


class WholeRun(unittest.TestCase):
    """main() against a stand-in CLI: its exit code and the failing lines it prints."""

    def run_with(self, body, count=5):
        with tempfile.TemporaryDirectory() as tmp:
            cli = os.path.join(tmp, "cclmesh")
            with open(cli, "w") as f:
                f.write("#!/bin/sh\n" + body)
            os.chmod(cli, stat.S_IRWXU)
            sys.argv = ["config_fuzz.py", "--cclmesh", cli, "--count", str(count), "--timeout", "10"]
            out = io.StringIO()
            with redirect_stdout(out):
                code = config_fuzz.main()
            return code, out.getvalue()

    def test_a_cli_that_verifies_passes(self):
        code, out = self.run_with(f"cat <<'EOF'\n{row(0)}EOF\n")
        self.assertEqual(code, 0, out)

    def test_wrong_data_fails_and_is_listed(self):
        code, out = self.run_with(f"cat <<'EOF'\n{row(2)}EOF\n")
        self.assertEqual(code, 1)
        self.assertIn("wrong-data: #wrong 2", out)
        self.assertIn("failing configurations", out)

    def test_a_crash_fails(self):
        code, out = self.run_with("kill -SEGV $$\n")
        self.assertEqual(code, 1)
        self.assertIn("crash: signal 11", out)


if __name__ == "__main__":
    unittest.main()
