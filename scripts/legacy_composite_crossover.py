#!/usr/bin/env python3
"""Where legacy all_reduce's composite stops beating rs-ag (docs/collectives.md, "Links in the threshold").

Runs `cclmesh run --mode legacy --op all_reduce --no-data` with --all-reduce-algo rs-ag and composite
at every page count that divides by the group's chips, from about 12 KiB of weighted size
(pages x (page + 256 B)) until rs-ag has won twice in a row, or over a fixed range, and prints
each size's simulated times and the crossover (last composite win, first rs-ag win, interpolated).

  scripts/legacy_composite_crossover.py GROUP LINKS LAYOUT [FROM_KIB TO_KIB]
  GROUP: t3k-ring t3k-line t3k4-ring t3k4-line n300 gx-axis0 gx-axis1 r4-ring r4-line r6-ring r6-line
         r8-ring r8-line (ring:N: 4 links on every hop, all MMIO)
  LAYOUT: tile (bf16 tiles, 2 KiB pages), rm128 / rm1024 (bf16 ROW_MAJOR rows of 128 B / 1 KiB)
  CCLMESH: the binary (default build/tools/cclmesh/cclmesh)

The default range stops two sizes after the crossover, so it does not reach a threshold set above
the crossover: to score a rule (scripts/legacy_composite_score.py) give FROM_KIB TO_KIB reaching
past every threshold to be scored (session 12: rings 20 56, 4-lines 36 80, 6-lines 56 104,
8-lines 56 116, N300 12 40).
"""
import json
import os
import subprocess
import sys

CCLMESH = os.environ.get("CCLMESH", "build/tools/cclmesh/cclmesh")
GROUPS = {
    "t3k-ring": (["--system", "t3k", "--topology", "ring"], "ring"),
    "t3k-line": (["--system", "t3k", "--topology", "line"], "line"),
    "t3k4-ring": (["--system", "t3k", "--chips", "0,1,3,2", "--topology", "ring"], "ring"),
    "t3k4-line": (["--system", "t3k", "--chips", "0,1,3,2", "--topology", "line"], "line"),
    "n300": (["--system", "n300", "--topology", "line"], "line"),
    "gx-axis0": (["--system", "galaxy", "--cluster-axis", "0", "--topology", "line"], "line"),
    "gx-axis1": (["--system", "galaxy", "--cluster-axis", "1", "--topology", "line"], "line"),
    "r4-ring": (["--system", "ring:4", "--topology", "ring"], "ring"),
    "r4-line": (["--system", "ring:4", "--topology", "line"], "line"),
    "r6-ring": (["--system", "ring:6", "--topology", "ring"], "ring"),
    "r6-line": (["--system", "ring:6", "--topology", "line"], "line"),
    "r8-ring": (["--system", "ring:8", "--topology", "ring"], "ring"),
    "r8-line": (["--system", "ring:8", "--topology", "line"], "line"),
}
PAGE_BYTES = {"tile": 2048, "rm128": 128, "rm1024": 1024}
PAGE_WEIGHT = 256  # kLegacyCompositePageWeightBytes


def run(args):
    p = subprocess.run([CCLMESH, "run", "--op", "all_reduce", "--mode", "legacy", "--no-data", "--json", "-"] + args,
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"cclmesh {' '.join(args)}: {p.stderr.strip()}")
    return json.loads(p.stdout)


def tensor(layout, pages):
    if layout == "tile":
        return ["--size", str(pages * 2048)]
    return ["--shape", f"1,1,{pages},{PAGE_BYTES[layout] // 2}", "--layout", "row_major"]


def main():
    group, links, layout = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    base, shape = GROUPS[group]
    base = base + ["--links", str(links)]
    n = run(base + tensor(layout, 64) + ["--all-reduce-algo", "composite"])["n_chips"]
    weight = PAGE_BYTES[layout] + PAGE_WEIGHT
    first = n * (2 if shape == "ring" else 1) * links  # rs-ag needs a page per run of a slice
    fixed = len(sys.argv) > 5
    pages = max(first, (12 * 1024 // weight) // n * n)
    end = 200 * 1024
    if fixed:
        pages = max(first, -(-int(float(sys.argv[4]) * 1024 // weight) // n) * n)
        end = float(sys.argv[5]) * 1024
    rows, rs_wins = [], 0
    while pages * weight <= end and (fixed or rs_wins < 2):
        rs = run(base + tensor(layout, pages) + ["--all-reduce-algo", "rs-ag"])["time_us"]
        comp = run(base + tensor(layout, pages) + ["--all-reduce-algo", "composite"])["time_us"]
        rows.append((pages, rs, comp))
        print(f"{group} n={n} L{links} {layout} pages={pages} weighted_KiB={pages * weight / 1024:.2f} "
              f"rsag={rs:.2f} comp={comp:.2f} {'RS' if rs < comp else 'C'}", flush=True)
        rs_wins = rs_wins + 1 if rs < comp else 0
        pages += n
    last_c = first_rs = None
    for row in rows:
        if row[2] <= row[1]:
            last_c, first_rs = row, None
        elif first_rs is None:
            first_rs = row
    if last_c and first_rs:
        (p0, r0, c0), (p1, r1, c1) = last_c, first_rs
        px = p0 + (p1 - p0) * (r0 - c0) / ((c1 - r1) - (c0 - r0))
        print(f"XOVER {group} n={n} L{links} {layout} composite_at={p0 * weight / 1024:.2f} "
              f"rsag_from={p1 * weight / 1024:.2f} interp={px * weight / 1024:.2f} KiB weighted")
    elif first_rs:
        print(f"XOVER {group} n={n} L{links} {layout} rs-ag already at its first runnable size "
              f"{first_rs[0] * weight / 1024:.2f} KiB")


if __name__ == "__main__":
    main()
