#!/usr/bin/env python3
"""Splits a profiled cluster run's CPU by the code it lies under.

Reads `perf script -F comm,pid,time,ip,sym` output of a run recorded with call graphs
(`scripts/bench/profile-exchange.sh`) and the run's JSON (the workers' received bytes), and
prints, for the workers together, the seconds of samples under each kind of code and per byte
the workers received: the exchange (coding messages, merging them, a part's questions, gRPC
and sockets), levels kept on disk, the index's reading, and the rest (the search). A sample
counts once, under the first kind (in the order below) any frame of its stack belongs to.

    exchange_split.py PERF_TXT RUN_JSON [HZ]
"""

import json
import sys

# Kinds of code, by substrings of the symbols on a sample's stack (first match wins).
KINDS = [
    ("reading the index", ["index_file::unpack"]),
    ("coding messages", ["encode_rows"]),
    ("merging messages", ["SparseRows::or_into", "decode_rows"]),
    ("questions", ["OwnedPart::misses"]),
    ("gRPC, sockets, joined messages", ["scheduler::multi_thread::worker::run"]),
    ("levels kept on disk", ["put_with", "KeptLevel", "kept_level"]),
]
EXCHANGE = {"coding messages", "merging messages", "questions", "gRPC, sockets, joined messages"}


def samples(path):
    """Yields (comm, pid, frames) per sample."""
    head, frames = None, []
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if head:
                    yield head[0], head[1], frames
                head, frames = None, []
            elif line[0] not in " \t":
                parts = line.split()
                head, frames = (parts[0], int(parts[1])), []
            else:
                frames.append(line.strip())
    if head:
        yield head[0], head[1], frames


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    hz = float(sys.argv[3]) if len(sys.argv) == 4 else 499.0
    run = json.load(open(sys.argv[2]))
    received = sum(w["received_bytes"] for w in run["traffic"]["workers"])
    per_pid, worker_pids = {}, set()
    for comm, pid, frames in samples(sys.argv[1]):
        if comm == "worker":
            worker_pids.add(pid)
        kinds = per_pid.setdefault(pid, {})
        kind = next((k for k, subs in KINDS if any(s in fr for fr in frames for s in subs)), "the rest")
        kinds[kind] = kinds.get(kind, 0) + 1
    if not worker_pids:
        sys.exit("no worker process in the profile")
    total = {}
    for pid in worker_pids:
        for k, n in per_pid[pid].items():
            total[k] = total.get(k, 0) + n
    seconds = {k: n / hz for k, n in total.items()}
    print(f"{len(worker_pids)} workers, {sum(seconds.values()):.1f} s of samples, "
          f"{received / 2**20:.1f} MiB received")
    rows = [k for k, _ in KINDS] + ["the rest"]
    for k in rows:
        s = seconds.get(k, 0.0)
        print(f"  {k:32} {s:7.1f} s  {1e9 * s / max(1, received):6.2f} ns a byte")
    exchange = sum(seconds.get(k, 0.0) for k in EXCHANGE)
    print(f"  {'the exchange (coding to gRPC)':32} {exchange:7.1f} s  "
          f"{1e9 * exchange / max(1, received):6.2f} ns a byte")


if __name__ == "__main__":
    main()
