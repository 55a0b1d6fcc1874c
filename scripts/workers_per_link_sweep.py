#!/usr/bin/env python3
"""Measures reduce_scatter's and all_gather's (ring relay) fabric-mode time at each workers-per-link
count against the default rule's choice, --no-data (simulated time is deterministic).

Prints, per configuration and size, the time at W = 1, 2, 3, 4, 6, the default's time and W, the
fastest W, and how far (in %) the default is from the fastest. Usage:

  scripts/workers_per_link_sweep.py [--cclmesh build/tools/cclmesh/cclmesh] [-j 2] [--only SUBSTRING]
      [--csv FILE] [--relay-pages LO:HI]

Sweeps (`cclmesh sweep`, TILE [1,1,32,32P] along dim 3) run 16 KiB .. 64 MiB in x4 steps; the
`--shape` points (dim 2, ROW_MAJOR rows wider than a fabric payload) run one at a time.

--relay-pages LO:HI instead runs the ring all_gather relay's size rule (kPagesForSeveralRelayWorkers)
at every page count per link and direction from LO to HI (TILE bf16 pages of 2048 B, FULL_TENSOR:
counts whose input passes 2 x 150 KiB a chip, where the gather splits, are left out), W = 1 and 2, on
the RELAY_RINGS (--only filters them), and prints per ring the gain of 2 workers at each count, the
first count where 2 win and the count from which they stay within 1% of 1 (session 43's re-fit).
"""
import argparse
import csv
import io
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

WORKERS = [1, 2, 3, 4, 6]

# (label, op, cclmesh system options)
SWEEPS = [
    ("n300 line", "reduce_scatter", ["--system", "n300", "--topology", "line"]),
    ("mesh:1x4 line", "reduce_scatter", ["--system", "mesh:1x4", "--topology", "line"]),
    ("mesh:1x4/2 line 2L", "reduce_scatter", ["--system", "mesh:1x4/2", "--topology", "line", "--links", "2"]),
    ("t3k line", "reduce_scatter", ["--system", "t3k", "--topology", "line"]),
    ("t3k ring", "reduce_scatter", ["--system", "t3k", "--topology", "ring"]),
    ("ring:8/2 2L", "reduce_scatter", ["--system", "ring:8/2", "--links", "2"]),
    ("galaxy axis0 line", "reduce_scatter", ["--system", "galaxy", "--cluster-axis", "0"]),
    ("galaxy axis1 line", "reduce_scatter", ["--system", "galaxy", "--cluster-axis", "1"]),
    ("galaxy axis1 line 2L", "reduce_scatter", ["--system", "galaxy", "--cluster-axis", "1", "--links", "2"]),
    ("t3k ring", "all_gather", ["--system", "t3k", "--topology", "ring"]),
    ("ring:4", "all_gather", ["--system", "ring:4"]),
    ("ring:8/2 2L", "all_gather", ["--system", "ring:8/2", "--links", "2"]),
    ("torus:4x8 axis1 ring", "all_gather", ["--system", "torus:4x8", "--cluster-axis", "1"]),
]

# (label, op, system options, shape options); --shape is the per-chip input (reduce_scatter) or the
# gathered output (all_gather).
SHAPES = []
for rows in (32, 64, 128, 256, 512, 1024, 2048):
    SHAPES.append(("t3k line tile dim2", "reduce_scatter", ["--system", "t3k", "--topology", "line"],
                   ["--shape", f"1,1,{rows * 8},1024", "--dim", "2"]))
    SHAPES.append(("t3k ring tile dim2", "reduce_scatter", ["--system", "t3k", "--topology", "ring"],
                   ["--shape", f"1,1,{rows * 8},1024", "--dim", "2"]))
    SHAPES.append(("n300 line tile dim2", "reduce_scatter", ["--system", "n300", "--topology", "line"],
                   ["--shape", f"1,1,{rows * 2},1024", "--dim", "2"]))
    SHAPES.append(("t3k ring tile dim2", "all_gather", ["--system", "t3k", "--topology", "ring"],
                   ["--shape", f"1,1,{rows * 8},1024", "--dim", "2"]))
for rows in (8, 16, 32, 64, 128, 256, 512):
    # 8192 B rows (bf16 4096 wide): wider than the 4352 B payload, cut in two pieces.
    SHAPES.append(("t3k line rm8192 dim2", "reduce_scatter", ["--system", "t3k", "--topology", "line"],
                   ["--shape", f"1,1,{rows * 8},4096", "--dim", "2", "--layout", "row_major"]))
    SHAPES.append(("t3k ring rm8192 dim2", "reduce_scatter", ["--system", "t3k", "--topology", "ring"],
                   ["--shape", f"1,1,{rows * 8},4096", "--dim", "2", "--layout", "row_major"]))
    SHAPES.append(("n300 line rm8192 dim2", "reduce_scatter", ["--system", "n300", "--topology", "line"],
                   ["--shape", f"1,1,{rows * 2},4096", "--dim", "2", "--layout", "row_major"]))
    SHAPES.append(("t3k ring rm8192 dim2", "all_gather", ["--system", "t3k", "--topology", "ring"],
                   ["--shape", f"1,1,{rows * 8},4096", "--dim", "2", "--layout", "row_major"]))

# (label, chips in the ring, system options, links) for --relay-pages.
RELAY_RINGS = [
    ("t3k ring 4352", 8, ["--system", "t3k", "--topology", "ring"], 1),
    ("t3k ring 6144", 8, ["--system", "t3k", "--topology", "ring", "--fabric-payload", "6144"], 1),
    ("ring:8/2 2L 4352", 8, ["--system", "ring:8/2", "--links", "2"], 2),
    ("ring:8/2 2L 6144", 8, ["--system", "ring:8/2", "--links", "2", "--fabric-payload", "6144"], 2),
    ("ring:16 1L", 16, ["--system", "ring:16"], 1),
    ("ring:16/2 2L", 16, ["--system", "ring:16/2", "--links", "2"], 2),
    ("torus:4x4 axis0 1L", 4, ["--system", "torus:4x4", "--cluster-axis", "0"], 1),
    ("torus:4x4/2 axis0 2L", 4, ["--system", "torus:4x4/2", "--cluster-axis", "0", "--links", "2"], 2),
    ("torus:4x8 axis1 1L", 8, ["--system", "torus:4x8", "--cluster-axis", "1"], 1),
    ("ring:8@bh 1L", 8, ["--system", "ring:8@bh"], 1),
    ("ring:8/2@bh 2L", 8, ["--system", "ring:8/2@bh", "--links", "2"], 2),
    ("mesh:2x4@bh ring 1L", 8, ["--system", "mesh:2x4@bh", "--topology", "ring"], 1),
]
TILE_BYTES = 2048
SPLIT_ABOVE_BYTES = 2 * 150 * 1024  # all_gather's SPLIT_TENSOR choice: twice the ERISC's unreserved L1


def relay_pages_job(cclmesh, system, size, w):
    cmd = [cclmesh, "run", "--op", "all_gather", "--no-data", "--json", "-", "--size", str(size),
           "--workers-per-link", str(w)] + system
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit((out.stderr.strip().splitlines() or ["exit"])[-1])
    return float(json.loads(out.stdout)["time_us"])


def relay_pages(args):
    lo, hi = (int(x) for x in args.relay_pages.split(":"))
    rings = [r for r in RELAY_RINGS if args.only in r[0]]
    with ThreadPoolExecutor(max_workers=args.j) as pool:
        jobs = []
        for label, chips, system, links in rings:
            for pages in range(lo, hi + 1):
                if pages * links * TILE_BYTES > SPLIT_ABOVE_BYTES:
                    continue
                size = pages * links * chips * TILE_BYTES
                jobs.append((label, pages, size, pool.submit(relay_pages_job, args.cclmesh, system, size, 1),
                             pool.submit(relay_pages_job, args.cclmesh, system, size, 2)))
        rows = [(label, pages, size, one.result(), two.result()) for label, pages, size, one, two in jobs]
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(["config", "pages_per_link_direction", "size_bytes", "w1_us", "w2_us"])
            wr.writerows(rows)
    for label, *_ in rings:
        gains = [(pages, 100.0 * (one / two - 1.0)) for l, pages, _, one, two in rows if l == label]
        first = next((p for p, g in gains if g > 0), None)
        stays = next((p for i, (p, _) in enumerate(gains) if all(g >= -1.0 for _, g in gains[i:])), None)
        print(f"{label:22} 2 workers first win at {first}, within 1% of 1 from {stays} on")
        print("   " + " ".join(f"{p}:{g:+.1f}" for p, g in gains))


def run(cmd):
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "exit %d" % out.returncode
    return list(csv.DictReader(io.StringIO(out.stdout))), None


def sweep_job(cclmesh, label, op, system, w):
    cmd = [cclmesh, "sweep", "--op", op, "-b", "16K", "-e", "64M", "-f", "4", "--no-data", "--csv", "-"] + system
    if w:
        cmd += ["--workers-per-link", str(w)]
    rows, err = run(cmd)
    if err:
        return [(label, op, "?", w, None, err)]
    return [(label, op, int(r["size_bytes"]), w, float(r["time_us"]), None) for r in rows]


def shape_job(cclmesh, label, op, system, shape, w):
    cmd = [cclmesh, "run", "--op", op, "--no-data", "--json", "-"] + system + shape
    if w:
        cmd += ["--workers-per-link", str(w)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    key = shape[1]
    if out.returncode != 0:
        return [(label, op, key, w, None, (out.stderr.strip().splitlines() or ["exit"])[-1])]
    return [(label, op, key, w, float(json.loads(out.stdout)["time_us"]), None)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cclmesh", default="build/tools/cclmesh/cclmesh")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--csv", default="")
    ap.add_argument("--relay-pages", default="", help="LO:HI pages per link and direction (see the docstring)")
    args = ap.parse_args()
    if args.relay_pages:
        relay_pages(args)
        return

    jobs = []
    with ThreadPoolExecutor(max_workers=args.j) as pool:
        for label, op, system in SWEEPS:
            if args.only not in f"{op} {label} sweep":
                continue
            for w in [None] + WORKERS:
                jobs.append(pool.submit(sweep_job, args.cclmesh, label, op, system, w))
        for label, op, system, shape in SHAPES:
            if args.only not in f"{op} {label} shape":
                continue
            for w in [None] + WORKERS:
                jobs.append(pool.submit(shape_job, args.cclmesh, label, op, system, shape, w))
        results = [row for job in jobs for row in job.result()]

    table = {}
    order = []
    for label, op, key, w, t, err in results:
        k = (op, label, key)
        if k not in table:
            table[k] = {}
            order.append(k)
        table[k][w] = t if t is not None else err

    if args.csv:
        with open(args.csv, "w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(["op", "config", "point", "default"] + [f"w{w}" for w in WORKERS])
            for k in order:
                wr.writerow(list(k) + [table[k].get(None)] + [table[k].get(w) for w in WORKERS])

    misses = 0
    print(f"{'op':15} {'config':22} {'point':>12} " + " ".join(f"{'W=' + str(w):>9}" for w in WORKERS) +
          f" {'default':>9} {'dW':>3} {'best':>4} {'off%':>6}")
    for k in order:
        row = table[k]
        times = {w: row.get(w) for w in WORKERS if isinstance(row.get(w), float)}
        d = row.get(None)
        cells = " ".join(f"{row[w]:9.2f}" if isinstance(row.get(w), float) else f"{'-':>9}" for w in WORKERS)
        if not times or not isinstance(d, float):
            print(f"{k[0]:15} {k[1]:22} {str(k[2]):>12} {cells} {'-':>9}   {row.get(None)}")
            continue
        best = min(times, key=times.get)
        dw = [w for w in WORKERS if times.get(w) == d]
        off = 100.0 * (d / times[best] - 1.0)
        flag = " <<" if off > 2.0 else ""
        misses += off > 2.0
        print(f"{k[0]:15} {k[1]:22} {str(k[2]):>12} {cells} {d:9.2f} {dw[0] if dw else '?':>3} {best:>4} "
              f"{off:6.1f}{flag}")
    print(f"# points where the default is more than 2% slower than the fastest W: {misses} of {len(order)}")


if __name__ == "__main__":
    sys.exit(main())
