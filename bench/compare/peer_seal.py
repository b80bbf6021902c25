"""Times Microsoft SEAL's BGV and BFV through TenSEAL's low-level binding (tenseal.sealapi) and
prints one JSON object (see peer_common.run_all). Run by run.py in the SEAL environment.

Parameters: SEAL's default 128-bit coefficient modulus for N (CoeffModulus.BFVDefault, which
SEAL's own examples use for BGV too: SEAL has no separate BGV default), whose last prime is
the key-switching (special) prime, and t = 65537. SEAL runs one operation on one thread.

BGV is SCHEME_TYPE 3 in SEAL 4.x; TenSEAL's enum binding predates it and lacks the name, so
the value is built from its number (the bundled library accepts it: the context validates and
the product below is checked).

SEAL keeps BGV ciphertexts in NTT form, so the NTT and inverse NTT are timed with
Evaluator.transform_to_ntt_inplace / transform_from_ntt_inplace on a fresh BFV ciphertext
(coefficient form) under the same coefficient modulus.
"""

import os
import random
import tempfile

import tenseal
import tenseal.sealapi as seal

from peer_common import PLAIN_MODULUS, Rounds, check_product, params_summary, parse_args, run_all

BFV = seal.SCHEME_TYPE.BFV
BGV = seal.SCHEME_TYPE(3)


def context(n, scheme):
    parms = seal.EncryptionParameters(scheme)
    parms.set_poly_modulus_degree(n)
    parms.set_coeff_modulus(seal.CoeffModulus.BFVDefault(n, seal.SEC_LEVEL_TYPE.TC128))
    parms.set_plain_modulus(seal.Modulus(PLAIN_MODULUS))
    ctx = seal.SEALContext(parms, True, seal.SEC_LEVEL_TYPE.TC128)
    if not ctx.parameters_set():
        raise RuntimeError(f"SEAL refused N={n}: {ctx.parameters_error_message()}")
    bits = [m.bit_count() for m in parms.coeff_modulus()]
    return ctx, params_summary(bits[:-1], bits[-1:])


class Client:
    """Keys, encoder, encryptor, decryptor and evaluator of one context."""

    def __init__(self, ctx):
        self.ctx = ctx
        keygen = seal.KeyGenerator(ctx)
        public = seal.PublicKey()
        keygen.create_public_key(public)
        self.relin = seal.RelinKeys()
        keygen.create_relin_keys(self.relin)
        self.encoder = seal.BatchEncoder(ctx)
        self.encryptor = seal.Encryptor(ctx, public)
        self.decryptor = seal.Decryptor(ctx, keygen.secret_key())
        self.evaluator = seal.Evaluator(ctx)

    def plain(self, values):
        plain = seal.Plaintext()
        self.encoder.encode(values, plain)
        return plain

    def encrypt(self, plain):
        out = seal.Ciphertext(self.ctx)
        self.encryptor.encrypt(plain, out)
        return out

    def decrypt(self, ct):
        out = seal.Plaintext()
        self.decryptor.decrypt(ct, out)
        return out

    def decode(self, plain):
        return self.encoder.decode_uint64(plain)

    def copy(self, a):
        """A copy of `a` (the binding has no copy constructor): the negation of its negation."""
        out = seal.Ciphertext(self.ctx)
        self.evaluator.negate(a, out)
        self.evaluator.negate_inplace(out)
        return out

    def multiply(self, a, b):
        out = seal.Ciphertext(self.ctx)
        self.evaluator.multiply(a, b, out)
        return out

    def relinearize(self, a):
        out = seal.Ciphertext(self.ctx)
        self.evaluator.relinearize(a, self.relin, out)
        return out

    def multiply_relin(self, a, b):
        return self.relinearize(self.multiply(a, b))

    def mod_switch(self, a):
        out = seal.Ciphertext(self.ctx)
        self.evaluator.mod_switch_to_next(a, out)
        return out


def bench_n(n, repeat, seed):
    rng = random.Random(seed)
    x = [rng.randrange(PLAIN_MODULUS) for _ in range(n)]
    y = [rng.randrange(PLAIN_MODULUS) for _ in range(n)]
    results = []
    for name, scheme in (("bgv", BGV), ("bfv", BFV)):
        ctx, params = context(n, scheme)
        c = Client(ctx)
        px, py = c.plain(x), c.plain(y)
        cy = c.encrypt(py)
        rounds = Rounds()
        for r in range(repeat + 1):
            cx = rounds.time("encrypt", c.encrypt, px)
            if name == "bgv":
                rounds.time("decrypt", c.decrypt, cx)
                product = rounds.time("multiply", c.multiply, cx, cy)
                rounds.time("relinearize", c.relinearize, product)
                relinearized = rounds.time("multiply_relin", c.multiply_relin, cx, cy)
                result = rounds.time("mod_switch", c.mod_switch, relinearized)
            else:
                result = rounds.time("multiply_relin", c.multiply_relin, cx, cy)
                # A fresh BFV ciphertext is in coefficient form: forward first, then back, on a
                # copy written just before (as pimhe transforms copies of the components).
                work = c.copy(cx)
                rounds.time("ntt", c.evaluator.transform_to_ntt_inplace, work)
                rounds.time("intt", c.evaluator.transform_from_ntt_inplace, work)
            if r == 0:
                check_product(f"SEAL {name} N={n}", c.decode(c.decrypt(result)), x, y)
        results.append({"n": n, "scheme": name, "params": params, "checked": True, "ops": rounds.summary()})
    # The transforms are the ring's, not the scheme's: report them beside the BGV operations.
    bgv, bfv = results
    for op in ("ntt", "intt"):
        bgv["ops"][op] = bfv["ops"].pop(op)
    bgv["notes"] = {
        "ntt": "transform_to_ntt_inplace on a fresh BFV ciphertext, same coefficient modulus",
        "intt": "transform_from_ntt_inplace on a BFV ciphertext, same coefficient modulus",
    }
    return results


def seal_version():
    """SEAL's version as written in the header of a saved object (tenseal does not export it)."""
    ctx, _ = context(4096, BFV)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "ct")
        seal.Ciphertext(ctx).save(path)
        with open(path, "rb") as f:
            header = f.read(5)
    # SEALHeader: uint16 magic 0xA15E, uint8 header size, uint8 major, uint8 minor, ...
    if header[:2] != b"\x5e\xa1":
        return "unknown"
    return f"{header[3]}.{header[4]}"


def main():
    args = parse_args(__doc__.splitlines()[0])
    version = f"SEAL {seal_version()} (tenseal {tenseal.__version__})"
    run_all("seal", version, 1, args.n, lambda n: bench_n(n, args.repeat, args.seed))


if __name__ == "__main__":
    main()
