"""Times OpenFHE's BGV and BFV through its Python wrapper (openfhe) and prints one JSON object
(see peer_common.run_all). Run by run.py in the OpenFHE environment, with OMP_NUM_THREADS set.

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
"""

import json
import math
import os
import random

import openfhe as fhe

from peer_common import PLAIN_MODULUS, Rounds, check_product, params_summary, parse_args, run_all

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


def main():
    args = parse_args(__doc__.splitlines()[0])
    threads = int(os.environ.get("OMP_NUM_THREADS", "0")) or os.cpu_count()

    def bench_n(n):
        if n not in args.match_log_q:
            raise RuntimeError(f"no --match-log-q given for N={n}")
        rng = random.Random(args.seed)
        x = [rng.randrange(PLAIN_MODULUS) for _ in range(n)]
        y = [rng.randrange(PLAIN_MODULUS) for _ in range(n)]
        return [bench_scheme(s, n, args.match_log_q[n], args.repeat, x, y) for s in ("bgv", "bfv")]

    run_all("openfhe", f"OpenFHE {fhe.__version__}", threads, args.n, bench_n)


if __name__ == "__main__":
    main()
