#!/usr/bin/env python3
"""The scaling model of a distributed row search (docs/distribution.md, "Scaling model"),
computed from measured inputs, printed as markdown.

usage: scaling_model.py --fit EMBEDDED_CPU_S N:CPU_S:MIB_RECEIVED ...   (the two cost terms below)
       scaling_model.py [--cores 16] [--gbit 10] [--machines 1,4,16,64]
                        [--leased NAME:WORK:TASKS:PER_PROCESS:THREADS ...]
                        [--embedded results/logs/edges-embedded.log]
                        [--cluster 2:results/logs/edges-cluster-2.log,4:...,8:...]
                        [--crossing results/logs/edges-crossing.txt] --per-byte-ns NS
                        [--overhead F] [--per-machine-s S] [--index-mib MIB] [--index-kept]

Inputs, all measured on one machine:
- per level, the embedded run's seconds on its 2 threads (its log's depth lines), read as
  2 x seconds of one core's work, and its index build (the coordinator builds it once);
- per level, the bytes the workers received with N owners (each distributed run's log);
  on M machines the run with the most owners N <= M, scaled by the crossing share of M owners
  over that of N (`--crossing`: the output of `cargo run --release -p shared --example
  crossing`), and each machine's share times the largest owner's arriving share over the mean
  (the same output), so that the most loaded machine sets the pace;
- the CPU beyond the embedded run, fitted from the runs of docs/distribution.md as a share of
  the work (`--overhead`), core-seconds per worker process (`--per-machine-s`) and CPU per
  byte received (`--per-byte-ns`);
- the index as the coordinator sends it (`--index-mib` packed per worker), one machine after
  another over the coordinator's link; or, with `--index-kept`, read by every machine from
  its `--index-dir`, neither built nor sent on more than one machine.

Per level on M machines of C cores with links of B bytes/s: work (1 + overhead) / (C M) +
per-byte CPU x bytes of the most loaded machine / C + those bytes / B, not overlapped (an
upper bound). `build h48h4` and `build h48h11` use the h11 level store's measured times and
sizes and the builds' table passes (docs/h48-tables.md), with the bytes their tasks pull or
get as marks (see `h48_project`).

Jobs of independent leased tasks (`--leased`, any number): WORK core-seconds of the embedded
run cut into TASKS equal tasks, PER_PROCESS seconds each worker process spends before its
first task (its own tables), and THREADS a task runs on (1: one task per core, as the
product method's; 0: a task takes a whole machine, as a coset does). On M machines the
wall is PER_PROCESS + the tasks of the busiest slot (tasks / slots, rounded up) times a
task's time on its threads; what crosses the network is counters (measured: at most a few
MiB through the coordinator) and is left out.
"""
import argparse
import math
import re
import sys

UNITS = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}


def embedded_levels(path):
    """{depth: seconds} and the index build's seconds from an embedded run's log."""
    levels, index = {}, 0.0
    for line in open(path):
        m = re.match(r"depth\s+(\d+):.*\((?:start|forward|backward), ([\d.]+) s\)", line)
        if m:
            levels[int(m.group(1))] = float(m.group(2))
        m = re.search(r"index built in ([\d.]+) s", line)
        if m:
            index = float(m.group(1))
    return levels, index


def exchanged(path):
    """{depth: bytes the workers received} from a distributed run's log."""
    out = {}
    for line in open(path):
        m = re.search(r"depth (\d+): workers exchanged .*, ([\d.]+) (\w+) received\)", line)
        if m and int(m.group(1)) > 0:  # depth 0's bytes are the index, counted on its own
            out[int(m.group(1))] = float(m.group(2)) * UNITS[m.group(3)]
    return out


def crossing_table(path):
    """{owners: (crossing share, largest owner's arriving share)} from the crossing example."""
    out = {}
    for line in open(path):
        parts = line.split()
        if len(parts) >= 3 and parts[0].isdigit():
            out[int(parts[0])] = (float(parts[1]), float(parts[2]))
    return out


def share(table, m):
    """The crossing share and the largest owner's over the mean at m owners, interpolated
    in log2 m between the owners counted."""
    if m <= 1:
        return 0.0, 1.0
    if m in table:
        c, largest = table[m]
        return c, largest * m / c
    known = sorted(table)
    lo = max([k for k in known if k < m], default=known[0])
    hi = min([k for k in known if k > m], default=known[-1])
    if lo == hi:
        return share(table, lo)
    t = (math.log2(m) - math.log2(lo)) / (math.log2(hi) - math.log2(lo))
    (c0, l0), (c1, l1) = share(table, lo), share(table, hi)
    return c0 + t * (c1 - c0), l0 + t * (l1 - l0)


def bytes_on(runs, table, m):
    """{depth: bytes received by all machines} on m machines, from the run with the most
    owners up to m (the fewest if none), scaled by the crossing shares."""
    if m <= 1:
        return {}
    n = max([k for k in runs if k <= m], default=min(runs))
    scale = share(table, m)[0] / share(table, n)[0] if table else (m - 1) / m * n / max(n - 1, 1)
    return {d: b * scale for d, b in runs[n].items()}


def project(levels, index_s, runs, table, machines, cores, link, per_byte, overhead, per_machine, index_bytes,
            index_kept=False):
    """Wall seconds on `machines` machines, and the share of it that is network. With
    `index_kept`, a cluster reads the index from each machine's `--index-dir` (kept by an
    earlier run): neither built nor sent; reading it is in the per-process cost."""
    kept = index_kept and machines > 1
    total, net = (0.0 if kept else 2 * index_s / cores), 0.0
    if machines > 1:
        net = 0.0 if kept else (machines - 1) * index_bytes / link
        total += net + per_machine / cores
    largest = share(table, machines)[1] if table else 1.0
    moved = bytes_on(runs, table, machines)
    for d, secs in levels.items():
        work = 2 * secs * (1 + overhead if machines > 1 else 1)
        busiest = moved.get(d, 0.0) / machines * largest
        total += work / (cores * machines) + per_byte * busiest / cores + busiest / link
        net += busiest / link
    return total, net


def h11_levels():
    """The h11 level store as the h8 build measured it (docs/h48-tables.md): per depth the
    seconds on 2 threads, the entries and the stored bytes."""
    return {
        7: (0.06, 548_562, 1.4e6),
        8: (0.54, 6_839_723, 14.3e6),
        9: (4.36, 85_659_526, 142.0e6),
        10: (28.0, 1_057_665_939, 1.28e9),
        11: (209.3, 12_045_847_349, 9.38e9),
    }


def fit(embedded_cpu, runs):
    """The cost beyond the embedded run fitted by least squares to runs of N workers: CPU of
    all processes less `embedded_cpu` = a constant (the overhead, as a share of
    `embedded_cpu`) + per-byte CPU x bytes received (the index's left out); a line through
    the runs' (bytes, CPU beyond) points. `runs`: [(N, CPU s of all processes, MiB received
    less the index)]. Prints the two terms, each run's residual, and each run's CPU per byte
    when the overhead is taken as zero."""
    points = [(mib * 2**20, cpu - embedded_cpu) for _, cpu, mib in runs]
    mean_b = sum(b for b, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    spread = sum((b - mean_b) ** 2 for b, _ in points)
    if spread == 0:
        sys.exit("the runs do not tell the two terms apart (give runs with different bytes)")
    per_byte = sum((b - mean_b) * (y - mean_y) for b, y in points) / spread
    constant = mean_y - per_byte * mean_b
    print(f"fitted on {len(runs)} runs against {embedded_cpu:.1f} CPU s embedded: overhead "
          f"{100 * constant / embedded_cpu:.1f} % ({constant:.1f} s), {per_byte * 1e9:.1f} ns a byte received\n")
    print("| N | CPU of all processes | beyond embedded | MiB received (less the index) | fitted | residual | ns a byte, no overhead |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for (n, cpu, mib), (b, y) in zip(runs, points):
        fitted = constant + per_byte * b
        alone = f"{y / b * 1e9:.1f}" if b else ""
        print(f"| {n:.0f} | {cpu:.1f} s | {y:.1f} s | {mib:,.1f} | {fitted:.1f} s | {y - fitted:+.1f} s | {alone} |")


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--fit":
        # scaling_model.py --fit EMBEDDED_CPU_S N:CPU_S:MIB ...
        if len(sys.argv) < 4:
            sys.exit("usage: scaling_model.py --fit EMBEDDED_CPU_S N:CPU_S:MIB_RECEIVED ...")
        try:
            runs = [tuple(float(x) for x in r.split(":")) for r in sys.argv[3:]]
            embedded = float(sys.argv[2])
        except ValueError:
            sys.exit("--fit takes the embedded CPU seconds, then N:CPU_S:MIB for each run")
        if any(len(r) != 3 for r in runs):
            sys.exit("each run is N:CPU_S:MIB_RECEIVED")
        return fit(embedded, runs)
    p = argparse.ArgumentParser()
    p.add_argument("--cores", type=int, default=16)
    p.add_argument("--gbit", type=float, default=10.0)
    p.add_argument("--machines", default="1,4,16,64")
    p.add_argument("--embedded", default="results/logs/edges-embedded.log")
    p.add_argument("--cluster", default="2:results/logs/edges-cluster-2.log,4:results/logs/edges-cluster-4.log,"
                   "8:results/logs/edges-cluster-8.log")
    p.add_argument("--crossing", default="results/logs/edges-crossing.txt",
                   help="the crossing example's output ('' : bytes scale by (M - 1) / M)")
    p.add_argument("--per-byte-ns", type=float, required=True)
    p.add_argument("--overhead", type=float, default=0.0)
    p.add_argument("--per-machine-s", type=float, default=0.0)
    p.add_argument("--h11-per-byte-ns", type=float, default=19.6,
                   help="the h11 levels' own CPU per byte (leased tasks, not refitted)")
    p.add_argument("--h48-cut", default="results/logs/h48-cut.txt",
                   help="the h48_cut example's output: the rows an H48 build's machine pulls")
    p.add_argument("--disk-gb-s", type=float, default=1.0, help="the coordinator's disk, writing")
    p.add_argument("--index-mib", type=float, default=0.0)
    p.add_argument("--index-kept", action="store_true",
                   help="a cluster reads the index from each machine's --index-dir: not built, not sent")
    p.add_argument("--leased", action="append", default=[],
                   help="NAME:WORK_CORE_S:TASKS:PER_PROCESS_S:THREADS (THREADS 0: a task takes a machine)")
    a = p.parse_args()
    machines = [int(m) for m in a.machines.split(",")]
    link = a.gbit * 1e9 / 8
    per_byte = a.per_byte_ns * 1e-9
    levels, index_s = embedded_levels(a.embedded)
    runs = {}
    for item in a.cluster.split(","):
        n, path = item.split(":", 1)
        runs[int(n)] = exchanged(path)
    table = crossing_table(a.crossing) if a.crossing else {}
    if not levels or not all(runs.values()):
        sys.exit("no depth lines in the logs given")
    print(f"edges HTM, machines of {a.cores} cores at {a.gbit:g} Gbit/s (per-byte CPU {a.per_byte_ns:g} ns, "
          f"overhead {100 * a.overhead:.0f} % and {a.per_machine_s:g} s per machine, index {index_s:.1f} s on 2 threads, {a.index_mib:g} MiB to each):\n")
    print("| machines | wall s | network s | speed-up | efficiency |")
    print("|---:|---:|---:|---:|---:|")
    args = (levels, index_s, runs, table)
    rest = (a.cores, link, per_byte, a.overhead, a.per_machine_s, a.index_mib * 2**20, a.index_kept)
    one, _ = project(*args, 1, *rest)
    for m in machines:
        t, net = project(*args, m, *rest)
        print(f"| {m} | {t:.1f} | {net:.1f} | {one / t:.1f}x | {one / t / m:.2f} |")
    pulled = pulled_table(a.h48_cut)
    missing = [m for m in machines if m not in pulled]
    if missing:
        sys.exit(f"{a.h48_cut} counts no pulled share for {missing} machines")
    for h, table_core_s, file_bytes in ((4, 2 * 70.3, 476.0e6), (11, 2 * 1088.0, 60.67e9)):
        h48_table(h, table_core_s, file_bytes, pulled, machines, a.cores, link, a.h11_per_byte_ns * 1e-9, a.disk_gb_s * 1e9)
    for job in a.leased:
        leased_table(job, machines, a.cores)


# An H48 build on workers (docs/h48-tables.md, "On workers"): the h11 levels to base + 1, then
# the table pass. A level's task reads its rows' sources at the level before, which are all
# over the level: each machine receives the share of all rows the busiest machine pulls when
# tasks (runs of the task order) are dealt in turn, as the h48_cut example counts it (its own
# rows' older levels stay with it: a row's task goes to the worker that keeps the row). A
# table row reads its sources at level base + 1: up to h48h9 as one row of marks (the row's
# bits) from each other machine keeping some of them, beyond as the rows, the same share of
# the level. The table's rows go up
# to the coordinator (zstd: 0.64 of their size) and onto its disk.
# Distinct rows moving into a row, on the mean over the 3,393 rows (H11Rows::sources: 13.85,
# at most 15; 18 moves, some from the same row).
SOURCES = 13.85
ZSTD_TABLE = 0.64
ESEP = 34_650


def h48_project(h, table_core_s, file_bytes, pulled, m, cores, link, per_byte, disk, by_workers=False):
    base = 9 if h <= 7 else 10
    if h <= 3:
        base = 8
    levels = {d: v for d, v in h11_levels().items() if d <= base + 1}
    work = sum(2 * secs for secs, _, _ in levels.values()) + table_core_s
    if m == 1:
        return work / cores + file_bytes / disk, 0.0, 0.0
    received = sum(levels[d - 1][2] for d in levels if d - 1 in levels) * pulled[m]
    if h <= 9:
        keepers = min(m - 1, SOURCES * (m - 1) / m)
        received += 3393 / m * keepers * (ESEP << h) / 8
    else:
        received += levels[base + 1][2] * pulled[m]
    # Rows written by the workers that make them (a shared file system with each machine's
    # share at the disk's rate) instead of through the coordinator.
    up = 0.0 if by_workers else file_bytes * ZSTD_TABLE / link
    write = file_bytes / disk / (m if by_workers else 1)
    net = received / link
    return work / (cores * m) + per_byte * received / cores + net + up + write, net + up, received


def pulled_table(path):
    """{machines: the largest share of all rows one pulls, tasks in the task order dealt in
    turn} from the h48_cut example's output (1: none)."""
    out = {1: 0.0}
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        if len(parts) == 3 and parts[0].isdigit() and parts[1] == "task order":
            out[int(parts[0])] = float(parts[2])
    return out


def h48_table(h, table_core_s, file_bytes, pulled, machines, cores, link, per_byte, disk):
    print(f"\nbuild h48h{h} (levels and table pass: {table_core_s:,.0f} core-seconds of table pass, "
          f"{file_bytes / 1e9:.2f} GB file; coordinator disk {disk / 1e9:g} GB/s), same machines:\n")
    print("| machines | wall s | network s | received per machine | speed-up | efficiency | "
          "efficiency, rows written by the workers |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    args = (h, table_core_s, file_bytes, pulled)
    one, _, _ = h48_project(*args, 1, cores, link, per_byte, disk)
    for m in machines:
        t, net, got = h48_project(*args, m, cores, link, per_byte, disk)
        w, _, _ = h48_project(*args, m, cores, link, per_byte, disk, by_workers=True)
        print(f"| {m} | {t:.1f} | {net:.1f} | {got / 2**20:,.0f} MiB | {one / t:.1f}x | {one / t / m:.2f} | "
              f"{one / w / m:.2f} |")


def leased_project(work, tasks, per_process, threads, machines, cores):
    """Wall seconds of a job of `tasks` equal leased tasks on `machines` machines."""
    per_task = work / tasks
    if threads == 0:
        slots, task_wall = machines, per_task / cores
    else:
        slots, task_wall = machines * (cores // threads), per_task / threads
    return per_process + math.ceil(tasks / slots) * task_wall


def leased_table(spec, machines, cores):
    name, work, tasks, per_process, threads = spec.rsplit(":", 4)
    work, tasks, per_process, threads = float(work), int(tasks), float(per_process), int(threads)
    how = "a machine a task" if threads == 0 else f"{threads} thread(s) a task"
    print(f"\n{name}: {work:,.0f} core-seconds in {tasks:,} tasks ({how}), {per_process:g} s per worker "
          f"process, same machines:\n")
    print("| machines | wall s | speed-up | efficiency |")
    print("|---:|---:|---:|---:|")
    one = leased_project(work, tasks, per_process, threads, 1, cores)
    for m in machines:
        t = leased_project(work, tasks, per_process, threads, m, cores)
        print(f"| {m} | {t:.1f} | {one / t:.1f}x | {one / t / m:.2f} |")


if __name__ == "__main__":
    main()
