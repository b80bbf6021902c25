"""Times Microsoft SEAL's BGV, BFV and CKKS through TenSEAL's low-level binding (tenseal.sealapi)
and prints one JSON object (see peer_common.run_all). Run by run.py in the SEAL environment.

Parameters: SEAL's default 128-bit coefficient modulus for N (CoeffModulus.BFVDefault, which
SEAL's own examples use for BGV too: SEAL has no separate BGV default), whose last prime is
the key-switching (special) prime, and t = 65537. SEAL runs one operation on one thread.

BGV is SCHEME_TYPE 3 in SEAL 4.x; TenSEAL's enum binding predates it and lacks the name, so
the value is built from its number (the bundled library accepts it: the context validates and
the product below is checked).

Two options serve `pimhe bench reproduce ceram` (run.py passes neither): --coeff-bits N:B1,B2,...
sets the coefficient modulus at N explicitly (CoeffModulus.Create(N, [B1, B2, ...]), the last
prime the special prime, SEAL's own 128-bit check) instead of BFVDefault; --bfv-ops all times
BFV's encrypt, decrypt, add, sub and multiply + relin (each result decrypted and checked once)
instead of multiply + relin alone.

SEAL keeps BGV ciphertexts in NTT form, so the NTT and inverse NTT are timed with
Evaluator.transform_to_ntt_inplace / transform_from_ntt_inplace on a fresh BFV ciphertext
(coefficient form) under the same coefficient modulus.

CKKS: pimhe's preset (--ckks) as SEAL's examples build one: CoeffModulus.Create(N, [60] +
[scale_bits] * depth + [60]), the last prime the special prime (SEAL's key switching has one
digit per data prime), scale 2^scale_bits, SEAL's own 128-bit check (where 60-bit end primes
do not pass it, the largest that do). SEAL's largest ring degree is 32768. SEAL has no hoisted rotations (the hoisted row times 8 rotate_vector calls)
and no polynomial evaluator (the sigmoid is n/a).
"""

import os
import random
import tempfile

import tenseal
import tenseal.sealapi as seal

from peer_common import (
    BABY_STEPS,
    CKKS_BOUNDS,
    HOISTED,
    PLAIN_MODULUS,
    TRANSFORM_SLOTS,
    Rounds,
    apply_matrix,
    bsgs_plan,
    check_close,
    check_product,
    ckks_vectors,
    params_summary,
    parse_args,
    precision,
    rotate,
    run_all,
    slot_errors,
    transform_matrix,
)

BFV = seal.SCHEME_TYPE.BFV
BGV = seal.SCHEME_TYPE(3)
CKKS = seal.SCHEME_TYPE.CKKS

# SEAL_POLY_MOD_DEGREE_MAX in SEAL 4.x.
SEAL_MAX_N = 32768


# --coeff-bits: explicit coefficient-modulus bit sizes per N (the last prime is the special prime).
COEFF_BITS = {}


def context(n, scheme):
    parms = seal.EncryptionParameters(scheme)
    parms.set_poly_modulus_degree(n)
    if n in COEFF_BITS:
        parms.set_coeff_modulus(seal.CoeffModulus.Create(n, COEFF_BITS[n]))
    else:
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

    def add(self, a, b):
        out = seal.Ciphertext(self.ctx)
        self.evaluator.add(a, b, out)
        return out

    def sub(self, a, b):
        out = seal.Ciphertext(self.ctx)
        self.evaluator.sub(a, b, out)
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


def check_slots(op, got, expected, t=PLAIN_MODULUS):
    """Raises unless every slot of `got` is expected[i] mod t."""
    for i, (g, e) in enumerate(zip(got, expected)):
        if (g - e) % t != 0:
            raise RuntimeError(f"{op}: slot {i} decrypted to {g}, expected {e % t}")


def bench_integer(name, n, repeat, seed, all_ops=False):
    """BGV or BFV at N, as peer_openfhe.py times them; the BGV result also carries the NTT and
    inverse NTT, timed on a fresh BFV ciphertext of the same coefficient modulus."""
    rng = random.Random(seed)
    x = [rng.randrange(PLAIN_MODULUS) for _ in range(n)]
    y = [rng.randrange(PLAIN_MODULUS) for _ in range(n)]
    ctx, params = context(n, BGV if name == "bgv" else BFV)
    c = Client(ctx)
    px, py = c.plain(x), c.plain(y)
    cy = c.encrypt(py)
    # A fresh BFV ciphertext is in coefficient form (SEAL keeps BGV ones in NTT form).
    bfv = Client(context(n, BFV)[0]) if name == "bgv" else None
    fresh = bfv.encrypt(bfv.plain(x)) if bfv else None
    rounds = Rounds()
    for r in range(repeat + 1):
        cx = rounds.time("encrypt", c.encrypt, px)
        if name == "bgv":
            rounds.time("decrypt", c.decrypt, cx)
            product = rounds.time("multiply", c.multiply, cx, cy)
            rounds.time("relinearize", c.relinearize, product)
            relinearized = rounds.time("multiply_relin", c.multiply_relin, cx, cy)
            result = rounds.time("mod_switch", c.mod_switch, relinearized)
            # Forward first, then back, on a copy written just before (as pimhe transforms
            # copies of the components).
            work = bfv.copy(fresh)
            rounds.time("ntt", bfv.evaluator.transform_to_ntt_inplace, work)
            rounds.time("intt", bfv.evaluator.transform_from_ntt_inplace, work)
        elif all_ops:
            # The operations of the CE-RAM B/FV paper's Table 6, each checked once.
            plain_x = rounds.time("decrypt", c.decrypt, cx)
            total = rounds.time("add", c.add, cx, cy)
            difference = rounds.time("sub", c.sub, cx, cy)
            result = rounds.time("multiply_relin", c.multiply_relin, cx, cy)
            if r == 0:
                check_slots(f"SEAL {name} N={n} decrypt", c.decode(plain_x), x)
                check_slots(f"SEAL {name} N={n} add", c.decode(c.decrypt(total)), [a + b for a, b in zip(x, y)])
                check_slots(f"SEAL {name} N={n} sub", c.decode(c.decrypt(difference)), [a - b for a, b in zip(x, y)])
        else:
            result = rounds.time("multiply_relin", c.multiply_relin, cx, cy)
        if r == 0:
            check_product(f"SEAL {name} N={n}", c.decode(c.decrypt(result)), x, y)
    result = {"n": n, "scheme": name, "params": params, "checked": True, "ops": rounds.summary()}
    if name == "bgv":
        result["notes"] = {
            "ntt": "transform_to_ntt_inplace on a fresh BFV ciphertext, same coefficient modulus",
            "intt": "transform_from_ntt_inplace on a BFV ciphertext, same coefficient modulus",
        }
    return result


# ---------------------------------------------------------------------------------------------
# CKKS


def ckks_context(n, depth, scale_bits):
    """CKKS at N with `depth` primes of scale_bits bits between a first prime and the special
    prime of F bits: F = 60, else the largest F above scale_bits that SEAL's 128-bit check
    accepts (as peer_openfhe.py lowers its first modulus)."""
    if n > SEAL_MAX_N:
        raise RuntimeError(f"SEAL's largest ring degree is {SEAL_MAX_N} (SEAL_POLY_MOD_DEGREE_MAX)")
    refusal = None
    for first_bits in range(60, scale_bits, -1):
        parms = seal.EncryptionParameters(CKKS)
        parms.set_poly_modulus_degree(n)
        try:
            parms.set_coeff_modulus(seal.CoeffModulus.Create(n, [first_bits] + [scale_bits] * depth + [first_bits]))
        except Exception as e:  # SEAL finds too few primes of a size
            refusal = refusal or str(e)
            continue
        ctx = seal.SEALContext(parms, True, seal.SEC_LEVEL_TYPE.TC128)
        if not ctx.parameters_set():
            refusal = refusal or ctx.parameters_error_message()
            continue
        bits = [m.bit_count() for m in parms.coeff_modulus()]
        params = params_summary(
            bits[:-1],
            bits[-1:],
            plain_modulus=None,
            depth=depth,
            scale_bits=scale_bits,
            first_mod_bits=first_bits,
            dnum=depth + 1,
        )
        return ctx, params
    raise RuntimeError(
        f"SEAL refused CKKS at N={n}, depth {depth}, scale 2^{scale_bits} with a first and special prime "
        f"of {scale_bits + 1}..60 bits: {refusal}"
    )


class CkksClient:
    """Keys, encoder, encryptor, decryptor and evaluator of one CKKS context."""

    def __init__(self, ctx, scale, steps):
        self.ctx, self.scale = ctx, scale
        keygen = seal.KeyGenerator(ctx)
        public = seal.PublicKey()
        keygen.create_public_key(public)
        self.relin = seal.RelinKeys()
        keygen.create_relin_keys(self.relin)
        # The binding's list overload takes Galois elements, not steps.
        tool = ctx.key_context_data().galois_tool()
        self.galois = seal.GaloisKeys()
        keygen.create_galois_keys([tool.get_elt_from_step(step) for step in steps], self.galois)
        self.encoder = seal.CKKSEncoder(ctx)
        self.slots = self.encoder.slot_count()
        self.encryptor = seal.Encryptor(ctx, public)
        self.decryptor = seal.Decryptor(ctx, keygen.secret_key())
        self.evaluator = seal.Evaluator(ctx)

    def new(self):
        return seal.Ciphertext(self.ctx)

    def encode(self, values, parms_id=None):
        plain = seal.Plaintext()
        if parms_id is None:
            self.encoder.encode(values, self.scale, plain)
        else:
            self.encoder.encode(values, parms_id, self.scale, plain)
        return plain

    def encrypt(self, values):
        """Encode + encrypt (the row's operation)."""
        out = self.new()
        self.encryptor.encrypt(self.encode(values), out)
        return out

    def decrypt(self, ct):
        """Decrypt + decode to real numbers (the row's operation)."""
        plain = seal.Plaintext()
        self.decryptor.decrypt(ct, plain)
        return self.encoder.decode_double(plain)

    def decode_complex(self, ct):
        plain = seal.Plaintext()
        self.decryptor.decrypt(ct, plain)
        return self.encoder.decode_complex(plain)

    def add(self, a, b):
        out = self.new()
        self.evaluator.add(a, b, out)
        return out

    def multiply_relin(self, a, b):
        out = self.new()
        self.evaluator.multiply(a, b, out)
        self.evaluator.relinearize_inplace(out, self.relin)
        return out

    def multiply_relin_rescale(self, a, b):
        out = self.multiply_relin(a, b)
        self.evaluator.rescale_to_next_inplace(out)
        return out

    def rescale(self, a):
        out = self.new()
        self.evaluator.rescale_to_next(a, out)
        return out

    def rotate(self, a, step):
        out = self.new()
        self.evaluator.rotate_vector(a, step, self.galois, out)
        return out

    def rotations(self, a):
        """The hoisted row's rotations by 1 .. 8, each a full rotate_vector (SEAL has no hoisting)."""
        return [self.rotate(a, step) for step in range(1, HOISTED + 1)]

    def linear_transform(self, a, diagonals):
        """The BSGS diagonal method (peer_common.bsgs_plan) with plain rotations: the baby steps
        rotate `a`, each giant step sums its plaintext products and rotates the sum once, and one
        rescaling ends it."""
        baby = {0: a}
        for i in sorted({i for terms in diagonals.values() for i, _ in terms if i}):
            baby[i] = self.rotate(a, i)
        total = None
        for j, terms in diagonals.items():
            inner = None
            for i, plain in terms:
                term = self.new()
                self.evaluator.multiply_plain(baby[i], plain, term)
                if inner is None:
                    inner = term
                else:
                    self.evaluator.add_inplace(inner, term)
            if j:
                inner = self.rotate(inner, BABY_STEPS * j)
            if total is None:
                total = inner
            else:
                self.evaluator.add_inplace(total, inner)
        self.evaluator.rescale_to_next_inplace(total)
        return total


def replicate(values, slots):
    """A short vector packed as SEAL packs N/2 slots: repeated, so that rotations of the full
    vector rotate the short one cyclically (what sparse packing gives pimhe and OpenFHE)."""
    return values * (slots // len(values))


def bench_ckks(n, target, seed, repeat):
    depth, scale_bits = target["depth"], target["scale_bits"]
    ctx, params = ckks_context(n, depth, scale_bits)
    plan = bsgs_plan(transform_matrix(seed))
    steps = sorted(set(range(1, HOISTED + 1)) | {BABY_STEPS * j for j in plan if j})
    c = CkksClient(ctx, 2.0**scale_bits, steps)
    slots = c.slots
    count = target["precision_count"]
    xs, ys = ckks_vectors(slots, seed, 0, count), ckks_vectors(slots, seed, 1, count)
    x, y = xs[0], ys[0]
    cy = c.encrypt(y)
    short = x[:TRANSFORM_SLOTS]
    c_short = c.encrypt(replicate(short, slots))
    diagonals = {
        j: [(i, c.encode(replicate(values, slots), c_short.parms_id())) for i, values in terms]
        for j, terms in plan.items()
    }

    rounds = Rounds()
    for r in range(repeat + 1):
        cx = rounds.time("encrypt", c.encrypt, x)
        plain_x = rounds.time("decrypt", c.decrypt, cx)
        total = rounds.time("add", c.add, cx, cy)
        product = rounds.time("multiply_relin_rescale", c.multiply_relin_rescale, cx, cy)
        unscaled = c.multiply_relin(cx, cy)
        rounds.time("rescale", c.rescale, unscaled)
        rotated = rounds.time("rotate", c.rotate, cx, 1)
        rotations = rounds.time("rotate_hoisted_8", c.rotations, cx)
        transformed = rounds.time("linear_transform_64", c.linear_transform, c_short, diagonals)
        if r == 0:
            check_close("SEAL CKKS decrypt", plain_x, x, CKKS_BOUNDS["decrypt"])
            check_close("SEAL CKKS add", c.decode_complex(total), [a + b for a, b in zip(x, y)], CKKS_BOUNDS["add"])
            expected = [a * b for a, b in zip(x, y)]
            check_close("SEAL CKKS multiply", c.decode_complex(product), expected, CKKS_BOUNDS["multiply_relin_rescale"])
            check_close("SEAL CKKS rotate", c.decode_complex(rotated), rotate(x, 1), CKKS_BOUNDS["rotate"])
            for step, ct in enumerate(rotations, 1):
                got = c.decode_complex(ct)
                check_close(f"SEAL CKKS rotation {step}", got, rotate(x, step), CKKS_BOUNDS["rotate_hoisted_8"])
            expected = apply_matrix(transform_matrix(seed), short)
            got = c.decode_complex(transformed)
            # Every copy of the short vector holds the product.
            check_close("SEAL CKKS linear transform", got, replicate(expected, slots), CKKS_BOUNDS["linear_transform_64"])
    errors = []
    for xk, yk in zip(xs, ys):
        got = c.decode_complex(c.multiply_relin_rescale(c.encrypt(xk), c.encrypt(yk)))
        errors += slot_errors(got, [a * b for a, b in zip(xk, yk)])
    return {
        "n": n,
        "scheme": "ckks",
        "params": params,
        "checked": True,
        "precision_after_multiply": precision(errors),
        "ops": rounds.summary(),
        "unavailable": {
            "sigmoid": "SEAL has no polynomial evaluator (no Chebyshev or Paterson-Stockmeyer evaluation; "
            "its users write one with their own scale and level management), so there is no SEAL "
            "sigmoid to time",
        },
        "notes": {
            "encrypt": "CKKSEncoder.encode from a Python list (the binding converts it) + Encryptor.encrypt",
            "decrypt": "Decryptor.decrypt + CKKSEncoder.decode_double (a Python list of N/2 floats)",
            "rotate_hoisted_8": "8 rotate_vector calls, 1..8: SEAL has no hoisted rotations",
            "linear_transform_64": "the 64 slots repeated over the N/2 (SEAL packs every slot); baby steps by "
            "rotate_vector, not hoisted",
        },
    }


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


def own_flags(parser):
    parser.add_argument(
        "--coeff-bits",
        nargs="*",
        default=[],
        metavar="N:B1,B2,...",
        help="explicit coefficient-modulus bit sizes at N (the last prime is the special prime) instead of "
        "CoeffModulus.BFVDefault",
    )
    parser.add_argument(
        "--bfv-ops",
        choices=["multiply_relin", "all"],
        default="multiply_relin",
        help="BFV operations to time: multiply + relin only [default], or also encrypt, decrypt, add and sub",
    )


def main():
    args = parse_args(__doc__.splitlines()[0], own_flags)
    for item in args.coeff_bits:
        n, bits = item.split(":")
        COEFF_BITS[int(n)] = [int(b) for b in bits.split(",")]
    version = f"SEAL {seal_version()} (tenseal {tenseal.__version__})"

    def bench(scheme, n):
        if scheme == "ckks":
            return bench_ckks(n, args.ckks[n], args.seed, args.repeat)
        return bench_integer(scheme, n, args.repeat, args.seed, scheme == "bfv" and args.bfv_ops == "all")

    run_all("seal", version, 1, args, bench)


if __name__ == "__main__":
    main()
