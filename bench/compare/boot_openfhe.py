"""OpenFHE's CKKS bootstrapping at N = 2^16, full slots, timed and checked by decryption: the
peer pimhe's bootstrapping is compared with (issue 26, bench/compare/README.md).

The PyPI OpenFHE is built with 64-bit native integers, and at N = 2^16 within the 128-bit
bound (log Q <= 1747 bits) its bootstrapping at a 2^40 scale decrypts to noise. So this runs
OpenFHE's own recipe for 64-bit builds (its examples' simple-real-numbers bootstrapping):
scale 2^59, first modulus 60 bits, level budget [4, 4], a uniform ternary secret, 10 levels
left after bootstrapping, with the security check off (HEStd_NotSet). Its modulus exceeds the
128-bit bound: every result is labelled "security unchecked".

    python3.10 bench/compare/boot_openfhe.py [--logn 16] [--levels-after 10] [--repeat 1] [--threads T] [--json out.json]

Prints one JSON object: parameters (ring degree, slots, depth, levels after), the
setup, key generation and bootstrapping times (seconds, the best of --repeat), the precision
in bits (-log2 of the largest slot error against the input), the number of rotation keys, the
peak resident memory of the process, and the OpenFHE version.
"""

import argparse
import json
import math
import os
import random
import resource
import sys
import time


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--logn", type=int, default=16, help="log2 of the ring degree (default 16)")
    parser.add_argument("--levels-after", type=int, default=10, help="levels left after bootstrapping")
    parser.add_argument("--repeat", type=int, default=1, help="timed bootstrappings (the best is reported)")
    parser.add_argument("--threads", type=int, default=None, help="OpenMP threads (default: OpenFHE's)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the input values")
    parser.add_argument("--json", type=str, default=None, help="also write the JSON object to this file")
    args = parser.parse_args()
    if not 10 <= args.logn <= 17:
        parser.error(f"--logn {args.logn} is not allowed: 10..=17")
    if args.repeat < 1 or args.levels_after < 1:
        parser.error("--repeat and --levels-after must be at least 1")
    return args


def main():
    args = parse_args()
    if args.threads is not None:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import openfhe as fhe  # after OMP_NUM_THREADS: OpenMP reads it when the library loads

    level_budget = [4, 4]
    secret = fhe.SecretKeyDist.UNIFORM_TERNARY
    params = fhe.CCParamsCKKSRNS()
    params.SetSecretKeyDist(secret)
    params.SetSecurityLevel(fhe.SecurityLevel.HEStd_NotSet)
    params.SetRingDim(1 << args.logn)
    params.SetScalingModSize(59)
    params.SetFirstModSize(60)
    params.SetScalingTechnique(fhe.ScalingTechnique.FLEXIBLEAUTO)
    depth = args.levels_after + fhe.CryptoContext.GetBootstrapDepth(level_budget, secret)
    params.SetMultiplicativeDepth(depth)

    start = time.perf_counter()
    cc = fhe.GenCryptoContext(params)
    for feature in (fhe.PKE, fhe.KEYSWITCH, fhe.LEVELEDSHE, fhe.ADVANCEDSHE, fhe.FHE):
        cc.Enable(feature)
    slots = cc.GetRingDimension() // 2
    cc.EvalBootstrapSetup(level_budget)
    setup_s = time.perf_counter() - start

    start = time.perf_counter()
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)
    cc.EvalBootstrapKeyGen(keys.secretKey, slots)
    keygen_s = time.perf_counter() - start

    rng = random.Random(args.seed)
    values = [rng.uniform(-1.0, 1.0) for _ in range(slots)]
    # Encrypted at the last level, so that the bootstrapping has all the work to do.
    plain = cc.MakeCKKSPackedPlaintext(values, 1, depth - 1)
    plain.SetLength(slots)
    ct = cc.Encrypt(keys.publicKey, plain)
    level_before = ct.GetLevel()

    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        fresh = cc.EvalBootstrap(ct)
        times.append(time.perf_counter() - start)

    result = cc.Decrypt(keys.secretKey, fresh)
    result.SetLength(slots)
    decoded = result.GetRealPackedValue()
    error = max(abs(a - b) for a, b in zip(decoded, values))
    precision_bits = -math.log2(error) if error > 0 else float("inf")

    report = {
        "library": "openfhe",
        "version": getattr(fhe, "__version__", "unknown"),
        "label": "security unchecked (HEStd_NotSet): log Q exceeds the 128-bit bound",
        "n": cc.GetRingDimension(),
        "slots": slots,
        "depth": depth,
        "level_budget": level_budget,
        "scale_bits": 59,
        "first_mod_bits": 60,
        "levels_after": depth - fresh.GetLevel(),
        "level_before": level_before,
        "threads": int(os.environ.get("OMP_NUM_THREADS", "0")) or os.cpu_count(),
        "setup_s": setup_s,
        "keygen_s": keygen_s,
        "bootstrap_s": min(times),
        "bootstrap_runs_s": times,
        "precision_bits": precision_bits,
        "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20,
    }
    text = json.dumps(report)
    print(text)
    if args.json:
        with open(args.json, "w") as out:
            out.write(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
