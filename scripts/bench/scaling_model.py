#!/usr/bin/env python3
"""The scaling model of a distributed row search (docs/distribution.md, "Scaling model"),
computed from measured inputs, printed as markdown.

usage: scaling_model.py [--cores 16] [--gbit 10] [--machines 1,4,16,64]
                        [--embedded results/logs/edges-embedded.log]
                        [--cluster results/logs/edges-cluster-4.log --workers 4]
                        [--per-byte-ns NS]

Inputs, all measured on one machine:
- per level, the embedded run's seconds on its 2 threads (its log's depth lines), read as
  2 x seconds of one core's work;
- per level, the bytes the workers exchanged with N owners (the distributed run's log), scaled
  to M owners by the share of images that cross owners, (M - 1) / M;
- the CPU a byte on the wire costs beyond the embedded work (encoding, decoding, merging), from
  the distributed run's workers' CPU against the embedded run's (--per-byte-ns);
- the index build (the embedded log's "index built in"), which every machine repeats.

Per level on M machines of C cores with links of B bytes/s: work / (C M) + per-byte CPU x
bytes / M / C + bytes / M / B, not overlapped (an upper bound). The h11 levels of the H48
build use their level store's measured times and sizes (docs/h48-tables.md).
"""
import argparse
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
        if m:
            out[int(m.group(1))] = float(m.group(2)) * UNITS[m.group(3)]
    return out


def project(levels, index_s, bytes_at, workers, machines, cores, link, per_byte):
    """Wall seconds on `machines` machines, and the share of it that is network."""
    total, net = 2 * index_s / cores, 0.0
    for d, secs in levels.items():
        work = 2 * secs
        crossing = bytes_at.get(d, 0.0) * workers / max(workers - 1, 1) * (machines - 1) / machines
        per_machine = crossing / machines
        total += work / (cores * machines) + per_byte * per_machine / cores + per_machine / link
        net += per_machine / link
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--cores", type=int, default=16)
    p.add_argument("--gbit", type=float, default=10.0)
    p.add_argument("--machines", default="1,4,16,64")
    p.add_argument("--embedded", default="results/logs/edges-embedded.log")
    p.add_argument("--cluster", default="results/logs/edges-cluster-4.log")
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--per-byte-ns", type=float, required=True)
    a = p.parse_args()
    machines = [int(m) for m in a.machines.split(",")]
    link = a.gbit * 1e9 / 8
    per_byte = a.per_byte_ns * 1e-9
    levels, index_s = embedded_levels(a.embedded)
    bytes_at = exchanged(a.cluster)
    if not levels or not bytes_at:
        sys.exit("no depth lines in the logs given")
    print(f"edges HTM, machines of {a.cores} cores at {a.gbit:g} Gbit/s "
          f"(per-byte CPU {a.per_byte_ns:g} ns, index {index_s:.1f} s on 2 threads):\n")
    print("| machines | wall s | network s | speed-up | efficiency |")
    print("|---:|---:|---:|---:|---:|")
    one, _ = project(levels, index_s, bytes_at, a.workers, 1, a.cores, link, per_byte)
    for m in machines:
        t, net = project(levels, index_s, bytes_at, a.workers, m, a.cores, link, per_byte)
        print(f"| {m} | {t:.1f} | {net:.1f} | {one / t:.1f}x | {one / t / m:.2f} |")
    # h11: the bytes that cross are the images of level d into level d + 1, at the stored
    # bytes per entry of level d + 1, as many times as the images outnumber the new entries
    # (a sender ORs its own images of one target, different senders' images do not meet).
    h11 = h11_levels()
    crossing = {}
    for d in sorted(h11)[1:]:
        _, entries, stored = h11[d]
        images = 18 * h11[d - 1][1]
        crossing[d] = stored * max(1.0, images / entries)
    print("\nh11 levels to depth 11 (the level store's work and sizes), same machines:\n")
    print("| machines | wall s | network s | speed-up | efficiency |")
    print("|---:|---:|---:|---:|---:|")
    # crossing bytes are "all remote" volumes: scale by (M - 1) / M directly (workers = M).
    def h11_project(m):
        total, net = 0.0, 0.0
        for d, (secs, _, _) in h11.items():
            per_machine = crossing.get(d, 0.0) * (m - 1) / m / m
            total += 2 * secs / (a.cores * m) + per_byte * per_machine / a.cores + per_machine / link
            net += per_machine / link
        return total, net
    one, _ = h11_project(1)
    for m in machines:
        t, net = h11_project(m)
        print(f"| {m} | {t:.1f} | {net:.1f} | {one / t:.1f}x | {one / t / m:.2f} |")


if __name__ == "__main__":
    main()
