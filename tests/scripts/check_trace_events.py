#!/usr/bin/env python3
"""Checks a Chrome trace-event JSON file (cclmesh run --trace, serve --trace-dir) by machine.

Independent of the C++ writer and of Perfetto (not installed here): what a viewer needs from
each event, per the trace-event format's phases. Exit 0 and one summary line when the file
passes, 1 and one line per problem otherwise.

  check_trace_events.py TRACE.json [--max-end-us US]

--max-end-us: the run's reported end (simulated us); no event may end after it (plus 1 ns of
rounding), so a trace in the wrong unit (ns or ps written as us) is caught.
"""
import argparse
import json
import math
import sys
from collections import defaultdict


def reject_constant(name):
    raise ValueError(f"non-finite number {name} (not JSON)")


def finite_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def check(trace, max_end_us):
    problems = []
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["top level is not an object with a traceEvents array"], {}
    events = trace["traceEvents"]
    phases = defaultdict(int)
    process_named = set()
    thread_named = set()
    used_threads = set()  # (pid, tid) of events drawn on a thread's track
    used_processes = set()
    spans = defaultdict(list)  # (pid, tid) -> [(start, end, name)]
    begin_stack = defaultdict(list)
    flows = defaultdict(list)  # (cat, id) -> phases in order
    latest_end = 0.0

    for index, e in enumerate(events):
        where = f"event {index}"
        if not isinstance(e, dict):
            problems.append(f"{where}: not an object")
            continue
        ph = e.get("ph")
        if not isinstance(ph, str):
            problems.append(f"{where}: no ph")
            continue
        phases[ph] += 1
        where = f"event {index} ({ph} {e.get('name')!r})"
        if not isinstance(e.get("name"), str):
            problems.append(f"{where}: name is not a string")
        for field in ("pid", "tid"):
            if not isinstance(e.get(field), int) or isinstance(e.get(field), bool):
                problems.append(f"{where}: {field} missing or not an integer")
        if not finite_number(e.get("ts")) or e.get("ts", -1) < 0:
            problems.append(f"{where}: ts missing, not a finite number or negative")
            continue
        ts = float(e["ts"])
        track = (e.get("pid"), e.get("tid"))
        if ph == "M":
            args = e.get("args")
            if not isinstance(args, dict):
                problems.append(f"{where}: metadata without args")
            elif e["name"] == "process_name":
                if not isinstance(args.get("name"), str):
                    problems.append(f"{where}: process_name without a string name")
                process_named.add(e.get("pid"))
            elif e["name"] == "thread_name":
                if not isinstance(args.get("name"), str):
                    problems.append(f"{where}: thread_name without a string name")
                thread_named.add(track)
            elif e["name"] in ("process_sort_index", "thread_sort_index"):
                if not isinstance(args.get("sort_index"), int):
                    problems.append(f"{where}: sort_index not an integer")
            continue
        if "args" in e and not isinstance(e["args"], dict):
            problems.append(f"{where}: args is not an object")
        for key, value in (e.get("args") or {}).items():
            if isinstance(value, float) and not math.isfinite(value):
                problems.append(f"{where}: args.{key} is not finite")
        end = ts
        if ph == "X":
            dur = e.get("dur")
            if not finite_number(dur) or dur < 0:
                problems.append(f"{where}: X without a finite dur >= 0")
                continue
            end = ts + dur
            spans[track].append((ts, end, e["name"]))
            used_threads.add(track)
        elif ph == "B":
            begin_stack[track].append(e["name"])
            used_threads.add(track)
        elif ph == "E":
            if not begin_stack[track]:
                problems.append(f"{where}: E without a B on its track")
            else:
                begin_stack[track].pop()
        elif ph == "C":
            args = e.get("args")
            if not isinstance(args, dict) or not args:
                problems.append(f"{where}: counter without args")
            elif not all(finite_number(v) for v in args.values()):
                problems.append(f"{where}: counter args not all finite numbers: {args}")
            used_processes.add(e.get("pid"))
        elif ph in ("i", "I"):
            scope = e.get("s", "t")
            if scope not in ("g", "p", "t"):
                problems.append(f"{where}: instant scope {scope!r}")
            if scope == "t":
                used_threads.add(track)
            elif scope == "p":
                used_processes.add(e.get("pid"))
        elif ph in ("s", "t", "f"):
            if "id" not in e:
                problems.append(f"{where}: flow event without id")
            flows[(e.get("cat"), e.get("id"))].append(ph)
        else:
            problems.append(f"{where}: phase {ph!r} not checked by this script")
        latest_end = max(latest_end, end)

    for track, stack in begin_stack.items():
        if stack:
            problems.append(f"track {track}: {len(stack)} B without E ({stack[-1]!r} ...)")
    for key, seq in flows.items():
        if not seq or seq[0] != "s" or seq[-1] != "f" or any(p != "t" for p in seq[1:-1]):
            problems.append(f"flow {key}: phases {seq}, expected s t* f")
    # "X" spans on one track must nest (a viewer stacks them by containment); 1 ps of slack for
    # the decimal microseconds.
    slack = 1e-6
    for track, items in spans.items():
        items.sort(key=lambda s: (s[0], -s[1]))
        open_ends = []
        for start, end, name in items:
            while open_ends and open_ends[-1][0] <= start + slack:
                open_ends.pop()
            if open_ends and end > open_ends[-1][0] + slack:
                problems.append(
                    f"track {track}: span {name!r} [{start}, {end}] overlaps {open_ends[-1][1]!r} ending at "
                    f"{open_ends[-1][0]} without nesting")
                break
            open_ends.append((end, name))
    for pid in sorted({t[0] for t in used_threads} | used_processes):
        if pid not in process_named:
            problems.append(f"pid {pid} has events but no process_name")
    for track in sorted(used_threads):
        if track not in thread_named:
            problems.append(f"track {track} has events but no thread_name")
    if max_end_us is not None and latest_end > max_end_us + 1e-3:
        problems.append(f"an event ends at {latest_end} us, after the run's end {max_end_us} us")
    summary = dict(phases)
    summary["latest_end_us"] = latest_end
    return problems, summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace")
    parser.add_argument("--max-end-us", type=float)
    args = parser.parse_args()
    try:
        with open(args.trace, encoding="utf-8") as f:
            trace = json.load(f, parse_constant=reject_constant)
    except (OSError, ValueError) as error:
        print(f"{args.trace}: not valid JSON: {error}")
        return 1
    problems, summary = check(trace, args.max_end_us)
    for p in problems[:50]:
        print(f"{args.trace}: {p}")
    if problems:
        print(f"{args.trace}: {len(problems)} problem(s)")
        return 1
    print(f"{args.trace}: ok {json.dumps(summary, sort_keys=True)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
