#!/usr/bin/env python3
"""Each ethernet link direction's busy share over time, from a `cclmesh run --trace` file.

    build/tools/cclmesh/cclmesh run --system mesh:1x4 --op all_to_all --size 64MiB --no-data \\
        --trace t.json --trace-limit 200000
    scripts/trace_link_utilisation.py t.json [WINDOW_US]

Prints one line per link direction: its track name, the data packets it sent, when the last one
ended, and the percentage of each WINDOW_US (default 500) window the wire spent sending data. The
last window ends with the trace's last data packet (any link's), so a trace shorter than a
window is not read as idle for the rest of it (session 41: the README's 1 MiB all_gather, 61 us
of packets at 68% of line rate, read as 8% of a 500 us window).
Data packets are those carrying more than a flow-control word (acks and credits are 16 B), so
the figures are the payload's share of the wire, as %line is. A track whose spans passed
--trace-limit says so in its name ("... over the trace limit not shown"): raise the limit, or
its later windows read as idle.
"""
import collections
import json
import sys

CONTROL_PAYLOAD_BYTES = 16


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    window = float(argv[2]) if len(argv) == 3 else 500.0
    if window <= 0:
        sys.exit(f"WINDOW_US: {argv[2]}; expected a positive number of microseconds")
    try:
        with open(argv[1]) as f:
            trace = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"{argv[1]}: {e}; expected a trace written by `cclmesh run --trace`")
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    processes, threads = {}, {}
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            processes[e["pid"]] = e["args"]["name"]
        if e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
    spans = collections.defaultdict(list)
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "ethernet":
            continue
        if e.get("args", {}).get("payload_bytes", 0) <= CONTROL_PAYLOAD_BYTES:
            continue
        spans[(e["pid"], e["tid"])].append((e["ts"], e["dur"]))
    if not spans:
        sys.exit(f"{argv[1]}: no ethernet data packets; was it written by `cclmesh run --trace`?")
    trace_end = max(s + d for packets in spans.values() for s, d in packets)
    last_window = trace_end - int(trace_end // window) * window
    for key in sorted(spans):
        packets = sorted(spans[key])
        last_end = max(s + d for s, d in packets)
        name = f"{processes.get(key[0], key[0])} | {threads.get(key, key[1])}"
        shares = " ".join(f"{share:.0f}" for share in window_shares(packets, window, trace_end))
        last = f" (the last {last_window:.1f} us, to the trace's end)" if 0 < last_window < window else ""
        print(f"{name}: {len(packets)} packets, last ends at {last_end:.1f} us; % busy per {window:g} us{last}: "
              f"{shares}")


def window_shares(packets, window, trace_end):
    """The percentage of each window from 0 to trace_end that (start, duration) packets kept the
    wire busy; the last window is as long as the trace leaves it."""
    busy = collections.defaultdict(float)
    for start, duration in packets:
        # A packet straddling a window boundary counts in each window for its part there.
        t, end = start, start + duration
        while t < end:
            edge = (int(t // window) + 1) * window
            busy[int(t // window)] += min(end, edge) - t
            t = min(end, edge)
    windows = int(trace_end // window) + 1
    lengths = [min(window, trace_end - i * window) for i in range(windows)]
    if lengths[-1] <= 0:  # the trace ends on a window's edge: no window after it
        lengths.pop()
    return [100 * busy[i] / length for i, length in enumerate(lengths)]


if __name__ == "__main__":
    main(sys.argv)
