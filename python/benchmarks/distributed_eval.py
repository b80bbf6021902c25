"""Scaling of the study's server step over Ray (docs/DISTRIBUTED.md): a two-column mean
(`--statistic`) at N = 8192, `--users` submissions encrypted once (timed apart: the clients'
cost), then added up by the one-process server (`pimhe.study.evaluate`) and by
`pimhe.distributed.evaluate` on a local Ray cluster of 1 and of 2 workers (a fresh cluster per
run, its start not timed; worker counts alternate, `--repeats` times). Every run's aggregates
are decrypted and must equal the one-process ones. Prints a table: seconds, submissions per
second, speedup over the first worker count, the workers' seconds per shard and per combine
(for projections), and the object store's bytes.

    python python/benchmarks/distributed_eval.py [--users 2048] [--workers 1,2] [--repeats 3] [--dir /tmp/x]
"""

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import ray

import pimhe.distributed as dist
from pimhe import study

parser = argparse.ArgumentParser()
parser.add_argument("--users", type=int, default=2048)
parser.add_argument("--statistic", default="mean", choices=["mean", "variance", "linreg"])
parser.add_argument("--workers", default="1,2", help="local worker counts to run, comma separated")
parser.add_argument("--shards", type=int, default=None, help="shards per run (default: the library's)")
parser.add_argument("--repeats", type=int, default=3, help="runs per worker count (alternating)")
parser.add_argument("--dir", default=None, help="where the study goes (default: a temporary directory)")
args = parser.parse_args()

root = Path(args.dir or tempfile.mkdtemp(prefix="pimhe-dist-"))
pub, secret, subs = root / "pub", root / "secret", root / "subs"
if not (subs.exists() and len(list(subs.glob("*.pimhe"))) == args.users):
    shutil.rmtree(root, ignore_errors=True)
    study.keygen(args.statistic, ["x", "y"], max_value=1000, max_users=1_000_000, public_dir=pub, secret_dir=secret, seed=1)
    csv = root / "rows.csv"
    csv.write_text("x,y\n" + "".join(f"{(u * 37) % 1000},{(u * 91) % 1000}\n" for u in range(args.users)))
    t = time.perf_counter()
    encrypted = study.encrypt(pub, csv, subs, seed=2)
    print(f"clients: {args.users} submissions of {encrypted['bytes_per_user']} bytes encrypted in "
          f"{time.perf_counter() - t:.1f} s (one process, not part of the server's time)")

t = time.perf_counter()
study.evaluate(pub, subs, root / "single.pimhe", force=True)
single_s = time.perf_counter() - t
expected = study.decrypt(pub, secret, root / "single.pimhe")

# Worker counts alternate (1, 2, 1, 2, ...) so that the load of a shared machine falls on both.
counts = [int(w) for w in args.workers.split(",")]
runs = {w: [] for w in counts}
for _ in range(args.repeats):
    for workers in counts:
        with dist.connect(f"local:{workers}"):
            out = root / f"agg{workers}.pimhe"
            result = dist.evaluate(pub, subs, out, shards=args.shards, force=True, progress=False)
        got = study.decrypt(pub, secret, out)
        assert (got["users"], got["estimates"]) == (expected["users"], expected["estimates"]), "not the one-process result"
        runs[workers].append(result)

print(f"one process (pimhe.study.evaluate, CPU backend, default threads): {single_s:.2f} s, "
      f"{args.users / single_s:.0f} submissions/s")
base = statistics.median(r.server_s for r in runs[counts[0]])
print("| Ray local workers | shards | runs (s) | median s | submissions/s | vs first row | median worker s per shard | "
      "median s per combine | object store: keys+study, submissions, partials (bytes) |")
print("|---:|---:|---|---:|---:|---:|---:|---:|---|")
for workers, results in runs.items():
    median = statistics.median(r.server_s for r in results)
    r = results[0]
    store = r.object_store
    print(f"| {workers} | {r.shards} | {', '.join(f'{x.server_s:.1f}' for x in results)} | {median:.2f} | "
          f"{args.users / median:.0f} | {base / median:.2f}x | "
          f"{statistics.median(s for x in results for s in x.shard_s):.2f} | "
          f"{statistics.median(s for x in results for s in x.combine_s):.3f} | "
          f"{store['public_keys'] + store['study']}, {store['submissions']}, {store['partials']} |")
