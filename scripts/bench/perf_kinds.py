#!/usr/bin/env python3
"""Sorts the samples of a `perf record -g` file into kinds by their leaf symbol, per process
(the coordinator and each worker), as in docs/distribution.md:

    cargo build --profile profiling -p coordinator -p worker    # target/profiling/: line tables
    perf record -F 499 -g -a -o cluster.data -- <coordinator and workers ...>
    python3 scripts/bench/perf_kinds.py cluster.data

Only the processes named `coordinator` or `worker` (their rayon threads carry that name, their
runtime threads `tokio-rt-worker`) are counted.
"""
import collections
import subprocess
import sys

# Checked in this order; the first kind whose markers occur in the leaf symbol wins.
KINDS = [
    ("search", ("forward_task", "Counting::count", "KnownVisited", "close_row", "Map<I,F>", "unvisited",
                "pull_", "backward", "symmetry_map", "Seen>", "count_", "locate", "edges_of", "edge_ranks",
                "consume_iter")),
    ("zstd", ("ZSTD_", "HUF_", "FSE_", "HIST_")),
    ("copies", ("memmove", "memcpy")),
    ("memset", ("memset",)),
    ("kernel: pages", ("clear_page", "page_fault", "anonymous_page", "handle_mm_fault", "__alloc", "folio",
                       "lruvec", "rmap", "set_pte", "filemap", "memcg")),
]


def kind_of(leaf, stack):
    for kind, markers in KINDS:
        if any(m in leaf for m in markers):
            if kind == "zstd":
                return "zstd decompression" if "ecompress" in stack else "zstd compression"
            return kind
    if "kernel.kallsyms" in leaf:
        return "kernel: other"
    return "other user code"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: perf_kinds.py PERF_DATA")
    script = subprocess.run(["perf", "script", "-i", sys.argv[1], "-F", "comm,pid,tid,ip,sym,dso"],
                            capture_output=True, text=True)
    if script.returncode != 0:
        sys.exit(f"perf script failed: {script.stderr.strip()}")
    kinds = collections.defaultdict(collections.Counter)
    names = {}
    for block in script.stdout.split("\n\n"):
        lines = [line.strip() for line in block.strip().split("\n") if line.strip()]
        if len(lines) < 2:
            continue
        comm, pid = lines[0].split()[0], lines[0].split()[1].split("/")[0]
        if comm not in ("coordinator", "worker", "tokio-rt-worker"):
            continue
        if comm != "tokio-rt-worker":
            names[pid] = comm
        leaf = lines[1].split(None, 1)[-1]
        kinds[pid][kind_of(leaf, "\n".join(lines[1:]))] += 1
    for pid, counts in sorted(kinds.items()):
        print(f"{names.get(pid, '?')} {pid}: {sum(counts.values())} samples")
        for kind, n in counts.most_common():
            print(f"    {kind:22} {n:8}")


if __name__ == "__main__":
    main()
