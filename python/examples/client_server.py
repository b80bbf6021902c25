"""Client and server through files: the client makes the keys and encrypts, the server loads
only the parameters, the evaluation keys and the ciphertexts (no secret key), computes and
writes its result, and the client loads and decrypts it, checked against numpy."""

import tempfile
from pathlib import Path

import numpy as np

import pimhe

shared = Path(tempfile.mkdtemp(prefix="pimhe-client-server-"))

# Client: keys and encrypted data; the secret key never goes to the shared folder.
ctx = pimhe.Context.bfv(n=8192)
secret, public, relin, _ = ctx.keygen()
t = ctx.plain_modulus
rng = np.random.default_rng(3)
x = rng.integers(0, 1000, size=(2, ctx.slots), dtype=np.uint64)
(shared / "params.pimhe").write_bytes(ctx.to_bytes())
(shared / "relin.pimhe").write_bytes(relin.to_bytes(compressed=True))
(shared / "x.pimhe").write_bytes(ctx.encryptor(public).encrypt(x).to_bytes())

# Server: everything it reads is in the shared folder, and none of it is secret.
server_ctx = pimhe.Context.from_bytes((shared / "params.pimhe").read_bytes())
ev = server_ctx.evaluator(None, relin_key=server_ctx.relin_key_from_bytes((shared / "relin.pimhe").read_bytes()))
batch = server_ctx.ciphertext_from_bytes((shared / "x.pimhe").read_bytes())
result = ev.add(ev.relinearize(ev.multiply(batch, batch)), batch)  # x^2 + x per slot
(shared / "result.pimhe").write_bytes(result.to_bytes())
print(f"server wrote {(shared / 'result.pimhe').stat().st_size} bytes for {result.count} ciphertexts")

# Client: decrypt and check.
got = ctx.decryptor(secret).decrypt(ctx.ciphertext_from_bytes((shared / "result.pimhe").read_bytes()))
expected = (x.astype(object) ** 2 + x.astype(object)) % t
assert (got.astype(object) == expected).all()
print("OK: x^2 + x decrypted exactly from the server's file")
