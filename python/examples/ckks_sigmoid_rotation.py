"""CKKS: sigmoid(rotate(x * y, 1)) on encrypted real vectors (the `pimhe demo --scheme ckks`
pipeline), checked against numpy in bits of precision."""

import numpy as np

import pimhe

ctx = pimhe.Context.ckks(n=8192)
print(ctx)
keys = ctx.keygen(rotations=[1])
backend = pimhe.Backend.cpu()
enc = ctx.encryptor(keys.public_key, backend)
ev = ctx.evaluator(backend, relin_key=keys.relin_key, galois_keys=keys.galois_keys)
dec = ctx.decryptor(keys.secret_key, backend)

rng = np.random.default_rng(2)
x = rng.uniform(-1, 1, size=(2, ctx.slots))
y = rng.uniform(-1, 1, size=(2, ctx.slots))
sigmoid = pimhe.Chebyshev.sigmoid((-1.0, 1.0), 3)
assert sigmoid.depth + 1 <= ctx.depth, "the preset has the depth for a product and the polynomial"

product = ev.multiply_relin_rescale(enc.encrypt(x), enc.encrypt(y))
rotated = ev.rotate(product, 1)
result = ev.evaluate_polynomial(rotated, sigmoid)
got = dec.decrypt(result)

rotated_plain = np.roll(x * y, -1, axis=1)
# Against the polynomial itself (the encryption's error) and against the true sigmoid.
want = np.vectorize(sigmoid.evaluate_plain)(rotated_plain)
error = np.abs(got - want).max()
bits = -np.log2(error)
approximation = np.abs(got - 1 / (1 + np.exp(-rotated_plain))).max()
print(f"result: {result}")
print(f"max |error| vs the polynomial {error:.2e} ({bits:.1f} bits); vs the sigmoid {approximation:.2e}")
assert bits > 12, "far below what CKKS gives here"
assert approximation < 1e-2
print(f"OK: {got.shape[0]} x {ctx.slots} slots match numpy")
