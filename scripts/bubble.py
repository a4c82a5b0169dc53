#!/usr/bin/env python3
"""The pipeline bubble of a traced run of examples/pipeline_parallel.weft.

Usage:
  scripts/bubble.py TRACE.json [--micro M] [--prefix stage]
                    [--window START_MS END_MS] [--crop OUT.json]

TRACE.json is what `weft run --trace` wrote. The stages are the task tracks
whose name starts with PREFIX (default "stage": `stage0 #2`, `stage1 #3`).
For each stage, its busy time is the union of its `run` spans (the task
being polled: computing, or handing values to channels) inside the window,
and its bubble is the rest of the window: 1 - busy / window. The window is
START_MS..END_MS in the run's clock (the clock of `now()`, which the trace
uses too: trace microseconds / 1000), e.g. the step that
`pipeline_parallel.weft -- --show-step K` prints; without --window it runs
from the stages' first span to their last (the whole run, the test pass
included). The formula (p-1)/(m+p-1) is printed next to the measurement
for p stages and m micro-batches (--micro, default 4).

--crop writes the trace cut to the window (spans clipped to it, metadata
kept), for `weft trace OUT.json -o step.svg`.
"""

import argparse
import json
import sys


def union_within(spans, lo, hi):
    """Total length of the union of (start, end) spans clipped to [lo, hi]."""
    clipped = sorted((max(s, lo), min(e, hi)) for s, e in spans if e > lo and s < hi)
    total, cur_s, cur_e = 0.0, None, None
    for s, e in clipped:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cur_s
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--micro", type=int, default=4)
    ap.add_argument("--prefix", default="stage")
    ap.add_argument("--window", nargs=2, type=float, metavar=("START_MS", "END_MS"))
    ap.add_argument("--crop")
    a = ap.parse_args()

    with open(a.trace) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    names = {
        e["tid"]: e["args"]["name"]
        for e in events
        if e.get("ph") == "M" and e.get("name") == "thread_name" and e.get("pid") == 1
    }
    stages = sorted(
        (name, tid) for tid, name in names.items() if name.startswith(a.prefix)
    )
    if not stages:
        sys.exit(f"no task track named {a.prefix}...: is this a trace of pipeline_parallel.weft?")
    tids = {tid for _, tid in stages}
    runs = {tid: [] for tid in tids}
    first, last = float("inf"), 0.0
    for e in events:
        if e.get("ph") != "X" or e.get("pid") != 1 or e.get("tid") not in tids:
            continue
        s, d = float(e["ts"]), float(e.get("dur", 0))
        first, last = min(first, s), max(last, s + d)
        if e.get("cat") == "run":
            runs[e["tid"]].append((s, s + d))
    lo, hi = (a.window[0] * 1000, a.window[1] * 1000) if a.window else (first, last)
    window = hi - lo
    if window <= 0:
        sys.exit("empty window")

    p, m = len(stages), a.micro
    print(f"window {window / 1000:.3f} ms, {p} stages, {m} micro-batches")
    bubbles = []
    for name, tid in stages:
        busy = union_within(runs[tid], lo, hi)
        bubbles.append(1 - busy / window)
        print(f"{name}: busy {busy / 1000:.3f} ms ({busy / window:.3f}), bubble {1 - busy / window:.3f}")
    print(f"bubble mean {sum(bubbles) / p:.3f}, formula (p-1)/(m+p-1) = {(p - 1) / (m + p - 1):.3f}")

    if a.crop:
        kept = []
        for e in events:
            if e.get("ph") == "M":
                kept.append(e)
                continue
            if "ts" not in e:
                continue
            s = float(e["ts"])
            end = s + float(e.get("dur", 0))
            if end < lo or s > hi:
                continue
            e = dict(e)
            if e.get("ph") == "X":
                e["ts"] = max(s, lo)
                e["dur"] = min(end, hi) - e["ts"]
            kept.append(e)
        with open(a.crop, "w") as f:
            json.dump({"traceEvents": kept, "displayTimeUnit": "ms"}, f)
        print(f"wrote {a.crop}: {len(kept)} events")


if __name__ == "__main__":
    main()
