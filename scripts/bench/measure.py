#!/usr/bin/env python3
"""Run one command, measure wall time, CPU time and peak RSS, and append a row to
results/BENCHMARKS.md.

usage: measure.py LABEL [--stop-after SECONDS] -- COMMAND [ARGS...]

With --stop-after, a command still running after SECONDS is killed (a job that resumes from
its journal, run in sittings); its row is recorded with "(stopped)" after the label, and the
exit status is 75. SIGTERM or SIGINT to measure.py ends such a sitting early the same way.

Peak RSS is the maximum resident set size of the largest child process (getrusage
RUSAGE_CHILDREN), so run the binary directly, not through cargo.
"""
import datetime
import os
import platform
import resource
import shlex
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TABLE = os.path.join(ROOT, "results", "BENCHMARKS.md")
HEADER = """# Benchmarks

Rows are appended by `scripts/bench/*.sh` (through `scripts/bench/measure.py`); each names the
commit, the machine and the exact command. Wall and CPU are seconds; CPU is user + system of
the command's processes; peak RSS is the largest resident set of one process.

| date | commit | machine | label | wall s | CPU s | peak RSS MiB | command |
|---|---|---|---|---:|---:|---:|---|
"""


def machine():
    cpu = "unknown cpu"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return f"{os.cpu_count()} cores {cpu}, {mem:.0f} GiB"


def main():
    args = sys.argv[1:]
    limit = None
    if len(args) >= 3 and args[1] == "--stop-after":
        limit = float(args[2])
        del args[1:3]
    if len(args) < 3 or args[1] != "--":
        sys.exit(__doc__)
    label, cmd = args[0], args[2:]
    start = time.monotonic()
    child = subprocess.Popen(cmd)
    stopped = False
    if limit is not None:
        def stop_now(signum, frame):
            raise subprocess.TimeoutExpired(cmd, 0)
        signal.signal(signal.SIGTERM, stop_now)
        signal.signal(signal.SIGINT, stop_now)
    try:
        code = child.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        child.kill()
        code = child.wait()
        stopped = True
        label += " (stopped)"
    wall = time.monotonic() - start
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    if code != 0 and not stopped:
        sys.exit(f"measure.py: command failed with status {code}: {' '.join(cmd)}")
    # BENCH_COMMIT: the commit the binaries were built from, when not this tree's HEAD.
    commit = os.environ.get("BENCH_COMMIT") or subprocess.run(
        ["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip() or "unknown"
    row = "| {} | {} | {} | {} | {:.2f} | {:.2f} | {:.1f} | `{}` |\n".format(
        datetime.date.today().isoformat(), commit, machine(), label, wall,
        usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, shlex.join(cmd))
    if not os.path.exists(TABLE):
        with open(TABLE, "w") as f:
            f.write(HEADER)
    insert_row(row)
    sys.stdout.write(row)
    if stopped:
        sys.exit(75)


def insert_row(row):
    """Adds `row` at the end of the table (before the notes that follow it)."""
    with open(TABLE) as f:
        lines = f.readlines()
    start = next(i for i, l in enumerate(lines) if l.startswith("| date |"))
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    lines.insert(end, row)
    with open(TABLE, "w") as f:
        f.writelines(lines)


if __name__ == "__main__":
    main()
