"""What the peer benchmarks (peer_seal.py, peer_openfhe.py) share: timing, the check of a
decrypted product, parameter summaries and the JSON they print.

Each peer script runs in its own virtual environment (see run.py), so this module uses the
standard library only.
"""

import argparse
import json
import math
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


# ---------------------------------------------------------------------------------------------
# CKKS: the inputs, the plaintext computations and the precision, as `pimhe bench scheme
# --scheme ckks` has them (crates/cli/src/bench_ckks.rs), so that every library computes on the
# same numbers and is checked and measured the same way.

# Slots of the linear transform's ciphertexts and size of its matrix (bench_ckks.rs,
# TRANSFORM_SLOTS), and its baby-step count: pimhe's LinearTransform takes n1 = the power of two
# at or above sqrt(number of diagonals) = 8 for a dense 64 x 64 matrix.
TRANSFORM_SLOTS = 64
BABY_STEPS = 8

# Rotations of the hoisted row: by 1 .. 8 (bench_ckks.rs, HOISTED).
HOISTED = 8

# The sigmoid's interval (bench_ckks.rs, SIGMOID_INTERVAL).
SIGMOID_INTERVAL = (-8.0, 8.0)

# Bounds of the checks of a decrypted result against the plaintext computation, largest slot
# error, as bench_ckks.rs checks pimhe's.
CKKS_BOUNDS = {
    "decrypt": 1e-5,
    "add": 1e-5,
    "multiply_relin_rescale": 1e-4,
    "rotate": 1e-4,
    "rotate_hoisted_8": 1e-4,
    "linear_transform_64": 1e-3,
    "sigmoid": 1e-3,
}

# -log2 of an exact slot's error (pimhe_schemes::ckks::precision::MAX_PRECISION_BITS).
MAX_PRECISION_BITS = 52.0


def input_value(i, seed, stream):
    """Input value i of stream `stream` (0: x, 1: y, 2: the matrix) for `seed`, in [-1, 1): the
    twin of `input_value` in crates/cli/src/bench_ckks.rs (keep the two identical)."""
    h = (i * 2654435761 + (seed * 2 + stream) * 1013904223) % 2**32
    return h / 2**31 - 1.0


def ckks_vectors(slots, seed, stream, count):
    """The slot vectors of ciphertexts 0 .. count-1 of a batch: ciphertext k holds
    input_value(k * slots + i, seed, stream) in slot i."""
    return [[input_value(k * slots + i, seed, stream) for i in range(slots)] for k in range(count)]


def transform_matrix(seed):
    """The 64 x 64 matrix of the linear-transform row: entry (r, c) = input_value(r * 64 + c,
    seed, 2) / 8."""
    n = TRANSFORM_SLOTS
    return [[input_value(r * n + c, seed, 2) / 8.0 for c in range(n)] for r in range(n)]


def apply_matrix(matrix, x):
    """y = M x."""
    return [sum(m * v for m, v in zip(row, x)) for row in matrix]


def bsgs_plan(matrix, n1=BABY_STEPS):
    """The baby-step giant-step diagonal method as pimhe's LinearTransform applies it: with
    diag_k[i] = M[i][(i + k) mod n] and k = n1 j + i,
        y = sum_j rot( sum_i rot(diag_(n1 j + i), -n1 j) (.) rot(x, i), n1 j ).
    Returns {giant step j: [(baby step i, pre-rotated diagonal values)]}; rot(v, s)[t] = v[t + s]
    (a left rotation, the direction of every library's positive step)."""
    n = len(matrix)
    plan = {}
    for k in range(n):
        diagonal = [matrix[t][(t + k) % n] for t in range(n)]
        if not any(diagonal):
            continue
        i, j = k % n1, k // n1
        shift = (n - (n1 * j) % n) % n  # rot(diag_k, -n1 j)
        plan.setdefault(j, []).append((i, diagonal[shift:] + diagonal[:shift]))
    return plan


def rotate(values, step):
    step %= len(values)
    return values[step:] + values[:step]


def chebyshev_coefficients(f, interval, degree):
    """The interpolant of f at the degree + 1 Chebyshev nodes of `interval`, in the Chebyshev
    basis (c_0 halved): what pimhe's ChebyshevSeries::approximate and OpenFHE's
    EvalChebyshevCoefficients both compute."""
    a, b = interval
    n = degree + 1
    angles = [math.pi * (j + 0.5) / n for j in range(n)]
    values = [f((math.cos(t) * (b - a) + a + b) / 2.0) for t in angles]
    coefficients = [2.0 / n * sum(v * math.cos(k * t) for v, t in zip(values, angles)) for k in range(n)]
    coefficients[0] /= 2.0
    return coefficients


def chebyshev_evaluate(coefficients, interval, x):
    """sum c_k T_k(y), y = (2x - a - b) / (b - a) (Clenshaw)."""
    a, b = interval
    y = (2.0 * x - a - b) / (b - a)
    b1 = b2 = 0.0
    for c in reversed(coefficients[1:]):
        b1, b2 = 2.0 * y * b1 - b2 + c, b1
    return y * b1 - b2 + coefficients[0]


def sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x))


def slot_errors(got, expected):
    """|got[i] - expected[i]| per slot (complex values allowed: the modulus of the difference)."""
    if len(got) < len(expected):
        raise RuntimeError(f"{len(got)} slots decrypted, expected {len(expected)}")
    return [abs(g - e) for g, e in zip(got, expected)]


def check_close(op, got, expected, bound):
    """Raises unless every slot of `got` is within `bound` of `expected`."""
    errors = slot_errors(got, expected)
    worst = max(range(len(errors)), key=lambda i: errors[i] if errors[i] == errors[i] else math.inf)
    if not errors[worst] <= bound:
        raise RuntimeError(
            f"{op}: slot {worst} decrypted to {got[worst]}, expected {expected[worst]} "
            f"(error {errors[worst]:.3g} > {bound:g})"
        )


def bits_of_precision(error):
    if error <= 0.0:
        return MAX_PRECISION_BITS
    return min(-math.log2(error), MAX_PRECISION_BITS) if math.isfinite(error) else -math.inf


def precision(errors):
    """pimhe's PrecisionStats (crates/schemes/src/ckks/precision.rs): the statistics are taken
    over the errors and then turned into bits (min bits = -log2 of the largest error, mean bits
    = -log2 of the mean error), a NaN slot counting as an infinite error."""
    errors = sorted(math.inf if e != e else e for e in errors)
    count = len(errors)
    mean = sum(errors) / count
    median = errors[count // 2] if count % 2 else (errors[count // 2 - 1] + errors[count // 2]) / 2.0
    return {
        "slots": count,
        "min_bits": bits_of_precision(errors[-1]),
        "mean_bits": bits_of_precision(mean),
        "median_bits": bits_of_precision(median),
        "max_bits": bits_of_precision(errors[0]),
        "max_error": errors[-1],
        "mean_error": mean,
    }


def ckks_targets(items):
    """--ckks N:DEPTH:SCALE_BITS:SIGMOID_DEGREE[:PRECISION_CIPHERTEXTS] items -> {N: dict}."""
    targets = {}
    for item in items:
        fields = [int(f) for f in item.split(":")]
        n, depth, scale_bits, degree = fields[:4]
        count = fields[4] if len(fields) > 4 else 1
        targets[n] = {"depth": depth, "scale_bits": scale_bits, "sigmoid_degree": degree, "precision_count": count}
    return targets


def parse_args(description, extra=None):
    """The peers' shared flags; `extra(parser)` adds a peer's own before parsing."""
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
    parser.add_argument(
        "--schemes", nargs="+", default=["bgv", "bfv"], choices=["bgv", "bfv", "ckks"], help="schemes to time"
    )
    parser.add_argument(
        "--ckks",
        nargs="*",
        default=[],
        metavar="N:DEPTH:SCALE_BITS:SIGMOID_DEGREE[:K]",
        help="pimhe's CKKS preset per ring degree (from its JSON), and K, the ciphertexts of the batch "
        "over which the precision after one multiply is measured",
    )
    if extra is not None:
        extra(parser)
    args = parser.parse_args()
    args.ckks = ckks_targets(args.ckks)
    args.match_log_q = {int(n): int(bits) for n, bits in (item.split(":") for item in args.match_log_q)}
    return args


def run_all(library, version, threads, args, bench):
    """Runs bench(scheme, n) for each degree of args.n and each scheme of args.schemes (CKKS
    only at the degrees given by --ckks, where pimhe has a preset) and prints one JSON object.
    A benchmark that raises is reported with its error, and the others still run."""
    results = []
    for n in args.n:
        for scheme in args.schemes:
            if scheme == "ckks" and n not in args.ckks:
                continue
            try:
                results.append(bench(scheme, n))
            except Exception as e:  # a peer's failure is data for the table, not a crash
                traceback.print_exc(file=sys.stderr)
                results.append({"n": n, "scheme": scheme, "error": f"{type(e).__name__}: {e}"})
    json.dump({"library": library, "version": version, "threads": threads, "results": results}, sys.stdout)
    print()
