#!/usr/bin/env python3
"""Score legacy all_reduce Auto's composite threshold on measured series (docs/collectives.md,
"Links re-fitted after the NoC gaps").

Reads the output of scripts/legacy_composite_crossover.py (one file per series, run over a fixed
range FROM_KIB TO_KIB that reaches past every threshold to be scored: the default range stops two
sizes after the crossover and so under-counts a threshold above it) and, for every size, charges
the rule's pick the time it takes over the faster algorithm. Prints per group and link count (its
layouts together) the us lost in all and the worst loss at a size in %, for the old and the new
link shares, and with --fit the sums on 2-4 links for every s from 0.05 to 0.60 per class.

  scripts/legacy_composite_score.py [--old R S L] [--new R S L] [--fit] LOG...
  R S L: the link shares in % of rings, lines of up to 4 chips, longer lines
         (default --old 30 30 15, session 11; --new 33 38 22, session 12)

The threshold is computed here as runtime/ccl/all_reduce's default_legacy_composite_max_weighted_bytes
computes it (1-link thresholds 30 KiB on a ring, 12 KiB per chip up to 80 KiB on a line, divided
by (1 - s + s / links) in integer arithmetic, rounded down to a whole KiB); keep the two in step.
"""
import re
import sys

ROW = re.compile(r"^(\S+) n=(\d+) L(\d+) (\S+) pages=(\d+) weighted_KiB=\S+ rsag=([\d.]+) comp=([\d.]+)")
PAGE_BYTES = {"tile": 2048, "rm128": 128, "rm1024": 1024}
PAGE_WEIGHT = 256  # kLegacyCompositePageWeightBytes
RING_GROUPS = {"t3k-ring", "t3k4-ring", "r4-ring", "r6-ring", "r8-ring"}


def load(paths):
    series = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                m = ROW.match(line)
                if m:
                    group, n, links, layout, pages, rs, comp = m.groups()
                    key = (group, int(n), int(links), layout)
                    series.setdefault(key, []).append((int(pages), float(rs), float(comp)))
    return series


def share_class(group, n):
    if group in RING_GROUPS:
        return 0
    return 1 if n <= 4 else 2


def threshold(group, n, links, shares):
    one_link = 30 * 1024 if group in RING_GROUPS else min(12 * 1024 * n, 80 * 1024)
    pct = shares[share_class(group, n)]
    links = max(links, 1)
    return one_link * 100 * links // ((100 - pct) * links + pct) // 1024 * 1024


def score(series, shares):
    out = {}
    for (group, n, links, layout), rows in series.items():
        limit = threshold(group, n, links, shares)
        for pages, rs, comp in rows:
            pick = comp if pages * (PAGE_BYTES[layout] + PAGE_WEIGHT) <= limit else rs
            lost = pick - min(rs, comp)
            total, worst = out.get((group, n, links), (0.0, 0.0))
            out[(group, n, links)] = (total + lost, max(worst, 100 * lost / min(rs, comp)))
    return out


def main():
    args = sys.argv[1:]
    old, new, fit = [30, 30, 15], [33, 38, 22], False
    while args and args[0].startswith("--"):
        if args[0] == "--fit":
            fit, args = True, args[1:]
        elif args[0] in ("--old", "--new") and len(args) >= 4:
            shares = [int(a) for a in args[1:4]]
            if args[0] == "--old":
                old = shares
            else:
                new = shares
            args = args[4:]
        else:
            sys.exit(f"legacy_composite_score.py: {args[0]}: expected --old R S L, --new R S L or --fit")
    series = load(args)
    if not series:
        sys.exit("legacy_composite_score.py: no series rows in the given logs")
    before, after = score(series, old), score(series, new)
    for key in sorted(before):
        group, n, links = key
        print(f"{group:10s} n={n} L{links} threshold {threshold(group, n, links, old) // 1024:3d} -> "
              f"{threshold(group, n, links, new) // 1024:3d} KiB  lost {before[key][0]:7.2f} us / "
              f"{before[key][1]:5.1f} % -> {after[key][0]:7.2f} us / {after[key][1]:5.1f} %")
    for name, result in (("old", before), ("new", after)):
        multi = [v for k, v in result.items() if k[2] >= 2]
        if multi:
            print(f"{name} {old if name == 'old' else new}: on 2-4 links {sum(v[0] for v in multi):.2f} us in all, "
                  f"{min(v[0] for v in multi):.2f}-{max(v[0] for v in multi):.2f} per group and link count, "
                  f"worst {max(v[1] for v in multi):.1f} %")
    if fit:
        for cls, name in enumerate(("rings", "lines of up to 4 chips", "longer lines")):
            sub = {k: v for k, v in series.items() if k[2] >= 2 and share_class(k[0], k[1]) == cls}
            if not sub:
                continue
            cells = []
            for pct in range(5, 61):
                result = score(sub, [pct, pct, pct])
                cells.append(f"{pct}:{sum(v[0] for v in result.values()):.1f}/{max(v[1] for v in result.values()):.1f}")
            print(f"fit {name} (s%:us/worst%): " + " ".join(cells))


if __name__ == "__main__":
    main()
