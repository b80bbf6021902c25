"""Overhead of the Python bindings: `relinearize(multiply(a, b))` at BGV N = 8192, batch 8,
called from Python, against the same Rust calls timed inside Rust in the same process on the
same backend and ciphertexts (`Evaluator._time_multiply_relinearize`). Optionally also runs
the CLI's `pimhe bench scheme` (a separate process) when its binary is given.

    python python/benchmarks/overhead.py [--threads T] [--repeats R] [--cli target/release/pimhe]
"""

import argparse
import statistics
import subprocess
import time

import numpy as np

import pimhe

parser = argparse.ArgumentParser()
parser.add_argument("--n", type=int, default=8192)
parser.add_argument("--batch", type=int, default=8)
parser.add_argument("--threads", type=int, default=None)
parser.add_argument("--repeats", type=int, default=15)
parser.add_argument("--cli", default=None, help="path of the pimhe CLI binary, to run `bench scheme` too")
args = parser.parse_args()

ctx = pimhe.Context.bgv(n=args.n)
keys = ctx.keygen(seed=1)
backend = pimhe.Backend.cpu(args.threads)
enc = ctx.encryptor(keys.public_key, backend, seed=2)
ev = ctx.evaluator(backend, relin_key=keys.relin_key)
rng = np.random.default_rng(0)
a = enc.encrypt(rng.integers(0, ctx.plain_modulus, (args.batch, ctx.slots), dtype=np.uint64))
b = enc.encrypt(rng.integers(0, ctx.plain_modulus, (args.batch, ctx.slots), dtype=np.uint64))

for _ in range(3):  # warm up both paths
    ev.relinearize(ev.multiply(a, b))
ev._time_multiply_relinearize(a, b, 3)

python_s, rust_s = [], []
for _ in range(args.repeats):  # interleaved, so both see the same machine load
    start = time.perf_counter()
    ev.relinearize(ev.multiply(a, b))
    python_s.append(time.perf_counter() - start)
    rust_s.extend(ev._time_multiply_relinearize(a, b, 1))

py_med, rs_med = statistics.median(python_s), statistics.median(rust_s)
print(f"BGV N={args.n} batch {args.batch}, cpu backend, {backend.threads} threads, {args.repeats} runs each (median, min)")
print(f"  multiply + relinearize from Python : {py_med * 1e3:8.3f} ms  (min {min(python_s) * 1e3:.3f} ms)")
print(f"  the same calls timed inside Rust   : {rs_med * 1e3:8.3f} ms  (min {min(rust_s) * 1e3:.3f} ms)")
print(f"  Python overhead: {(py_med - rs_med) * 1e6:+.1f} us per multiply+relinearize "
      f"({(py_med / rs_med - 1) * 100:+.2f} %); min vs min {(min(python_s) - min(rust_s)) * 1e6:+.1f} us")

if args.cli:
    cmd = [args.cli, "bench", "scheme", "--scheme", "bgv", "--n", str(args.n), "--batch", str(args.batch)]
    if args.threads:
        cmd += ["--threads", str(args.threads)]
    print("  $ " + " ".join(cmd))
    out = subprocess.run(cmd, capture_output=True, text=True)
    for line in (out.stdout + out.stderr).splitlines():
        if any(k in line for k in ("multiply", "relin", "threads", "median")):
            print("    " + line)
