#!/usr/bin/env python3
"""Runs the example commands that README.md and docs/*.md show with their output, and checks that the
output shown is what the code prints now (session 38: "honest figures").

What is an example: a fenced block (``` or ~~~) with at least one line starting with
`$ build/tools/cclmesh/cclmesh ` or `$ build/examples/`. In such a block every line starting with `$ `
is a command and the lines up to the next `$ ` line are its shown output. A command is run by
/bin/sh (so `| tail -1` works) with `build/tools/cclmesh/cclmesh` rewritten to --cclmesh and
`build/examples/` to --build-dir's examples/, from a fresh temporary directory that holds a symlink
to each top-level entry of the checkout (so a command reads checkout files by their repo-relative
paths, and a file it writes under a bare name lands in the temporary directory).

What is compared: the command's stdout and stderr, both into one pipe (the order the program writes
them in when neither is a terminal), with the exit status not compared. Trailing spaces are ignored
on both sides. In the shown output:
  a line `...`             any number of lines (zero or more) here
  `<...>` within a line    any text within that line: only for text elided for width
Every other character must be the same. The first shown line must be the first line printed and the
last shown line the last (end with a `...` line to show only the top of a long output). Figures that
differ from run to run (wall seconds, ephemeral ports, temporary paths, dates) must not be shown.

Markers (an HTML comment on the line before the opening fence, blank lines allowed between):
  <!-- example: not run (WHY) -->   the block is skipped and listed with WHY: a `serve` that waits
                                     for clients, a command that needs a server, another machine's output
  <!-- example: slow -->            the block runs only with --examples slow|all (the slow ctest):
                                     blocks whose commands take more than ~5 s together

Figures quoted in prose (session 43): a paragraph that states what the tool computes ("all_to_all takes
1491.89 us on 1 link, 429.95 on 4") carries, on the lines just before it (blank lines allowed between),
an HTML comment that names the commands that compute the figures and the figures themselves:
  <!-- figures                                  (or `<!-- figures: slow`: runs as a slow block does)
  $ build/tools/cclmesh/cclmesh run --system galaxy --op all_to_all ... --links 1 --no-data
  1491.89
  $ build/tools/cclmesh/cclmesh run --system galaxy --op all_to_all ... --links 4 --no-data
  429.95
  -->
Each `$ ` line is a command (run as an example's is) and each non-blank line under it one figure, taken
literally (it may hold spaces: `6.49 GB/s`). Each figure must occur both in its command's output and in
the paragraph after the comment (its lines up to the next blank line, fence or HTML comment, such as
the next marker), with runs of white space
counted as one space and a figure's leading or trailing digit not part of a longer number (429.95 is not
found in 1429.95 or 429.951): so neither the prose nor the model can move alone. Figures the paragraph
derives (a ratio of two runs, a rounded figure) are not checked: quote the printed figure beside them.
A comment line that starts like a marker (`<!-- figures -->`, `<!-- figures: fast`) is refused, not
skipped: it would check nothing; so is a marker whose `-->` is not on a line of its own.

Figures in a table of commands (session 45): `<!-- figures table -->` (or `<!-- figures table: slow -->`),
alone on the line before a markdown table (blank lines allowed between), makes every row of the table
a figures check of its own. The header names the program in one column, as `` `PROGRAM ARGS ...` `` (for
example `` Command (`build/tools/cclmesh/cclmesh run ...`) ``); each row's cell in that column holds the
rest of its command in backticks, and the row's last cell its figures: every number in it (digits with an
optional fraction) must occur in that command's output, so the last cell holds figures only (a note
about a row goes in another column). A row without a command or without a figure is refused, so is a
table whose header names no program.

Usage:
  scripts/check_doc_examples.py [--cclmesh build/tools/cclmesh/cclmesh] [--build-dir DIR]
      [--examples fast|slow|all] [--timeout 600] [--not-built build/examples/] [--list] FILE.md ...

Prints one line per example (ok / DIFFERS with a unified diff / FAILED to run / skipped with its
reason) and a count. Exits 1 when any example differs or failed to run, else 0.
"""
import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

PROGRAMS = ("build/tools/cclmesh/cclmesh", "build/examples/")
ANY_LINES = "..."
ANY_TEXT = "<...>"
FENCE = re.compile(r"^(```|~~~)")
MARKER = re.compile(r"^<!--\s*example:\s*(.*?)\s*-->\s*$")
NOT_RUN = re.compile(r"^not run \((.+)\)$")
FIGURES_OPEN = re.compile(r"^<!--\s*figures(:\s*slow)?\s*$")
FIGURES_TABLE = re.compile(r"^<!--\s*figures table(:\s*slow)?\s*-->$")
# A table header cell naming the program of its column's commands: `PROGRAM ARGS ...`.
TABLE_PROGRAM = re.compile(r"`((?:" + "|".join(re.escape(p) for p in PROGRAMS) + r")[^`]*?)\s*\.\.\.`")
TABLE_FIGURE = re.compile(r"[0-9]+(?:\.[0-9]+)?")
# What a writer may have meant as a figures marker: refused unless it is one (FIGURES_OPEN).
FIGURES_LIKE = re.compile(r"^<!--\s*figures\b", re.IGNORECASE)
COMMENT_OPEN = "<!--"


class Example:
    """One command of a block and the output shown under it."""

    def __init__(self, path, line, command, shown, slow):
        self.path, self.line, self.command, self.shown, self.slow = path, line, command, shown, slow

    def where(self):
        return f"{self.path}:{self.line}"


class Figures:
    """A figures marker: its commands, each with the figures its output must hold, and the paragraph
    after the marker, which must hold them all too."""

    def __init__(self, path, line, commands, paragraph, slow):
        self.path, self.line, self.commands, self.paragraph, self.slow = path, line, commands, paragraph, slow
        self.command = commands[0][1] + (f" (+{len(commands) - 1} more)" if len(commands) > 1 else "")

    def where(self):
        return f"{self.path}:{self.line}"


class Skipped:
    def __init__(self, path, line, reason):
        self.path, self.line, self.reason = path, line, reason


class BadMarker(Exception):
    pass


def is_example_block(lines):
    return any(line.startswith("$ " + program) for line in lines for program in PROGRAMS)


def parse_marker(text, path, line):
    """Returns ("skip", reason), ("slow", None), or raises on a marker that is neither."""
    if text == "slow":
        return "slow", None
    match = NOT_RUN.match(text)
    if match:
        return "skip", match.group(1)
    raise BadMarker(f"{path}:{line}: marker '<!-- example: {text} -->': expected 'not run (WHY)' or 'slow'")


def marker_before(lines, fence_index, path):
    """The marker on the last non-blank line before the fence at lines[fence_index], or (None, None)."""
    i = fence_index - 1
    while i >= 0 and lines[i].strip() == "":
        i -= 1
    if i < 0:
        return None, None
    match = MARKER.match(lines[i].strip())
    if not match:
        return None, None
    return parse_marker(match.group(1), path, i + 1)


def split_commands(path, first_line, block):
    """[(line number, command, shown output lines)] for a block's lines (first_line is block[0]'s)."""
    commands = []
    for offset, line in enumerate(block):
        if line.startswith("$ "):
            commands.append((first_line + offset, line[2:], []))
        elif commands:
            commands[-1][2].append(line)
        elif line.strip():
            raise BadMarker(f"{path}:{first_line + offset}: output before the block's first '$ ' command")
    return commands


def parse_figures(path, lines, start):
    """(Figures, index of the line after its paragraph) for the figures marker opening at lines[start]."""
    slow = FIGURES_OPEN.match(lines[start].strip()).group(1) is not None
    end = start + 1
    while end < len(lines) and lines[end].strip() != "-->":
        end += 1
    if end == len(lines):
        raise BadMarker(f"{path}:{start + 1}: figures marker without a closing '-->' line")
    # A comment opened or closed inside: this marker was closed on a figure's line (or not at all)
    # and ran on to a later one's '-->'.
    for k in range(start + 1, end):
        if COMMENT_OPEN in lines[k] or "-->" in lines[k]:
            raise BadMarker(f"{path}:{k + 1}: '{lines[k].strip()}' inside the figures marker opened on line "
                            f"{start + 1}: expected its '-->' on a line of its own")
    commands = split_commands(path, start + 2, lines[start + 1:end])
    if not commands:
        raise BadMarker(f"{path}:{start + 1}: figures marker without a '$ ' command")
    commands = [(line, command, [f.strip() for f in shown if f.strip()]) for line, command, shown in commands]
    for line, command, figures in commands:
        if not figures:
            raise BadMarker(f"{path}:{line}: figures marker command without a figure under it: $ {command}")
    first = end + 1
    while first < len(lines) and lines[first].strip() == "":
        first += 1
    after = first
    # A comment ends it too: the next marker's figures are not this paragraph's prose, and that
    # marker must be parsed, not taken in.
    while (after < len(lines) and lines[after].strip() != "" and not FENCE.match(lines[after])
           and not lines[after].lstrip().startswith(COMMENT_OPEN)):
        after += 1
    if after == first:
        raise BadMarker(f"{path}:{start + 1}: figures marker not followed by a paragraph")
    return Figures(path, start + 1, commands, lines[first:after], slow), after


def table_cells(line):
    """The cells of one markdown table row (`| a | b |`), stripped."""
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def parse_figures_table(path, lines, start):
    """([Figures], index of the line after the table) for the figures table marker at lines[start]:
    one Figures per row, its paragraph the row itself."""
    slow = FIGURES_TABLE.match(lines[start].strip()).group(1) is not None
    header = start + 1
    while header < len(lines) and lines[header].strip() == "":
        header += 1
    if header + 1 >= len(lines) or not lines[header].lstrip().startswith("|") or \
            not re.match(r"^\|?[\s:|-]+\|?$", lines[header + 1].strip()):
        raise BadMarker(f"{path}:{start + 1}: figures table marker not followed by a markdown table")
    titles = table_cells(lines[header])
    programs = [(k, TABLE_PROGRAM.search(title)) for k, title in enumerate(titles)]
    programs = [(k, match.group(1)) for k, match in programs if match]
    if len(programs) != 1:
        raise BadMarker(f"{path}:{header + 1}: the table after the figures table marker must name its program in "
                        "one header cell as `PROGRAM ARGS ...` (e.g. `build/tools/cclmesh/cclmesh run ...`); "
                        f"found {len(programs)}")
    column, program = programs[0]
    rows = []
    end = header + 2
    while end < len(lines) and lines[end].lstrip().startswith("|"):
        cells = table_cells(lines[end])
        command = cells[column] if column < len(cells) else ""
        args = re.fullmatch(r"`([^`]+)`", command)
        if not args:
            raise BadMarker(f"{path}:{end + 1}: row without a command in backticks in column {column + 1} "
                            f"('{command}')")
        figures = TABLE_FIGURE.findall(cells[-1])
        if column == len(cells) - 1 or not figures:
            raise BadMarker(f"{path}:{end + 1}: row without a figure in its last cell ('{cells[-1]}')")
        rows.append(Figures(path, end + 1, [(end + 1, f"{program} {args.group(1)}", figures)], [lines[end]], slow))
        end += 1
    if not rows:
        raise BadMarker(f"{path}:{start + 1}: the table after the figures table marker has no rows")
    return rows, end


def parse(path, text):
    """([Example or Figures], [Skipped]) for one markdown file's text."""
    examples, skipped = [], []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if FIGURES_TABLE.match(lines[i].strip()):
            rows, i = parse_figures_table(path, lines, i)
            examples.extend(rows)
            continue
        if FIGURES_OPEN.match(lines[i].strip()):
            figures, i = parse_figures(path, lines, i)
            examples.append(figures)
            continue
        if FIGURES_LIKE.match(lines[i].strip()):
            raise BadMarker(f"{path}:{i + 1}: marker '{lines[i].strip()}': expected '<!-- figures' or "
                            "'<!-- figures: slow' alone on its line, its commands and figures on the lines after it "
                            "and '-->' on a line of its own, or '<!-- figures table -->' / "
                            "'<!-- figures table: slow -->' before a table of commands")
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and not lines[end].startswith(opening.group(1)):
            end += 1
        block = lines[i + 1:end]
        if is_example_block(block):
            kind, reason = marker_before(lines, i, path)
            if kind == "skip":
                skipped.append(Skipped(path, i + 2, reason))
            else:
                for line, command, shown in split_commands(path, i + 2, block):
                    examples.append(Example(path, line, command, shown, kind == "slow"))
        i = end + 1
    return examples, skipped


def line_matches(shown, actual):
    if ANY_TEXT not in shown:
        return shown == actual
    pieces = shown.split(ANY_TEXT)
    if not actual.startswith(pieces[0]):
        return False
    at = len(pieces[0])
    for piece in pieces[1:-1]:
        found = actual.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return actual.endswith(pieces[-1]) and len(actual) - len(pieces[-1]) >= at


def segment_at(segment, actual, at):
    return at + len(segment) <= len(actual) and all(
        line_matches(s, a) for s, a in zip(segment, actual[at:at + len(segment)]))


def output_matches(shown, actual):
    """True when the shown lines (with `...` lines and `<...>` tokens) describe the actual lines."""
    segments = [[]]
    for line in shown:
        if line == ANY_LINES:
            segments.append([])
        else:
            segments[-1].append(line)
    if len(segments) == 1:
        return len(shown) == len(actual) and segment_at(shown, actual, 0)
    first, middle, last = segments[0], segments[1:-1], segments[-1]
    if not segment_at(first, actual, 0):
        return False
    at = len(first)
    # Each middle segment at its earliest place leaves the most room for the ones after it.
    for segment in middle:
        while at <= len(actual) and not segment_at(segment, actual, at):
            at += 1
        if at > len(actual):
            return False
        at += len(segment)
    last_at = len(actual) - len(last)
    return last_at >= at and segment_at(last, actual, last_at)


def aligned_for_diff(shown, actual):
    """The shown lines with each `...` replaced by the actual lines it seems to stand for and each line
    with `<...>` replaced by the actual line it matches: a diff against the actual output then shows
    only what differs (a heuristic for reading; output_matches decides)."""
    out, at = [], 0
    for k, line in enumerate(shown):
        if line == ANY_LINES:
            stop = len(actual) if k + 1 == len(shown) else elided_until(shown[k + 1:], actual, at)
            out.extend(actual[at:stop])
            at = stop
        elif at < len(actual) and line_matches(line, actual[at]):
            out.append(actual[at])
            at += 1
        else:
            out.append(line)
            later = next((j for j in range(at, len(actual)) if line_matches(line, actual[j])), None)
            at = at + 1 if later is None else later + 1
    return out


def elided_until(after, actual, at):
    """Where the lines a `...` stands for end: before the actual line that the shown lines after it
    (up to the next `...`) match, counting back over those that differ; else before the actual line
    most like the first of them (a changed figure), else nowhere."""
    segment = after[:after.index(ANY_LINES)] if ANY_LINES in after else after
    for m, later in enumerate(segment):
        found = next((j for j in range(at, len(actual)) if line_matches(later, actual[j])), None)
        if found is not None:
            return max(at, found - m)
    if not segment:
        return at
    ratios = [(difflib.SequenceMatcher(None, segment[0], actual[j]).ratio(), -j) for j in range(at, len(actual))]
    best = max(ratios, default=(0, 0))
    return -best[1] if best[0] >= 0.6 else at


def rewrite(command, cclmesh, build_dir):
    """The command with its program path made absolute, or None when it does not run a known program."""
    if command.startswith(PROGRAMS[0] + " ") or command == PROGRAMS[0]:
        return shlex.quote(os.path.abspath(cclmesh)) + command[len(PROGRAMS[0]):]
    if command.startswith(PROGRAMS[1]):
        return shlex.quote(os.path.join(os.path.abspath(build_dir), "examples", "")) + command[len(PROGRAMS[1]):]
    return None


def work_dir_with_checkout(tmp, repo):
    for name in sorted(os.listdir(repo)):
        if not name.startswith(".") and name != "build":
            os.symlink(os.path.join(repo, name), os.path.join(tmp, name))


def execute(shown_command, opts):
    """(proc or None, failure detail, wall seconds) for one command as the doc shows it."""
    command = rewrite(shown_command, opts.cclmesh, opts.build_dir)
    if command is None:
        return None, f"not a command this checker runs (expected $ {' or $ '.join(PROGRAMS)}...)", 0.0
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="doc_example_") as tmp:
        work_dir_with_checkout(tmp, opts.repo)
        try:
            proc = subprocess.run(["/bin/sh", "-c", command], cwd=tmp, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=opts.timeout)
        except subprocess.TimeoutExpired:
            return None, f"no exit within {opts.timeout:g} s", time.monotonic() - start
    wall = time.monotonic() - start
    if proc.returncode < 0 or proc.returncode in (126, 127):
        return None, f"exit {proc.returncode}\n{proc.stdout.decode(errors='replace')[-2000:]}", wall
    return proc, "", wall


def contains_figure(text, figure):
    """True when the figure occurs in the text, white space runs counted as one space, and a leading or
    trailing digit of the figure not continuing a longer number in the text."""
    pattern = re.escape(" ".join(figure.split())).replace("\\ ", " ")
    if figure[:1].isdigit():
        pattern = r"(?<![0-9])(?<![0-9]\.)" + pattern
    if figure[-1:].isdigit():
        pattern += r"(?![0-9]|\.[0-9])"
    return re.search(pattern, " ".join(text.split())) is not None


def run_figures(figures, opts):
    """(verdict, detail, wall seconds) for a figures marker: every figure in its command's output and
    in the paragraph."""
    paragraph = "\n".join(figures.paragraph)
    missing = [f"{figures.path}:{line}: '{figure}' is not in the paragraph after the marker"
               for line, _, shown in figures.commands for figure in shown if not contains_figure(paragraph, figure)]
    wall = 0.0
    for line, command, shown in figures.commands:
        proc, failure, seconds = execute(command, opts)
        wall += seconds
        if proc is None:
            return "failed", f"{figures.path}:{line}: $ {command}\n{failure}", wall
        output = proc.stdout.decode(errors="replace")
        absent = [figure for figure in shown if not contains_figure(output, figure)]
        if absent:
            missing.append(f"{figures.path}:{line}: {', '.join(repr(f) for f in absent)} not in the output of "
                           f"$ {command} (exit {proc.returncode}):\n{output.rstrip()[-3000:]}")
    return ("differs", "\n".join(missing), wall) if missing else ("ok", "", wall)


def run(example, opts):
    """(verdict, detail, wall seconds): verdict is "ok", "differs" or "failed"."""
    if isinstance(example, Figures):
        return run_figures(example, opts)
    proc, failure, wall = execute(example.command, opts)
    if proc is None:
        return "failed", failure, wall
    actual = [line.rstrip() for line in proc.stdout.decode(errors="replace").split("\n")]
    while actual and actual[-1] == "":
        actual.pop()
    shown = [line.rstrip() for line in example.shown]
    while shown and shown[-1] == "":
        shown.pop()
    if output_matches(shown, actual):
        return "ok", "", wall
    diff = difflib.unified_diff(aligned_for_diff(shown, actual), actual,
                                f"{example.where()} (shown)", f"printed (exit {proc.returncode})", lineterm="")
    return "differs", "\n".join(diff), wall


def wanted(example, which):
    return which == "all" or (which == "slow") == example.slow


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", metavar="FILE.md")
    parser.add_argument("--cclmesh", default="build/tools/cclmesh/cclmesh")
    parser.add_argument("--build-dir", help="where build/examples/ are (default: three levels above --cclmesh)")
    parser.add_argument("--repo", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        help="the checkout whose top-level entries a command sees (default: this script's)")
    parser.add_argument("--examples", choices=["fast", "slow", "all"], default="all",
                        help="fast: blocks without the slow marker; slow: only those (default all)")
    parser.add_argument("--timeout", type=float, default=600, help="wall seconds per command")
    parser.add_argument("--list", action="store_true", help="list the examples and skipped blocks, run nothing")
    parser.add_argument("--not-built", action="append", default=[], metavar="PREFIX",
                        help="list commands of this program prefix (e.g. build/examples/) as skipped: not built")
    opts = parser.parse_args()
    if opts.build_dir is None:
        opts.build_dir = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(opts.cclmesh))))

    examples, skipped = [], []
    try:
        for path in opts.files:
            with open(path, encoding="utf-8") as f:
                found, skips = parse(path, f.read())
            for example in found:
                if not wanted(example, opts.examples):
                    continue
                if any(example.command.startswith(prefix) for prefix in opts.not_built):
                    skipped.append(Skipped(example.path, example.line, f"{example.command.split()[0]} is not built"))
                else:
                    examples.append(example)
            skipped += skips
    except BadMarker as error:
        print(f"check_doc_examples: {error}")
        return 2

    counts = {"ok": 0, "differs": 0, "failed": 0}
    for example in examples:
        if opts.list:
            kind = "figures: " if isinstance(example, Figures) else ""
            print(f"{example.where()}{' [slow]' if example.slow else ''}: {kind}$ {example.command}")
            continue
        verdict, detail, wall = run(example, opts)
        counts[verdict] += 1
        label = {"ok": "ok", "differs": "DIFFERS", "failed": "FAILED to run"}[verdict]
        kind = "figures: " if isinstance(example, Figures) else ""
        print(f"{label:<14} {example.where()} ({wall:.1f} s): {kind}$ {example.command}", flush=True)
        if detail:
            print(detail + "\n", flush=True)
    for skip in skipped:
        print(f"{'skipped':<14} {skip.path}:{skip.line}: {skip.reason}")
    if opts.list:
        return 0
    print(f"{len(examples)} example(s): {counts['ok']} ok, {counts['differs']} differ, "
          f"{counts['failed']} failed to run; {len(skipped)} skipped")
    return 1 if counts["differs"] or counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
