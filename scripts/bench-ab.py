#!/usr/bin/env python3
"""Two `weft` binaries (A, B) beside Go on the Weft-vs-Go programs, interleaved.

For a change that must not move performance (a refactor), build the binary
before the change (A) and after it (B), then:

    scripts/bench-ab.py A_WEFT B_WEFT [--rounds 7] [--workers default,1] [PROGRAM ...]

Each round runs every program once with A, once with B and once with Go
(the Go build of crates/weft/benches/programs/NAME.go), in an order that
alternates between rounds, so the three share the machine's states. It
prints, per program and worker count, the median wall-clock and mean CPU
(user + system) milliseconds of each, and the ratios B/A and A/Go, B/Go.
All three must print the same output, or the script stops.
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PROGRAMS = os.path.join(ROOT, "crates", "weft", "benches", "programs")


def run(cmd, env):
    """Runs cmd; returns (stdout, wall ms, cpu ms)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    out, err = proc.stdout.read(), proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed: {err.decode(errors='replace')}")
    return out, wall, (usage.ru_utime + usage.ru_stime) * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("programs", nargs="*")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--workers", default="default,1")
    args = ap.parse_intermixed_args()
    programs = args.programs or sorted(
        f[:-5] for f in os.listdir(PROGRAMS) if f.endswith(".weft")
    )
    gobin = tempfile.mkdtemp(prefix="weft-ab-")
    for p in programs:
        subprocess.run(
            ["go", "build", "-o", os.path.join(gobin, p), os.path.join(PROGRAMS, p + ".go")],
            check=True,
        )
    print("| program | workers | A wall | B wall | B/A wall | A CPU | B CPU | B/A CPU | Go wall | A/Go wall | B/Go wall |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for p in programs:
        src = os.path.join(PROGRAMS, p + ".weft")
        for w in args.workers.split(","):
            env = dict(os.environ)
            env.pop("GOMAXPROCS", None)
            flags = []
            if w != "default":
                env["GOMAXPROCS"] = w
                flags = ["--workers", w]
            cmds = {
                "A": [args.a, "run", *flags, src],
                "B": [args.b, "run", *flags, src],
                "Go": [os.path.join(gobin, p)],
            }
            outs = {k: run(c, env)[0] for k, c in cmds.items()}  # warm-up and check
            if len(set(outs.values())) != 1:
                sys.exit(f"{p}: outputs differ: {outs}")
            walls = {k: [] for k in cmds}
            cpus = {k: [] for k in cmds}
            order = list(cmds)
            for r in range(args.rounds):
                for k in order if r % 2 == 0 else reversed(order):
                    _, wall, cpu = run(cmds[k], env)
                    walls[k].append(wall)
                    cpus[k].append(cpu)
            mw = {k: statistics.median(v) for k, v in walls.items()}
            mc = {k: statistics.mean(v) for k, v in cpus.items()}
            label = f"default ({os.cpu_count()})" if w == "default" else w
            print(
                f"| {p} | {label} | {mw['A']:.1f} | {mw['B']:.1f} | {mw['B'] / mw['A']:.2f} "
                f"| {mc['A']:.1f} | {mc['B']:.1f} | {mc['B'] / mc['A']:.2f} | {mw['Go']:.1f} "
                f"| {mw['A'] / mw['Go']:.2f} | {mw['B'] / mw['Go']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
