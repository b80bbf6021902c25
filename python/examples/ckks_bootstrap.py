"""CKKS bootstrapping on the INSECURE N = 1024 preset: a plan, exactly its Galois keys (saved
compressed and loaded back, as a client would send them to a server), an evaluator that
prepares the transforms, a ciphertext with no rescaling left refreshed and computed on,
checked against numpy in bits of precision."""

import pathlib
import tempfile

import numpy as np

import pimhe
from pimhe.ckks import bootstrap

ctx = bootstrap.insecure_context(1024)
print(ctx)
plan = bootstrap.BootstrapPlan(ctx)
print(plan)
keys = ctx.keygen()
with tempfile.TemporaryDirectory() as tmp:
    path = pathlib.Path(tmp) / "bootstrap.keys"
    plan.keygen(keys.secret_key).save(path, compressed=True)
    print(f"{plan.key_count} Galois keys: {path.stat().st_size / 2**20:.1f} MiB compressed, "
          f"{plan.galois_key_bytes / 2**20:.1f} MiB in memory")
    galois = pimhe.GaloisKeys.load(ctx, path)

ev = ctx.evaluator(relin_key=keys.relin_key, galois_keys=galois, bootstrap=plan)
enc = ctx.encryptor(keys.public_key)
dec = ctx.decryptor(keys.secret_key)

rng = np.random.default_rng(4)
x = rng.uniform(-1, 1, ctx.slots) + 1j * rng.uniform(-1, 1, ctx.slots)
low = ev.drop_to_level(enc.encrypt(x), ctx.min_level)
assert low.depth_left == 0, "no product is possible before bootstrapping"
fresh = ev.bootstrap(low)
square = ev.multiply_relin_rescale(fresh, fresh)

bits = -np.log2(np.abs(dec.decrypt(fresh, complex=True)[0] - x).max())
bits_square = -np.log2(np.abs(dec.decrypt(square, complex=True)[0] - x * x).max())
print(f"bootstrapped: {fresh}, {bits:.1f} bits; its square: {bits_square:.1f} bits")
assert fresh.level == plan.output_level and fresh.depth_left == plan.depth_after
assert bits > 18 and bits_square > 17
print(f"OK: {ctx.slots} complex slots refreshed from level {low.level} to {fresh.level}")
