"""BGV: the slot-wise product of two encrypted batches, on the CPU and on emulated UPMEM DPUs,
checked exactly against numpy (mod t); prints the modeled UPMEM cost of the server side."""

import time

import numpy as np

import pimhe

ctx = pimhe.Context.bgv(n=8192)  # the 128-bit preset
print(ctx)
keys = ctx.keygen()  # secret, public and relinearization keys (OS randomness)
t = ctx.plain_modulus
rng = np.random.default_rng(1)
x = rng.integers(0, t, size=(4, ctx.slots), dtype=np.uint64)
y = rng.integers(0, t, size=(4, ctx.slots), dtype=np.uint64)
expected = (x.astype(object) * y.astype(object)) % t

for backend in (pimhe.Backend.cpu(), pimhe.Backend.upmem_emu(dpus=64)):
    encryptor = ctx.encryptor(keys.public_key, backend)
    evaluator = ctx.evaluator(backend, relin_key=keys.relin_key)
    decryptor = ctx.decryptor(keys.secret_key, backend)
    cx, cy = encryptor.encrypt(x), encryptor.encrypt(y)
    backend.reset_report()
    start = time.perf_counter()
    product = evaluator.mod_switch_to_next(evaluator.relinearize(evaluator.multiply(cx, cy)))
    decrypted = decryptor.decrypt(product)
    elapsed = time.perf_counter() - start
    assert (decrypted == expected).all(), f"{backend.name}: wrong product"
    budget = min(decryptor.noise_budget(product))
    print(f"{backend.name:>9}: {product}, noise budget left {budget} bits, wall {elapsed * 1e3:.1f} ms")
    report = backend.report()
    if report is not None:
        print(f"           {report}")
print(f"OK: {x.shape[0]} x {ctx.slots} products match numpy mod {t}")
