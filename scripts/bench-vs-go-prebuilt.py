#!/usr/bin/env python3
"""The table of scripts/bench-vs-go.sh from prebuilt binaries, for a
machine without a Go toolchain, hyperfine or /usr/bin/time (a lent GPU
machine): build the Go twins and weft where Go and cargo are, carry them
over, and run this there from the repository's root.

    # where Go is:
    mkdir -p bench-bin/go
    for p in crates/weft/benches/programs/*.go; do
        go build -o bench-bin/go/$(basename $p .go) $p
    done
    cp target/release/weft bench-bin/
    # on the other machine:
    scripts/bench-vs-go-prebuilt.py bench-bin/weft bench-bin/go [PROGRAM ...]

The same measures as bench-vs-go.sh: each side RUNS times (default 5),
the median wall time and the mean CPU time (user + system, from the
child's rusage), with the default workers (GOMAXPROCS unset, weft's one
per CPU) and with one; every program's Weft output must equal Go's.
"""
import os
import statistics
import subprocess
import sys
import time

RUNS = int(os.environ.get("RUNS", "5"))


def measure(cmd, env):
    walls, cpus = [], []
    for _ in range(RUNS):
        start = time.perf_counter()
        child = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        walls.append((time.perf_counter() - start) * 1000)
        cpus.append((usage.ru_utime + usage.ru_stime) * 1000)
        if status != 0:
            sys.exit(f"{' '.join(cmd)}: exit status {status}")
    return statistics.median(walls), statistics.mean(cpus)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    weft, go_dir = sys.argv[1], sys.argv[2]
    programs = sys.argv[3:] or sorted(os.listdir(go_dir))
    print("| program | workers | Go wall (ms) | Weft wall (ms) | wall Weft/Go "
          "| Go CPU (ms) | Weft CPU (ms) | CPU Weft/Go |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for p in programs:
        go = os.path.join(go_dir, p)
        src = f"crates/weft/benches/programs/{p}.weft"
        want = subprocess.run([go], capture_output=True, text=True).stdout
        got = subprocess.run([weft, "run", src], capture_output=True, text=True).stdout
        if want != got:
            sys.exit(f"{p}: outputs differ: Go printed {want!r}, Weft printed {got!r}")
        for workers in ("default", "1"):
            go_env = dict(os.environ)
            go_env.pop("GOMAXPROCS", None)
            cmd = [weft, "run", src]
            label = f"default ({os.cpu_count()})"
            if workers != "default":
                go_env["GOMAXPROCS"] = workers
                cmd = [weft, "run", "--workers", workers, src]
                label = workers
            gw, gc = measure([go], go_env)
            ww, wc = measure(cmd, dict(os.environ))
            print(f"| {p} | {label} | {gw:.1f} | {ww:.1f} | {ww / gw:.2f} "
                  f"| {gc:.1f} | {wc:.1f} | {wc / gc:.2f} |", flush=True)


if __name__ == "__main__":
    main()
