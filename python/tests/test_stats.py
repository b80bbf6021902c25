"""The statistics workload against numpy's mean, var and lstsq."""

import numpy as np
import pytest

import pimhe


@pytest.fixture
def data(rng):
    users = 40
    x = np.round(rng.uniform(0, 10, size=(users, 2)), 2)
    y = np.round(1.5 + 2.0 * x[:, 0] - 0.5 * x[:, 1] + rng.normal(0, 0.1, users), 2)
    return np.column_stack([x, y])


@pytest.mark.parametrize("scheme", ["bgv", "bfv"])
def test_mean_and_variance(data, scheme):
    result = pimhe.stats.mean(data, ["a", "b", "y"], scheme=scheme, n=4096, seed=1)
    assert isinstance(result, pimhe.StatsResult)
    assert result.aggregates_exact and result.users == len(data) and result.decimals == 2
    assert result.statistic == "mean" and result.scheme == scheme and result.backend == "cpu"
    np.testing.assert_allclose([e.encrypted for e in result.estimates], data.mean(axis=0), rtol=1e-12)
    var = pimhe.stats.variance(data, ["a", "b", "y"], scheme=scheme, n=8192, seed=1)
    np.testing.assert_allclose([e.encrypted for e in var.estimates], data.var(axis=0), rtol=1e-9)
    assert all(e.abs_error < 1e-9 for e in var.estimates)


def test_linear_regression(data):
    result = pimhe.stats.linear_regression(data, ["a", "b", "y"], n=8192, seed=1)
    design = np.column_stack([np.ones(len(data)), data[:, :2]])
    want, *_ = np.linalg.lstsq(design, data[:, 2], rcond=None)
    names = [e.name for e in result.estimates]
    assert names == ["intercept", "coef(a)", "coef(b)", "r2"]
    np.testing.assert_allclose([e.encrypted for e in result.estimates[:3]], want, rtol=1e-8, atol=1e-9)
    residual = data[:, 2] - design @ want
    r2 = 1 - residual @ residual / ((data[:, 2] - data[:, 2].mean()) ** 2).sum()
    assert result.values()["r2"] == pytest.approx(r2, rel=1e-9)


def test_csv_path_and_upmem_emu(tmp_path, data):
    path = tmp_path / "users.csv"
    np.savetxt(path, data, delimiter=",", header="a,b,y", comments="", fmt="%.2f")
    result = pimhe.stats.mean(path, ["a", "y"], n=4096, backend=pimhe.Backend.upmem_emu(dpus=8), seed=2)
    np.testing.assert_allclose(list(result.values().values()), data[:, [0, 2]].mean(axis=0), rtol=1e-12)
    assert result.backend == "upmem-emu"
    assert isinstance(result.upmem, pimhe.UpmemReport) and result.upmem.launches > 0
    assert "modeled" in result.upmem.model


def test_nearbank_server(data):
    result = pimhe.stats.mean(data, ["a", "b", "y"], n=4096, backend="nearbank", seed=2)
    assert result.backend == "nearbank" and result.upmem is None
    report = result.nearbank
    assert isinstance(report, pimhe.NearbankReport) and "modeled" in report.model
    assert report.pim_instructions > 0 and any(k.kind == "Add" for k in report.kinds)
    assert result.values() == pytest.approx(pimhe.stats.mean(data, ["a", "b", "y"], n=4096, seed=2).values())


def test_stats_errors(data):
    with pytest.raises(pimhe.ParameterError, match="bfv"):
        pimhe.stats.mean(data, scheme="ckks")
    with pytest.raises(pimhe.ParameterError, match="backend=tpu is not allowed: choose cpu, upmem-emu or nearbank"):
        pimhe.stats.mean(data, backend="tpu")
    with pytest.raises(pimhe.ParameterError, match="column"):
        pimhe.stats.mean(data, ["a", "b"])


def test_a_column_named_twice_is_refused(data, tmp_path):
    # Silently reading the first column twice would give a wrong statistic.
    with pytest.raises(pimhe.ParameterError, match="columns: 'a' is named twice; name each column once"):
        pimhe.stats.mean(data, ["a", "a", "y"])
    path = tmp_path / "users.csv"
    np.savetxt(path, data, delimiter=",", header="a,b,y", comments="", fmt="%.2f")
    with pytest.raises(pimhe.ParameterError, match="'y' is named twice"):
        pimhe.stats.variance(path, ["y", "a", "y"])


def test_progress_reports_every_user_encrypted(data):
    class Recorder:
        def __init__(self):
            self.calls = []

        def start(self, total, label):
            self.calls.append(("start", total))

        def advance(self, n):
            self.calls.append(("advance", n))

        def finish(self):
            self.calls.append(("finish",))

    recorder = Recorder()
    csv = "a,b,y\n" + "\n".join(",".join(f"{v:.2f}" for v in row) for row in data)
    pimhe._pimhe.run_stats("mean", csv.encode(), ["a"], n=4096, seed=1, progress=recorder)
    # Users x plaintext moduli steps, every one advanced, then finished.
    kind, total = recorder.calls[0]
    assert kind == "start" and total % len(data) == 0 and total > 0
    assert sum(call[1] for call in recorder.calls if call[0] == "advance") == total
    assert recorder.calls[-1] == ("finish",)
    # The bar itself draws without failing (to a non-terminal here).
    pimhe.stats.mean(data, n=4096, seed=1, progress=True)
