"""CKKS bootstrapping: a ciphertext at its last levels refreshed to a high level with the same
slots (up to a small error), so that computation goes on past the chain's depth.

Set up as OpenFHE's ``EvalBootstrapSetup`` / ``EvalBootstrapKeyGen`` / ``EvalBootstrap``: a plan
of the context (no keys needed), exactly its Galois keys from the secret key, an evaluator that
prepares the transforms once, then ``ev.bootstrap(ct)``::

    import numpy as np, pimhe
    from pimhe.ckks import bootstrap

    ctx = bootstrap.insecure_context(1024)          # INSECURE preset: tests and experiments only
    plan = bootstrap.BootstrapPlan(ctx)             # also pimhe.BootstrapPlan
    plan.output_level, plan.depth_after, plan.key_count, plan.galois_key_bytes

    keys = ctx.keygen(seed=1)                       # secret, public, relinearization keys
    galois = plan.keygen(keys.secret_key)           # exactly the plan's Galois keys
    galois.save("boot.keys", compressed=True)       # public material; the secret key is not in it
    galois = pimhe.GaloisKeys.load(ctx, "boot.keys")

    ev = ctx.evaluator(relin_key=keys.relin_key, galois_keys=galois, bootstrap=plan)
    enc, dec = ctx.encryptor(keys.public_key), ctx.decryptor(keys.secret_key)
    x = np.random.default_rng(1).uniform(-1, 1, ctx.slots)
    low = ev.drop_to_level(enc.encrypt(x), ctx.min_level)   # no rescaling left
    fresh = ev.bootstrap(low)                        # at plan.output_level, low's scale
    assert np.abs(dec.decrypt(fresh)[0] - x).max() < 2**-18

Ciphertexts must pack the plan's slots (N/2 by default; ``BootstrapPlan(ctx, slots=n)`` plans a
sparse packing of n slots, encrypted with ``enc.encrypt(x, slots=n)``) and have a scale at most
q0 / 2^5 (``ParameterError`` otherwise); an evaluator without ``bootstrap=``, the relinearization key or one of the plan's
Galois keys raises ``MissingKeyError`` naming what is missing; a plan, key or ciphertext of
another context raises ``MismatchError``. ``insecure_context`` contexts are INSECURE (their repr
says so). ``secure_context()`` is the 128-bit preset (N = 2^16, 9 levels after; about 4 GB of
keys, tens of seconds a bootstrapping on two cores): its secret is dense, so bootstrapping
passes through an ephemeral sparse secret (``plan.uses_encapsulation``), whose keys the evaluator
also needs::

    ctx = bootstrap.secure_context()
    plan = bootstrap.BootstrapPlan(ctx)
    keys = ctx.keygen()
    ev = ctx.evaluator(relin_key=keys.relin_key, galois_keys=plan.keygen(keys.secret_key),
                       bootstrap=plan, encapsulation_keys=plan.encapsulation_keygen(keys.secret_key))

``bench`` is ``pimhe.bench_bootstrap`` (``pimhe bench bootstrap``: time, precision, keys).
"""

from .. import bench_bootstrap as bench
from .._pimhe import BootstrapPlan, EncapsulationKeys
from .._pimhe import insecure_bootstrap_context as insecure_context
from .._pimhe import secure_bootstrap_context as secure_context

__all__ = ["BootstrapPlan", "EncapsulationKeys", "bench", "insecure_context", "secure_context"]
