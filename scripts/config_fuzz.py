#!/usr/bin/env python3
"""Random collective configurations run with real data through `cclmesh run`, to find the
combinations of options that break (session 37).

Every run with data must end in one of two ways:
  success  exit 0 and #wrong 0 (the device result is the host reference's, or within the op's tolerance)
  refused  exit 2 with one line naming the option or field, the value and what was expected
Anything else is a failure: exit 1 or a non-zero #wrong (wrong data), exit 3 without a fault (a hang),
exit 4 or "internal" (a broken invariant), a signal (a crash), a run past --timeout, or a refusal that
is not one clear line. Runs with --fault may also end in exit 3 (a simulated fault is a result).

The configurations are a pure function of the seed: configuration i of seed S is the same on every
machine. They lean toward valid ones (options each op accepts, 1 KiB .. 2 MiB tensors) with a share
of near-boundary ones (odd extents, ROW_MAJOR rows that are not whole 32 B, rows wider than a fabric
payload, an option the op does not take, shard grids that do not divide the tensor).

Usage:
  scripts/config_fuzz.py [--cclmesh build/tools/cclmesh/cclmesh] [--seed 1] [--count 200] [-j 2]
      [--first 0] [--timeout 60] [--minimize] [--refusals] [--print-only]

Prints one line per failing configuration as it completes, then a table of outcome counts per op and
every failing command line (reduced to the fewest options that fail the same way with --minimize).
--refusals lists each distinct refusal message (numbers folded) with one command that gave it.
Exits 1 when any configuration failed, else 0. Run one at a time (-j 1) or -j 2 at most on a shared
machine.
"""
import argparse
import json
import random
import re
import shlex
import subprocess
import sys
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor

OPS = ["all_gather", "all_broadcast", "reduce_scatter", "all_reduce", "reduce", "broadcast", "all_to_all",
       "send_recv"]
LEGACY_OPS = {"all_gather", "reduce_scatter", "all_reduce"}
DIM_OPS = {"all_gather", "reduce_scatter", "all_to_all"}
ELEMENT_BYTES = {"bf16": 2, "fp32": 4, "bfp8": 1}

# (system, mesh rows, mesh cols, wraps into a ring along cols, links usable per hop, chips)
SYSTEMS = [
    ("n300", 1, 2, False, 1, 2),
    ("t3k", 2, 4, False, 1, 8),
    ("tg", 4, 8, False, 3, 32),
    ("galaxy", 4, 8, False, 4, 32),
    ("p300", 1, 2, False, 1, 2),
    ("bh_galaxy", 4, 8, False, 2, 32),
]

# The share of configurations whose input is sharded (--shard-share changes it, which changes the
# configurations: the ctests run the default).
SHARD_SHARE = 0.2
# --blackhole: Blackhole systems too (p300, bh_galaxy, @bh specs), whose chips differ (REFERENCE 1).
BLACKHOLE_WEIGHTS = [0, 0]
BLACKHOLE_SHARE = 0.0
# The share of legacy ROW_MAJOR shapes along dims 0-2 whose rows are wider than an EDM buffer.
LEGACY_WIDE_ROW_SHARE = 0.4

SUCCESS, REFUSED, FAULT_STOPPED = "success", "refused", "fault-stopped"
BUGS = ("wrong-data", "hang", "internal", "crash", "timeout", "unclear-refusal")


def pick_system(rng):
    """Returns (argv, rows, cols, is_ring_system, links_usable, n_chips)."""
    kind = rng.choices(["builtin", "mesh", "ring", "torus"], weights=[5, 2, 2, 1])[0]
    if kind == "builtin":
        name, rows, cols, ring, links, chips = rng.choices(SYSTEMS, weights=[3, 6, 1, 2] + BLACKHOLE_WEIGHTS)[0]
        return ["--system", name], rows, cols, ring, links, chips
    links = rng.choice([1, 1, 2, 4])
    suffix = f"/{links}" if rng.random() < 0.5 else ""
    if suffix == "":
        links = 4
    if kind == "ring":
        n = rng.choice([3, 4, 5, 6, 8, 8, 12, 16])
        arch = "@bh" if rng.random() < BLACKHOLE_SHARE else ""
        return ["--system", f"ring:{n}{suffix}{arch}"], 1, n, True, links, n
    rows = rng.choice([1, 2, 2, 3, 4])
    cols = rng.choice([2, 3, 4, 4, 8])
    spec = f"{kind}:{rows}x{cols}{suffix}" + ("@bh" if rng.random() < BLACKHOLE_SHARE else "")
    return ["--system", spec], rows, cols, kind == "torus", links, rows * cols


def pick_shape(rng, args, op, dim, group):
    """A W,Z,Y,X shape of roughly 1 KiB .. 2 MiB, in elements, that mostly splits over the group along
    `dim` where the op cuts it; odd extents now and then."""
    total_bytes = int(2 ** rng.uniform(10, 21))
    elem = ELEMENT_BYTES[args["dtype"]]
    elements = max(1, total_bytes // elem)
    odd = rng.random() < 0.15
    tile = args["layout"] == "tile"
    if odd:
        # Odd extents: not whole tiles, rows not whole 32 B.
        x = rng.choice([1, 3, 7, 24, 33, 100, 736, 1000, 2050])
        y = max(1, min(elements // x, rng.choice([1, 5, 31, 33, 64, 96, 100])))
        shape = [1, rng.choice([1, 1, 2, 3]), y, x]
    elif tile:
        tiles = max(1, elements // 1024)
        y_tiles = rng.choice([1, 1, 1, 2, 4])
        z = rng.choice([1, 1, 1, 2, 3])
        x_tiles = max(1, tiles // (y_tiles * z))
        w = rng.choice([1, 1, 1, 2, 4]) if dim in (0, 1) else 1
        shape = [w, z, 32 * y_tiles, 32 * max(1, x_tiles // w)]
    else:
        # Rows a multiple of 32 B mostly, some wider than a fabric payload.
        row_bytes = rng.choice([32, 64, 192, 1024, 2048, 4352, 8192, 16384])
        if args.get("mode") == "legacy" and (dim < 3 or op == "all_reduce") and \
                args["wide_rng"].random() < LEGACY_WIDE_ROW_SHARE:
            # Legacy mode's rows wider than an EDM buffer (38080 B at the defaults) along dims 0-2
            # (all_reduce's halves run along dim 2), moved in 32 B-aligned pieces since session 40:
            # 32 B above the widest, a row of 1193 x 32 B (1193 pieces), whole KiB, and one not a
            # multiple of 32 B, which is refused.
            row_bytes = args["wide_rng"].choice([38112, 38176, 40960, 65536, 76800, 38114])
        x = max(1, row_bytes // elem)
        shape = [1, rng.choice([1, 1, 2]), max(1, min(elements // x, 1024)), x]
    if op in DIM_OPS and not odd and rng.random() < 0.9:
        # Round the cut dim to a multiple of the group (in tiles where the dim is tiled).
        unit = 32 if tile and dim >= 2 else 1
        if not tile and dim == 3:
            unit = max(1, 32 // elem)  # each chip's piece of a row whole 32 B
        pieces = max(1, shape[dim] // (unit * group))
        shape[dim] = pieces * unit * group
    return shape


def derived_shard_shape(rng, shape, kind, grid, tile):
    """A shard HxW that holds `shape` on `grid` ("CxR") as `kind` shards, sometimes a tile larger:
    what --shard-shape accepts, to reach past its refusals."""
    cols, rows = (int(e) for e in grid.split("x"))
    height, width = shape[0] * shape[1] * shape[2], shape[3]
    unit = 32 if tile else 1
    up = lambda v: -(-v // unit) * unit  # noqa: E731
    if kind == "height":
        h, w = up(-(-height // (cols * rows))), up(width)
    elif kind == "width":
        h, w = up(height), up(-(-width // (cols * rows)))
    else:
        h, w = up(-(-height // rows)), up(-(-width // cols))
    if rng.random() < 0.3:
        h += unit if kind != "width" else 0
        w += unit if kind == "width" else 0
    return f"{h}x{w}"


def pick_grid(rng, memory):
    if memory == "dram":
        return f"{rng.choice([1, 2, 3, 4, 6, 8, 12])}x1"
    return f"{rng.choice([1, 2, 4, 5, 8])}x{rng.choice([1, 2, 4, 8])}"


def pick_group(rng, sys_argv, rows, cols, n_chips):
    """Options choosing the chips of a group, and the group's size."""
    name = sys_argv[1]
    big = n_chips > 16
    if rows > 1 and cols > 1 and rng.random() < (0.85 if big else 0.35):
        axis = rng.choice([0, 1])
        return ["--cluster-axis", str(axis)], rows if axis == 0 else cols
    if rng.random() < (0.6 if big else 0.15) and n_chips >= 4:
        if name == "t3k":
            chips = rng.choice(["0,1,3,2", "0,1", "0,4,5,1", "4,0,1"])
        elif name in ("galaxy", "tg"):
            chips = rng.choice(["0,1,9,8", "0,1", "0,1,2,3", "0,1,2,3,4,5,6,7"])
        else:
            # The first row's chips in order are neighbours on every parametric mesh and ring.
            chips = ",".join(str(c) for c in range(rng.randint(2, min(cols, 4))))
        return ["--chips", chips], len(chips.split(","))
    return [], n_chips


def generate(seed, index):
    """Configuration `index` of `seed`: (argv after `run`, whether it injects a fault)."""
    rng = random.Random(f"{seed}:{index}")
    op = rng.choice(OPS)
    argv = ["--op", op]
    sys_argv, rows, cols, ring_system, links_usable, n_chips = pick_system(rng)
    argv += sys_argv
    mode = "legacy" if op in LEGACY_OPS and rng.random() < 0.2 else "fabric"
    if mode == "legacy":
        argv += ["--mode", "legacy"]
    group_argv, group = pick_group(rng, sys_argv, rows, cols, n_chips)
    argv += group_argv
    topology = rng.choices(["auto", "ring", "line"], weights=[6, 2, 2])[0]
    if topology != "auto":
        argv += ["--topology", topology]
    if rng.random() < 0.25 and links_usable > 1:
        argv += ["--links", str(rng.randint(2, links_usable))]
    elif rng.random() < 0.03:
        argv += ["--links", str(rng.randint(2, 4))]
    args = {"dtype": rng.choices(["bf16", "fp32", "bfp8"], weights=[5, 2, 2])[0],
            "layout": rng.choices(["tile", "row_major"], weights=[3, 1])[0],
            # Draws of its own, so that only the configurations given a legacy wide row change.
            "mode": mode, "wide_rng": random.Random(f"{seed}:{index}:legacy-wide-row")}
    if args["layout"] == "row_major" and args["dtype"] == "bfp8" and rng.random() < 0.8:
        args["dtype"] = "bf16"
    if args["dtype"] != "bf16":
        argv += ["--dtype", args["dtype"]]
    if args["layout"] != "tile":
        argv += ["--layout", args["layout"]]
    memory = rng.choices(["dram", "l1"], weights=[3, 1])[0]
    if memory != "dram":
        argv += ["--memory", memory]
    dim = None
    if op in DIM_OPS and rng.random() < 0.6:
        dim = rng.choices([0, 1, 2, 3], weights=[1, 1, 3, 3])[0]
    if rng.random() < 0.6:
        shape = pick_shape(rng, args, op, 3 if dim is None else dim, group)
    else:
        shape = None
    if shape:
        argv += ["--shape", ",".join(str(e) for e in shape)]
    else:
        size = int(2 ** rng.uniform(10, 21))
        if rng.random() < 0.5:
            size = 1 << int(rng.uniform(10, 21))
        argv += ["--size", str(size)]
        if dim is not None and rng.random() < 0.8:
            dim = rng.choice([2, 3]) if args["layout"] == "row_major" else 3
    if dim is not None:
        argv += ["--dim", str(dim)]
    if rng.random() < SHARD_SHARE:
        kind = rng.choice(["height", "width", "block"])
        if args["layout"] == "row_major" and rng.random() < 0.8:
            kind = "height"
        argv += ["--shard", kind, "--shard-grid", pick_grid(rng, memory)]
        if rng.random() < 0.3:
            argv += ["--shard-orientation", "col"]
        if rng.random() < 0.2:
            if shape and rng.random() < 0.7:
                argv += ["--shard-shape", derived_shard_shape(rng, shape, kind, argv[argv.index("--shard-grid") + 1],
                                                              args["layout"] == "tile")]
            else:
                argv += ["--shard-shape", f"{rng.choice([1, 2, 32, 64, 96])}x{rng.choice([16, 32, 64, 128, 256])}"]
        if rng.random() < 0.3:
            argv += ["--out-shard", rng.choice(["interleaved", "height", "width", "block"])]
            if argv[-1] != "interleaved" and rng.random() < 0.5:
                argv += ["--out-shard-grid", pick_grid(rng, memory)]
            if argv[-1] != "interleaved" and rng.random() < 0.3:
                argv += ["--out-shard-orientation", rng.choice(["row", "col"])]
            if argv[-1] != "interleaved" and rng.random() < 0.2:
                argv += ["--out-shard-shape", f"{rng.choice([32, 64])}x{rng.choice([32, 64, 128, 256])}"]
    elif rng.random() < 0.05:
        argv += ["--out-shard", rng.choice(["height", "width"]), "--out-shard-grid", pick_grid(rng, memory)]
    if rng.random() < 0.2:
        # Payloads below 1 KiB make thousands of packets: only on small tensors, to stay fast.
        small = "--size" in argv and int(argv[argv.index("--size") + 1]) <= 65536
        choices = [1000, 1024, 2048, 2050, 4096, 4100, 4353, 6144, 7616]
        argv += ["--fabric-payload", str(rng.choice(choices + ([64, 96, 100, 256] if small else [])))]
    if rng.random() < 0.1:
        argv += ["--erisc-unreserved-kib", str(rng.choice([106, 111, 120, 133, 150]))]
    fabric = mode == "fabric"
    if fabric and rng.random() < 0.08:
        argv += ["--fabric-rx-in-flight", str(rng.choice([1, 2, 4, 16]))]
    if fabric and rng.random() < 0.06:
        argv += ["--ring-flow-control", "dateline"]
    if fabric and rng.random() < 0.04:
        argv += ["--first-level-acks", "off"]
    if rng.random() < 0.05:
        argv += ["--hardware", "ideal"]
    # The op's own options, mostly where they apply (a ring, fabric mode).
    # Where auto makes a ring: a ring:N or the T3K whole, or a torus' wrapping rows.
    ring_capable = (not group_argv and (sys_argv[1] == "t3k" or sys_argv[1].startswith("ring:"))) or (
        sys_argv[1].startswith("torus:") and group_argv == ["--cluster-axis", "1"] and cols >= 3)
    ring = topology == "ring" or (topology == "auto" and ring_capable)
    if op in ("reduce_scatter", "all_reduce") and fabric and rng.random() < 0.2:
        argv += ["--workers-per-link", str(rng.randint(1, 6))]
    if op == "all_gather" and fabric and ring and rng.random() < 0.3:
        argv += ["--workers-per-link", str(rng.randint(1, 6))]
    if op == "all_gather" and fabric and rng.random() < 0.2:
        argv += ["--ag-ring-algorithm", rng.choice(["relay", "multicast"]) if ring else "multicast"]
    # Session 45's --ag-bidirectional-mode, drawn from a generator of its own so that the
    # configurations drawn before it stayed as they were.
    bidirectional_rng = random.Random(f"{seed}:{index}:ag-bidirectional-mode")
    if op == "all_gather" and fabric and ring and bidirectional_rng.random() < 0.3:
        argv += ["--ag-bidirectional-mode", bidirectional_rng.choice(["split-tensor", "full-tensor"])]
    if op == "all_gather" and fabric and ring and rng.random() < 0.25 and "multicast" not in argv:
        argv += ["--chunks-per-sync", str(rng.choice([1, 2, 3, 8, 255]))]
    if op in ("reduce_scatter", "all_reduce") and fabric and ring and rng.random() < 0.3:
        argv += ["--rs-ring-algorithm", rng.choice(["one-shot", "chain", "half-way"])]
    if op in ("reduce_scatter", "all_reduce") and fabric and topology == "line" and rng.random() < 0.3:
        argv += ["--rs-line-algorithm", "wrap"]
    if op == "all_reduce" and rng.random() < 0.35:
        argv += ["--all-reduce-algo", rng.choice(["one-shot", "rs-ag", "composite"])]
    if op == "reduce" and rng.random() < 0.6:
        argv += ["--root", str(rng.randint(0, group - 1) if rng.random() < 0.9 else group)]
    if op == "broadcast" and ring and rng.random() < 0.4:
        argv += ["--bcast-ring-algorithm", rng.choice(["both-ways", "split"])]
    if op == "all_to_all":
        if rng.random() < 0.3:
            argv += ["--a2a-senders", rng.choice(["per-destination", "per-direction"])]
        if rng.random() < 0.3:
            argv += ["--rounds", str(rng.choice([1, 2, 3, 7, 256, 65536]))]
    # Near the boundary: an option this op does not take.
    if rng.random() < 0.03:
        argv += rng.choice([["--root", "1"], ["--rounds", "2"], ["--dim", "1"], ["--bcast-ring-algorithm", "split"]])
    fault = False
    if rng.random() < 0.06:
        argv += ["--fault", rng.choice(["link-down:0-1", "link-down:1-2", "link-slow:0-1:0.25", "skew:2us",
                                        "link-down:0-1@5us"])]
        fault = True
    argv += ["--seed", str(rng.randint(1, 1000))]
    return argv, fault


def fold_numbers(text):
    return re.sub(r"\d+", "N", text)


def classify(code, out, err, fault):
    """(outcome, one-line detail) of one run."""
    if code is None:
        return "timeout", "no exit within the time limit"
    if code < 0:
        return "crash", f"signal {-code}: {err.strip().splitlines()[-1] if err.strip() else ''}"
    text = (out + err)
    lowered = text.lower()
    if "internal" in lowered or "CCLMESH_CHECK" in text or "sanitizer" in lowered or "runtime error:" in text:
        first = next((l for l in text.splitlines() if "internal" in l.lower() or "error" in l.lower()), "")
        return "internal", first.strip()[:300]
    if code == 0:
        rows = [l.split() for l in out.splitlines() if l.strip() and not l.startswith("#")]
        wrong = [r[7] for r in rows if len(r) > 7 and r[0].isdigit()]
        if not wrong:
            return "internal", "exit 0 but no result row"
        if any(w not in ("0", "N/A") for w in wrong):
            return "wrong-data", f"#wrong {','.join(wrong)}"
        return SUCCESS, ""
    if code == 1:
        return "wrong-data", (err.strip().splitlines() or [""])[-1][:300]
    if code == 2:
        lines = [l for l in err.strip().splitlines() if l.strip()]
        if len(lines) != 1 or not lines[0].startswith("cclmesh: error:") or len(lines[0]) < 30:
            return "unclear-refusal", " | ".join(lines)[:300]
        return REFUSED, lines[0]
    if code == 3:
        first = (text.strip().splitlines() or [""])[0]
        if fault:
            return FAULT_STOPPED, first[:200]
        return "hang", first[:300]
    if code == 4:
        return "internal", (err.strip().splitlines() or [""])[-1][:300]
    return "crash", f"exit {code}: {(err.strip().splitlines() or [''])[-1][:300]}"


def run_one(cclmesh, argv, fault, timeout):
    try:
        proc = subprocess.run([cclmesh, "run"] + argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return classify(None, "", "", fault)
    return classify(proc.returncode, proc.stdout, proc.stderr, fault)


def option_groups(argv):
    """argv split into [option, values...] groups."""
    groups = []
    for token in argv:
        if token.startswith("--"):
            groups.append([token])
        else:
            groups[-1].append(token)
    return groups


def minimize(cclmesh, argv, fault, outcome, detail, timeout):
    """Drops option groups one at a time while the run still fails the same way (same outcome, same
    message with numbers folded)."""
    signature = (outcome, fold_numbers(detail))
    groups = option_groups(argv)
    changed = True
    while changed:
        changed = False
        for i in range(len(groups) - 1, -1, -1):
            if groups[i][0] in ("--op", "--system"):
                continue
            trial = groups[:i] + groups[i + 1:]
            flat = [t for g in trial for t in g]
            got = run_one(cclmesh, flat, any(g[0] == "--fault" for g in trial), timeout)
            if (got[0], fold_numbers(got[1])) == signature:
                groups = trial
                changed = True
    return [t for g in groups for t in g]


def main():
    global SHARD_SHARE, BLACKHOLE_WEIGHTS, BLACKHOLE_SHARE
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cclmesh", default="build/tools/cclmesh/cclmesh")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--first", type=int, default=0, help="index of the first configuration")
    parser.add_argument("-j", "--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60, help="wall seconds per run")
    parser.add_argument("--minimize", action="store_true", help="reduce each failing command line")
    parser.add_argument("--refusals", action="store_true", help="list each distinct refusal")
    parser.add_argument("--shard-share", type=float, default=SHARD_SHARE,
                        help="share of sharded inputs (other values give other configurations)")
    parser.add_argument("--blackhole", action="store_true",
                        help="Blackhole systems too (other configurations than without)")
    parser.add_argument("--log", help="write every configuration's outcome to FILE, one JSON object a line")
    parser.add_argument("--print-only", action="store_true", help="print the command lines, run nothing")
    opts = parser.parse_args()
    SHARD_SHARE = opts.shard_share
    if opts.blackhole:
        BLACKHOLE_WEIGHTS, BLACKHOLE_SHARE = [2, 2], 0.4

    configs = [(i,) + generate(opts.seed, i) for i in range(opts.first, opts.first + opts.count)]
    if opts.print_only:
        for i, argv, _ in configs:
            print(i, "cclmesh run", shlex.join(argv))
        return 0

    def work(config):
        i, argv, fault = config
        return i, argv, fault, run_one(opts.cclmesh, argv, fault, opts.timeout)

    counts = defaultdict(Counter)
    failures = []
    refusals = {}
    log = open(opts.log, "w") if opts.log else None
    with ThreadPoolExecutor(max_workers=max(1, min(opts.jobs, 2))) as pool:
        for i, argv, fault, (outcome, detail) in pool.map(work, configs):
            if log:
                log.write(json.dumps({"index": i, "outcome": outcome, "detail": detail, "argv": argv}) + "\n")
            op = argv[1]
            counts[op][outcome] += 1
            if outcome == REFUSED:
                refusals.setdefault(fold_numbers(detail), (detail, argv))
            elif outcome in BUGS:
                print(f"[{i}] {outcome}: {detail}\n    cclmesh run {shlex.join(argv)}", flush=True)
                failures.append((i, argv, fault, outcome, detail))

    outcomes = [SUCCESS, REFUSED, FAULT_STOPPED] + list(BUGS)
    print(f"\nseed {opts.seed}, configurations {opts.first}..{opts.first + opts.count - 1}")
    print(f"{'op':<16}" + "".join(f"{o:>17}" for o in outcomes))
    total = Counter()
    for op in OPS:
        total.update(counts[op])
        print(f"{op:<16}" + "".join(f"{counts[op][o]:>17}" for o in outcomes))
    print(f"{'total':<16}" + "".join(f"{total[o]:>17}" for o in outcomes))
    if opts.refusals:
        print(f"\n{len(refusals)} distinct refusals:")
        for folded in sorted(refusals):
            detail, argv = refusals[folded]
            print(f"  {detail}\n      cclmesh run {shlex.join(argv)}")
    if failures:
        print(f"\n{len(failures)} failing configurations:")
        for i, argv, fault, outcome, detail in failures:
            if opts.minimize:
                argv = minimize(opts.cclmesh, argv, fault, outcome, detail, opts.timeout)
            print(f"  [{i}] {outcome}: {detail}\n      cclmesh run {shlex.join(argv)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
