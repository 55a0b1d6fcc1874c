#!/usr/bin/env python3
"""Relations the simulated time must obey between two runs of `cclmesh`, checked on random
configurations (session 42).

Exact relations (same simulated time to the picosecond, as --json prints it to the nanosecond, and
the same event count where both runs simulated the same chips):
  E1 with data vs --no-data (docs/sim_model.md promises identical event flows)
  E2 --seed 1 vs --seed 7, with data
  E3 --trace FILE and --report FILE given or not, --json or the text row
  E4 along --cluster-axis, --no-data: default (identical groups mirrored) vs --simulate-every-group:
     every --json field but sim_events, groups_mirrored, wall_s and settings
  E5 a sweep's row vs `run` at that size (every field but wall_s), and sweep -j 2 vs -j 1
Inequalities (a violation prints both commands and the ratio slower / faster):
  I1 --hardware ideal never slower than modelled
  I2 --link-rate higher never slower; --link-latency higher never faster
  I3 --fault link-slow:A-B:F never faster than without
  I4 time non-decreasing in size (x2 steps, 4 KiB .. 64 MiB), per op, ring and line
  I5 --links 2 not slower than --links 1 at >= 1 MiB
  I6 --erisc-unreserved-kib larger not slower at >= 1 MiB
  I7 a ring of the same chips rotated (--chips): the spread of times (reported, never a violation)

The relations are a pure function of --seed: relation i of seed S is the same on every machine.
E1/E2 draw their configurations from scripts/config_fuzz.py's generator (without its faults);
the others from a generator of clean timing-only configurations on n300, t3k, galaxy, mesh:/torus:
specs and @bh variants. A pair where both runs are refused with the same message is skipped;
where one is refused and the other is not, an exact relation fails and an inequality is skipped.

Usage:
  scripts/model_relations.py [--cclmesh build/tools/cclmesh/cclmesh] [--seed 1] [--count 100]
      [--first 0] [-j 2] [--relations E1,I2,...] [--strict] [--tolerance 0] [--print-only]

Prints one line per violation as it completes, then a table per relation (pairs checked, held,
skipped, violated, worst ratio). Exits 1 on a violated exact relation, or with --strict on an
inequality violated by more than --tolerance (a fraction: 0.01 is 1%); also on an exact relation
drawn whose every pair was skipped (with --strict, an inequality's), as it compared nothing.
"""
import argparse
import json
import os
import random
import re
import resource
import shlex
import subprocess
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # importing a script must not leave __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import config_fuzz  # noqa: E402

EXACT = ["E1", "E2", "E3", "E4", "E5"]
INEQUALITIES = ["I1", "I2", "I3", "I4", "I5", "I6", "I7"]
RELATIONS = EXACT + INEQUALITIES
# How often each relation is drawn: I4 runs a whole sweep per pair, so it is drawn less.
WEIGHTS = {"E1": 4, "E2": 2, "E3": 2, "E4": 2, "E5": 1, "I1": 2, "I2": 3, "I3": 2, "I4": 1, "I5": 2, "I6": 2,
           "I7": 2}

OPS = ["all_gather", "reduce_scatter", "all_reduce", "broadcast", "reduce", "all_to_all", "send_recv"]
LEGACY_OPS = {"all_gather", "reduce_scatter", "all_reduce"}
# --json fields that describe the run, not the simulated mesh's behaviour.
HOST_FIELDS = {"wall_s"}
MIRROR_FIELDS = {"sim_events", "groups_mirrored", "wall_s", "settings"}
# A run with data holds its tensors in host memory: cap what one may take (the shared machine has little).
# --address-space-gb changes it; 0 sets none (a sanitizer build's shadow memory needs more than any cap).
address_space_limit_bytes = 8_000_000_000

# (--system value, rows, cols, whether each axis closes into rings, links usable per hop)
SYSTEMS = [
    ("n300", 1, 2, False, 1),
    ("t3k", 2, 4, False, 1),
    ("galaxy", 4, 8, False, 4),
    ("mesh:2x4", 2, 4, False, 4),
    ("mesh:4x4/2", 4, 4, False, 2),
    ("torus:4x4", 4, 4, True, 4),
    ("torus:2x8/2", 2, 8, True, 2),
    ("mesh:2x4@bh", 2, 4, False, 4),
    ("torus:4x4@bh", 4, 4, True, 4),
    ("ring:6@bh", 1, 6, True, 4),
    ("ring:8", 1, 8, True, 4),
]
# Rings of chips to rotate (I7): (system, chips in ring order).
RINGS = [
    ("galaxy", [0, 1, 9, 8]),
    ("galaxy", [2, 3, 11, 10]),
    ("galaxy", [0, 1, 2, 3, 11, 10, 9, 8]),
    ("galaxy", [8, 9, 10, 18, 17, 16]),
    ("torus:4x4", [0, 1, 2, 3]),
    ("torus:4x4", [1, 5, 9, 13]),
    ("torus:4x4", [0, 1, 5, 4]),
    ("torus:4x4@bh", [0, 1, 2, 3]),
    ("t3k", [0, 1, 3, 2]),
    ("t3k", [4, 0, 2, 6, 7, 3, 1, 5]),
]


def pick_system(rng, want_links=False):
    """argv choosing a system and a group on it, and the links usable per hop."""
    pool = [s for s in SYSTEMS if not want_links or s[4] >= 2]
    name, rows, cols, _, links = rng.choice(pool)
    argv = ["--system", name]
    if rows > 1 and cols > 1 and (name == "galaxy" or rng.random() < 0.5):
        argv += ["--cluster-axis", str(rng.choice([0, 1]))]
    return argv, links


def pick_op(rng, argv):
    """argv choosing an op, its mode and topology, appended to `argv`."""
    op = rng.choice(OPS)
    argv = ["--op", op] + argv
    if op in LEGACY_OPS and rng.random() < 0.25:
        argv += ["--mode", "legacy"]
    if rng.random() < 0.25:
        argv += ["--topology", "line"]
    return argv


def clean_config(rng, min_size_log2=12, max_size_log2=20, want_links=False):
    """A timing-only configuration: op, system, group, size (a power of two). Returns (argv, links)."""
    system_argv, links = pick_system(rng, want_links)
    argv = pick_op(rng, system_argv)
    argv += ["--size", str(1 << rng.randint(min_size_log2, max_size_log2)), "--no-data"]
    return argv, links


def fuzz_config(seed, index):
    """config_fuzz's configuration `index` of `seed`, with data, without faults or --seed."""
    argv, _ = config_fuzz.generate(seed, index)
    groups = [g for g in config_fuzz.option_groups(argv) if g[0] not in ("--fault", "--seed")]
    return [t for g in groups for t in g]


def without(argv, option):
    groups = [g for g in config_fuzz.option_groups(argv) if g[0] != option]
    return [t for g in groups for t in g]


def option_value(argv, option):
    return argv[argv.index(option) + 1] if option in argv else None


def group_chips(argv):
    """Two neighbouring chips of the run's group, for a link-slow fault on a link it uses."""
    chips = option_value(argv, "--chips")
    if chips:
        first, second = chips.split(",")[:2]
        return int(first), int(second)
    system = option_value(argv, "--system")
    cols = next((s[2] for s in SYSTEMS if s[0] == system), 2)
    if option_value(argv, "--cluster-axis") == "0":
        return 0, cols  # chip 0 and the chip below it: the first column's first hop
    return 0, 1


def make_pair(seed, index, only):
    """Relation `index` of `seed`: (relation, list of commands, check name)."""
    rng = random.Random(f"relations:{seed}:{index}")
    names = [r for r in RELATIONS if not only or r in only]
    relation = rng.choices(names, weights=[WEIGHTS[r] for r in names])[0]
    if relation == "E1":
        base = fuzz_config(seed, index)
        base = without(base, "--simulate-every-group")
        return relation, [["run"] + base, ["run"] + base + ["--no-data"]]
    if relation == "E2":
        base = fuzz_config(seed, index)
        return relation, [["run"] + base + ["--seed", "1"], ["run"] + base + ["--seed", "7"]]
    if relation == "E3":
        base, _ = clean_config(rng)
        return relation, [["run"] + base, ["run"] + base + ["--trace", "{tmp}/trace.json", "--report",
                                                            "{tmp}/report.html"], ["run", "--text"] + base]
    if relation == "E4":
        while True:
            base, _ = clean_config(rng, max_size_log2=21)
            if "--cluster-axis" in base:
                break
        return relation, [["run"] + base, ["run"] + base + ["--simulate-every-group"]]
    if relation == "E5":
        base, _ = clean_config(rng)
        base = without(base, "--size")
        lo = 1 << rng.randint(12, 18)
        sweep = ["sweep"] + base + ["-b", str(lo), "-e", str(lo * 4)]
        runs = [["run"] + base + ["--size", str(lo << k)] for k in range(3)]
        return relation, [sweep, sweep + ["-j", "2"]] + runs
    if relation == "I1":
        base, _ = clean_config(rng)
        return relation, [["run"] + base + ["--hardware", "ideal"], ["run"] + base]
    if relation == "I2":
        base, _ = clean_config(rng)
        bh = "@bh" in option_value(base, "--system")
        if rng.random() < 0.5:
            rates = [12.5, 25.0, 50.0, 100.0] if not bh else [25.0, 50.0, 100.0]
            low, high = sorted(rng.sample(rates, 2))
            # Faster links first: the first command must be the faster (or equal) one.
            return relation, [["run"] + base + ["--link-rate", f"{high}GB/s"],
                              ["run"] + base + ["--link-rate", f"{low}GB/s"]]
        low, high = sorted(rng.sample([200, 435, 600, 1000, 2000, 5000], 2))
        return relation, [["run"] + base + ["--link-latency", f"{low}ns"],
                          ["run"] + base + ["--link-latency", f"{high}ns"]]
    if relation == "I3":
        base, _ = clean_config(rng)
        a, b = group_chips(base)
        factor = rng.choice(["0.5", "0.25", "0.9", "0.1"])
        return relation, [["run"] + base, ["run"] + base + ["--fault", f"link-slow:{a}-{b}:{factor}"]]
    if relation == "I4":
        base, _ = clean_config(rng)
        base = without(without(base, "--size"), "--topology")
        if rng.random() < 0.5:
            base += ["--topology", "line"]
        return relation, [["sweep"] + base + ["-b", "4K", "-e", "64M"]]
    if relation == "I5":
        base, _ = clean_config(rng, 20, 23, want_links=True)
        return relation, [["run"] + base + ["--links", "2"], ["run"] + base]
    if relation == "I6":
        base, _ = clean_config(rng, 20, 23)
        low, high = sorted(rng.sample([106, 111, 120, 133, 150], 2))
        return relation, [["run"] + base + ["--erisc-unreserved-kib", str(high)],
                          ["run"] + base + ["--erisc-unreserved-kib", str(low)]]
    # I7
    system, ring = rng.choice(RINGS)
    argv = pick_op(rng, ["--system", system])
    argv = without(argv, "--topology")
    argv += ["--size", str(1 << rng.randint(12, 21)), "--no-data"]
    commands = []
    for shift in range(len(ring)):
        rotated = ring[shift:] + ring[:shift]
        commands.append(["run"] + argv + ["--chips", ",".join(str(c) for c in rotated)])
    return relation, commands


class Result:
    """One command's outcome: `rows` (the --json rows) or `refusal` (its one-line message)."""

    def __init__(self, code, rows=None, refusal=None, text_time=None, error=None):
        self.code, self.rows, self.refusal, self.text_time, self.error = code, rows, refusal, text_time, error


def limit_memory():
    if address_space_limit_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (address_space_limit_bytes, address_space_limit_bytes))


def execute(cclmesh, command, timeout):
    """Runs one command: --json - unless it is the text form ("--text"), whose row's time it reads."""
    text = "--text" in command
    command = [t for t in command if t != "--text"]
    with tempfile.TemporaryDirectory(prefix="model_relations_") as tmp:
        argv = [cclmesh] + [t.replace("{tmp}", tmp) for t in command] + ([] if text else ["--json", "-"])
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, preexec_fn=limit_memory)
        except subprocess.TimeoutExpired:
            return Result(None, error="timeout")
    if proc.returncode == 2:
        lines = [l for l in proc.stderr.splitlines() if l.strip()]
        return Result(2, refusal=config_fuzz.fold_numbers(lines[-1]) if lines else "exit 2")
    if proc.returncode != 0:
        return Result(proc.returncode, error=(proc.stderr.strip().splitlines() or [""])[-1][:200])
    if text:
        rows = [l.split() for l in proc.stdout.splitlines() if l.strip() and not l.startswith("#")]
        return Result(0, text_time=float(rows[0][4]) if rows else None)
    data = json.loads(proc.stdout)
    rows = data if isinstance(data, list) else [data]
    if any(r.get("outcome") != "completed" for r in rows):
        return Result(proc.returncode, error="outcome " + ",".join(str(r.get("outcome")) for r in rows))
    return Result(0, rows=rows)


def differing_fields(a, b, ignored):
    keys = (set(a) | set(b)) - ignored
    return sorted(k for k in keys if a.get(k) != b.get(k))


def check_sweep_against_runs(results):
    """E5: sweep -j 1 and -j 2 give the same rows; each size's row is `run`'s at that size, and a size
    the sweep skips is one `run` refuses."""
    sweeps, runs = results[:2], results[2:]
    if any(r.refusal for r in sweeps):
        if all(r.refusal for r in results):
            return "skipped", sweeps[0].refusal, None
        if not all(r.refusal for r in sweeps) or sweeps[0].refusal != sweeps[1].refusal:
            return "violated", "sweep -j 1 and -j 2 refused differently", None
    one, two = sweeps[0].rows or [], sweeps[1].rows or []
    problems = []
    if len(one) != len(two) or any(differing_fields(a, b, HOST_FIELDS) for a, b in zip(one, two)):
        problems.append("sweep -j 2 differs from -j 1")
    by_size = {r["size_bytes"]: r for r in one}
    for run in runs:
        if run.refusal:
            continue
        row = by_size.pop(run.rows[0]["size_bytes"], None)
        if row is None:
            problems.append(f"no sweep row at {run.rows[0]['size_bytes']} B, which run completes")
            continue
        diff = differing_fields(row, run.rows[0], HOST_FIELDS)
        if diff:
            problems.append(f"{run.rows[0]['size_bytes']} B: " + ", ".join(
                f"{f} {row.get(f)} vs {run.rows[0].get(f)}" for f in diff))
    if by_size:
        problems.append(f"sweep rows at {sorted(by_size)} B, which run refuses")
    if not one and not problems:
        return "skipped", "no size runs", None
    return ("violated" if problems else "held"), "; ".join(problems), None


def check(relation, results):
    """(verdict, detail, ratio) where verdict is held, skipped, violated or failed (a run broke)."""
    broken = [r for r in results if r.error]
    if broken:
        return "failed", f"exit {broken[0].code}: {broken[0].error}", None
    # A row without the simulated time compares nothing (review42: E4 and E5 compare the fields
    # present, so rows without time_us on both sides held).
    if any("time_us" not in row for r in results for row in (r.rows or [])):
        return "failed", "a --json row without time_us", None
    if relation == "E5":
        return check_sweep_against_runs(results)
    refused = [r for r in results if r.refusal]
    if refused:
        if relation in EXACT and len(refused) != len(results):
            return "violated", f"only some refused: {refused[0].refusal}", None
        if relation in EXACT and len({r.refusal for r in refused}) > 1:
            return "violated", "refused differently: " + " | ".join(r.refusal for r in refused), None
        return "skipped", refused[0].refusal, None
    if any(r.rows == [] for r in results):
        return "skipped", "a sweep with no rows", None
    first = results[0].rows[0] if results[0].rows else None
    if relation in ("E1", "E2"):
        a, b = results[0].rows[0], results[1].rows[0]
        fields = ["time_us", "dispatch_us", "launch_us"] + (
            ["sim_events"] if a["groups_mirrored"] == b["groups_mirrored"] else [])
        diff = [f for f in fields if a[f] != b[f]]
        return ("violated" if diff else "held"), ", ".join(f"{f} {a[f]} vs {b[f]}" for f in diff), None
    if relation == "E3":
        a, b, text = first, results[1].rows[0], results[2].text_time
        fields = ["time_us"] + (["sim_events"] if a["groups_mirrored"] == b["groups_mirrored"] else [])
        diff = [f"{f} {a[f]} vs {b[f]} with --trace/--report" for f in fields if a[f] != b[f]]
        if text is None or abs(text - a["time_us"]) > 0.005 + 1e-9:
            diff.append(f"text row time {text} vs --json {a['time_us']}")
        return ("violated" if diff else "held"), ", ".join(diff), None
    if relation == "E4":
        diff = differing_fields(first, results[1].rows[0], MIRROR_FIELDS)
        detail = ", ".join(f"{f} {first.get(f)} vs {results[1].rows[0].get(f)}" for f in diff)
        return ("violated" if diff else "held"), detail, None
    if relation == "I4":
        rows = sorted(results[0].rows, key=lambda r: r["size_bytes"])
        worst, detail = 1.0, ""
        for small, large in zip(rows, rows[1:]):
            ratio = small["time_us"] / large["time_us"]
            if ratio > worst:
                worst = ratio
                detail = (f"{small['size_bytes']} B {small['time_us']} us > {large['size_bytes']} B "
                          f"{large['time_us']} us")
        return ("violated" if worst > 1.0 else "held"), detail, worst
    if relation == "I7":
        times = [r.rows[0]["time_us"] for r in results]
        spread = max(times) / min(times)
        return "held", "times " + " ".join(f"{t:g}" for t in times), spread
    # I1, I2, I3, I5, I6: the first command must not be slower than the second.
    fast, slow = first["time_us"], results[1].rows[0]["time_us"]
    ratio = fast / slow
    detail = f"{fast} us vs {slow} us"
    return ("violated" if ratio > 1.0 else "held"), detail, ratio


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cclmesh", default="build/tools/cclmesh/cclmesh")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--first", type=int, default=0, help="index of the first relation")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=120, help="wall seconds per command")
    parser.add_argument("--relations", help="comma-separated relations to draw from (default: all)")
    parser.add_argument("--strict", action="store_true", help="inequality violations fail too")
    parser.add_argument("--tolerance", type=float, default=0.0,
                        help="with --strict: an inequality fails only when violated by more than this fraction")
    parser.add_argument("--log", help="write every pair's outcome to FILE, one JSON object a line")
    parser.add_argument("--print-only", action="store_true", help="print the commands, run nothing")
    parser.add_argument("--address-space-gb", type=float, default=8,
                        help="each run's address-space cap in GB (0: none, for sanitizer builds)")
    opts = parser.parse_args()
    global address_space_limit_bytes
    address_space_limit_bytes = int(opts.address_space_gb * 1e9)
    only = set(opts.relations.split(",")) if opts.relations else None
    if only and not only <= set(RELATIONS):
        parser.error(f"--relations: unknown {sorted(only - set(RELATIONS))}; expected some of {RELATIONS}")

    pairs = [(i,) + make_pair(opts.seed, i, only) for i in range(opts.first, opts.first + opts.count)]
    if opts.print_only:
        for i, relation, commands in pairs:
            for command in commands:
                print(i, relation, "cclmesh", shlex.join(command))
        return 0

    def work(pair):
        i, relation, commands = pair
        results = [execute(opts.cclmesh, c, opts.timeout) for c in commands]
        return i, relation, commands, check(relation, results)

    tally = defaultdict(lambda: defaultdict(int))
    worst = {}
    failing = []
    log = open(opts.log, "w") if opts.log else None
    with ThreadPoolExecutor(max_workers=max(1, min(opts.jobs, 2))) as pool:
        for i, relation, commands, (verdict, detail, ratio) in pool.map(work, pairs):
            if log:
                log.write(json.dumps({"index": i, "relation": relation, "verdict": verdict, "detail": detail,
                                      "ratio": ratio, "commands": commands}) + "\n")
            tally[relation][verdict] += 1
            if ratio is not None and verdict != "skipped":
                worst[relation] = max(worst.get(relation, 0.0), ratio)
            if verdict in ("violated", "failed"):
                shown = f" ratio {ratio:.4f}" if ratio is not None else ""
                print(f"[{i}] {relation} {verdict}{shown}: {detail}", flush=True)
                for command in commands:
                    print(f"    cclmesh {shlex.join(command)}", flush=True)
                beyond = ratio is None or ratio > 1.0 + opts.tolerance
                if relation in EXACT or verdict == "failed" or (opts.strict and beyond):
                    failing.append(i)

    print(f"\nseed {opts.seed}, relations {opts.first}..{opts.first + opts.count - 1}")
    verdicts = ["held", "skipped", "violated", "failed"]
    print(f"{'relation':<10}" + "".join(f"{v:>10}" for v in verdicts) + f"{'worst ratio':>14}")
    for relation in RELATIONS:
        if relation in tally:
            shown = f"{worst[relation]:.4f}" if relation in worst else "-"
            print(f"{relation:<10}" + "".join(f"{tally[relation][v]:>10}" for v in verdicts) + f"{shown:>14}")
    print("worst ratio: the time of the run that should be faster over the other's, above 1 a violation "
          "(I4: the smaller size's over the larger's; I7: the slowest rotation's over the fastest's, a spread)")
    # A relation whose every pair was skipped compared nothing: an exact one fails (review42: a CLI
    # refusing every command passed), an inequality with --strict.
    vacuous = [r for r in RELATIONS if r in tally and tally[r]["held"] + tally[r]["violated"] == 0 and
               (r in EXACT or opts.strict)]
    for relation in vacuous:
        print(f"{relation}: no pair held or was violated (every one skipped): nothing was compared")
    return 1 if failing or vacuous else 0


if __name__ == "__main__":
    sys.exit(main())
