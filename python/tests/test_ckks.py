"""CKKS against numpy within a precision bound."""

import numpy as np
import pytest

import pimhe

TOL = 1e-4


def tools(ctx, keys, backend):
    enc = ctx.encryptor(keys.public_key, backend, seed=5)
    dec = ctx.decryptor(keys.secret_key, backend)
    ev = ctx.evaluator(backend, relin_key=keys.relin_key, galois_keys=keys.galois_keys)
    return enc, dec, ev


def test_properties(ckks):
    ctx, keys = ckks
    assert ctx.scheme == "ckks" and ctx.n == 8192 and ctx.slots == 4096
    assert ctx.scale == 2.0 ** ctx.scale_bits
    assert ctx.depth >= 2 and ctx.plain_modulus is None
    assert set(ctx.galois_elements([1, -1, 2], conjugation=True)) == set(keys.galois_keys.elements)


def test_arithmetic(ckks, cpu, rng):
    ctx, keys = ckks
    enc, dec, ev = tools(ctx, keys, cpu)
    x = rng.uniform(-1, 1, size=(2, ctx.slots))
    y = rng.uniform(-1, 1, size=(2, ctx.slots))
    cx, cy = enc.encrypt(x), enc.encrypt(y)
    assert cx.scale == ctx.scale and cx.depth_left == ctx.depth
    np.testing.assert_allclose(dec.decrypt(cx), x, atol=TOL)
    np.testing.assert_allclose(dec.decrypt(ev.add(cx, cy)), x + y, atol=TOL)
    np.testing.assert_allclose(dec.decrypt(ev.sub(cx, cy)), x - y, atol=TOL)
    np.testing.assert_allclose(dec.decrypt(ev.negate(cx)), -x, atol=TOL)
    product = ev.rescale(ev.relinearize(ev.multiply(cx, cy)))
    assert product.level < cx.level and product.depth_left == ctx.depth - 1
    np.testing.assert_allclose(dec.decrypt(product), x * y, atol=TOL)
    np.testing.assert_allclose(dec.decrypt(ev.multiply_relin_rescale(cx, cy)), x * y, atol=TOL)
    np.testing.assert_allclose(dec.decrypt(ev.add_plain(cx, y[0])), x + y[0], atol=TOL)
    np.testing.assert_allclose(dec.decrypt(ev.rescale(ev.mul_plain(cx, y))), x * y, atol=TOL)
    np.testing.assert_allclose(dec.decrypt(ev.add_const(cx, 0.5)), x + 0.5, atol=TOL)
    np.testing.assert_allclose(dec.decrypt(ev.rescale(ev.mul_const(cx, 0.25))), x * 0.25, atol=TOL)
    np.testing.assert_allclose(dec.decrypt(ev.sum(cx)), x.sum(axis=0, keepdims=True), atol=TOL)


def test_rotations_and_conjugation(ckks, cpu, rng):
    ctx, keys = ckks
    enc, dec, ev = tools(ctx, keys, cpu)
    x = rng.uniform(-1, 1, size=ctx.slots)
    c = enc.encrypt(x)
    np.testing.assert_allclose(dec.decrypt(ev.rotate(c, 1))[0], np.roll(x, -1), atol=TOL)
    np.testing.assert_allclose(dec.decrypt(ev.rotate(c, -1))[0], np.roll(x, 1), atol=TOL)
    r1, r2 = ev.rotate_hoisted(c, [1, 2])
    np.testing.assert_allclose(dec.decrypt(r2)[0], np.roll(x, -2), atol=TOL)
    z = x + 1j * x[::-1]
    cz = enc.encrypt(z)
    got = dec.decrypt(ev.conjugate(cz), complex=True)[0]
    assert got.dtype == np.complex128
    np.testing.assert_allclose(got, np.conj(z), atol=TOL)
    with pytest.raises(pimhe.MissingKeyError, match="Galois"):
        ev.rotate(c, 5)


def test_rotating_by_no_step_is_a_copy_and_needs_no_key(ckks, cpu, rng):
    ctx, keys = ckks
    enc, dec, with_keys = tools(ctx, keys, cpu)
    without_keys = ctx.evaluator(cpu)
    x = rng.uniform(-1, 1, size=ctx.slots)
    c = enc.encrypt(x)
    # A multiple of the slot count is no rotation either.
    for steps in (0, ctx.slots, -2 * ctx.slots):
        same = without_keys.rotate(c, steps)
        assert (same.level, same.scale, same.size) == (c.level, c.scale, c.size)
        np.testing.assert_allclose(dec.decrypt(same)[0], x, atol=TOL)
    (same,) = without_keys.rotate_hoisted(c, [0])
    np.testing.assert_allclose(dec.decrypt(same)[0], x, atol=TOL)
    # Hoisted beside real rotations, in the order asked.
    left, same, right = with_keys.rotate_hoisted(c, [1, 0, -1])
    np.testing.assert_allclose(dec.decrypt(left)[0], np.roll(x, -1), atol=TOL)
    np.testing.assert_allclose(dec.decrypt(same)[0], x, atol=TOL)
    np.testing.assert_allclose(dec.decrypt(right)[0], np.roll(x, 1), atol=TOL)
    with pytest.raises(pimhe.MissingKeyError, match="Galois"):
        without_keys.rotate(c, 1)


def test_mul_const_integers_keep_level_and_scale_other_constants_need_a_rescale(ckks, cpu, rng):
    # What the docstring of Evaluator.mul_const says.
    ctx, keys = ckks
    enc, dec, ev = tools(ctx, keys, cpu)
    x = rng.uniform(-1, 1, size=(2, ctx.slots))
    c = enc.encrypt(x)
    for whole in (3, -2, 3.0):
        product = ev.mul_const(c, whole)
        assert (product.level, product.scale) == (c.level, c.scale)
        np.testing.assert_allclose(dec.decrypt(product), whole * x, atol=TOL)
    scaled = ev.mul_const(c, 0.25)
    assert scaled.level == c.level
    rescaled = ev.rescale(scaled)
    dropped = ctx.primes[rescaled.level + 1 : c.level + 1]
    assert scaled.scale == pytest.approx(c.scale * np.prod([float(q) for q in dropped]))
    assert rescaled.scale == pytest.approx(c.scale)
    np.testing.assert_allclose(dec.decrypt(rescaled), 0.25 * x, atol=TOL)


def test_polynomial(ckks, cpu, rng):
    ctx, keys = ckks
    enc, dec, ev = tools(ctx, keys, cpu)
    sigmoid = pimhe.Chebyshev.sigmoid((-1.0, 1.0), 3)
    assert sigmoid.depth <= ctx.depth
    x = rng.uniform(-1, 1, size=64)
    got = dec.decrypt(ev.evaluate_polynomial(enc.encrypt(x), sigmoid))[0, :64]
    want = np.array([sigmoid.evaluate_plain(v) for v in x])
    np.testing.assert_allclose(got, want, atol=1e-3)
    np.testing.assert_allclose(got, 1 / (1 + np.exp(-x)), atol=1e-2)
    # With a level to spare: the same values, one level lower; below the depth: refused.
    c = enc.encrypt(x)
    least, spared = ev.evaluate_polynomial(c, sigmoid), ev.evaluate_polynomial(c, sigmoid, levels=sigmoid.depth + 1)
    assert spared.level < least.level
    np.testing.assert_allclose(dec.decrypt(spared)[0, :64], want, atol=1e-3)
    with pytest.raises(pimhe.ParameterError, match="needs at least"):
        ev.evaluate_polynomial(c, sigmoid, levels=sigmoid.depth - 1)


def test_sparse_packing(ckks, cpu):
    ctx, keys = ckks
    enc, dec, _ = tools(ctx, keys, cpu)
    c = enc.encrypt([1.0, 2.0, 3.0, 4.0], slots=4)
    assert c.slots == 4
    np.testing.assert_allclose(dec.decrypt(c)[0], [1, 2, 3, 4], atol=TOL)


def test_bench_bootstrap_restores_the_slots_on_the_insecure_preset():
    report = pimhe.bench_bootstrap(1024)
    assert report["insecure"] and report["slots"] == 512
    assert report["precision"]["min_bits"] > 15
    assert report["level_after"] > report["level_before"] and report["rescalings_left"] >= 1
    nearbank = pimhe.bench_bootstrap(1024, backend="nearbank")
    assert nearbank["nearbank"]["total_s"] > 0 and nearbank["nearbank"]["pim_instructions"] > 0
    with pytest.raises(pimhe.ParameterError, match="n=32768 is not allowed"):
        pimhe.bench_bootstrap(32768)
