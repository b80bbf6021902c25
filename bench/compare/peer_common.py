"""What the peer benchmarks (peer_seal.py, peer_openfhe.py) share: timing, the check of a
decrypted product, parameter summaries and the JSON they print.

Each peer script runs in its own virtual environment (see run.py), so this module uses the
standard library only.
"""

import argparse
import json
import statistics
import sys
import time
import traceback

# The plaintext modulus of every library in the comparison: pimhe's presets use 65537 from
# N = 4096 up, and 65537 = 1 mod 2N up to N = 32768, so every library can batch with it.
PLAIN_MODULUS = 65537


class Rounds:
    """The seconds of each operation over the rounds, as `pimhe bench scheme` reports them:
    round 0 is an untimed warm-up (first-touch allocations, caches), so a benchmark runs
    repeat + 1 rounds."""

    def __init__(self):
        self.times = {}

    def time(self, op, f, *args):
        """Calls f(*args), adds its time to op's list and returns its value."""
        start = time.perf_counter()
        value = f(*args)
        self.times.setdefault(op, []).append(time.perf_counter() - start)
        return value

    def summary(self):
        """{op: {best_s, median_s, times_s}} without the warm-up; one ciphertext per call, so
        these are per ciphertext."""
        return {
            op: {"best_s": min(ts[1:]), "median_s": statistics.median(ts[1:]), "times_s": ts[1:]}
            for op, ts in self.times.items()
        }


def check_product(op, got, x, y, t=PLAIN_MODULUS):
    """Raises unless every slot of `got` is x[i] * y[i] mod t (values may come centred)."""
    for i, (a, b, g) in enumerate(zip(x, y, got)):
        if (g - a * b) % t != 0:
            raise RuntimeError(f"{op}: slot {i} decrypted to {g}, expected {a * b % t}")
    if len(got) < len(x):
        raise RuntimeError(f"{op}: {len(got)} slots decrypted, expected {len(x)}")


def params_summary(ciphertext_bits, special_bits, plain_modulus=PLAIN_MODULUS, **extra):
    """The parameters of one context: bits of the ciphertext primes and of the key-switching
    primes (P), and their totals."""
    summary = {
        "plain_modulus": plain_modulus,
        "ciphertext_prime_bits": list(ciphertext_bits),
        "special_prime_bits": list(special_bits),
        "log_q_ciphertext": sum(ciphertext_bits),
        "log_q_total": sum(ciphertext_bits) + sum(special_bits),
    }
    summary.update(extra)
    return summary


def parse_args(description):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--n", type=int, nargs="+", required=True, help="ring degrees")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds per operation")
    parser.add_argument("--seed", type=int, default=1, help="seed of the plaintext slots")
    parser.add_argument(
        "--match-log-q",
        nargs="*",
        default=[],
        metavar="N:BITS",
        help="total modulus bits to match per ring degree (libraries that choose their own primes)",
    )
    args = parser.parse_args()
    args.match_log_q = {int(n): int(bits) for n, bits in (item.split(":") for item in args.match_log_q)}
    return args


def run_all(library, version, threads, degrees, bench_one):
    """Runs bench_one(n) for each degree and prints one JSON object. A degree whose benchmark
    raises is reported with its error, and the others still run."""
    results = []
    for n in degrees:
        try:
            results.extend(bench_one(n))
        except Exception as e:  # a peer's failure is data for the table, not a crash
            traceback.print_exc(file=sys.stderr)
            results.append({"n": n, "error": f"{type(e).__name__}: {e}"})
    json.dump({"library": library, "version": version, "threads": threads, "results": results}, sys.stdout)
    print()
