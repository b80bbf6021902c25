"""Serialization through Python: every object of every scheme to bytes and files and back,
decrypting loaded ciphertexts against numpy, loaded keys at work, compressed forms, pickling,
and damaged or foreign data refused with FormatError (never a crash)."""

import os
import pickle
import stat

import numpy as np
import pytest

import pimhe

TOL = 1e-5
SCHEMES = ["bgv", "bfv", "ckks"]


@pytest.fixture(scope="module")
def setup(request):
    """Per scheme: the context and keys with Galois keys (BGV/BFV: X -> X^3 rotates the rows by
    one; CKKS: slot rotations by 1 and -1)."""
    made = {}

    def get(scheme):
        if scheme not in made:
            if scheme == "ckks":
                made[scheme] = request.getfixturevalue("ckks")
            else:
                ctx = getattr(pimhe.Context, scheme)(n=4096)
                made[scheme] = ctx, ctx.keygen(seed=11, galois_elements=[3])
        return made[scheme]

    return get


def message(ctx, rows=2, seed=5):
    rng = np.random.default_rng(seed)
    if ctx.scheme == "ckks":
        return rng.uniform(-1, 1, size=(rows, ctx.slots))
    return rng.integers(0, ctx.plain_modulus, size=(rows, ctx.slots), dtype=np.uint64)


def check(ctx, got, expected):
    if ctx.scheme == "ckks":
        np.testing.assert_allclose(got, expected, atol=TOL)
    else:
        np.testing.assert_array_equal(got, expected)


def rotated(ctx, x):
    """What the test's Galois key does to the slots, in numpy."""
    if ctx.scheme == "ckks":
        return np.roll(x, -1, axis=1)
    half = ctx.slots // 2
    return np.hstack([np.roll(x[:, :half], -1, axis=1), np.roll(x[:, half:], -1, axis=1)])


def rotate(ctx, ev, batch):
    return ev.rotate(batch, 1) if ctx.scheme == "ckks" else ev.automorphism(batch, 3)


def same_params(a, b):
    assert (a.scheme, a.n, a.primes, a.to_bytes()) == (b.scheme, b.n, b.primes, b.to_bytes())


@pytest.mark.parametrize("scheme", SCHEMES)
def test_context_round_trips_through_bytes_files_and_pickle(scheme, setup, tmp_path):
    ctx, _ = setup(scheme)
    same_params(pimhe.Context.from_bytes(ctx.to_bytes()), ctx)
    ctx.save(tmp_path / "params.pimhe")
    same_params(pimhe.Context.load(tmp_path / "params.pimhe"), ctx)
    same_params(pimhe.Context.load(str(tmp_path / "params.pimhe")), ctx)  # str paths too
    same_params(pickle.loads(pickle.dumps(ctx)), ctx)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("via", ["bytes", "file"])
def test_every_object_round_trips_and_works(scheme, via, setup, cpu, tmp_path):
    """The client's objects go through bytes or files into a freshly loaded context; a server
    with only the loaded public material computes, and the loaded secret key decrypts."""
    ctx, (sk, pk, rk, gk) = setup(scheme)

    def through(obj, cls, *, compressed=None, **kw):
        extra = {} if compressed is None else {"compressed": compressed}
        if via == "bytes":
            return cls.from_bytes(loaded_ctx, obj.to_bytes(**extra), **kw)
        path = tmp_path / f"{cls.__name__}-{compressed}.pimhe"
        obj.save(path, **extra)
        return cls.load(loaded_ctx, path, **kw)

    loaded_ctx = pimhe.Context.from_bytes(ctx.to_bytes())
    x = message(ctx)
    batch = ctx.encryptor(pk, cpu, seed=4).encrypt(x)
    loaded = through(batch, pimhe.CiphertextBatch, backend=cpu)
    assert (loaded.count, loaded.level, loaded.size) == (batch.count, batch.level, batch.size)
    if scheme == "ckks":
        assert loaded.scale == batch.scale

    secret = through(sk, pimhe.SecretKey)
    dec = loaded_ctx.decryptor(secret, cpu)
    check(ctx, dec.decrypt(loaded), x)
    for compressed in (False, True):
        public = through(pk, pimhe.PublicKey, compressed=compressed)
        relin = through(rk, pimhe.RelinKey, compressed=compressed)
        galois = through(gk, pimhe.GaloisKeys, compressed=compressed)
        assert galois.elements == gk.elements and relin.size_bytes == rk.size_bytes
        # The loaded public key encrypts for the same secret.
        check(ctx, dec.decrypt(loaded_ctx.encryptor(public, cpu).encrypt(x)), x)
        # The loaded evaluation keys relinearize and rotate.
        ev = loaded_ctx.evaluator(cpu, relin_key=relin, galois_keys=galois)
        product = ev.relinearize(ev.multiply(loaded, loaded))
        assert product.size == 2
        if scheme == "ckks":
            check(ctx, dec.decrypt(ev.rescale(product)), x * x)
        else:
            t = ctx.plain_modulus
            check(ctx, dec.decrypt(product), (x.astype(object) ** 2 % t).astype(np.uint64))
        check(ctx, dec.decrypt(rotate(ctx, ev, loaded)), rotated(ctx, x))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_results_of_operations_round_trip(scheme, setup, cpu):
    """A size-3 product and a lower-level batch (BGV, CKKS) come back as they were."""
    ctx, (sk, pk, rk, _) = setup(scheme)
    x = message(ctx, rows=1)
    ev = ctx.evaluator(cpu, relin_key=rk)
    dec = ctx.decryptor(sk, cpu)
    c = ctx.encryptor(pk, cpu).encrypt(x)
    three = ev.multiply(c, c)
    batches = [three]
    if scheme == "ckks":
        batches.append(ev.rescale(ev.relinearize(three)))
    elif scheme == "bgv":
        batches.append(ev.mod_switch_to_next(c))  # BFV has one level
    for batch in batches:
        back = pimhe.CiphertextBatch.from_bytes(ctx, batch.to_bytes(), cpu)
        assert (back.size, back.level) == (batch.size, batch.level)
        np.testing.assert_array_equal(dec.decrypt(back), dec.decrypt(batch))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_compressed_forms_are_about_half(scheme, setup, cpu):
    ctx, (sk, pk, rk, gk) = setup(scheme)
    for key in (pk, rk, gk):
        full, compressed = len(key.to_bytes()), len(key.to_bytes(compressed=True))
        assert 0.45 < compressed / full < 0.55, (key, full, compressed)
    x = message(ctx)
    enc = ctx.encryptor(sk, cpu, seed=5)
    seeded = enc.encrypt_seeded(x)
    assert isinstance(seeded, bytes)
    full = enc.encrypt(x).to_bytes()
    assert 0.45 < len(seeded) / len(full) < 0.55
    for back in (ctx.ciphertext_from_bytes(seeded, cpu), pimhe.CiphertextBatch.from_bytes(ctx, seeded)):
        assert back.count == 2
        check(ctx, ctx.decryptor(sk, cpu).decrypt(back), x)


def test_a_key_loaded_from_its_full_form_has_no_seeds_to_compress(bgv):
    ctx, (_, pk, _, _) = bgv
    again = pimhe.PublicKey.from_bytes(ctx, pk.to_bytes())
    with pytest.raises(pimhe.PimheError, match="seed"):
        again.to_bytes(compressed=True)
    # Loaded from the compressed form, it can be compressed again, to the same bytes.
    assert pimhe.PublicKey.from_bytes(ctx, pk.to_bytes(compressed=True)).to_bytes(compressed=True) == pk.to_bytes(
        compressed=True
    )


def test_public_key_encryptors_cannot_make_seeded_ciphertexts(bgv, cpu):
    ctx, (_, pk, _, _) = bgv
    with pytest.raises(pimhe.PimheError, match="secret"):
        ctx.encryptor(pk, cpu).encrypt_seeded(np.zeros(4, dtype=np.uint64))


def test_keys_and_ciphertexts_refuse_pickle_with_a_pointer_to_to_bytes(bgv, cpu):
    ctx, keys = bgv
    batch = ctx.encryptor(keys.public_key, cpu).encrypt(np.ones(4, dtype=np.uint64))
    for obj in (keys.secret_key, keys.public_key, keys.relin_key, batch):
        with pytest.raises(TypeError, match=r"cannot be pickled.*to_bytes\(\).*from_bytes\(ctx"):
            pickle.dumps(obj)


def test_another_context_refuses_with_a_format_error(bgv, bfv, cpu):
    ctx, (sk, pk, rk, _) = bgv
    data = ctx.encryptor(pk, cpu).encrypt(np.ones(4, dtype=np.uint64)).to_bytes()
    # Same scheme, other parameters: the header's parameter digest differs.
    bigger = pimhe.Context.bgv(n=8192)
    with pytest.raises(pimhe.FormatError, match="made for other parameters"):
        bigger.ciphertext_from_bytes(data, cpu)
    with pytest.raises(pimhe.FormatError, match="made for other parameters"):
        pimhe.RelinKey.from_bytes(bigger, rk.to_bytes())
    # Another scheme: the header's scheme byte differs.
    other, _ = bfv
    with pytest.raises(pimhe.FormatError, match="bgv"):
        pimhe.CiphertextBatch.from_bytes(other, data, cpu)
    with pytest.raises(pimhe.FormatError, match="bgv"):
        other.secret_key_from_bytes(sk.to_bytes())
    # Another kind of object.
    with pytest.raises(pimhe.FormatError, match="expected a public key"):
        pimhe.PublicKey.from_bytes(ctx, ctx.to_bytes())
    with pytest.raises(pimhe.FormatError, match="expected a"):
        ctx.ciphertext_from_bytes(pk.to_bytes(), cpu)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_damaged_data_raises_format_error_never_crashes(scheme, setup, cpu):
    ctx, (sk, pk, rk, gk) = setup(scheme)
    batch = ctx.encryptor(pk, cpu).encrypt(message(ctx, rows=1)).to_bytes()
    loaders = [
        (ctx.to_bytes(), pimhe.Context.from_bytes),
        (batch, lambda d: ctx.ciphertext_from_bytes(d, cpu)),
        (sk.to_bytes(), ctx.secret_key_from_bytes),
        (pk.to_bytes(compressed=True), ctx.public_key_from_bytes),
        (rk.to_bytes(), ctx.relin_key_from_bytes),
        (gk.to_bytes(compressed=True), ctx.galois_keys_from_bytes),
    ]
    for data, load in loaders:
        load(data)  # the undamaged bytes load
        cuts = sorted({0, 1, 5, 8, 9, 40, 41, 45, len(data) // 2, len(data) - 1})
        for cut in cuts:
            with pytest.raises(pimhe.FormatError) as caught:
                load(data[:cut])
            assert str(caught.value)
        with pytest.raises(pimhe.FormatError, match="not a pimhe encoding"):
            load(b"XIMHE" + data[5:])
        with pytest.raises(pimhe.FormatError, match="version"):
            load(data[:5] + b"\xff\xff" + data[7:])
        with pytest.raises(pimhe.FormatError, match="trailing|left"):
            load(data + b"\0")
        with pytest.raises(ValueError):  # FormatError is a ValueError and a PimheError
            load(b"")
    assert issubclass(pimhe.FormatError, pimhe.PimheError) and issubclass(pimhe.FormatError, ValueError)


def test_random_damage_is_refused_or_loads_never_crashes(bgv, cpu):
    ctx, (_, pk, _, _) = bgv
    data = bytearray(ctx.encryptor(pk, cpu).encrypt(np.arange(8, dtype=np.uint64)).to_bytes())
    rng = np.random.default_rng(1)
    for _ in range(200):
        damaged = bytearray(data)
        for i in rng.integers(0, len(damaged), size=3):
            damaged[i] ^= 1 << int(rng.integers(0, 8))
        try:
            ctx.ciphertext_from_bytes(bytes(damaged), cpu)
        except pimhe.FormatError:
            pass  # a flipped residue bit may still be a valid residue: then it loads


@pytest.mark.skipif(os.name != "posix", reason="file modes are POSIX")
def test_a_secret_key_file_is_its_owners_only_whatever_the_umask(bgv, cpu, tmp_path):
    ctx, (sk, pk, _, _) = bgv
    secret, replaced, public = tmp_path / "secret.pimhe", tmp_path / "replaced.pimhe", tmp_path / "public.pimhe"
    replaced.write_bytes(b"an older file, readable by everyone")
    replaced.chmod(0o644)
    umask = os.umask(0)
    try:
        sk.save(secret)
        sk.save(replaced)
        pk.save(public)
    finally:
        os.umask(umask)
    mode = lambda path: stat.S_IMODE(os.stat(path).st_mode)  # noqa: E731
    assert mode(secret) == 0o600 and mode(replaced) == 0o600
    assert mode(public) == 0o666  # public material: the umask decides
    x = np.arange(4, dtype=np.uint64)
    batch = ctx.encryptor(pk, cpu).encrypt(x)
    for path in (secret, replaced):
        np.testing.assert_array_equal(ctx.decryptor(pimhe.SecretKey.load(ctx, path), cpu).decrypt(batch)[0, :4], x)


def test_file_errors_are_os_errors(bgv, tmp_path):
    ctx, (sk, _, _, _) = bgv
    missing = tmp_path / "missing" / "x.pimhe"
    with pytest.raises(OSError, match="cannot read"):
        pimhe.Context.load(missing)
    with pytest.raises(OSError, match="cannot write"):
        sk.save(missing)
    (tmp_path / "junk").write_bytes(b"not pimhe")
    with pytest.raises(pimhe.FormatError):
        pimhe.SecretKey.load(ctx, tmp_path / "junk")
