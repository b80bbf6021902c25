"""Serialization through Python: every object of every scheme to bytes and files and back,
decrypting loaded ciphertexts against numpy, loaded keys at work, compressed forms, and damaged
or foreign data refused with FormatError."""

import numpy as np
import pytest

import pimhe

TOL = 1e-5


def roundtrip_context(ctx):
    loaded = pimhe.Context.from_bytes(ctx.to_bytes())
    assert (loaded.scheme, loaded.n, loaded.primes) == (ctx.scheme, ctx.n, ctx.primes)
    return loaded


@pytest.mark.parametrize("scheme", ["bgv", "bfv"])
def test_integer_objects_round_trip_through_bytes_and_files(scheme, request, cpu, tmp_path):
    ctx, (sk, pk, rk, _) = request.getfixturevalue(scheme)
    loaded_ctx = roundtrip_context(ctx)
    x = np.arange(ctx.slots, dtype=np.uint64).reshape(1, -1) % 1000
    y = (3 * x + 1) % 1000
    batch = ctx.encryptor(pk, cpu, seed=4).encrypt(np.vstack([x, y]))
    path = tmp_path / "batch.pimhe"
    path.write_bytes(batch.to_bytes())
    loaded = loaded_ctx.ciphertext_from_bytes(path.read_bytes(), cpu)
    assert (loaded.count, loaded.level, loaded.size) == (2, batch.level, 2)

    # The server side: public material only, loaded from bytes.
    server_rk = loaded_ctx.relin_key_from_bytes(rk.to_bytes())
    ev = loaded_ctx.evaluator(cpu, relin_key=server_rk)
    first = loaded_ctx.ciphertext_from_bytes(ev.relinearize(ev.multiply(loaded, loaded)).to_bytes(), cpu)

    secret = loaded_ctx.secret_key_from_bytes(sk.to_bytes())
    got = loaded_ctx.decryptor(secret, cpu).decrypt(first)
    t = ctx.plain_modulus
    np.testing.assert_array_equal(got, np.vstack([x * x % t, y * y % t]))
    # The public key from either form encrypts for the same secret.
    for data in (pk.to_bytes(), pk.to_bytes(compressed=True)):
        again = loaded_ctx.encryptor(loaded_ctx.public_key_from_bytes(data), cpu).encrypt(x)
        np.testing.assert_array_equal(loaded_ctx.decryptor(secret, cpu).decrypt(again), x)


def test_ckks_objects_and_galois_keys_round_trip(ckks, cpu, rng):
    ctx, (sk, pk, rk, gk) = ckks
    loaded_ctx = roundtrip_context(ctx)
    x = rng.uniform(-1, 1, size=(1, ctx.slots))
    batch = loaded_ctx.ciphertext_from_bytes(ctx.encryptor(pk, cpu).encrypt(x).to_bytes(), cpu)
    assert batch.scale == pytest.approx(ctx.scale)
    for data in (gk.to_bytes(), gk.to_bytes(compressed=True)):
        keys = loaded_ctx.galois_keys_from_bytes(data)
        assert keys.elements == gk.elements
        ev = loaded_ctx.evaluator(cpu, relin_key=loaded_ctx.relin_key_from_bytes(rk.to_bytes(compressed=True)), galois_keys=keys)
        got = ctx.decryptor(sk, cpu).decrypt(ev.rotate(batch, 1))
        np.testing.assert_allclose(got, np.roll(x, -1, axis=1), atol=TOL)


def test_compressed_forms_are_about_half(bgv, cpu):
    ctx, (sk, pk, rk, _) = bgv
    for key in (pk, rk):
        full, compressed = len(key.to_bytes()), len(key.to_bytes(compressed=True))
        assert 0.45 < compressed / full < 0.55
    values = np.arange(ctx.slots, dtype=np.uint64) % 7
    enc = ctx.encryptor(sk, cpu, seed=5)
    seeded = enc.encrypt_seeded(values)
    full = enc.encrypt(values).to_bytes()
    assert 0.45 < len(seeded) / len(full) < 0.55
    back = ctx.ciphertext_from_bytes(seeded, cpu)
    np.testing.assert_array_equal(ctx.decryptor(sk, cpu).decrypt(back)[0], values)


def test_public_key_encryptors_cannot_make_seeded_ciphertexts(bgv, cpu):
    ctx, (_, pk, _, _) = bgv
    with pytest.raises(pimhe.PimheError, match="secret"):
        ctx.encryptor(pk, cpu).encrypt_seeded(np.zeros(4, dtype=np.uint64))


def test_damaged_or_foreign_data_raises_format_error(bgv, bfv, cpu):
    ctx, (_, pk, _, _) = bgv
    data = ctx.encryptor(pk, cpu).encrypt(np.ones(4, dtype=np.uint64)).to_bytes()
    with pytest.raises(pimhe.FormatError, match="truncated"):
        ctx.ciphertext_from_bytes(data[: len(data) // 2], cpu)
    with pytest.raises(pimhe.FormatError):
        ctx.ciphertext_from_bytes(b"XIMHE" + data[5:], cpu)
    with pytest.raises(ValueError):  # FormatError is a ValueError
        ctx.ciphertext_from_bytes(b"", cpu)
    other, _ = bfv
    with pytest.raises(pimhe.FormatError):
        other.ciphertext_from_bytes(data, cpu)
    with pytest.raises(pimhe.FormatError):
        pimhe.Context.from_bytes(ctx.to_bytes()[:-3])
    with pytest.raises(pimhe.FormatError):
        ctx.public_key_from_bytes(ctx.to_bytes())
