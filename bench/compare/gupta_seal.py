"""Times Microsoft SEAL (through TenSEAL's tenseal.sealapi) on Gupta et al.'s Fig. 1 operations and
prints one JSON object: the paper's CPU-SEAL column, measured on this machine, for
`pimhe bench reproduce gupta` (docs/PIM.md compares them; the Rust reproduction does not call
Python).

The three widths are the paper's (section 3): N = 1024, 2048, 4096 with 27-, 54- and 109-bit
coefficient moduli, built as CoeffModulus.Create(N, [27]), [27, 27], [27, 27, 27, 28] (SEAL's
128-bit check accepts exactly these totals). Addition is Evaluator.add of two fresh ciphertexts;
multiplication is Evaluator.multiply without relinearization (the paper's DPUs relinearize
nothing either). SEAL runs one operation on one thread; the per-ciphertext time is the fastest
of --repeat rounds over --count ciphertext pairs, by default as many as make 64 MiB of inputs
(as pimhe's cpu side measures: beyond the caches, as the paper's tens of GB are). The plaintext modulus is t = 17: the ciphertexts
encrypt the constant polynomials 3 and 5, and one sum and one product per width are decrypted
and checked (8 and 15).

Usage: python3 bench/compare/gupta_seal.py [--count C] [--repeat 3] > seal.json, then
pimhe bench reproduce gupta --seal-json seal.json
(a venv with `pip install tenseal`, e.g. /tmp/venv-gupta/bin/python).
"""

import argparse
import json
import time

import tenseal.sealapi as seal

WIDTHS = [(1024, [27], 27), (2048, [27, 27], 54), (4096, [27, 27, 27, 28], 109)]
PLAIN_MODULUS = 17
MEASURED_BYTES = 64 << 20


def width_times(n, bits, count, repeat):
    parms = seal.EncryptionParameters(seal.SCHEME_TYPE.BFV)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(seal.CoeffModulus.Create(n, bits))
    parms.set_plain_modulus(seal.Modulus(PLAIN_MODULUS))
    ctx = seal.SEALContext(parms, False, seal.SEC_LEVEL_TYPE.TC128)
    if not ctx.parameters_set():
        raise RuntimeError(f"SEAL refused N={n}, {bits}: {ctx.parameters_error_message()}")
    keygen = seal.KeyGenerator(ctx)
    public = seal.PublicKey()
    keygen.create_public_key(public)
    encryptor = seal.Encryptor(ctx, public)
    decryptor = seal.Decryptor(ctx, keygen.secret_key())
    evaluator = seal.Evaluator(ctx)

    def encrypt(value):
        out = seal.Ciphertext(ctx)
        encryptor.encrypt(seal.Plaintext(str(value)), out)
        return out

    def constant(ct):
        plain = seal.Plaintext()
        decryptor.decrypt(ct, plain)
        return plain.to_string()

    xs = [encrypt(3) for _ in range(count)]
    ys = [encrypt(5) for _ in range(count)]
    outs = [seal.Ciphertext(ctx) for _ in range(count)]
    result = {"n": n, "coefficient_bits": sum(bits), "primes": bits, "ciphertexts": count}
    for name, op, expected in [("add", evaluator.add, "8"), ("mul", evaluator.multiply, "F")]:
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            for x, y, out in zip(xs, ys, outs):
                op(x, y, out)
            best = min(best, time.perf_counter() - start)
        got = constant(outs[0])
        if got != expected:
            raise RuntimeError(f"SEAL {name} at N={n}: decrypted {got!r}, expected {expected!r}")
        result[f"{name}_s_per_ciphertext"] = best / count
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=None, help="ciphertext pairs per timed round [64 MiB of inputs]")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (the fastest is kept)")
    args = parser.parse_args()
    if (args.count is not None and args.count < 1) or args.repeat < 1:
        parser.error("--count and --repeat must be at least 1")
    # Two input ciphertexts of two polynomials of N 8-byte residues per prime (SEAL's words).
    count = lambda n, bits: args.count or max(2, MEASURED_BYTES // (2 * 2 * n * len(bits) * 8))
    rows = [width_times(n, bits, count(n, bits), args.repeat) for n, bits, _ in WIDTHS]
    print(json.dumps({"peer": "seal", "seal_version": getattr(seal, "__version__", "unknown"), "widths": rows}))


if __name__ == "__main__":
    main()
