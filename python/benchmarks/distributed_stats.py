"""Scaling of ``pimhe stats``'s server step over Ray (docs/DISTRIBUTED.md): `--users` rows of
two columns (`--statistic`, N = 8192), the one-process `pimhe.stats` (server on one CPU thread)
as the baseline, then `pimhe.distributed.stats` on a local Ray cluster of 1 and of 2 workers (a
fresh cluster per run, its start not timed; worker counts alternate, `--repeats` times).

The clients' encryption is excluded from the server's time, as the issue asks: every shard is
encrypted before the run starts (the same bytes for every run; measured apart), so that on this
2-core machine the driver's encryption does not take a worker's core. Every run's estimates
must equal the one-process ones exactly. Prints a table and the object store's bytes.

    python python/benchmarks/distributed_stats.py [--users 1024] [--statistic variance] [--repeats 2]
"""

import argparse
import os
import statistics
import tempfile
import time

import ray

import pimhe
import pimhe.distributed as dist
from pimhe._pimhe import StatsDriver

parser = argparse.ArgumentParser()
parser.add_argument("--users", type=int, default=1024)
parser.add_argument("--statistic", default="variance", choices=["mean", "variance", "linreg"])
parser.add_argument("--workers", default="1,2")
parser.add_argument("--shards", type=int, default=8)
parser.add_argument("--repeats", type=int, default=2)
args = parser.parse_args()

csv = os.path.join(tempfile.mkdtemp(prefix="pimhe-dstats-"), "rows.csv")
with open(csv, "w") as f:
    f.write("x,y\n" + "".join(f"{(u * 37) % 1000},{(u * 91) % 1000}\n" for u in range(args.users)))

run = {"mean": pimhe.stats.mean, "variance": pimhe.stats.variance, "linreg": pimhe.stats.linear_regression}
single = run[args.statistic](csv, ["x", "y"], backend=pimhe.Backend.cpu(1), seed=1, progress=False)
expected = [e.encrypted for e in single.estimates]

driver = StatsDriver(args.statistic, ["x", "y"], input=csv, seed=2, threads=1)
bounds = dist.shard_bounds(driver.users, args.shards)
start = time.perf_counter()
shards = {lo: driver.encrypt_shard(lo, hi) for lo, hi in bounds}
encrypt_s = time.perf_counter() - start


class Prepared:
    """The driver, its shards encrypted before the run."""

    users = driver.users

    def public_bytes(self):
        return driver.public_bytes()

    def encrypt_shard(self, lo, hi):
        return shards[lo]

    def finish(self, *a):
        return driver.finish(*a)


print(f"{args.statistic} of {args.users} users (x,y), N=8192, t={driver.plain_moduli}; "
      f"client encryption {encrypt_s:.2f} s (not in the server's times); load average {os.getloadavg()}")
print(f"one process (pimhe.stats, server on 1 CPU thread): server {single.server_wall_s:.2f} s")
times = {int(w): [] for w in args.workers.split(",")}
per_shard = {w: [] for w in times}
store = None
for _ in range(args.repeats):
    for workers in times:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        try:
            began = time.perf_counter()
            result = dist.stats(args.statistic, ["x", "y"], shards=args.shards, driver=Prepared(), progress=False)
            times[workers].append(time.perf_counter() - began)
        finally:
            ray.shutdown()
        assert [e["encrypted"] for e in result.report["estimates"]] == expected
        per_shard[workers].append(statistics.median(result.shard_s))
        store = result.object_store
base = statistics.median(times[min(times)])
print("| server | runs (s) | median s | users/s | vs 1 worker | worker s per shard (median) |")
print("|---|---|---:|---:|---:|---:|")
print(f"| one process | {single.server_wall_s:.2f} | {single.server_wall_s:.2f} | {args.users / single.server_wall_s:.0f} | | |")
for workers, runs in times.items():
    med = statistics.median(runs)
    print(f"| Ray, {workers} local worker{'s' if workers > 1 else ''} | {', '.join(f'{r:.2f}' for r in runs)} | {med:.2f} | "
          f"{args.users / med:.0f} | {base / med:.2f}x | {statistics.median(per_shard[workers]):.3f} |")
one, two = len(driver.encrypt_shard(0, 1)), len(driver.encrypt_shard(0, 2))
print(f"object store: {store}; a user's ciphertexts {two - one} bytes, a shard's framing {2 * one - two} bytes; "
      f"shards = {store['shards'] / ((two - one) * args.users):.4f}x the users' serialized ciphertexts")
