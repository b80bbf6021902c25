"""Client and server through files. The client makes the keys, writes the parameters, the
public and evaluation keys and its encrypted data to a shared folder, and keeps the secret key.
The server loads only what is in that folder (no secret key), computes a sum over the users and
a product per user, and writes the results; the client loads and decrypts them, checked against
numpy. Every file is pimhe's binary format (docs/SERIALIZATION.md), the same bytes the Rust
library and the `pimhe` CLI read and write."""

import tempfile
from pathlib import Path

import numpy as np

import pimhe


def client_prepare(shared: Path, rng):
    ctx = pimhe.Context.bfv(n=8192)
    keys = ctx.keygen()
    t = ctx.plain_modulus
    # Four users' rows: x (say, hours) and y (a rate); small enough that x*y and the sums fit t.
    x = rng.integers(0, 100, size=(4, ctx.slots), dtype=np.uint64)
    y = rng.integers(0, 100, size=(4, ctx.slots), dtype=np.uint64)
    ctx.save(shared / "params.pimhe")
    keys.public_key.save(shared / "public.pimhe", compressed=True)  # seeds: about half the size
    keys.relin_key.save(shared / "relin.pimhe", compressed=True)
    # The data owner encrypts with its secret key: the seeded form is half the size too.
    enc = ctx.encryptor(keys.secret_key)
    (shared / "x.pimhe").write_bytes(enc.encrypt_seeded(x))
    (shared / "y.pimhe").write_bytes(enc.encrypt_seeded(y))
    return ctx, keys.secret_key, x, y, t


def server(shared: Path):
    ctx = pimhe.Context.load(shared / "params.pimhe")
    public = pimhe.PublicKey.load(ctx, shared / "public.pimhe")
    ev = ctx.evaluator(relin_key=pimhe.RelinKey.load(ctx, shared / "relin.pimhe"))
    x = pimhe.CiphertextBatch.load(ctx, shared / "x.pimhe")
    y = pimhe.CiphertextBatch.load(ctx, shared / "y.pimhe")
    product = ev.relinearize(ev.multiply(x, y))  # x*y per user and slot
    total = ev.sum(ev.add(x, y))  # sum over the users of x + y, one ciphertext
    # The server can encrypt too (public key): add an offset of 1 to every slot of the total.
    ones = np.ones(ctx.slots, dtype=np.uint64)
    total = ev.add(total, ctx.encryptor(public).encrypt(ones))
    product.save(shared / "product.pimhe")
    total.save(shared / "total.pimhe")
    sizes = {p.name: p.stat().st_size for p in sorted(shared.iterdir())}
    print("server read and wrote:", ", ".join(f"{name} {size // 1024} KiB" for name, size in sizes.items()))


def client_check(shared: Path, ctx, secret, x, y, t):
    dec = ctx.decryptor(secret)
    product = dec.decrypt(pimhe.CiphertextBatch.load(ctx, shared / "product.pimhe"))
    total = dec.decrypt(pimhe.CiphertextBatch.load(ctx, shared / "total.pimhe"))
    xo, yo = x.astype(object), y.astype(object)
    assert (product.astype(object) == xo * yo % t).all()
    assert (total[0].astype(object) == ((xo + yo).sum(axis=0) + 1) % t).all()
    print(f"OK: {x.shape[0]} users x {ctx.slots} slots: the products and the sum decrypt exactly")


def main():
    with tempfile.TemporaryDirectory(prefix="pimhe-client-server-") as folder:
        shared = Path(folder)
        ctx, secret, x, y, t = client_prepare(shared, np.random.default_rng(3))
        server(shared)
        client_check(shared, ctx, secret, x, y, t)


if __name__ == "__main__":
    main()
