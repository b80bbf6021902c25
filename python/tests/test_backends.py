"""The same computation on the CPU and on emulated UPMEM DPUs decrypts identically; the
modeled report."""

import numpy as np
import pytest

import pimhe


def run(ctx, keys, backend, x, y):
    # Same seed on both backends: the same ciphertexts, so the same decryptions.
    enc = ctx.encryptor(keys.public_key, backend, seed=11)
    ev = ctx.evaluator(backend, relin_key=keys.relin_key)
    dec = ctx.decryptor(keys.secret_key, backend)
    out = ev.relinearize(ev.multiply(enc.encrypt(x), enc.encrypt(y)))
    if ctx.scheme == "bgv":
        out = ev.mod_switch_to_next(out)
    if ctx.scheme == "ckks":
        out = ev.rescale(out)
    return dec.decrypt(out)


def random_inputs(ctx, rng, count):
    """Two batches of `count` random plaintext vectors of the context's scheme."""
    if ctx.scheme == "ckks":
        return rng.uniform(-1, 1, (count, ctx.slots)), rng.uniform(-1, 1, (count, ctx.slots))
    return tuple(rng.integers(0, ctx.plain_modulus, (count, ctx.slots), dtype=np.uint64) for _ in range(2))


@pytest.mark.parametrize("name", ["bgv", "bfv", "ckks"])
def test_cpu_and_upmem_emu_agree(name, bgv, bfv, ckks, cpu, rng):
    ctx, keys = {"bgv": bgv, "bfv": bfv, "ckks": ckks}[name]
    x, y = random_inputs(ctx, rng, 2)
    pim = pimhe.Backend.upmem_emu(dpus=8, mode="sequential")
    on_cpu = run(ctx, keys, cpu, x, y)
    on_pim = run(ctx, keys, pim, x, y)
    np.testing.assert_array_equal(on_cpu, on_pim)
    if name != "ckks":
        np.testing.assert_array_equal(on_cpu, (x.astype(object) * y.astype(object)) % ctx.plain_modulus)
    report = pim.report()
    assert isinstance(report, pimhe.UpmemReport)
    assert report.modeled and "modeled" in report.model
    assert report.model_name and report.model_version
    assert report.dpus == 8 and report.mode == "sequential" and report.variant == "best"
    assert report.launches > 0 and report.compute_s > 0 and report.transfer_s > 0
    assert report.total_s == pytest.approx(report.transfer_s + report.compute_s + report.retrieve_s)
    assert report.energy_j > 0 and report.bytes_to_dpus > 0
    assert report.counted["instructions"] > 0
    assert report.fallbacks >= 0 and report.host_fallback_s >= 0
    assert "UpmemReport(" in repr(report)
    pim.reset_report()
    assert pim.report().launches == 0


@pytest.mark.parametrize("name", ["bgv", "bfv", "ckks"])
def test_ciphertext_major_mode_switches_keys_and_moduli_on_the_dpus(name, bgv, bfv, ckks, cpu, rng):
    ctx, keys = {"bgv": bgv, "bfv": bfv, "ckks": ckks}[name]
    x, y = random_inputs(ctx, rng, 3)
    # 3 ciphertexts on 2 DPUs: one holds two, the other one.
    pim = pimhe.Backend.upmem_emu(dpus=2, mode="ciphertext-major")
    np.testing.assert_array_equal(run(ctx, keys, cpu, x, y), run(ctx, keys, pim, x, y))
    report = pim.report()
    assert report.mode == "ciphertext-major"
    assert report.fallbacks == 0 and report.host_fallback_s == 0


@pytest.mark.parametrize("name", ["bgv", "bfv", "ckks"])
def test_hybrid_mode_switches_keys_and_moduli_on_coefficient_slices(name, bgv, bfv, ckks, cpu, rng):
    ctx, keys = {"bgv": bgv, "bfv": bfv, "ckks": ckks}[name]
    x, y = random_inputs(ctx, rng, 3)
    # A DPU group per prime for the transforms; the conversions on slices over all the DPUs.
    pim = pimhe.Backend.upmem_emu(dpus=32, mode="hybrid")
    np.testing.assert_array_equal(run(ctx, keys, cpu, x, y), run(ctx, keys, pim, x, y))
    report = pim.report()
    assert report.mode == "hybrid"
    assert report.fallbacks == 0 and report.host_fallback_modeled_s == 0
    assert report.evictions == 0 and report.restores == 0


def test_transfer_between_backends(bgv, cpu):
    ctx, keys = bgv
    pim = pimhe.Backend.upmem_emu(dpus=4, mode="parallel")
    x = np.arange(ctx.slots, dtype=np.uint64)
    on_cpu = ctx.encryptor(keys.public_key, cpu).encrypt(x)
    on_pim = on_cpu.to(pim)
    assert on_pim.backend == "upmem-emu" and on_cpu.backend == "cpu"
    ev = ctx.evaluator(pim)
    doubled = ev.add(on_pim, on_pim)
    back = doubled.to(cpu)
    np.testing.assert_array_equal(ctx.decryptor(keys.secret_key, cpu).decrypt(back)[0], 2 * x)
    # A batch on the CPU cannot enter the PIM evaluator without moving.
    with pytest.raises(pimhe.MismatchError, match="backend"):
        ev.add(on_cpu, on_pim)


def test_backend_objects():
    cpu = pimhe.Backend.cpu(1)
    assert cpu.name == "cpu" and cpu.threads == 1 and cpu.report() is None and cpu.dpus is None
    pim = pimhe.Backend.upmem_emu(dpus=16, variant="barrett")
    assert pim.name == "upmem-emu" and pim.dpus == 16
    assert "barrett" in repr(pim)
    empty = pim.report()  # nothing run yet
    assert empty.launches == 0 and empty.variant == "barrett"
    assert pimhe.Backend.from_name("cpu").name == "cpu"


@pytest.mark.parametrize("name", ["bgv", "ckks"])
def test_nearbank_computes_as_the_cpu_and_models_a_gpu_with_pim(name, bgv, ckks, cpu, rng):
    ctx, keys = {"bgv": bgv, "ckks": ckks}[name]
    if name == "ckks":
        x, y = rng.uniform(-1, 1, (2, ctx.slots)), rng.uniform(-1, 1, (2, ctx.slots))
    else:
        x = rng.integers(0, ctx.plain_modulus, (2, ctx.slots), dtype=np.uint64)
        y = rng.integers(0, ctx.plain_modulus, (2, ctx.slots), dtype=np.uint64)
    nearbank = pimhe.Backend.nearbank("rtx4090-nearbank", threads=2)
    assert nearbank.name == "nearbank" and "rtx4090-nearbank" in repr(nearbank)
    np.testing.assert_array_equal(run(ctx, keys, cpu, x, y), run(ctx, keys, nearbank, x, y))
    report = nearbank.report()
    assert isinstance(report, pimhe.NearbankReport)
    assert report.modeled and "anaheim-nb@" in report.model and "(modeled)" in report.model
    assert report.system == "rtx4090-nearbank" and report.buffer_entries == 32
    assert report.pim_instructions > 0 and report.gpu_kernels > 0
    assert report.total_s == pytest.approx(report.gpu_s + report.pim_s + report.transition_s - report.overlap_s)
    assert report.speedup == pytest.approx(report.without_pim_s / report.total_s)
    assert any(k.kind.startswith("PAccum") for k in report.kinds)
    nearbank.reset_report()
    assert nearbank.report().pim_instructions == 0


def test_nearbank_refuses_unknown_systems():
    with pytest.raises(pimhe.ParameterError, match="a100-custom-hbm"):
        pimhe.Backend.nearbank("h100")
    with pytest.raises(pimhe.ParameterError, match="buffer_entries"):
        pimhe.Backend.nearbank(buffer_entries=0)


def test_advise_reports_the_modeled_pim_beside_the_measured_cpu():
    report = pimhe.advise(
        "pipeline", 1024, 8, dpus=[64, 128], what_ifs=["none", "zero-copy"], max_batch=8, repeat=1, threads=1
    )
    assert (report["workload"], report["n"], report["batch"]) == ("pipeline", 1024, 8)
    rows = report["rows"]
    assert sorted((r["what_if"], r["dpus"]) for r in rows) == [
        ("none", 64), ("none", 128), ("zero-copy", 64), ("zero-copy", 128)
    ]
    for r in rows:
        assert "modeled" in r["model"]
        pim = r["pim"]
        # Zero-copy: the CPU works in PIM memory, nothing crosses the bus.
        if r["what_if"] == "zero-copy":
            assert pim["transfer_s"] == 0 and pim["retrieve_s"] == 0
        else:
            assert pim["transfer_s"] > 0
        assert pim["compute_s"] > 0
    assert [v["what_if"] for v in report["verdicts"]] == ["none", "zero-copy"]
    with pytest.raises(pimhe.ParameterError, match="workload=ntt is not known"):
        pimhe.advise("ntt", 1024, 8)


def test_advise_runs_a_statistic_over_users_with_the_placement_chosen_per_point():
    # The mean of 8 users' rows, every DPU emulated; the job decrypts the aggregates and checks
    # them exactly against the plaintext sums, so a row is only reported for a right result.
    report = pimhe.advise("mean", 4096, users=8, dpus=[9], what_ifs=["none"], repeat=1, threads=1, mode="auto")
    assert (report["workload"], report["batch"], report["batch_of"], report["mode"]) == ("mean", 8, "users", "auto")
    row = report["rows"][0]
    assert row["placement"] in ("parallel", "sequential", "hybrid", "ciphertext-major")
    assert f"{row['placement']} is the cheapest" in row["plan"]
    assert row["pim"]["compute_s"] > 0 and row["energy_with_host_j"] >= row["energy_j"] > 0
    verdict = report["verdicts"][0]
    assert verdict["energy"]["quantity"] == "energy" and verdict["edp"]["quantity"] == "energy-delay-product"
    assert verdict["energy"]["cpu"] == pytest.approx(report["cpu"]["scaled_energy_j"])
    with pytest.raises(pimhe.ParameterError, match="users=0 is not allowed"):
        pimhe.advise("mean", 4096, users=0)
    with pytest.raises(pimhe.ParameterError, match="users applies to the statistics"):
        pimhe.advise("pipeline", 1024, 8, users=8)


def test_bandwidth_is_the_cli_report():
    report = pimhe.bandwidth(mib=8, repeat=2, threads=1)
    assert [k["kernel"] for k in report["kernels"]] == ["copy", "add", "triad"]
    assert [k["bytes_per_pass"] for k in report["kernels"]] == [16 << 20, 24 << 20, 24 << 20]
    for k in report["kernels"]:
        assert k["gb_per_s"] == pytest.approx(k["bytes_per_pass"] / k["best_s"] / 1e9)
    assert report["best_gb_per_s"] == max(k["gb_per_s"] for k in report["kernels"])
    with pytest.raises(pimhe.ParameterError, match="mib=0 is not allowed"):
        pimhe.bandwidth(mib=0)
