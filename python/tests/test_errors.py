"""Errors carry the Rust library's message and a class that says what went wrong."""

import re

import numpy as np
import pytest

import pimhe


def test_hierarchy():
    for cls in (pimhe.ParameterError, pimhe.PlaintextError, pimhe.MismatchError):
        assert issubclass(cls, pimhe.PimheError) and issubclass(cls, ValueError)
    for cls in (pimhe.LevelError, pimhe.NoiseBudgetError, pimhe.MissingKeyError, pimhe.BackendError):
        assert issubclass(cls, pimhe.PimheError)


def test_bad_parameters():
    with pytest.raises(pimhe.ParameterError, match="ring degree 1000 is not supported"):
        pimhe.Context.bgv(n=1000)
    with pytest.raises(pimhe.ParameterError, match="insecure parameters"):
        pimhe.Context.bgv(n=4096, prime_bits=[30] * 5, special_prime_bits=30)
    ctx = pimhe.Context.bgv(n=4096, prime_bits=[30] * 5, special_prime_bits=30, insecure=True)
    assert ctx.security_bits is None


def test_values_out_of_range(bgv, cpu):
    ctx, keys = bgv
    enc = ctx.encryptor(keys.public_key, cpu)
    with pytest.raises(pimhe.PlaintextError, match=r"value 65537 at index 1 is out of range"):
        enc.encrypt(np.array([1, 65537], dtype=np.uint64))
    with pytest.raises(pimhe.PlaintextError, match="out of range"):
        enc.encrypt(np.array([-40000, 1]))
    with pytest.raises(pimhe.PlaintextError, match="do not fit in 4096 slots"):
        enc.encrypt(np.zeros(4097, dtype=np.uint64))
    with pytest.raises(pimhe.PlaintextError, match="integers"):
        enc.encrypt(np.array([0.5]))
    with pytest.raises(pimhe.PlaintextError, match="3 dimensions"):
        enc.encrypt(np.zeros((1, 1, 4), dtype=np.uint64))


def test_mixing_contexts_and_schemes(bgv, bfv, cpu):
    (ctx, keys), (bctx, bkeys) = bgv, bfv
    other = pimhe.Context.bgv(n=8192)
    x = ctx.encryptor(keys.public_key, cpu).encrypt([1, 2, 3])
    with pytest.raises(pimhe.MismatchError, match="parameter mismatch"):
        other.evaluator(cpu).add(x, x)
    with pytest.raises(pimhe.MismatchError, match="BFV"):
        ctx.evaluator(cpu).add(x, bctx.encryptor(bkeys.public_key, cpu).encrypt([1]))
    with pytest.raises(pimhe.MismatchError, match="BGV key"):
        bctx.encryptor(keys.public_key, cpu)
    with pytest.raises(pimhe.MismatchError, match="batch size mismatch"):
        y = ctx.encryptor(keys.public_key, cpu).encrypt(np.zeros((2, 4), dtype=np.uint64))
        ctx.evaluator(cpu).add(x, y)
    with pytest.raises(pimhe.MismatchError, match="CKKS operation"):
        ctx.evaluator(cpu).rescale(x)
    with pytest.raises(pimhe.MismatchError, match="BGV operation"):
        bctx.evaluator(cpu).mod_switch_to_next(x)


def test_missing_keys_and_wrong_sizes(bgv, cpu):
    ctx, keys = bgv
    enc, ev = ctx.encryptor(keys.public_key, cpu), ctx.evaluator(cpu)
    x = enc.encrypt([1, 2])
    with pytest.raises(pimhe.MismatchError, match="relinearize needs ciphertexts of 3 components"):
        ev.relinearize(x)
    with pytest.raises(pimhe.MissingKeyError, match="no relinearization key"):
        ev.relinearize(ev.multiply(x, x))
    with pytest.raises(pimhe.MismatchError, match="multiply needs ciphertexts of 2 components"):
        ev.multiply(ev.multiply(x, x), x)


def test_unknown_backend_and_settings(bgv):
    ctx, keys = bgv
    with pytest.raises(pimhe.ParameterError, match='backend=gpu is not allowed: choose cpu, upmem-emu or nearbank'):
        ctx.encryptor(keys.public_key, "gpu")
    with pytest.raises(pimhe.ParameterError, match="mode"):
        pimhe.Backend.upmem_emu(mode="diagonal")
    with pytest.raises(pimhe.ParameterError, match="variant"):
        pimhe.Backend.upmem_emu(variant="fastest")
    with pytest.raises(pimhe.BackendError, match="threads requested"):
        pimhe.Backend.cpu(0)


def test_pim_backend_serves_one_context(bgv):
    ctx, _ = bgv
    pim = pimhe.Backend.upmem_emu(dpus=4)
    ctx.evaluator(pim)
    with pytest.raises(pimhe.MismatchError, match="was set up for N = 4096"):
        pimhe.Context.bgv(n=8192).evaluator(pim)


def test_noise_budget_exhausted(cpu):
    # The N = 1024 preset has no noise budget for a product: decryption refuses, never lies.
    ctx = pimhe.Context.bgv(n=1024)
    keys = ctx.keygen(seed=1)
    assert keys.relin_key is None  # no special primes at N = 1024
    enc, dec, ev = ctx.encryptor(keys.public_key, cpu), ctx.decryptor(keys.secret_key, cpu), ctx.evaluator(cpu)
    x = enc.encrypt(np.full(1024, ctx.plain_modulus - 1, dtype=np.uint64))
    assert dec.noise_budget(x)[0] > 0
    product = ev.multiply(x, x)
    assert dec.noise_budget(product)[0] == 0
    with pytest.raises(pimhe.NoiseBudgetError, match="noise budget exhausted"):
        dec.decrypt(product)


def test_ckks_has_no_noise_budget(ckks, cpu):
    ctx, keys = ckks
    c = ctx.encryptor(keys.public_key, cpu).encrypt([1.0])
    with pytest.raises(pimhe.ParameterError, match="no noise budget"):
        ctx.decryptor(keys.secret_key, cpu).noise_budget(c)
    with pytest.raises(pimhe.MismatchError, match="CKKS"):
        pimhe.Context.bgv(n=4096).keygen(rotations=[1])


def test_messages_name_python_arguments_not_cli_flags():
    # The library words these for the CLI (`--batch 0 is not allowed`); Python names its arguments.
    cases = [
        (lambda: pimhe.advise("ntt", 1024, 8), "workload=ntt is not known"),
        (lambda: pimhe.advise("pipeline", 1024, 0), "batch=0 is not allowed"),
        (lambda: pimhe.advise("pipeline", 1024, 8, what_ifs=["bogus"]), 'what_ifs="bogus" is not allowed'),
        (lambda: pimhe._pimhe.bench_kernel("ntt", 1024, 1), "ntt needs primes"),
        (
            lambda: pimhe._pimhe.bench_kernel("ntt", 1024, 1, primes=1, backend="upmem-emu", threads=2),
            "threads applies to backend=cpu only",
        ),
        (lambda: pimhe.reproduce("dramatic", rows="zzz"), "rows=zzz selects no row"),
        (lambda: pimhe.reproduce("dramatic", kernel="fast"), "kernel=fast is not allowed"),
        (lambda: pimhe.reproduce("dramatic", what_ifs=["bogus"]), 'what_ifs="bogus" is not allowed'),
        (lambda: pimhe.reproduce("anaheim", workload_n=1000), "workload_n=1000 is not allowed"),
        (lambda: pimhe.Backend.nearbank(buffer_entries=0), "buffer_entries: "),
        (lambda: pimhe.Backend.nearbank("h100"), "system: unknown system"),
        (lambda: pimhe.stats.mean(np.ones((3, 1)), n=1000), "n=1000: invalid parameters"),
    ]
    for call, words in cases:
        with pytest.raises(pimhe.ParameterError) as caught:
            call()
        message = str(caught.value)
        assert words in message and "--" not in message, message


def test_upmem_emu_refuses_dpu_counts_at_construction():
    for dpus in (0, 2561):
        with pytest.raises(pimhe.ParameterError, match=rf"dpus={dpus} is not allowed: .*1 \.\.= 2560"):
            pimhe.Backend.upmem_emu(dpus=dpus)
    with pytest.raises(pimhe.ParameterError, match="tasklets=0"):
        pimhe.Backend.upmem_emu(tasklets=0)
    assert pimhe.Backend.upmem_emu(dpus=2560).dpus == 2560


def test_keys_of_other_parameters_are_refused_by_every_key_taking_entry_point(bgv, cpu):
    ctx, keys = bgv
    # Same scheme and N, another plaintext modulus: another context.
    other = pimhe.Context.bgv(n=4096, plain_modulus=40961)
    refusals = [
        (lambda: other.encryptor(keys.public_key, cpu), "public key"),
        (lambda: other.encryptor(keys.secret_key, cpu), "secret key"),
        (lambda: other.decryptor(keys.secret_key, cpu), "secret key"),
        (lambda: other.evaluator(cpu, relin_key=keys.relin_key), "relinearization key"),
    ]
    galois = ctx.keygen(seed=4, galois_elements=[3]).galois_keys
    refusals.append((lambda: other.evaluator(cpu, galois_keys=galois), "Galois keys"))
    for call, what in refusals:
        with pytest.raises(pimhe.MismatchError) as caught:
            call()
        assert re.search(rf"^parameter mismatch: the {what} came from a context of other parameters, \[N=4096 t=65537 .*\], "
                         r"not this context's \[N=4096 t=40961 .*\]", str(caught.value)), str(caught.value)
    # A context of the same parameters is the same context: its keys work there.
    same = pimhe.Context.bgv(n=4096)
    x = np.arange(8, dtype=np.uint64)
    c = same.encryptor(keys.public_key, cpu).encrypt(x)
    np.testing.assert_array_equal(same.decryptor(keys.secret_key, cpu).decrypt(c)[0, :8], x)
