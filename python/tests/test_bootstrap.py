"""CKKS bootstrapping from Python (pimhe.ckks.bootstrap) on the INSECURE N = 1024 preset: the
decrypted output against the plaintext input, saved and loaded keys, and the errors of bad use."""

import numpy as np
import pytest

import pimhe
from pimhe.ckks import bootstrap

# The Rust tests measure >= 22 bits for the worst slot on this preset and assert 20; one bit
# more room here, for this file's own inputs and keys.
MAX_ERROR = 2.0**-18


@pytest.fixture(scope="module")
def boot():
    ctx = bootstrap.insecure_context(1024)
    plan = bootstrap.BootstrapPlan(ctx)
    keys = ctx.keygen(seed=11)
    galois = plan.keygen(keys.secret_key, seed=12)
    ev = ctx.evaluator(relin_key=keys.relin_key, galois_keys=galois, bootstrap=plan)
    enc = ctx.encryptor(keys.secret_key, seed=13)
    dec = ctx.decryptor(keys.secret_key)
    return ctx, plan, keys, galois, ev, enc, dec


def low(ev, enc, ctx, values):
    """``values`` encrypted and brought to the lowest level: no rescaling left."""
    ct = ev.drop_to_level(enc.encrypt(values), ctx.min_level)
    assert ct.depth_left == 0
    return ct


def test_the_preset_and_plan_say_what_they_are(boot):
    ctx, plan, _, galois, _, _, _ = boot
    assert ctx.security_bits is None and "INSECURE" in repr(ctx)
    assert "INSECURE" in repr(plan) and f"{plan.key_count} Galois keys" in repr(plan)
    assert pimhe.BootstrapPlan is bootstrap.BootstrapPlan
    assert ctx.n == 1024 and ctx.slots == 512 and ctx.min_level < plan.output_level < ctx.max_level
    assert plan.depth_after == 2 and plan.depth + plan.depth_after == ctx.depth
    assert plan.hamming_weight == 16
    # The keys are the plan's rotations and conjugation, nothing more.
    assert sorted(ctx.galois_elements(plan.rotations, conjugation=True)) == sorted(plan.galois_elements)
    assert sorted(galois.elements) == sorted(plan.galois_elements)
    assert plan.key_count == len(plan.galois_elements) == len(plan.rotations) + 1
    assert plan.galois_key_bytes == galois.size_bytes
    # A deeper preset through levels_after.
    deeper = bootstrap.BootstrapPlan(bootstrap.insecure_context(1024, levels_after=4))
    assert deeper.depth_after == 4


@pytest.mark.parametrize("kind", ["real", "complex"])
def test_bootstrapping_restores_the_slots(boot, rng, kind):
    ctx, plan, _, _, ev, enc, dec = boot
    x = rng.uniform(-1, 1, ctx.slots)
    if kind == "complex":
        x = x + 1j * rng.uniform(-1, 1, ctx.slots)
    ct = low(ev, enc, ctx, x)
    fresh = ev.bootstrap(ct)
    assert fresh.level == plan.output_level and fresh.depth_left == plan.depth_after
    assert fresh.scale == pytest.approx(ct.scale, rel=1e-12)
    got = dec.decrypt(fresh, complex=True)[0]
    assert np.abs(got - x).max() < MAX_ERROR
    # The refreshed ciphertext computes on.
    square = dec.decrypt(ev.multiply_relin_rescale(fresh, fresh), complex=True)[0]
    assert np.abs(square - x * x).max() < 2 * MAX_ERROR


def test_sparse_packing_bootstraps_with_its_own_plan(boot, rng):
    ctx, _, keys, _, _, enc, dec = boot
    plan = bootstrap.BootstrapPlan(ctx, slots=64)
    assert plan.slots == 64 and all(s in plan.rotations for s in (64, 128))  # the trace's rotations
    galois = plan.keygen(keys.secret_key, seed=14)
    ev = ctx.evaluator(relin_key=keys.relin_key, galois_keys=galois, bootstrap=plan)
    x = rng.uniform(-1, 1, 64) + 1j * rng.uniform(-1, 1, 64)
    fresh = ev.bootstrap(ev.drop_to_level(enc.encrypt(x, slots=64), ctx.min_level))
    assert fresh.level == plan.output_level
    assert np.abs(dec.decrypt(fresh, complex=True)[0] - x).max() < MAX_ERROR
    with pytest.raises(pimhe.ParameterError, match="plan is for 64"):
        ev.bootstrap(enc.encrypt(x[:8], slots=8))
    with pytest.raises(pimhe.ParameterError, match="power-of-two slot count"):
        bootstrap.BootstrapPlan(ctx, slots=48)


def test_a_batch_and_a_higher_level_input(boot, rng):
    ctx, plan, _, _, ev, enc, dec = boot
    x = rng.uniform(-1, 1, (2, ctx.slots))
    fresh = ev.bootstrap(enc.encrypt(x))  # brought to the lowest level first
    assert fresh.count == 2 and fresh.level == plan.output_level
    assert np.abs(dec.decrypt(fresh) - x).max() < MAX_ERROR


def test_the_nearbank_backend_bootstraps_as_the_cpu(boot, rng):
    ctx, plan, keys, galois, ev, enc, _ = boot
    nearbank = pimhe.Backend.nearbank()
    ev_nb = ctx.evaluator(nearbank, relin_key=keys.relin_key, galois_keys=galois, bootstrap=plan)
    ct = low(ev, enc, ctx, rng.uniform(-1, 1, ctx.slots))
    # Computed on the host, priced by the model: the same residues as the CPU's.
    assert ev_nb.bootstrap(ct.to(nearbank)).to("cpu").to_bytes() == ev.bootstrap(ct).to_bytes()


def test_keys_saved_compressed_and_loaded_bootstrap_the_same(boot, rng, tmp_path):
    ctx, plan, keys, galois, ev, enc, _ = boot
    full = galois.to_bytes()
    galois.save(tmp_path / "boot.keys", compressed=True)
    saved = (tmp_path / "boot.keys").read_bytes()
    # Each uniform part is stored as its 32-byte seed: about half the full encoding.
    assert len(saved) * 2 < len(full) * 1.05
    # The file is the Galois keys' encoding (public material), not a secret key's.
    with pytest.raises(pimhe.FormatError):
        ctx.secret_key_from_bytes(saved)
    loaded = pimhe.GaloisKeys.load(ctx, tmp_path / "boot.keys")
    assert loaded.elements == galois.elements
    relin = ctx.relin_key_from_bytes(keys.relin_key.to_bytes(compressed=True))
    again = ctx.evaluator(relin_key=relin, galois_keys=loaded, bootstrap=plan)
    ct = low(ev, enc, ctx, rng.uniform(-1, 1, ctx.slots))
    # Residue for residue: the loaded keys are the generated ones.
    assert again.bootstrap(ct).to_bytes() == ev.bootstrap(ct).to_bytes()


def test_missing_keys_are_named(boot, rng):
    ctx, plan, keys, galois, ev, enc, _ = boot
    ct = low(ev, enc, ctx, rng.uniform(-1, 1, ctx.slots))
    with pytest.raises(pimhe.MissingKeyError, match="bootstrap=plan"):
        ctx.evaluator(relin_key=keys.relin_key, galois_keys=galois).bootstrap(ct)
    with pytest.raises(pimhe.MissingKeyError, match="relinearization key"):
        ctx.evaluator(galois_keys=galois, bootstrap=plan)
    some = ctx.keygen(seed=11, galois_elements=plan.galois_elements[:-1]).galois_keys
    with pytest.raises(pimhe.MissingKeyError, match=rf"lacks 1 of them: \[{plan.galois_elements[-1]}\]"):
        ctx.evaluator(relin_key=keys.relin_key, galois_keys=some, bootstrap=plan)
    with pytest.raises(pimhe.MissingKeyError, match=rf"lacks {plan.key_count} of them.*plan.keygen"):
        ctx.evaluator(relin_key=keys.relin_key, bootstrap=plan)


def test_wrong_contexts_are_refused(boot, rng):
    ctx, plan, keys, _, ev, _, _ = boot
    other = bootstrap.insecure_context(2048)
    other_keys = other.keygen(seed=3)
    with pytest.raises(pimhe.MismatchError):
        other.evaluator(relin_key=other_keys.relin_key, bootstrap=plan)
    with pytest.raises(pimhe.MismatchError):
        plan.keygen(other_keys.secret_key)
    enc_other = other.encryptor(other_keys.secret_key)
    with pytest.raises(pimhe.MismatchError):
        ev.bootstrap(enc_other.encrypt(rng.uniform(-1, 1, other.slots)))
    bgv = pimhe.Context.bgv(n=4096)
    with pytest.raises(pimhe.MismatchError, match="CKKS"):
        pimhe.BootstrapPlan(bgv)
    with pytest.raises(pimhe.MismatchError, match="CKKS"):
        bgv.evaluator(bootstrap=plan)
    with pytest.raises(pimhe.MismatchError, match="CKKS"):
        bgv.evaluator().bootstrap(enc_other.encrypt(rng.uniform(-1, 1, other.slots)))


def test_unbootstrappable_parameters_and_inputs_are_refused(boot, rng):
    ctx, _, _, _, ev, enc, _ = boot
    # The 128-bit N = 8192 preset: a dense secret (so encapsulation) but far too few levels.
    with pytest.raises(pimhe.ParameterError, match="bootstrapping consumes"):
        pimhe.BootstrapPlan(pimhe.Context.ckks(n=8192))
    with pytest.raises(pimhe.ParameterError, match="1024 or 2048"):
        bootstrap.insecure_context(4096)
    with pytest.raises(pimhe.ParameterError, match="2\\^10 to 2\\^14"):
        bootstrap.insecure_context(1 << 15, levels_after=3)
    with pytest.raises(pimhe.ParameterError, match="plan is for 512"):
        ev.bootstrap(ev.drop_to_level(enc.encrypt(rng.uniform(-1, 1, 8), slots=8), ctx.min_level))
    with pytest.raises(pimhe.ParameterError, match="q0 / Delta"):
        ev.bootstrap(ev.drop_to_level(enc.encrypt(rng.uniform(-1, 1, ctx.slots), scale=2.0**58), ctx.min_level))


def test_values_beyond_eval_mods_range_are_told_by_the_clients_check(boot, rng):
    ctx, plan, _, _, ev, enc, dec = boot
    x = rng.uniform(-1, 1, ctx.slots) + 1j * rng.uniform(-1, 1, ctx.slots)
    plan.check_message_range(dec, low(ev, enc, ctx, x))
    large = low(ev, enc, ctx, 512 * x)
    with pytest.raises(pimhe.ParameterError, match="outside bootstrapping's range.*scale the values down"):
        plan.check_message_range(dec, large)
    # What it tells: the evaluator bootstraps them without complaint, into wrong values.
    assert np.abs(dec.decrypt(ev.bootstrap(large), complex=True)[0] - 512 * x).max() > 1.0
    bgv = pimhe.Context.bgv(n=4096)
    with pytest.raises(pimhe.MismatchError, match="this plan is CKKS"):
        plan.check_message_range(bgv.decryptor(bgv.keygen().secret_key), large)


def test_a_dense_secret_bootstraps_through_encapsulation_keys(rng, tmp_path):
    """A dense (uniform ternary) secret: the plan asks for encapsulation keys, which travel
    compressed; without them the evaluator refuses; with them the slots come back (the Rust
    tests measure 18.6 bits here and assert 17)."""
    # 16 levels: 14 for the bootstrapping (3 + EvalMod's 8 for K of weight 32 + 3), 2 after.
    ctx = pimhe.Context.ckks(n=1024, depth=16, scale_bits=50, first_prime_bits=57, insecure=True)
    plan = bootstrap.BootstrapPlan(ctx)
    assert plan.uses_encapsulation and plan.hamming_weight == 32 and plan.depth_after == 2
    keys = ctx.keygen(seed=21)
    galois = plan.keygen(keys.secret_key, seed=22)
    encapsulation = plan.encapsulation_keygen(keys.secret_key, seed=23)
    assert encapsulation.hamming_weight == 32 and "32" in repr(encapsulation)
    encapsulation.save(tmp_path / "encapsulation.keys", compressed=True)
    loaded = pimhe.EncapsulationKeys.load(ctx, tmp_path / "encapsulation.keys")
    assert loaded.to_bytes() == encapsulation.to_bytes()
    with pytest.raises(pimhe.MissingKeyError, match="encapsulation_keys="):
        ctx.evaluator(relin_key=keys.relin_key, galois_keys=galois, bootstrap=plan)
    ev = ctx.evaluator(relin_key=keys.relin_key, galois_keys=galois, bootstrap=plan, encapsulation_keys=loaded)
    x = rng.uniform(-1, 1, ctx.slots)
    enc, dec = ctx.encryptor(keys.secret_key, seed=24), ctx.decryptor(keys.secret_key)
    fresh = ev.bootstrap(low(ev, enc, ctx, x))
    assert np.abs(dec.decrypt(fresh)[0] - x).max() < 2.0**-17
    with pytest.raises(pimhe.ParameterError, match="sparse"):
        bootstrap.BootstrapPlan(bootstrap.insecure_context(1024)).encapsulation_keygen(
            bootstrap.insecure_context(1024).keygen().secret_key
        )
