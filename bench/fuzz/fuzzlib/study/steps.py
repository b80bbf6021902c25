"""The study's commands as a scenario runs them: encrypt, eval and decrypt with their optional
flags drawn, the user counts they report checked, decrypt's output against the oracle."""

import json

from .declaration import threads_flag
from .scenario import CAPACITY, Stop


def encrypt(sc, expect="must", csv="data.csv", public="pub", out="subs", seed=None, users=None):
    """A client's step (the scenario's encryption seed unless `seed`); `users`: the rows it must
    say it encrypted."""
    rng = sc.rng
    seed = sc.enc_seed if seed is None else seed
    argv = ["encrypt", "--public-dir", public, "--input", csv, "--out", out]
    if seed is not None and rng.random() < 0.95:
        argv += ["--seed", str(seed)]
    json_out = rng.random() < 0.9
    run = sc.run("encrypt", argv + (["--json"] if json_out else []) + threads_flag(rng), expect)
    if json_out and users is not None and reported_users(run, "encrypt") != users:
        raise Stop("wrong", f"encrypt: users {reported_users(run, 'encrypt')} != {users} rows")
    return run


def reported_users(run, step):
    try:
        return json.loads(run.stdout).get("users")
    except (ValueError, AttributeError):
        raise Stop("wrong", f"{step} --json: the output is not a JSON object")


def evaluate(sc, expect="must", out="agg.pimhe", users=None, extra=(), public="pub", subs="subs"):
    """The server's step, on the CPU or sometimes the emulated DPUs; `users`: the submissions it
    must say it added."""
    rng = sc.rng
    argv = ["eval", "--public-dir", public, "--submissions", subs, "--out", out] + list(extra)
    allow = None
    if rng.random() < (0.04 if sc.light else 0.1):
        argv += ["--backend", "upmem-emu", "--dpus", rng.choice(["16", "32", "64"])]
        allow = CAPACITY  # fewer DPUs than the study has primes
    elif rng.random() < 0.2:
        argv += ["--backend", "cpu"]
    json_out = rng.random() < 0.9
    run = sc.run("eval", argv + (["--json"] if json_out else []) + threads_flag(rng), expect, allow=allow)
    if json_out and users is not None and reported_users(run, "eval") != users:
        raise Stop("wrong", f"eval: users {reported_users(run, 'eval')} != {users} submissions")
    return run


def decrypt(sc, decl, submitted, expect=None, agg="agg.pimhe", public="pub", secret="sec"):
    """The analyst's step and its oracle. `submitted` None: nothing may be printed (exit 0 is
    wrong); else the rows the aggregates hold."""
    rng = sc.rng
    if expect is None:
        expect = sc.decrypt_expectation(decl, submitted) if submitted is not None else "refuse"
    is_json = rng.random() < 0.95
    argv = ["decrypt", "--public-dir", public, "--secret-dir", secret, "--input", agg]
    run = sc.run("decrypt", argv + (["--json"] if is_json else []) + threads_flag(rng), expect, exit1=True)
    if submitted is None:
        raise Stop("wrong", "decrypt printed a statistic where it must refuse")
    sc.check_decrypt(run, decl, submitted, is_json)
    raise Stop("ok", "")
