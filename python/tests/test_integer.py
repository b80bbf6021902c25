"""BGV and BFV against numpy modulo t: exact."""

import numpy as np
import pytest

import pimhe


@pytest.fixture(params=["bgv", "bfv"])
def scheme(request, bgv, bfv):
    return {"bgv": bgv, "bfv": bfv}[request.param]


def tools(ctx, keys, backend):
    enc = ctx.encryptor(keys.public_key, backend, seed=5)
    dec = ctx.decryptor(keys.secret_key, backend)
    ev = ctx.evaluator(backend, relin_key=keys.relin_key)
    return enc, dec, ev


def test_context_properties(bgv, bfv):
    for ctx, _ in (bgv, bfv):
        assert ctx.n == 4096 and ctx.slots == 4096
        assert ctx.plain_modulus == 65537
        assert ctx.security_bits == 128
        assert ctx.max_level == len(ctx.primes) - 1
        assert ctx.scale is None
        assert ctx.scheme in ("bgv", "bfv")
        assert "security=128-bit" in str(ctx)


def test_presets():
    rows = pimhe.presets("bgv")
    assert [r["n"] for r in rows][:3] == [1024, 2048, 4096]
    assert all(r["security_bits"] == 128 and r["log_q"] <= r["max_log_q_128"] for r in rows)
    assert all(r["scheme"] == "bgv" and r["levels"] == len(r["data_primes"]) for r in rows)
    ckks = pimhe.presets("ckks")
    assert ckks[0]["n"] == 8192 and ckks[0]["slots"] == 4096
    with pytest.raises(pimhe.ParameterError, match="not known"):
        pimhe.presets("tfhe")


def test_round_trip_and_operations(scheme, cpu, rng):
    ctx, keys = scheme
    t = ctx.plain_modulus
    enc, dec, ev = tools(ctx, keys, cpu)
    x = rng.integers(0, t, size=(3, ctx.slots), dtype=np.uint64)
    y = rng.integers(0, t, size=(3, ctx.slots), dtype=np.uint64)
    p = rng.integers(0, t, size=ctx.slots, dtype=np.uint64)
    cx, cy = enc.encrypt(x), enc.encrypt(y)
    assert (cx.count, cx.size, cx.level) == (3, 2, ctx.max_level)
    assert len(cx) == 3
    assert dec.decrypt(cx).dtype == np.uint64
    np.testing.assert_array_equal(dec.decrypt(cx), x)

    xo, yo, po = x.astype(object), y.astype(object), p.astype(object)
    np.testing.assert_array_equal(dec.decrypt(ev.add(cx, cy)), (xo + yo) % t)
    np.testing.assert_array_equal(dec.decrypt(ev.sub(cx, cy)), (xo - yo) % t)
    np.testing.assert_array_equal(dec.decrypt(ev.negate(cx)), (-xo) % t)
    product = ev.multiply(cx, cy)
    assert product.size == 3
    np.testing.assert_array_equal(dec.decrypt(product), (xo * yo) % t)
    relin = ev.relinearize(product)
    assert relin.size == 2
    np.testing.assert_array_equal(dec.decrypt(relin), (xo * yo) % t)
    np.testing.assert_array_equal(dec.decrypt(ev.square(cx)), (xo * xo) % t)
    np.testing.assert_array_equal(dec.decrypt(ev.add_plain(cx, p)), (xo + po) % t)
    np.testing.assert_array_equal(dec.decrypt(ev.mul_plain(cx, y)), (xo * yo) % t)
    np.testing.assert_array_equal(dec.decrypt(ev.sum(cx)), (xo.sum(axis=0) % t).reshape(1, -1))
    budgets = dec.noise_budget(relin)
    assert len(budgets) == 3 and min(budgets) > 0
    assert min(dec.noise_budget(cx)) > min(budgets)


def test_signed_values(scheme, cpu):
    ctx, keys = scheme
    enc, dec, ev = tools(ctx, keys, cpu)
    x = np.array([-5, 3, -32768, 32768, 0])
    c = enc.encrypt(x)
    got = dec.decrypt(c, signed=True)
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got[0, :5], x)
    minus_two = np.full(ctx.slots, -2)
    np.testing.assert_array_equal(dec.decrypt(ev.mul_plain(c, minus_two), signed=True)[0, :4], [10, -6, -1, 1])


def test_secret_key_encryption_and_seeds(scheme, cpu):
    ctx, keys = scheme
    x = np.arange(ctx.slots, dtype=np.uint64) % ctx.plain_modulus
    enc = ctx.encryptor(keys.secret_key, cpu, seed=9)
    dec = ctx.decryptor(keys.secret_key, cpu)
    np.testing.assert_array_equal(dec.decrypt(enc.encrypt(x))[0], x)
    # Same seed: the same keys.
    again = ctx.keygen(seed=1 if ctx.scheme == "bgv" else 2)
    other = ctx.decryptor(again.secret_key, cpu)
    np.testing.assert_array_equal(other.decrypt(enc.encrypt(x))[0], x)


def test_bgv_modulus_switching(bgv, cpu, rng):
    ctx, keys = bgv
    enc, dec, ev = tools(ctx, keys, cpu)
    t = ctx.plain_modulus
    x = rng.integers(0, t, size=(2, ctx.slots), dtype=np.uint64)
    c = ev.relinearize(ev.multiply(enc.encrypt(x), enc.encrypt(x)))
    switched = ev.mod_switch_to_next(c)
    assert switched.level == c.level - 1
    assert switched.correction_factor != 1
    np.testing.assert_array_equal(dec.decrypt(switched), (x.astype(object) ** 2) % t)
    bottom = ev.mod_switch_to(c, 0)
    assert bottom.level == 0
    with pytest.raises(pimhe.LevelError, match="level 0"):
        ev.mod_switch_to_next(bottom)


def test_bgv_rotation_by_automorphism(cpu):
    # BGV has no named rotation in the library: the automorphism X -> X^3 rotates both rows by one.
    ctx = pimhe.Context.bgv(n=4096)
    keys = ctx.keygen(seed=4, galois_elements=[3])
    enc, dec = ctx.encryptor(keys.public_key, cpu), ctx.decryptor(keys.secret_key, cpu)
    ev = ctx.evaluator(cpu, galois_keys=keys.galois_keys)
    assert keys.galois_keys.elements == [3] and ev.has_galois_key(3)
    x = np.arange(ctx.slots, dtype=np.uint64)
    got = dec.decrypt(ev.automorphism(enc.encrypt(x), 3))[0]
    half = ctx.slots // 2
    np.testing.assert_array_equal(got[:half], np.roll(x[:half], -1))
    np.testing.assert_array_equal(got[half:], np.roll(x[half:], -1))
