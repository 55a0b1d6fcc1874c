#!/usr/bin/env python3
"""Checks scripts/model_relations.py's own verdicts, so that its ctests cannot pass by missing a
violation: canned results for each kind of relation, and relations that are a function of (seed,
index). Usage: model_relations_test.py SCRIPTS_DIR"""
import io
import os
import stat
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.dont_write_bytecode = True  # importing a script must not leave __pycache__ in the source tree
sys.path.insert(0, sys.argv.pop(1))
import model_relations as mr  # noqa: E402


def row(time_us, events=100, mirrored=0, size=4096, **extra):
    fields = {"time_us": time_us, "sim_events": events, "groups_mirrored": mirrored, "dispatch_us": 3.5,
              "launch_us": 0.6, "size_bytes": size, "wall_s": 0.01, "settings": {}}
    fields.update(extra)
    return fields


def ran(*rows):
    return mr.Result(0, rows=list(rows))


class Exact(unittest.TestCase):
    def test_equal_data_and_timing_only_runs_hold(self):
        self.assertEqual(mr.check("E1", [ran(row(10.5)), ran(row(10.5))])[0], "held")

    def test_a_nanosecond_apart_is_a_violation(self):
        self.assertEqual(mr.check("E1", [ran(row(10.5)), ran(row(10.501))])[0], "violated")

    def test_other_event_counts_are_a_violation_unless_groups_were_mirrored(self):
        self.assertEqual(mr.check("E2", [ran(row(1.0, 100)), ran(row(1.0, 101))])[0], "violated")
        self.assertEqual(mr.check("E1", [ran(row(1.0, 400)), ran(row(1.0, 100, mirrored=3))])[0], "held")

    def test_one_side_refused_is_a_violation(self):
        self.assertEqual(mr.check("E1", [ran(row(1.0)), mr.Result(2, refusal="cclmesh: error: x")])[0], "violated")

    def test_both_refused_alike_is_skipped(self):
        refused = mr.Result(2, refusal="cclmesh: error: x")
        self.assertEqual(mr.check("E1", [refused, refused])[0], "skipped")

    def test_the_text_row_must_round_the_json_time(self):
        good = [ran(row(10.624)), ran(row(10.624)), mr.Result(0, text_time=10.62)]
        bad = [ran(row(10.624)), ran(row(10.624)), mr.Result(0, text_time=10.64)]
        self.assertEqual(mr.check("E3", good)[0], "held")
        self.assertEqual(mr.check("E3", bad)[0], "violated")

    def test_mirrored_groups_may_differ_only_in_their_own_fields(self):
        same = [ran(row(5.0, 10, 3)), ran(row(5.0, 40, 0))]
        other = [ran(row(5.0, 10, 3, linkbw_GBps=1.0)), ran(row(5.0, 40, 0, linkbw_GBps=1.1))]
        self.assertEqual(mr.check("E4", same)[0], "held")
        self.assertEqual(mr.check("E4", other)[0], "violated")

    def test_a_sweep_row_must_equal_the_run(self):
        sweep = ran(row(1.0, size=4096), row(2.0, size=8192))
        refused = mr.Result(2, refusal="cclmesh: error: --size")
        self.assertEqual(mr.check("E5", [sweep, sweep, refused, ran(row(1.0, size=4096)),
                                         ran(row(2.0, size=8192))])[0], "held")
        self.assertEqual(mr.check("E5", [sweep, sweep, refused, ran(row(1.0, size=4096)),
                                         ran(row(2.5, size=8192))])[0], "violated")
        self.assertEqual(mr.check("E5", [sweep, ran(row(1.0, size=4096)), refused, ran(row(1.0, size=4096)),
                                         ran(row(2.0, size=8192))])[0], "violated")

    def test_a_broken_run_fails(self):
        self.assertEqual(mr.check("I1", [mr.Result(4, error="internal"), ran(row(1.0))])[0], "failed")


class NothingCompared(unittest.TestCase):
    """An exact relation must compare something (review42: it could pass vacuously)."""

    def test_rows_without_a_time_fail(self):
        bare = {"sim_events": 100, "groups_mirrored": 0, "size_bytes": 4096}
        self.assertEqual(mr.check("E4", [ran(dict(bare)), ran(dict(bare))])[0], "failed")
        self.assertEqual(mr.check("E5", [ran(dict(bare)), ran(dict(bare)), ran(dict(bare)), ran(dict(bare)),
                                         ran(dict(bare))])[0], "failed")
        self.assertEqual(mr.check("E1", [ran(dict(bare)), ran(dict(bare))])[0], "failed")

    def run_with(self, body, relations="E1,E2,E3,E4,E5"):
        with tempfile.TemporaryDirectory() as tmp:
            cli = os.path.join(tmp, "cclmesh")
            with open(cli, "w") as f:
                f.write("#!/bin/sh\n" + body)
            os.chmod(cli, stat.S_IRWXU)
            sys.argv = ["model_relations.py", "--cclmesh", cli, "--count", "12", "--relations", relations]
            out = io.StringIO()
            with redirect_stdout(out):
                code = mr.main()
            return code, out.getvalue()

    def test_a_cli_that_refuses_everything_fails(self):
        code, out = self.run_with("echo 'cclmesh: error: --json: no such option' >&2\nexit 2\n")
        self.assertEqual(code, 1, out)
        self.assertIn("no pair held", out)

    def test_inequalities_all_skipped_fail_only_when_strict(self):
        code, out = self.run_with("echo 'cclmesh: error: x' >&2\nexit 2\n", relations="I1")
        self.assertEqual(code, 0, out)


class Inequalities(unittest.TestCase):
    def test_the_expected_faster_run_slower_is_a_violation_with_its_ratio(self):
        verdict, _, ratio = mr.check("I2", [ran(row(11.0)), ran(row(10.0))])
        self.assertEqual(verdict, "violated")
        self.assertAlmostEqual(ratio, 1.1)
        self.assertEqual(mr.check("I2", [ran(row(10.0)), ran(row(11.0))])[0], "held")

    def test_one_side_refused_is_skipped(self):
        self.assertEqual(mr.check("I5", [mr.Result(2, refusal="cclmesh: error: --links"), ran(row(1.0))])[0],
                         "skipped")

    def test_size_steps_must_not_get_faster(self):
        up = ran(row(1.0, size=4096), row(2.0, size=8192), row(1.5, size=16384))
        verdict, _, ratio = mr.check("I4", [up])
        self.assertEqual(verdict, "violated")
        self.assertAlmostEqual(ratio, 2.0 / 1.5)

    def test_rotations_report_their_spread(self):
        verdict, _, spread = mr.check("I7", [ran(row(10.0)), ran(row(10.5)), ran(row(10.2))])
        self.assertEqual(verdict, "held")
        self.assertAlmostEqual(spread, 1.05)


class Generation(unittest.TestCase):
    def test_relations_are_a_function_of_seed_and_index(self):
        self.assertEqual(mr.make_pair(3, 17, None), mr.make_pair(3, 17, None))
        self.assertNotEqual([mr.make_pair(3, i, None) for i in range(20)],
                            [mr.make_pair(4, i, None) for i in range(20)])

    def test_only_the_relations_asked_for_are_drawn(self):
        drawn = {mr.make_pair(1, i, {"E4", "I7"})[0] for i in range(40)}
        self.assertEqual(drawn, {"E4", "I7"})


if __name__ == "__main__":
    unittest.main()
