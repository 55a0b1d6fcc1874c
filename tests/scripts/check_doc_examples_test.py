#!/usr/bin/env python3
"""Checks scripts/check_doc_examples.py's own logic, so that the doc_examples ctests cannot pass by
matching too loosely or by not running anything: the matching of `...` lines and `<...>` tokens,
the parsing of blocks and markers, and whole runs on canned markdown against a stand-in CLI.
Usage: check_doc_examples_test.py SCRIPTS_DIR"""
import io
import os
import stat
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.dont_write_bytecode = True  # importing a script must not leave __pycache__ in the source tree
sys.path.insert(0, sys.argv.pop(1))
import check_doc_examples as checker  # noqa: E402

HEADER = "# cclmesh: all_gather on t3k (8 chips, ring, 1 link, fabric mode)"
ROW = "      1048576         65536  bfloat16   none       54.22    19.34"
NOTE = "# faults: link-down:0-2; fabric chips in order: 2-6-7-3-1-5-4-0"


class Matching(unittest.TestCase):
    def matches(self, shown, actual):
        return checker.output_matches(shown, actual)

    def test_the_same_lines_match_and_one_differing_figure_does_not(self):
        self.assertTrue(self.matches([HEADER, ROW], [HEADER, ROW]))
        self.assertFalse(self.matches([HEADER, ROW.replace("54.22", "54.16")], [HEADER, ROW]))

    def test_a_missing_or_extra_line_does_not_match_without_an_ellipsis(self):
        self.assertFalse(self.matches([HEADER, ROW], [HEADER, ROW, NOTE]))
        self.assertFalse(self.matches([HEADER, ROW, NOTE], [HEADER, ROW]))
        self.assertFalse(self.matches([ROW], [HEADER, ROW]))

    def test_an_ellipsis_line_stands_for_any_lines_in_order(self):
        self.assertTrue(self.matches(["...", ROW], [HEADER, "#", ROW]))
        self.assertTrue(self.matches(["...", ROW], [ROW]))
        self.assertTrue(self.matches([HEADER, "..."], [HEADER, ROW, NOTE]))
        self.assertTrue(self.matches([HEADER, "...", NOTE], [HEADER, "a", "b", NOTE]))
        self.assertTrue(self.matches([HEADER, "...", ROW, "...", NOTE], [HEADER, "a", ROW, "b", "c", NOTE]))
        self.assertTrue(self.matches(["..."], []))

    def test_shown_lines_after_an_ellipsis_must_come_in_order_and_be_there(self):
        self.assertFalse(self.matches(["...", NOTE, "...", ROW], [HEADER, ROW, NOTE]))
        self.assertFalse(self.matches(["...", ROW.replace("54.22", "54.16")], [HEADER, ROW]))
        self.assertFalse(self.matches([HEADER, "...", ROW], [HEADER, ROW, NOTE]))
        self.assertFalse(self.matches([HEADER, "...", HEADER], [HEADER]))

    def test_an_elision_within_a_line_matches_text_in_that_line_only(self):
        self.assertTrue(self.matches(["hang at 63.214 us: <...> below"],
                                     ["hang at 63.214 us: the workloads cannot complete below"]))
        self.assertTrue(self.matches(["a <...> b <...> c"], ["a x b y c"]))
        self.assertTrue(self.matches(["a<...>b"], ["ab"]))
        self.assertFalse(self.matches(["hang at 63.214 us: <...> below"], ["hang at 62.476 us: it cannot below"]))
        self.assertFalse(self.matches(["a <...> c"], ["a b", "c"]))
        self.assertFalse(self.matches(["ab<...>ba"], ["aba"]))

    def test_the_diff_shows_the_differing_line_not_the_elided_ones(self):
        shown = ["...", ROW.replace("54.22", "54.16"), NOTE]
        actual = [HEADER, "#", ROW, NOTE]
        self.assertEqual(checker.aligned_for_diff(shown, actual), [HEADER, "#", shown[1], NOTE])


class Parsing(unittest.TestCase):
    def test_commands_outputs_and_markers(self):
        text = "\n".join([
            "Intro", "```sh", "build/tools/cclmesh/cclmesh run --op x   # no prompt: not an example", "```",
            "```", "$ build/tools/cclmesh/cclmesh topo --system t3k", "system t3k",
            "$ build/examples/run_all_gather", "all_gather on t3k", "```",
            "<!-- example: not run (serve waits for clients) -->", "",
            "```", "$ build/tools/cclmesh/cclmesh serve --system t3k", "listening", "```",
            "<!-- example: slow -->", "~~~", "$ build/tools/cclmesh/cclmesh run --size 1GiB", "row", "~~~",
            "```", "$ build/tools/bench/bench_remote", "wall 0.3 s", "```"])
        examples, skipped = checker.parse("doc.md", text)
        self.assertEqual([(e.line, e.command, e.shown, e.slow) for e in examples], [
            (6, "build/tools/cclmesh/cclmesh topo --system t3k", ["system t3k"], False),
            (8, "build/examples/run_all_gather", ["all_gather on t3k"], False),
            (19, "build/tools/cclmesh/cclmesh run --size 1GiB", ["row"], True)])
        self.assertEqual([(s.line, s.reason) for s in skipped], [(14, "serve waits for clients")])

    def test_a_marker_that_is_neither_kind_is_refused_naming_it(self):
        text = "<!-- example: skip -->\n```\n$ build/tools/cclmesh/cclmesh topo\n```\n"
        with self.assertRaisesRegex(checker.BadMarker, r"doc.md:1: marker '<!-- example: skip -->'"):
            checker.parse("doc.md", text)

    def test_output_before_the_first_command_is_refused(self):
        with self.assertRaisesRegex(checker.BadMarker, "doc.md:2: output before"):
            checker.parse("doc.md", "```\nstray\n$ build/tools/cclmesh/cclmesh topo\n```\n")


class FigureMarkers(unittest.TestCase):
    PARAGRAPH = "The run takes 54.22 us\non 1 link.\n"

    def test_a_marker_gives_its_commands_figures_and_the_paragraph_after_it(self):
        text = ("Intro\n<!-- figures: slow\n$ build/tools/cclmesh/cclmesh run --links 1\n54.22\n\n"
                "$ build/tools/cclmesh/cclmesh run --links 2\n30.1 us\n-->\n\nThe first line\nthe second\n\nNot it\n")
        (figures,), skipped = checker.parse("doc.md", text)
        self.assertEqual(skipped, [])
        self.assertEqual((figures.line, figures.slow, figures.paragraph), (2, True, ["The first line", "the second"]))
        self.assertEqual(figures.commands, [(3, "build/tools/cclmesh/cclmesh run --links 1", ["54.22"]),
                                            (6, "build/tools/cclmesh/cclmesh run --links 2", ["30.1 us"])])
        (fast,), _ = checker.parse("doc.md", "<!-- figures\n$ build/tools/cclmesh/cclmesh run\n1\n-->\nx 1\n")
        self.assertFalse(fast.slow)

    def test_malformed_markers_are_refused_naming_the_line(self):
        for text, message in [
                ("<!-- figures\n$ build/tools/cclmesh/cclmesh run\n54.22\n\nText 54.22\n", "doc.md:1: .*closing"),
                ("<!-- figures\n-->\nText\n", "doc.md:1: .*without a '\\$ ' command"),
                ("<!-- figures\n$ build/tools/cclmesh/cclmesh run\n-->\nText\n", "doc.md:2: .*without a figure"),
                ("<!-- figures\n54.22\n$ build/tools/cclmesh/cclmesh run\n1\n-->\nText\n", "doc.md:2: output before"),
                ("<!-- figures\n$ build/tools/cclmesh/cclmesh run\n54.22\n-->\n\n```\nx\n```\n",
                 "doc.md:1: .*not followed by a paragraph")]:
            with self.assertRaisesRegex(checker.BadMarker, message):
                checker.parse("doc.md", text)

    def test_a_paragraph_ends_where_the_next_marker_opens_and_that_marker_is_checked_too(self):
        # Without a blank line between, the first paragraph must not take in the next marker's
        # figures (its own prose holds none of them), and the next marker must not go unparsed.
        text = ("<!-- figures\n$ build/tools/cclmesh/cclmesh run --links 1\n54.22\n-->\nThe first run.\n"
                "<!-- figures\n$ build/tools/cclmesh/cclmesh run --links 2\n30.1\n-->\nThe second: 30.1 us.\n")
        first, second = checker.parse("doc.md", text)[0]
        self.assertEqual(first.paragraph, ["The first run."])
        self.assertEqual((second.line, second.paragraph), (6, ["The second: 30.1 us."]))
        # Any other comment (an example marker, a note) ends the paragraph as well.
        text = ("<!-- figures\n$ build/tools/cclmesh/cclmesh run\n54.22\n-->\nText 54.22\n"
                "<!-- example: slow -->\n```\n$ build/tools/cclmesh/cclmesh topo\n```\n")
        (figures, example), _ = checker.parse("doc.md", text)
        self.assertEqual(figures.paragraph, ["Text 54.22"])
        self.assertTrue(example.slow)

    def test_a_comment_that_looks_like_a_figures_marker_but_is_not_one_is_refused(self):
        # Each would otherwise be an HTML comment the checker skips: a marker that checks nothing.
        for opening in ["<!-- figures -->", "<!-- figures: fast", "<!-- figures slow", "<!--figures:slow -->",
                        "<!-- figures: slow -->", "<!-- Figures"]:
            text = f"{opening}\n$ build/tools/cclmesh/cclmesh run\n54.22\n-->\nText 54.22\n"
            with self.assertRaisesRegex(checker.BadMarker, "doc.md:1: .*expected", msg=opening):
                checker.parse("doc.md", text)
        # A marker closed on its last figure's line would run on to the next marker's '-->'.
        text = ("<!-- figures\n$ build/tools/cclmesh/cclmesh run\n54.22 -->\nText 54.22\n\n"
                "<!-- figures\n$ build/tools/cclmesh/cclmesh run\n1.5\n-->\nText 1.5\n")
        with self.assertRaisesRegex(checker.BadMarker, "doc.md:3: .*'-->' on a line of its own"):
            checker.parse("doc.md", text)
        # Prose that names the marker is not one.
        self.assertEqual(checker.parse("doc.md", "a `<!-- figures` comment just before it\n"), ([], []))

    TABLE = ("Intro\n<!-- figures table: slow -->\n\n"
             "| Row | Command (`build/tools/cclmesh/cclmesh run ...`) | Note | Time (us) |\n|---|---|---|---|\n"
             "| 1 | `--op a --links 1` | golden | 54.22 |\n| 2 | `--op b` | 2 links | 30.1, 7 |\n\nAfter.\n")

    def test_a_table_marker_makes_each_row_a_figures_check_of_its_command(self):
        first, second = checker.parse("doc.md", self.TABLE)[0]
        self.assertEqual((first.line, first.slow, first.commands),
                         (6, True, [(6, "build/tools/cclmesh/cclmesh run --op a --links 1", ["54.22"])]))
        self.assertEqual(first.paragraph, ["| 1 | `--op a --links 1` | golden | 54.22 |"])
        # Every number of the last cell is a figure; numbers elsewhere in the row are not.
        self.assertEqual(second.commands, [(7, "build/tools/cclmesh/cclmesh run --op b", ["30.1", "7"])])
        (fast,), _ = checker.parse("doc.md", "<!-- figures table -->\n| `build/examples/x ...` | t |\n|-|-|\n| `-a` | 1 |\n")
        self.assertEqual((fast.slow, fast.commands), (False, [(4, "build/examples/x -a", ["1"])]))

    def test_malformed_table_markers_are_refused_naming_the_line(self):
        header = "| Command (`build/tools/cclmesh/cclmesh run ...`) | Time |\n|---|---|\n"
        for text, message in [
                ("<!-- figures table -->\nText 1\n", "doc.md:1: .*not followed by a markdown table"),
                ("<!-- figures table -->\n| Command | Time |\n|---|---|\n| `--op a` | 1 |\n",
                 "doc.md:2: .*name its program in one header cell.*found 0"),
                ("<!-- figures table -->\n" + header + "| --op a | 1 |\n", "doc.md:4: row without a command"),
                ("<!-- figures table -->\n" + header + "| `--op a` | N/A |\n", "doc.md:4: row without a figure"),
                ("<!-- figures table -->\n" + header + "\nText\n", "doc.md:1: .*has no rows"),
                ("<!-- figures table: fast -->\n" + header + "| `--op a` | 1 |\n", "doc.md:1: .*expected")]:
            with self.assertRaisesRegex(checker.BadMarker, message, msg=text):
                checker.parse("doc.md", text)

    def test_a_figure_is_found_whole_across_white_space(self):
        self.assertTrue(checker.contains_figure("takes 1491.89\n  us on 1", "1491.89 us"))
        self.assertTrue(checker.contains_figure("(429.95.)", "429.95"))
        self.assertTrue(checker.contains_figure("3.47x faster", "3.47"))
        self.assertFalse(checker.contains_figure("1429.95", "429.95"))
        self.assertFalse(checker.contains_figure("429.951", "429.95"))
        self.assertFalse(checker.contains_figure("1.429.95", "429.95"))
        self.assertFalse(checker.contains_figure("1491.89 ms", "1491.89 us"))


STAND_IN = """#!/bin/sh
# A stand-in cclmesh: prints a header and a row, a note on stderr, and records where it ran.
pwd > "$0.cwd"
echo "# cclmesh: $*"
echo "row 54.22"
echo "# note on stderr" >&2
[ "$1" = "fail" ] && exit 3
exit 0
"""


class WholeRun(unittest.TestCase):
    """main() on canned markdown against the stand-in: its exit code and what it prints."""

    def run_on(self, markdown, *extra):
        with tempfile.TemporaryDirectory() as tmp:
            cli = os.path.join(tmp, "cclmesh")
            with open(cli, "w") as f:
                f.write(STAND_IN)
            os.chmod(cli, stat.S_IRWXU)
            doc = os.path.join(tmp, "doc.md")
            with open(doc, "w") as f:
                f.write(markdown)
            repo = os.path.join(tmp, "repo")
            os.mkdir(repo)
            sys.argv = ["check_doc_examples.py", "--cclmesh", cli, "--repo", repo, *extra, doc]
            out = io.StringIO()
            with redirect_stdout(out):
                code = checker.main()
            ran_in = None
            if os.path.exists(cli + ".cwd"):
                with open(cli + ".cwd") as f:
                    ran_in = f.read().strip()
            return code, out.getvalue(), ran_in, repo

    def test_matching_output_passes_with_stderr_and_a_pipe(self):
        code, out, _, _ = self.run_on("```\n$ build/tools/cclmesh/cclmesh run --op x\n# cclmesh: run --op x\n"
                                      "row 54.22\n# note on stderr\n"
                                      "$ build/tools/cclmesh/cclmesh run | tail -1\n"
                                      "# note on stderr\nrow 54.22\n```\n")
        self.assertEqual(code, 0, out)
        self.assertIn("2 example(s): 2 ok, 0 differ, 0 failed to run; 0 skipped", out)

    def test_a_differing_figure_fails_with_a_diff(self):
        code, out, _, _ = self.run_on("```\n$ build/tools/cclmesh/cclmesh run\n...\nrow 54.16\n...\n```\n")
        self.assertEqual(code, 1)
        self.assertIn("DIFFERS", out)
        self.assertIn("-row 54.16\n+row 54.22", out)
        self.assertIn("1 differ", out)

    def test_a_command_runs_in_a_temporary_directory_and_its_exit_status_is_not_compared(self):
        code, out, ran_in, repo = self.run_on("```\n$ build/tools/cclmesh/cclmesh fail\n...\n```\n")
        self.assertEqual(code, 0, out)
        self.assertNotEqual(os.path.realpath(ran_in), os.path.realpath(repo))
        self.assertFalse(os.path.exists(ran_in), "the temporary directory is removed")

    def test_an_abbreviated_command_fails_to_run(self):
        code, out, _, _ = self.run_on("```\n$ build/tools/cclmesh/cclmesh run\n...\n"
                                      "$ ... the same with --links 2\nrow\n```\n")
        self.assertEqual(code, 1)
        self.assertIn("FAILED to run", out)
        self.assertIn("1 ok, 0 differ, 1 failed to run", out)

    def test_a_block_marked_not_run_is_listed_with_its_reason_and_not_run(self):
        code, out, ran_in, _ = self.run_on("<!-- example: not run (waits for clients) -->\n"
                                           "```\n$ build/tools/cclmesh/cclmesh serve\nlistening\n```\n")
        self.assertEqual(code, 0, out)
        self.assertIsNone(ran_in)
        self.assertIn("doc.md:3: waits for clients", out)
        self.assertIn("0 example(s)", out)
        self.assertIn("1 skipped", out)

    def test_slow_blocks_run_only_when_asked_for(self):
        doc = "<!-- example: slow -->\n```\n$ build/tools/cclmesh/cclmesh run\nrow 54.16\n```\n"
        code, out, ran_in, _ = self.run_on(doc, "--examples", "fast")
        self.assertEqual((code, ran_in), (0, None), out)
        code, out, _, _ = self.run_on(doc, "--examples", "slow")
        self.assertEqual(code, 1, out)

    def figures_doc(self, figure_in_output, figure_in_prose, slow=""):
        return (f"<!-- figures{slow}\n$ build/tools/cclmesh/cclmesh run --op x\n{figure_in_output}\n-->\n"
                f"The op takes {figure_in_prose} us,\nsays the model.\n")

    def test_a_figure_in_the_output_and_in_the_paragraph_passes(self):
        code, out, ran_in, _ = self.run_on(self.figures_doc("54.22", "54.22"))
        self.assertEqual(code, 0, out)
        self.assertIsNotNone(ran_in)
        self.assertRegex(out, r"^ok +\S*doc.md:1 ")
        self.assertIn("figures: $ build/tools/cclmesh/cclmesh run --op x", out)
        self.assertIn("1 example(s): 1 ok, 0 differ, 0 failed to run; 0 skipped", out)

    def test_a_figure_absent_from_the_output_differs_naming_it(self):
        code, out, _, _ = self.run_on(self.figures_doc("54.16", "54.16"))
        self.assertEqual(code, 1, out)
        self.assertIn("DIFFERS", out)
        self.assertIn("doc.md:2: '54.16' not in the output of $ build/tools/cclmesh/cclmesh run --op x", out)
        self.assertIn("row 54.22", out, "the output is shown to find the new figure in")
        self.assertNotIn("not in the paragraph", out)

    def test_a_figure_absent_from_the_paragraph_differs_naming_it(self):
        code, out, _, _ = self.run_on(self.figures_doc("54.22", "54.16"))
        self.assertEqual(code, 1, out)
        self.assertIn("doc.md:2: '54.22' is not in the paragraph after the marker", out)
        self.assertNotIn("not in the output", out)

    def test_a_figures_command_that_cannot_run_fails(self):
        code, out, _, _ = self.run_on("<!-- figures\n$ build/tools/bench/bench_remote\n1\n-->\nText 1\n")
        self.assertEqual(code, 1, out)
        self.assertIn("FAILED to run", out)
        self.assertIn("not a command this checker runs", out)

    def test_slow_figures_run_only_when_asked_for(self):
        doc = self.figures_doc("54.16", "54.16", slow=": slow")
        code, out, ran_in, _ = self.run_on(doc, "--examples", "fast")
        self.assertEqual((code, ran_in), (0, None), out)
        self.assertIn("0 example(s)", out)
        code, out, _, _ = self.run_on(doc, "--examples", "slow")
        self.assertEqual(code, 1, out)
        self.assertIn("'54.16' not in the output", out)

    def test_each_table_row_is_checked_against_its_own_command(self):
        row = "| `run --op x` | {} |\n"
        doc = "<!-- figures table -->\n| Command (`build/tools/cclmesh/cclmesh ...`) | Time |\n|---|---|\n"
        code, out, _, _ = self.run_on(doc + row.format("54.22"))
        self.assertEqual(code, 0, out)
        self.assertIn("figures: $ build/tools/cclmesh/cclmesh run --op x", out)
        code, out, _, _ = self.run_on(doc + row.format("54.22") + row.format("54.16"))
        self.assertEqual(code, 1, out)
        self.assertIn("doc.md:5: '54.16' not in the output of $ build/tools/cclmesh/cclmesh run --op x", out)
        self.assertIn("2 example(s): 1 ok, 1 differ", out)


if __name__ == "__main__":
    unittest.main()
