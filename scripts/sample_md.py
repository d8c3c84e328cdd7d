#!/usr/bin/env python3
"""Describe a `coordinator enumerate ... --sample-tasks N --json FILE` result in markdown: the
sampled tasks' cost and memory, and the whole job projected from them, for this machine and
for 4 machines of 16 cores.

usage: sample_md.py SAMPLE.json COMMAND > SAMPLE.md
"""
import json
import statistics
import sys

# Published counts a projection is compared with: positions at HTM depth 12 (the number within
# 12 face turns minus the number within 11, OEIS A080583 / Rokicki's 13f* enumeration).
PUBLISHED = {("htm", 12): 43689000394782 - 3314574738534}


def gib(b):
    return f"{b / 2**30:.2f} GiB"


def main():
    path, command = sys.argv[1], sys.argv[2]
    s = json.load(open(path))
    tasks = s["sampled"]
    secs = [t["seconds"] for t in tasks]
    mem = [t["bytes"] for t in tasks]
    products = sum(t["products"] for t in tasks)
    total, err = s["task_seconds"]["total"], s["task_seconds"]["error"]
    pos, pos_err = s["positions"]["total"], s["positions"]["error"]
    metric, depth = s["spec"].split("/")[2], int(s["spec"].split("/")[3])
    print(f"# Sample of `{s['spec']}`\n")
    print(f"Command: `{command}` ({s['threads']} threads).\n")
    print(f"{len(tasks)} of {s['tasks']:,} tasks ({100 * len(tasks) / s['tasks']:.2f} %), chosen at random "
          f"(fixed seed), each run on one thread with its own buffers.\n")
    print("| | min | median | mean | max |\n|---|---:|---:|---:|---:|")
    print(f"| task seconds | {min(secs):.2f} | {statistics.median(secs):.2f} | {statistics.mean(secs):.2f} | {max(secs):.2f} |")
    print(f"| task memory (GiB) | {min(mem) / 2**30:.2f} | {statistics.median(mem) / 2**30:.2f} | "
          f"{statistics.mean(mem) / 2**30:.2f} | {max(mem) / 2**30:.2f} |")
    print(f"\nProducts formed at depth {depth} in the sample: {products:,} "
          f"({sum(secs) / max(products, 1) * 1e9:.1f} ns of task time per product, all depths' work included).")
    print(f"Stored positions: {gib(s['stored_bytes'])}, built in {s['setup_seconds']:.1f} s; estimated up front "
          f"per task: {gib(s['estimated_task_bytes'])}; peak RSS of the run: {gib(s['peak_rss_bytes'])}.\n")
    print("## Projection (95 % intervals from the spread of the sampled tasks)\n")
    print(f"- Task time of the whole job: {total:,.0f} +- {err:,.0f} CPU s ({total / 3600:.1f} +- {err / 3600:.1f} CPU hours).")
    print(f"- On this machine ({s['threads']} threads): {total / s['threads'] / 3600:.1f} +- {err / s['threads'] / 3600:.1f} hours.")
    cores = 4 * 16
    wall = total / cores + s["setup_seconds"]
    print(f"- On 4 machines of 16 cores: {wall / 3600:.2f} +- {err / cores / 3600:.2f} hours "
          f"({total / cores:,.0f} s of tasks per core, plus storing P[0..=k] on each machine, "
          f"at most the {s['setup_seconds']:.0f} s measured here); memory per machine: stored positions plus 16 "
          f"tasks, {gib(s['stored_bytes'] + 16 * max(mem))} by the largest sampled task "
          f"({gib(s['stored_bytes'] + 16 * s['estimated_task_bytes'])} by the up-front estimate); "
          f"bytes moved: the job spec out, {4 * 8 * (depth + 1)} bytes of counters per task back "
          f"({s['tasks'] * 4 * 8 * (depth + 1) / 1e6:.1f} MB in all).")
    print(f"- Tasks per core: {s['tasks'] / cores:.0f}; the longest sampled task ({max(secs):.1f} s) is "
          f"{100 * max(secs) / (total / cores):.2f} % of a core's share, so the tail is short.")
    line = f"- Positions at depth {depth}: {pos:.6e} +- {pos_err:.2e}"
    published = PUBLISHED.get((metric, depth))
    if published:
        line += (f"; the published count is {published:,} ({100 * (pos - published) / published:+.2f} %, "
                 f"{abs(pos - published) / pos_err * 1.96:.2f} standard errors)")
    print(line + ".")


if __name__ == "__main__":
    main()
