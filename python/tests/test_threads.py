"""Objects shared by threads: 4 threads x 50 calls on each shared object, every result checked
against the plaintext computation.

A deadlock between the GIL and a Rust lock stops the whole interpreter (the thread holding the
GIL never gives it back, so not even `join(timeout)` returns): each case runs in a child
interpreter that the test kills after a timeout, so a deadlock fails the test instead of
hanging it."""

import subprocess
import sys
import textwrap

import pytest

# Far above a case's normal run (about a second), so only a hang reaches it.
TIMEOUT_S = 120

HARNESS = """
import threading

import numpy as np

import pimhe

THREADS, CALLS = 4, 50


def hammer(work):
    # work(thread, call) CALLS times in each of THREADS threads released together; the first
    # failure of any thread is raised here.
    barrier = threading.Barrier(THREADS)
    failures = []

    def run(thread):
        try:
            barrier.wait()
            for call in range(CALLS):
                work(thread, call)
        except BaseException as e:
            failures.append(e)

    threads = [threading.Thread(target=run, args=(t,)) for t in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failures:
        raise failures[0]


def values(ctx, thread, call, rows=1):
    rng = np.random.default_rng(1000 * thread + call)
    return rng.integers(0, ctx.plain_modulus, size=(rows, ctx.slots), dtype=np.uint64)
"""


def run_threads(body):
    """Runs HARNESS + body in a child interpreter; fails on a hang or a failure."""
    script = HARNESS + textwrap.dedent(body) + "\nprint('ok')\n"
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        done = None  # failed below, out of the handler: the child's script is no news
    if done is None:
        pytest.fail(f"deadlock: the threads did not finish in {TIMEOUT_S} s", pytrace=False)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_a_shared_encryptor():
    run_threads(
        """
        ctx = pimhe.Context.bgv(n=1024)
        keys = ctx.keygen(seed=1)
        enc = ctx.encryptor(keys.public_key)
        made = []

        def work(thread, call):
            x = values(ctx, thread, call)
            made.append((x, enc.encrypt(x)))

        hammer(work)
        dec = ctx.decryptor(keys.secret_key)
        assert len(made) == THREADS * CALLS
        for x, c in made:
            np.testing.assert_array_equal(dec.decrypt(c), x)
        """
    )


def test_a_shared_secret_key_encryptor_making_seeded_ciphertexts():
    run_threads(
        """
        ctx = pimhe.Context.bgv(n=1024)
        keys = ctx.keygen(seed=1)
        enc = ctx.encryptor(keys.secret_key, seed=2)
        made = []

        def work(thread, call):
            x = values(ctx, thread, call)
            made.append((x, enc.encrypt_seeded(x) if call % 2 else enc.encrypt(x)))

        hammer(work)
        dec = ctx.decryptor(keys.secret_key)
        assert len(made) == THREADS * CALLS
        for x, c in made:
            batch = ctx.ciphertext_from_bytes(c) if isinstance(c, bytes) else c
            np.testing.assert_array_equal(dec.decrypt(batch), x)
        """
    )


def test_a_shared_decryptor():
    run_threads(
        """
        ctx = pimhe.Context.bgv(n=1024)
        keys = ctx.keygen(seed=1)
        dec = ctx.decryptor(keys.secret_key)

        def work(thread, call):
            x = values(ctx, thread, call)
            c = ctx.encryptor(keys.public_key).encrypt(x)
            np.testing.assert_array_equal(dec.decrypt(c), x)
            assert dec.noise_budget(c)[0] > 0

        hammer(work)
        """
    )


def test_a_shared_evaluator():
    run_threads(
        """
        ctx = pimhe.Context.bgv(n=4096)
        keys = ctx.keygen(seed=1)
        ev = ctx.evaluator(relin_key=keys.relin_key)
        t = ctx.plain_modulus

        def work(thread, call):
            enc, dec = ctx.encryptor(keys.public_key), ctx.decryptor(keys.secret_key)
            x, y = values(ctx, thread, call, rows=2), values(ctx, thread + THREADS, call, rows=2)
            cx, cy = enc.encrypt(x), enc.encrypt(y)
            xo, yo = x.astype(object), y.astype(object)
            cases = [
                (ev.add(cx, cy), (xo + yo) % t),
                (ev.sub(cx, cy), (xo - yo) % t),
                (ev.relinearize(ev.multiply(cx, cy)), xo * yo % t),
                (ev.mul_plain(cx, y), xo * yo % t),
                (ev.mod_switch_to_next(ev.sum(cx)), xo.sum(axis=0, keepdims=True) % t),
            ]
            for got, want in cases:
                np.testing.assert_array_equal(dec.decrypt(got), want.astype(np.uint64))

        hammer(work)
        """
    )


def test_keygen_on_a_shared_context_and_backend():
    run_threads(
        """
        ctx = pimhe.Context.bgv(n=1024)
        cpu = pimhe.Backend.cpu(2)

        def work(thread, call):
            keys = ctx.keygen(backend=cpu)
            x = values(ctx, thread, call)
            c = ctx.encryptor(keys.public_key, cpu).encrypt(x)
            np.testing.assert_array_equal(ctx.decryptor(keys.secret_key, cpu).decrypt(c), x)

        hammer(work)
        """
    )


def test_a_fresh_upmem_emu_backend_shared_by_threads_and_contexts():
    # Each call, the threads take the same fresh backend: the first to use it sets it up for
    # its context (N = 1024 or 4096) while the others ask for it too, or read its state.
    run_threads(
        """
        contexts = [pimhe.Context.bgv(n=1024), pimhe.Context.bgv(n=4096)]
        keys = [ctx.keygen(seed=1) for ctx in contexts]
        backends = [pimhe.Backend.upmem_emu(dpus=2, mode="sequential") for _ in range(CALLS)]
        served = [[] for _ in range(CALLS)]

        def work(thread, call):
            pim = backends[call]
            if thread == 3:
                assert pim.threads >= 1 and pim.report().dpus == 2
                return
            ctx, k = contexts[thread % 2], keys[thread % 2]
            try:
                enc = ctx.encryptor(k.public_key, pim) if thread < 2 else ctx.evaluator(pim)
            except pimhe.MismatchError as e:
                assert "was set up for N =" in str(e)
                return
            served[call].append(ctx.n)
            if thread < 2 and call % 10 == 0:
                x = values(ctx, thread, call)
                np.testing.assert_array_equal(ctx.decryptor(k.secret_key, pim).decrypt(enc.encrypt(x)), x)

        hammer(work)
        for ns in served:
            # One context per backend, whichever came first.
            assert ns and len(set(ns)) == 1
        """
    )
