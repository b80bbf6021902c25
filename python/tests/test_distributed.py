"""pimhe.distributed on a Ray cluster started here (this machine, 2 CPUs, no dashboard): the
distributed server step against the one-process one (pimhe.study.evaluate, an independent
path) by what the analyst decrypts; a worker killed mid-run; a shard that fails for good; and
the secret key, looked for in everything that went through the object store."""

import json
import os
import shutil
import signal
import threading
import time

import pytest

ray = pytest.importorskip("ray", reason='pimhe.distributed needs Ray: pip install "pimhe[distributed]"')

import pimhe.distributed as dist  # noqa: E402
import pimhe  # noqa: E402
from pimhe import stats as pimhe_stats  # noqa: E402
from pimhe import study  # noqa: E402
from pimhe._pimhe import StatsDriver  # noqa: E402
from pimhe.distributed.__main__ import main  # noqa: E402
from pimhe.distributed._study import _read_shard  # noqa: E402

USERS = 23  # prime: no shard count from 2 to 22 divides it


@pytest.fixture(scope="module")
def cluster():
    # No usage report to Ray's servers from a test (CI machines may have no network).
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """A linear regression study (sums and sums of products) of USERS users, their
    submissions, and what the analyst decrypts from the one-process server's aggregates."""
    root = tmp_path_factory.mktemp("study")
    pub, secret, subs = root / "pub", root / "secret", root / "subs"
    study.keygen("linreg", ["x", "y"], max_value=1000, max_users=1000, public_dir=pub, secret_dir=secret, seed=1)
    csv = root / "rows.csv"
    csv.write_text("x,y\n" + "".join(f"{(u * 37) % 1000 - 500},{(u * 91) % 1000 - 400}\n" for u in range(USERS)))
    study.encrypt(pub, csv, subs, seed=2)
    study.evaluate(pub, subs, root / "single.pimhe")
    expected = study.decrypt(pub, secret, root / "single.pimhe")
    assert expected["users"] == USERS
    return {"root": root, "pub": pub, "secret": secret, "subs": subs, "expected": expected}


def decrypted(setup, aggregates):
    result = study.decrypt(setup["pub"], setup["secret"], aggregates)
    return result["users"], result["estimates"]


def expected(setup):
    return setup["expected"]["users"], setup["expected"]["estimates"]


def test_shard_bounds_give_every_index_one_shard():
    for total in range(1, 30):
        for shards in range(1, total + 1):
            bounds = dist.shard_bounds(total, shards)
            owners = [i for i, (lo, hi) in enumerate(bounds) for _ in range(lo, hi)]
            assert len(owners) == total and owners == sorted(owners) and len(bounds) == shards
            sizes = [hi - lo for lo, hi in bounds]
            assert max(sizes) - min(sizes) <= 1
    with pytest.raises(ValueError, match="allowed 1 ..= 3"):
        dist.shard_bounds(3, 4)


@pytest.mark.parametrize("shards, read_on", [(2, "driver"), (5, "auto"), (USERS, "workers")])
def test_distributed_eval_decrypts_to_the_one_process_result(cluster, setup, tmp_path, shards, read_on):
    out = tmp_path / "agg.pimhe"
    result = dist.evaluate(setup["pub"], setup["subs"], out, shards=shards, read_on=read_on)
    assert (result.users, result.shards) == (USERS, shards)
    assert decrypted(setup, out) == expected(setup)
    # The keys once, a partial per shard and per combination, and every submission once: its
    # bytes where the driver reads the files, its name where the workers do (the default on
    # this one-machine cluster).
    files = list(setup["subs"].iterdir())
    if read_on == "driver":
        assert result.read_on == "driver"
        assert result.object_store["submissions"] == sum(f.stat().st_size for f in files)
    else:
        assert result.read_on == "workers"
        assert result.object_store["submissions"] == sum(len(os.fspath(f.absolute()).encode()) for f in files)
    assert result.object_store["public_keys"] == (setup["pub"] / "public-keys.pimhe").stat().st_size


def test_a_worker_without_the_drivers_files_says_to_let_the_driver_read_them(cluster, setup, tmp_path):
    study_json = (setup["pub"] / "study.json").read_text()
    with pytest.raises(ValueError, match='not on the file system of the worker.*read_on="driver"'):
        _read_shard(study_json, [os.fspath(tmp_path / "elsewhere.pimhe")])
    with pytest.raises(ValueError, match="read_on='nowhere': allowed 'auto', 'workers', 'driver'"):
        dist.evaluate(setup["pub"], setup["subs"], tmp_path / "agg.pimhe", read_on="nowhere")


def shard_processes(prefix="ray::pimhe-shard-"):
    """(pid, shard index) of every worker process running a shard task now (Ray titles a
    worker's process ray::<task name> while the task runs)."""
    found = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                title = f.read().split(b"\0")[0].decode(errors="replace")
        except OSError:
            continue
        if title.startswith(prefix):
            found.append((int(pid), int(title.split("-")[-1].split()[0])))
    return found


def kill_first_shard(killed, prefix="ray::pimhe-shard-"):
    """Kills (SIGKILL) the first worker seen running a shard, recording its shard index."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not killed:
        for pid, index in shard_processes(prefix):
            os.kill(pid, signal.SIGKILL)
            killed.append(index)
            return
        time.sleep(0.002)


def run_with_a_kill(setup, out, retries):
    killed = []
    killer = threading.Thread(target=kill_first_shard, args=(killed,))
    killer.start()
    try:
        return dist.evaluate(setup["pub"], setup["subs"], out, shards=3, retries=retries), killed
    finally:
        killer.join()
        assert killed, "no shard task was seen running to kill"


def test_a_worker_killed_mid_run_is_retried_and_the_result_is_exact(cluster, setup, tmp_path):
    out = tmp_path / "agg.pimhe"
    result, _ = run_with_a_kill(setup, out, retries=3)
    assert result.users == USERS
    assert decrypted(setup, out) == expected(setup)


def test_a_shard_whose_worker_dies_without_retries_fails_by_its_index(cluster, setup, tmp_path):
    out = tmp_path / "agg.pimhe"
    with pytest.raises(dist.ShardError) as failure:
        run_with_a_kill(setup, out, retries=0)
    # The killed shard, unless its task had just returned when the kill came (then another
    # was killed later or none: the assertion in run_with_a_kill says which).
    assert len(failure.value.shards) == 1 and f"shard {failure.value.shards[0]} of 3" in str(failure.value)
    assert not failure.value.usage
    assert not out.exists()


def test_a_damaged_submission_fails_its_shard_by_index_and_nothing_is_written(cluster, setup, tmp_path):
    subs = tmp_path / "subs"
    shutil.copytree(setup["subs"], subs)
    files = sorted(subs.iterdir())
    damaged = files[13]
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 4
    damaged.write_bytes(bytes(data))
    # 23 submissions in 4 shards: 6, 6, 6, 5; submission 13 is in shard 2.
    assert dist.shard_bounds(USERS, 4)[2] == (12, 18)
    out = tmp_path / "agg.pimhe"
    with pytest.raises(dist.ShardError, match="damaged") as failure:
        dist.evaluate(setup["pub"], subs, out, shards=4)
    assert failure.value.shards == (2,)
    assert str(failure.value).startswith("shard 2 of 4 (submissions 12..17") and damaged.name in str(failure.value)
    assert failure.value.usage
    assert not out.exists()


def test_a_submission_in_two_files_is_counted_once_or_refused(cluster, setup, tmp_path):
    subs = tmp_path / "subs"
    shutil.copytree(setup["subs"], subs)
    files = sorted(subs.iterdir())
    # The same submission under a name that sorts last: in another shard than the first.
    shutil.copy(files[0], subs / "zz-copy.pimhe")
    with pytest.raises(dist.ShardError, match="counted once"):
        dist.evaluate(setup["pub"], subs, tmp_path / "agg.pimhe", shards=3)


def flatten(value):
    """Every bytes-like or string leaf of what was put, as bytes."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        yield bytes(value)
    elif isinstance(value, str):
        yield value.encode()
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from flatten(item)
    else:
        yield repr(value).encode()


def test_the_secret_key_never_enters_the_object_store(cluster, setup, tmp_path):
    secret = (setup["secret"] / "secret-keys.pimhe").read_bytes()
    # Windows of the secret key's residues (its second half: past the bundle's header and the
    # analyst's copy of the declaration, which is public anyway).
    windows = [secret[at : at + 32] for at in range(len(secret) // 2, len(secret) - 32, len(secret) // 16)]

    def leaks(objects):
        return any(w in blob for obj in objects for blob in flatten(obj) for w in windows)

    assert leaks([("name", [secret])]), "the scan must find the key where it is"
    ledger = []
    dist.evaluate(setup["pub"], setup["subs"], tmp_path / "agg.pimhe", shards=4, ledger=ledger)
    objects = ray.get(ledger)
    # The study, the keys, 4 payloads, and a status and a partial per shard and per combination.
    assert len(objects) == 2 + 4 + 2 * (4 + 3)
    assert not leaks(objects)
    assert any(setup["pub"].joinpath("public-keys.pimhe").read_bytes() == o for o in objects)
    # A public directory that holds a secret key is refused before anything is put.
    shutil.copy(setup["secret"] / "secret-keys.pimhe", setup["pub"] / "secret-keys.pimhe")
    ledger = []
    try:
        with pytest.raises(ValueError, match="secret-keys.pimhe is in the public directory"):
            dist.evaluate(setup["pub"], setup["subs"], tmp_path / "again.pimhe", ledger=ledger)
    finally:
        (setup["pub"] / "secret-keys.pimhe").unlink()
    assert ledger == []


def test_the_command_line_prints_pimhe_evals_output(cluster, setup, tmp_path, capsys):
    out = tmp_path / "agg.pimhe"
    args = ["eval", "--public-dir", str(setup["pub"]), "--submissions", str(setup["subs"]), "--out", str(out)]
    assert main(args + ["--shards", "3", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert (printed["users"], printed["backend"], printed["distributed"]["shards"]) == (USERS, "cpu", 3)
    assert decrypted(setup, out) == expected(setup)
    # The output exists now: refused (status 2) unless --force, which replaces it.
    assert main(args) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(args + ["--force"]) == 0
    assert capsys.readouterr().out.startswith(f"pimhe eval: {USERS} submissions added up on cpu into {out}")
    assert main(args + ["--force", "--shards", "0"]) == 2
    assert "shards=0 for 23 submissions" in capsys.readouterr().err


# Per backend: the entry's name, its additive modeled fields (deterministic for the same work;
# upmem-emu's host_fallback_s is measured wall time, so it is left out), its counts, and a
# task's modeled seconds.
SUMMED = {
    "upmem-emu": (
        "upmem",
        ("transfer_s", "compute_s", "retrieve_s", "energy_j", "host_fallback_modeled_s"),
        ("launches", "rounds", "fallbacks", "bytes_to_dpus", "bytes_from_dpus"),
        lambda r: r["transfer_s"] + r["compute_s"] + r["retrieve_s"],
    ),
    "nearbank": (
        "nearbank",
        ("gpu_s", "pim_s", "transition_s", "total_s", "energy_j", "without_pim_s", "without_pim_energy_j"),
        ("pim_instructions", "gpu_kernels", "gpu_fallbacks", "transitions"),
        lambda r: r["total_s"],
    ),
}


@pytest.mark.parametrize("backend", sorted(SUMMED))
def test_pim_workers_modeled_costs_add_up_to_the_in_process_shards(cluster, tmp_path, backend):
    # A tiny mean (N = 4096), 4 users in 2 shards: 2 shard tasks and 1 combination.
    from pimhe._pimhe import study_combine, study_evaluate_shard, study_read_submissions, study_server_inputs

    entry, modeled, counted, task_s = SUMMED[backend]
    pub, secret, subs = tmp_path / "pub", tmp_path / "secret", tmp_path / "subs"
    study.keygen("mean", ["x"], max_value=100, max_users=10, public_dir=pub, secret_dir=secret, seed=1)
    csv = tmp_path / "rows.csv"
    csv.write_text("x\n7\n-3\n100\n12\n")
    study.encrypt(pub, csv, subs, seed=2)
    result = dist.evaluate(pub, subs, tmp_path / "agg.pimhe", shards=2, backend=backend)
    assert study.decrypt(pub, secret, tmp_path / "agg.pimhe")["estimates"][0]["value"] == 29.0
    summed = result.to_json()[entry]
    # The same shards and combination evaluated one by one in this process, added up here.
    study_json, keys, files, _ = study_server_inputs(pub, subs, tmp_path / "unused.pimhe")
    named = list(zip(map(str, files), study_read_submissions(study_json, files)))
    parts = [study_evaluate_shard(study_json, keys, named[lo:hi], backend) for lo, hi in dist.shard_bounds(4, 2)]
    _, combined = study_combine(study_json, keys, [p for p, _ in parts], backend)
    tasks = [json.loads(cost) for _, cost in parts] + [json.loads(combined)]
    assert {t["backend"] for t in tasks} == {backend}
    reports = [t["report"] for t in tasks]
    for name in modeled:
        assert summed[name] == pytest.approx(sum(r[name] for r in reports), rel=1e-9), name
    for name in counted:
        assert summed[name] == sum(r[name] for r in reports), name
    assert summed["model"] == reports[0]["model"] and "(modeled)" in summed["model"]
    if backend == "nearbank":
        assert summed["speedup"] == pytest.approx(summed["without_pim_s"] / summed["total_s"], rel=1e-12)
    spread = summed["distributed"]
    assert spread["tasks"] == 3 and "modeled work" in spread["basis"]
    totals = spread["worker_total_s"]
    assert spread["max_worker_total_s"] == max(totals.values())
    assert sum(totals.values()) == pytest.approx(sum(map(task_s, reports)), rel=1e-9)
    # On the CPU nothing is modeled.
    assert dist.evaluate(pub, subs, tmp_path / "cpu.pimhe", shards=2).to_json()["upmem"] is None


# --- pimhe stats over Ray (pimhe.distributed.stats): this process is the client ---------------


@pytest.fixture(scope="module")
def rows_csv(tmp_path_factory):
    """USERS rows whose products need two plaintext moduli at N = 8192 (the CRT path)."""
    path = tmp_path_factory.mktemp("stats") / "rows.csv"
    path.write_text(
        "x,y\n" + "".join(f"{(u * 7919) % 2_000_000 - 1_000_000},{(u * 104_729) % 1_000_000 - 300_000}.5\n" for u in range(USERS))
    )
    return path


def one_process(statistic, csv):
    """The one-process pimhe.stats result (an independent path: pimhe stats's own run)."""
    run = {"mean": pimhe_stats.mean, "variance": pimhe_stats.variance, "linreg": pimhe_stats.linear_regression}
    return run[statistic](os.fspath(csv), ["x", "y"], seed=5, progress=False)


@pytest.mark.parametrize("statistic,shards", [("mean", 5), ("variance", 2), ("linreg", 4), ("linreg", USERS)])
def test_distributed_stats_equal_the_one_process_ones(cluster, rows_csv, statistic, shards):
    single = one_process(statistic, rows_csv)
    ledger = []
    result = dist.stats(statistic, ["x", "y"], input=os.fspath(rows_csv), seed=9, shards=shards, ledger=ledger)
    report = result.report
    assert (report["users"], result.shards, report["plain_moduli"]) == (USERS, shards, single.plain_moduli)
    assert report["aggregates_exact"] and single.aggregates_exact
    # Exact aggregates, so the same estimates to the last bit, and equal to the plaintext ones.
    assert [(e["name"], e["encrypted"]) for e in report["estimates"]] == [(e.name, e.encrypted) for e in single.estimates]
    assert [e["plaintext"] for e in report["estimates"]] == [e.plaintext for e in single.estimates]
    if statistic == "linreg":
        assert len(report["plain_moduli"]) == 2, "the CRT path is exercised"
    # The public material once, every user once in one shard, a partial per task.
    objects = ray.get(ledger)
    assert len(objects) == 1 + shards + 2 * (shards + shards - 1)
    blobs = [o for o in objects if isinstance(o, bytes)]
    statuses = [o for o in objects if isinstance(o, tuple)]
    store = result.object_store
    assert sum(map(len, blobs)) == store["public"] + store["shards"] + store["partials"]
    assert sum(status[1] for status in statuses) == store["partials"]
    assert sum(status[0] for status in statuses) == USERS


def test_a_corrupted_stats_shard_fails_by_its_index(cluster, rows_csv):
    real = StatsDriver("mean", ["x", "y"], input=os.fspath(rows_csv), seed=3)
    damaged_first = dist.shard_bounds(USERS, 4)[2][0]

    class Damaging:
        """The real driver, but shard 2's bytes damaged on their way to the store."""

        users = real.users

        def public_bytes(self):
            return real.public_bytes()

        def encrypt_shard(self, lo, hi):
            shard = bytearray(real.encrypt_shard(lo, hi))
            if lo == damaged_first:
                shard[len(shard) // 2] ^= 1
            return bytes(shard)

        def finish(self, *args):
            raise AssertionError("a run with a failed shard must not be decrypted")

    with pytest.raises(dist.ShardError) as failure:
        dist.stats("mean", ["x", "y"], shards=4, retries=1, driver=Damaging())
    assert failure.value.shards == (2,)
    assert str(failure.value).startswith("shard 2 of 4 (users 12..17)")


def test_a_stats_worker_killed_mid_run_is_retried_and_the_result_is_exact(cluster, rows_csv):
    single = one_process("linreg", rows_csv)
    killed = []
    killer = threading.Thread(target=kill_first_shard, args=(killed, "ray::pimhe-stats-shard-"))
    killer.start()
    try:
        result = dist.stats("linreg", ["x", "y"], input=os.fspath(rows_csv), seed=6, shards=3, retries=3)
    finally:
        killer.join()
    assert killed, "no shard task was seen running to kill"
    assert [e["encrypted"] for e in result.report["estimates"]] == [e.encrypted for e in single.estimates]


def test_the_stats_secret_keys_never_enter_the_object_store(cluster, rows_csv):
    driver = StatsDriver("linreg", ["x", "y"], input=os.fspath(rows_csv), seed=4)
    ledger = []
    result = dist.stats("linreg", ["x", "y"], shards=3, ledger=ledger, driver=driver)
    assert result.report["aggregates_exact"]
    objects = ray.get(ledger)
    assert len(objects) == 1 + 3 + 2 * (3 + 2)
    # The scan's control (it finds the key where it is) is the library's test
    # (stats::sharded::tests); here: none of what was put or returned holds it.
    assert not any(driver.contains_secret(blob) for obj in objects for blob in flatten(obj))
    # Shards: each user's serialized ciphertexts once, plus each shard's fixed framing.
    one, two = len(driver.encrypt_shard(0, 1)), len(driver.encrypt_shard(0, 2))
    per_user, framing = two - one, 2 * one - two
    assert result.object_store["shards"] == USERS * per_user + 3 * framing
    assert framing < 0.01 * per_user


def test_the_stats_command_line_prints_pimhe_stats_output(cluster, rows_csv, capsys):
    args = ["stats", "mean", "--input", os.fspath(rows_csv), "--columns", "x,y", "--seed", "1", "--shards", "3"]
    assert main(args + ["--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    single = one_process("mean", rows_csv)
    assert [e["encrypted"] for e in printed["estimates"]] == [e.encrypted for e in single.estimates]
    assert (printed["backend"], printed["distributed"]["shards"], printed["warnings"]) == (
        "cpu", 3, ["insecure: keys from a fixed seed"])
    assert main(args) == 0
    text = capsys.readouterr().out
    moduli = "*".join(map(str, single.plain_moduli))
    assert text.startswith(f"pimhe stats mean: {USERS} users, columns x,y, fixed point 10^-1, bgv N=8192 t={moduli}")
    assert "every decrypted aggregate equals the plaintext sum: yes" in text and "on Ray: 3 shards" in text
    assert main(["stats", "mean", "--columns", "x,y", "--users", "5"]) == 2
    assert "--synthetic" in capsys.readouterr().err
    assert main(["stats", "mean", "--columns", "x,nope", "--input", os.fspath(rows_csv)]) == 2
    assert "nope" in capsys.readouterr().err


# --- element-wise batch operations (pimhe.distributed.batch_map) -------------------------------


@pytest.fixture(scope="module")
def batch_setup():
    """A BGV context, its keys (a Galois key for element 3), and 12 ciphertext pairs in shards
    of 5, 4 and 3."""
    ctx = pimhe.Context.bgv(n=4096)
    keys = ctx.keygen(seed=1, galois_elements=[3])
    encryptor = ctx.encryptor(keys.public_key, seed=2)
    values = [[(7 * i + j) % 1000 for j in range(16)] for i in range(12)]
    sizes = [5, 4, 3]
    a, b, start = [], [], 0
    for size in sizes:
        a.append(encryptor.encrypt(values[start : start + size]))
        b.append(encryptor.encrypt(values[::-1][start : start + size]))
        start += size
    return ctx, keys, a, b


def test_batch_map_gives_the_one_process_ciphertexts_bit_for_bit(cluster, batch_setup):
    ctx, keys, a, b = batch_setup
    evaluator = ctx.evaluator(relin_key=keys.relin_key, galois_keys=keys.galois_keys)
    ledger = []
    product = dist.batch_map(ctx, "multiply", zip(a, b), key=keys.relin_key, ledger=ledger)
    assert product.shards == 3
    assert product.results == [evaluator.relinearize(evaluator.multiply(x, y)).to_bytes() for x, y in zip(a, b)]
    # Streamed: each shard's inputs put once, and only its own (12 ciphertexts in 3 shards).
    assert product.object_store["inputs"] == sum(len(x.to_bytes()) + len(y.to_bytes()) for x, y in zip(a, b))
    assert len(ray.get(ledger)) == 2 + 3 * 2 + 3 * 2
    got = {}
    rotated = dist.batch_map(ctx, "rotate", iter(a), key=keys.galois_keys, element=3, sink=got.__setitem__)
    assert rotated.results == [] and sorted(got) == [0, 1, 2]
    assert [got[i] for i in range(3)] == [evaluator.automorphism(x, 3).to_bytes() for x in a]
    # And they decrypt to the rotated plaintexts' products.
    decryptor = ctx.decryptor(keys.secret_key)
    first = pimhe.CiphertextBatch.from_bytes(ctx, product.results[0])
    assert (decryptor.decrypt(first) == decryptor.decrypt(a[0]) * decryptor.decrypt(b[0]) % ctx.plain_modulus).all()


def test_batch_map_names_a_failing_shard(cluster, batch_setup):
    ctx, keys, a, _ = batch_setup
    # Element 5 has no Galois key: every shard fails, the first one reported by index.
    with pytest.raises(dist.ShardError, match="no key for element 5") as failure:
        dist.batch_map(ctx, "rotate", a, key=keys.galois_keys, element=5)
    assert len(failure.value.shards) == 1 and failure.value.usage
