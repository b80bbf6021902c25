"""Times OpenFHE's BGV, BFV and CKKS through its Python wrapper (openfhe) and prints one JSON
object (see peer_common.run_all). Run by run.py in the OpenFHE environment, with OMP_NUM_THREADS
set.

Parameters: CCParamsBGVRNS / CCParamsBFVRNS with ring dimension N, t = 65537, 128-bit classic
security (HEStd_128_classic) and OpenFHE's own prime sizes; the multiplicative depth is the
one whose total modulus (ciphertext primes Q and key-switching primes P) comes closest to the
bits given by --match-log-q (pimhe's preset), among the depths OpenFHE accepts at N. BGV uses
FIXEDMANUAL scaling, so modulus switching is an explicit ModReduce as in SEAL and pimhe; key
switching is OpenFHE's default (HYBRID).

The primes of Q are read from the serialised context. P is not serialised: its size follows
OpenFHE's rule for HYBRID key switching (P covers the largest of the dnum digits, in primes of
at most `ab` = 60 bits), computed here from dnum and the digits and reported as such.

The Python wrapper exposes no NTT of a ciphertext (DCRTPoly has no methods there), so the NTT
and inverse NTT are reported as unavailable.

CKKS: CCParamsCKKSRNS at pimhe's preset (--ckks): ring dimension N, N/2 slots, its
multiplicative depth and scale 2^scale_bits (SetScalingModSize), a 60-bit first modulus,
HEStd_128_classic, FIXEDMANUAL rescaling (an explicit Rescale, as pimhe) and HYBRID key
switching with OpenFHE's default number of digits where that passes its 128-bit check, else the
fewest digits that do. Where no digit count passes with a 60-bit first modulus (OpenFHE's
estimate of P is larger than its actual P), the largest first modulus that passes is taken:
depth and scale are what is compared, and the first modulus only bounds the final result.
"""

import json
import math
import os
import random

import numpy as np
import openfhe as fhe

from peer_common import (
    BABY_STEPS,
    CKKS_BOUNDS,
    HOISTED,
    PLAIN_MODULUS,
    SIGMOID_INTERVAL,
    TRANSFORM_SLOTS,
    Rounds,
    apply_matrix,
    bsgs_plan,
    check_close,
    check_product,
    chebyshev_coefficients,
    chebyshev_evaluate,
    ckks_vectors,
    params_summary,
    parse_args,
    precision,
    rotate,
    sigmoid,
    slot_errors,
    run_all,
    transform_matrix,
)

# Deepest circuit tried when looking for the depth that matches a modulus size.
MAX_DEPTH = 40

# KeySwitchTechnique.HYBRID as the serialised context spells it ("ks").
HYBRID = int(fhe.HYBRID)

NO_NTT = "not exposed by the openfhe Python API (DCRTPoly has no methods)"


def make_context(scheme, n, depth):
    params = fhe.CCParamsBGVRNS() if scheme == "bgv" else fhe.CCParamsBFVRNS()
    params.SetRingDim(n)
    params.SetPlaintextModulus(PLAIN_MODULUS)
    params.SetMultiplicativeDepth(depth)
    params.SetSecurityLevel(fhe.HEStd_128_classic)
    if scheme == "bgv":
        params.SetScalingTechnique(fhe.FIXEDMANUAL)
    cc = fhe.GenCryptoContext(params)
    for feature in (fhe.PKE, fhe.KEYSWITCH, fhe.LEVELEDSHE):
        cc.Enable(feature)
    return cc


def find_key(node, key):
    """The first value under `key` in a JSON tree (depth first)."""
    if isinstance(node, dict):
        if key in node:
            return node[key]
        children = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        found = find_key(child, key)
        if found is not None:
            return found
    return None


def modulus_bits(cc, depth):
    """Bits of the primes of Q (from the serialised context) and of P (OpenFHE's HYBRID rule;
    none with BV key switching), and dnum."""
    tree = json.loads(fhe.Serialize(cc, fhe.JSON))
    towers = find_key(find_key(tree, "elp"), "p")
    primes = [int(find_key(t, "cm")["v"]) for t in towers]
    if not primes:
        raise RuntimeError(f"no primes found in the serialised context of depth {depth}")
    q_bits = [q.bit_length() for q in primes]
    dnum = find_key(tree, "dnum") or 1
    if find_key(tree, "ks") != HYBRID:
        return q_bits, [], dnum  # BV key switching has no special primes
    aux_bits = find_key(tree, "ab") or 60
    # Digits of ceil(L / dnum) consecutive primes; P must exceed the largest digit's product.
    alpha = math.ceil(len(primes) / dnum)
    largest_digit = max(math.prod(primes[i : i + alpha]).bit_length() for i in range(0, len(primes), alpha))
    p_bits = [aux_bits] * math.ceil(largest_digit / aux_bits)
    return q_bits, p_bits, dnum


def choose_context(scheme, n, target_bits):
    """The context whose total modulus is closest to target_bits, among the depths OpenFHE
    accepts at N (it refuses a depth whose modulus is too large for 128-bit security)."""
    best, refusal = None, None
    for depth in range(1, MAX_DEPTH + 1):
        try:
            cc = make_context(scheme, n, depth)
        except Exception as e:
            if best is not None:
                break  # deeper circuits only need larger moduli
            refusal = refusal or str(e).split(":")[-1].strip()
            continue
        q_bits, p_bits, dnum = modulus_bits(cc, depth)
        distance = abs(sum(q_bits) + sum(p_bits) - target_bits)
        if best is None or distance < best[0]:
            best = (distance, cc, depth, q_bits, p_bits, dnum)
    if best is None:
        raise RuntimeError(
            f"OpenFHE's {scheme.upper()} accepts no depth at N={n} with 128-bit security and t={PLAIN_MODULUS} "
            f"(depth 1: {refusal})"
        )
    _, cc, depth, q_bits, p_bits, dnum = best
    params = params_summary(
        q_bits,
        p_bits,
        depth=depth,
        dnum=dnum,
        matched_log_q_total=target_bits,
        special_primes_estimated=bool(p_bits),
    )
    return cc, params


def bench_scheme(scheme, n, target_bits, repeat, x, y):
    # OpenFHE's packed encoding needs t = 1 mod 2N, and it refuses other t with a C++
    # exception that ends the whole process (every row of this peer lost), not one that the
    # wrapper turns into a Python error: refuse here instead, for this row only.
    if (PLAIN_MODULUS - 1) % (2 * n) != 0:
        raise RuntimeError(
            f"t = {PLAIN_MODULUS} is not 1 mod 2N = {2 * n}: OpenFHE's packed encoding refuses it"
        )
    cc, params = choose_context(scheme, n, target_bits)
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)
    px, py = cc.MakePackedPlaintext(x), cc.MakePackedPlaintext(y)
    cy = cc.Encrypt(keys.publicKey, py)
    rounds = Rounds()
    for r in range(repeat + 1):
        cx = rounds.time("encrypt", cc.Encrypt, keys.publicKey, px)
        if scheme == "bgv":
            rounds.time("decrypt", cc.Decrypt, keys.secretKey, cx)
            product = rounds.time("multiply", cc.EvalMultNoRelin, cx, cy)
            rounds.time("relinearize", cc.Relinearize, product)
            relinearized = rounds.time("multiply_relin", cc.EvalMult, cx, cy)
            result = rounds.time("mod_switch", cc.ModReduce, relinearized)
        else:
            result = rounds.time("multiply_relin", cc.EvalMult, cx, cy)
        if r == 0:
            check_product(f"OpenFHE {scheme} N={n}", cc.Decrypt(keys.secretKey, result).GetPackedValue(), x, y)
    return {
        "n": n,
        "scheme": scheme,
        "params": params,
        "checked": True,
        "ops": rounds.summary(),
        "unavailable": {"ntt": NO_NTT, "intt": NO_NTT} if scheme == "bgv" else {},
        "notes": {"decrypt": "Decrypt includes decoding the slots"},
    }


# ---------------------------------------------------------------------------------------------
# CKKS


def make_ckks_context(n, depth, scale_bits, first_bits, dnum):
    params = fhe.CCParamsCKKSRNS()
    params.SetRingDim(n)
    params.SetBatchSize(n // 2)
    params.SetMultiplicativeDepth(depth)
    params.SetScalingModSize(scale_bits)
    params.SetFirstModSize(first_bits)
    params.SetSecurityLevel(fhe.HEStd_128_classic)
    params.SetScalingTechnique(fhe.FIXEDMANUAL)
    params.SetKeySwitchTechnique(fhe.HYBRID)
    if dnum:
        params.SetNumLargeDigits(dnum)
    cc = fhe.GenCryptoContext(params)
    for feature in (fhe.PKE, fhe.KEYSWITCH, fhe.LEVELEDSHE, fhe.ADVANCEDSHE):
        cc.Enable(feature)
    return cc


def choose_ckks_context(n, depth, scale_bits):
    """The context at N, depth and scale: HYBRID with OpenFHE's default digits (0) if its
    128-bit check passes, else the fewest digits that pass; a 60-bit first modulus, else the
    largest that passes with some digit count."""
    refusal = None
    for first_bits in range(60, scale_bits, -1):
        for dnum in [0] + list(range(1, depth + 2)):
            try:
                cc = make_ckks_context(n, depth, scale_bits, first_bits, dnum)
            except Exception as e:
                if first_bits == 60 and dnum == 0:
                    refusal = str(e).split(":")[-1].strip()
                continue
            q_bits, p_bits, actual_dnum = modulus_bits(cc, depth)
            params = params_summary(
                q_bits,
                p_bits,
                plain_modulus=None,
                depth=depth,
                scale_bits=scale_bits,
                first_mod_bits=first_bits,
                dnum=actual_dnum,
                dnum_requested="default" if dnum == 0 else dnum,
                special_primes_estimated=bool(p_bits),
            )
            return cc, params
    raise RuntimeError(
        f"OpenFHE's CKKS accepts no HYBRID context at N={n}, depth {depth}, scale 2^{scale_bits} with "
        f"128-bit security, any digit count and a first modulus of {scale_bits + 1}..60 bits "
        f"(60 bits, default digits: {refusal})"
    )


def decoded(cc, secret, ct, length):
    """The first `length` slots of a ciphertext as complex numbers (the precision counts the
    imaginary part's error too, as pimhe's does)."""
    plain = cc.Decrypt(secret, ct)
    plain.SetLength(length)
    return list(plain.GetCKKSPackedValue())[:length]


def bench_ckks(n, target, seed, repeat):
    depth, scale_bits, degree = target["depth"], target["scale_bits"], target["sigmoid_degree"]
    cc, params = choose_ckks_context(n, depth, scale_bits)
    slots = n // 2
    m = cc.GetCyclotomicOrder()
    keys = cc.KeyGen()
    cc.EvalMultKeyGen(keys.secretKey)
    plan = bsgs_plan(transform_matrix(seed))
    giant = [BABY_STEPS * j for j in plan if j]
    cc.EvalRotateKeyGen(keys.secretKey, sorted(set(range(1, HOISTED + 1)) | set(giant)))

    count = target["precision_count"]
    xs, ys = ckks_vectors(slots, seed, 0, count), ckks_vectors(slots, seed, 1, count)
    x, y = xs[0], ys[0]
    x_array = np.array(x, dtype=np.float64)
    cy = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(np.array(y, dtype=np.float64)))
    short = x[:TRANSFORM_SLOTS]
    c_short = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(short, 1, 0, None, TRANSFORM_SLOTS))
    diagonals = {
        j: [(i, cc.MakeCKKSPackedPlaintext(values, 1, 0, None, TRANSFORM_SLOTS)) for i, values in terms]
        for j, terms in plan.items()
    }
    baby_needed = sorted({i for terms in plan.values() for i, _ in terms if i})

    def encrypt():
        return cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(x_array))

    def decrypt(ct):
        return cc.Decrypt(keys.secretKey, ct).GetRealPackedValue()

    def multiply_relin_rescale(a, b):
        return cc.Rescale(cc.EvalMult(a, b))

    def hoisted(a):
        digits = cc.EvalFastRotationPrecompute(a)
        return [cc.EvalFastRotation(a, step, m, digits) for step in range(1, HOISTED + 1)]

    def linear_transform(a):
        digits = cc.EvalFastRotationPrecompute(a)
        baby = {i: cc.EvalFastRotation(a, i, m, digits) for i in baby_needed}
        baby[0] = a
        total = None
        for j, terms in diagonals.items():
            inner = None
            for i, plain in terms:
                term = cc.EvalMult(baby[i], plain)
                inner = term if inner is None else cc.EvalAdd(inner, term)
            if j:
                inner = cc.EvalRotate(inner, BABY_STEPS * j)
            total = inner if total is None else cc.EvalAdd(total, inner)
        return cc.Rescale(total)

    def activate(a):
        return cc.EvalChebyshevFunction(sigmoid, a, SIGMOID_INTERVAL[0], SIGMOID_INTERVAL[1], degree)

    # OpenFHE's Chebyshev evaluation may need one level more than pimhe's for the same degree
    # (its table: degree 28-59 on an interval other than [-1, 1] takes depth 7, where pimhe's
    # degree 31 takes 6). Then the largest degree that fits is timed, and reported as such.
    wanted, refusal = degree, None
    probe = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(x_array))
    while degree > 0:
        try:
            activate(probe)
            break
        except RuntimeError as e:
            refusal = refusal or str(e).split(":")[-1].strip()
            degree -= 1
    if degree == 0:
        raise RuntimeError(f"EvalChebyshevFunction fits no degree in depth {depth}: {refusal}")

    rounds = Rounds()
    for r in range(repeat + 1):
        cx = rounds.time("encrypt", encrypt)
        plain_x = rounds.time("decrypt", decrypt, cx)
        total = rounds.time("add", cc.EvalAdd, cx, cy)
        product = rounds.time("multiply_relin_rescale", multiply_relin_rescale, cx, cy)
        unscaled = cc.EvalMult(cx, cy)
        rounds.time("rescale", cc.Rescale, unscaled)
        rotated = rounds.time("rotate", cc.EvalRotate, cx, 1)
        rotations = rounds.time("rotate_hoisted_8", hoisted, cx)
        transformed = rounds.time("linear_transform_64", linear_transform, c_short)
        activated = rounds.time("sigmoid", activate, cx)
        if r == 0:
            check_ckks(
                lambda ct, length=slots: decoded(cc, keys.secretKey, ct, length),
                plain_x, x, y, total, product, rotated, rotations, transformed, activated, seed, degree,
            )
    errors = []
    for xk, yk in zip(xs, ys):
        ck = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(np.array(xk, dtype=np.float64)))
        dk = cc.Encrypt(keys.publicKey, cc.MakeCKKSPackedPlaintext(np.array(yk, dtype=np.float64)))
        got = decoded(cc, keys.secretKey, multiply_relin_rescale(ck, dk), slots)
        errors += slot_errors(got, [a * b for a, b in zip(xk, yk)])
    return {
        "n": n,
        "scheme": "ckks",
        "params": params,
        "checked": True,
        "sigmoid_degree": degree,
        "precision_after_multiply": precision(errors),
        "ops": rounds.summary(),
        "notes": {
            "decrypt": "Decrypt + GetRealPackedValue (a Python list of N/2 floats)",
            "rotate_hoisted_8": "EvalFastRotationPrecompute once + 8 EvalFastRotation",
            "linear_transform_64": "baby steps by EvalFastRotation (one precompute), giant steps by EvalRotate",
            "sigmoid": "EvalChebyshevFunction (Paterson-Stockmeyer above degree 5)"
            + (
                ""
                if degree == wanted
                else f"; at degree {degree}, not pimhe's {wanted}: degree {wanted} does not fit OpenFHE's "
                f"evaluation in depth {depth} ({refusal})"
            ),
        },
    }


def check_ckks(decode, plain_x, x, y, total, product, rotated, rotations, transformed, activated, seed, degree):
    """Raises unless every result of the warm-up round decrypts to the plaintext computation
    (pimhe's bounds, peer_common.CKKS_BOUNDS)."""
    check_close("OpenFHE CKKS decrypt", plain_x, x, CKKS_BOUNDS["decrypt"])
    check_close("OpenFHE CKKS add", decode(total), [a + b for a, b in zip(x, y)], CKKS_BOUNDS["add"])
    bound = CKKS_BOUNDS["multiply_relin_rescale"]
    check_close("OpenFHE CKKS multiply", decode(product), [a * b for a, b in zip(x, y)], bound)
    check_close("OpenFHE CKKS rotate", decode(rotated), rotate(x, 1), CKKS_BOUNDS["rotate"])
    for step, ct in enumerate(rotations, 1):
        check_close(f"OpenFHE CKKS hoisted rotate {step}", decode(ct), rotate(x, step), CKKS_BOUNDS["rotate_hoisted_8"])
    expected = apply_matrix(transform_matrix(seed), x[:TRANSFORM_SLOTS])
    got = decode(transformed, TRANSFORM_SLOTS)
    check_close("OpenFHE CKKS linear transform", got, expected, CKKS_BOUNDS["linear_transform_64"])
    coefficients = chebyshev_coefficients(sigmoid, SIGMOID_INTERVAL, degree)
    expected = [chebyshev_evaluate(coefficients, SIGMOID_INTERVAL, v) for v in x]
    check_close("OpenFHE CKKS sigmoid", decode(activated), expected, CKKS_BOUNDS["sigmoid"])


def main():
    args = parse_args(__doc__.splitlines()[0])
    threads = int(os.environ.get("OMP_NUM_THREADS", "0")) or os.cpu_count()
    inputs = {}

    def bench(scheme, n):
        if scheme == "ckks":
            return bench_ckks(n, args.ckks[n], args.seed, args.repeat)
        if n not in args.match_log_q:
            raise RuntimeError(f"no --match-log-q given for N={n}")
        if n not in inputs:
            rng = random.Random(args.seed)
            inputs[n] = ([rng.randrange(PLAIN_MODULUS) for _ in range(n)], [rng.randrange(PLAIN_MODULUS) for _ in range(n)])
        x, y = inputs[n]
        return bench_scheme(scheme, n, args.match_log_q[n], args.repeat, x, y)

    run_all("openfhe", f"OpenFHE {fhe.__version__}", threads, args, bench)


if __name__ == "__main__":
    main()
