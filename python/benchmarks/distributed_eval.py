"""Scaling of the study's server step over Ray (docs/DISTRIBUTED.md): a two-column mean
(`--statistic`) at N = 8192, `--users` submissions encrypted once (timed apart: the clients'
cost), then added up by the one-process server (`pimhe.study.evaluate`) and by
`pimhe.distributed.evaluate` on a local Ray cluster of 1 and of 2 workers (each a fresh
cluster; its start is not timed). Every run's aggregates are decrypted and must equal the
one-process ones. Prints a table: seconds, submissions per second, speedup over 1 worker, and
the object store's bytes.

    python python/benchmarks/distributed_eval.py [--users 2048] [--workers 1,2] [--dir /tmp/x]
"""

import argparse
import json
import shutil
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
rows = [("one process (pimhe.study.evaluate)", single_s, None)]
for workers in [int(w) for w in args.workers.split(",")]:
    with dist.connect(f"local:{workers}"):
        result = dist.evaluate(pub, subs, root / f"agg{workers}.pimhe", shards=args.shards, force=True, progress=False)
    got = study.decrypt(pub, secret, root / f"agg{workers}.pimhe")
    assert (got["users"], got["estimates"]) == (expected["users"], expected["estimates"]), "not the one-process result"
    rows.append((f"Ray, {workers} local worker(s), {result.shards} shards", result.server_s, result))

one = next((s for name, s, r in rows if r is not None and r.workers == 1), None)
print(f"| server | seconds | submissions/s | vs 1 worker | object store: keys+study, submissions, partials (bytes) |")
print("|---|---:|---:|---:|---|")
for name, seconds, r in rows:
    speedup = f"{one / seconds:.2f}x" if (one and r is not None) else ""
    store = "" if r is None else "{}, {}, {}".format(
        r.object_store["public_keys"] + r.object_store["study"], r.object_store["submissions"], r.object_store["partials"])
    print(f"| {name} | {seconds:.2f} | {args.users / seconds:.0f} | {speedup} | {store} |")
print(json.dumps({"users": args.users, "single_s": single_s,
                  "runs": [r.to_json() for _, _, r in rows if r is not None]}))
