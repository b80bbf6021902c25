"""pimhe.reproduce: every seed paper's reproduction by name, its published figures beside ours
in rows with the same fields whatever the paper, and the paper's own report. The published
figures are checked against the papers' text (transcribed here), not against the library."""

import dataclasses
import os

import pytest

import pimhe
import pimhe.plots  # matplotlib only when a plot is drawn

COMMON = ("id", "quantity", "unit", "published", "ours", "basis", "ratio", "source", "verdict")
CSV = os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "reference", "dramatic_calibration.csv")


def check_rows(result, paper):
    """The fields and their consistency every paper's rows share."""
    assert isinstance(result, pimhe.Reproduction) and result.paper == paper
    assert result.rows and len({r.id for r in result.rows}) == len(result.rows)
    names = {f.name for f in dataclasses.fields(pimhe.Comparison)}
    assert set(COMMON) <= names
    for r in result.rows:
        assert r.basis in ("modeled", "measured")
        assert (r.model if r.basis == "modeled" else r.machine)
        if r.ours is not None and r.published:
            assert r.ratio == pytest.approx(r.ours / r.published, rel=1e-12)
        else:
            assert r.ratio is None
        if r.verdict in ("within", "outside"):
            assert r.within == (abs(r.ratio - 1) <= r.tolerance + 1e-12)
        else:
            assert r.verdict == "not_judged" and r.within is None and r.why_not
    return {r.id: r for r in result.rows}


def test_dramatic_rows_and_the_report_the_plots_read():
    result = pimhe.reproduce("dramatic", rows="t2-ntt-1,t2-intt-4", progress=False)
    rows = check_rows(result, "dramatic")
    assert [r["id"] for r in result.report["rows"]] == ["t2-ntt-1", "t2-intt-4"]
    compute = rows["t2-ntt-1/compute"]
    assert compute.ours == result.report["rows"][0]["compute_s"]
    assert compute.model == "upmem-v1b@2 (modeled)"
    if os.path.exists(CSV):
        # dramatic_calibration.csv: Table 2, NTT of 1 ciphertext on 2 DPUs, 0.042 s; iNTT of 4, 0.045 s.
        assert compute.published == 0.042 and rows["t2-intt-4/compute"].published == 0.045
        # The model-fidelity target: DRAMatic's kernel within 20%.
        assert compute.within is True and compute.tolerance == 0.2
    assert [r["id"] for r in pimhe.plots.dramatic_rows(rows="t2-ntt-1")] == ["t2-ntt-1"]


def test_anaheim_fig9_beside_section_vii_c():
    result = pimhe.reproduce("anaheim", workload_n=0)
    rows = check_rows(result, "anaheim")
    # Section VII-C: PAccum 7.26x 3.98x 3.63x, CAccum 10.33x 4.31x 6.20x at each system's B.
    stated = {
        "fig9-a100-nearbank-PAccum(4)-b16": 7.26,
        "fig9-a100-custom-hbm-PAccum(4)-b16": 3.98,
        "fig9-rtx4090-nearbank-PAccum(4)-b32": 3.63,
        "fig9-a100-nearbank-CAccum(8)-b16": 10.33,
        "fig9-a100-custom-hbm-CAccum(8)-b16": 4.31,
        "fig9-rtx4090-nearbank-CAccum(8)-b32": 6.20,
    }
    for id, published in stated.items():
        assert rows[id].published == published and rows[id].within is True, rows[id]
    assert rows["without-cp-a100-nearbank"].ours is None  # workloads not run
    assert result.report["workloads"] == [] and len(result.report["micro"]) == 3 * 17 * 5


def test_ceram_tables_beside_seed_004():
    result = pimhe.reproduce("ceram", skip_cpu=True)
    rows = check_rows(result, "ceram")
    # Table 3, case A, multiplication without transfer: 396.90x; Table 6, CPU-Server: 579.9x.
    assert rows["t3-A-multiply-none"].published == 396.90
    assert rows["t6-A-multiply-CPU-Server"].published == 579.9
    assert rows["t6-A-multiply-CPU-Server"].why_not == "skipped (--skip-cpu)"
    # Tables 7 and 8 and section 4.4 from the model; Tables 9 and 10 published only.
    assert rows["t7-B-multiply-actual"].published == 5611
    assert rows["t8-B-multiply-actual"].published == 506.5
    assert rows["s4.4-B-multiply-actual"].published == 11222
    assert rows["t9-B-actual-transfer"].ours is None and "circular" in rows["t9-B-actual-transfer"].why_not
    judged = [r for r in result.rows if r.verdict != "not_judged"]
    tables = result.report["tables"] + result.report["throughput"]
    cells = [c for t in tables for c in t["cells"]] + [result.report["two_banks"]["cell"]]
    assert len(judged) == len(cells) == 60 + 45 + 6 + 1
    assert [r.within for r in judged] == [c["within"] for c in cells]
    assert str(result).startswith("ceram (Optimizing the full-RNS B/FV scheme") and "177 figures; " in str(result)


def test_mhy_quick_rows_beside_seed_001():
    result = pimhe.reproduce("mhy", quick=True)
    rows = check_rows(result, "mhy")
    # Section IV-A's stated ratios (seed 001's text): 7x, 5x, 3.7x, 1397x, 898x, 9x, 6x, 3x.
    stated = {
        "fig3a-add-cpu-faster": 7,
        "fig3a-add-dpu-faster": 5,
        "fig3c-conv-cpu-faster": 3.7,
        "fig3c-conv-dpu-faster": 1397,
        "fig3c-conv-dpu-faster-with-copies": 898,
        "fig3e-mul-cpu-faster": 9,
        "fig3e-mul-dpu-faster": 6,
        "fig3e-mul-cpu-faster-with-copies": 3,
    }
    for id, published in stated.items():
        assert rows[id].published == published
    # Only the conv claim over 2^10, 2^12 has its lengths in a quick run.
    assert rows["fig3c-conv-cpu-faster"].ours is not None
    assert rows["fig3a-add-dpu-faster"].ours is None and "--quick" in rows["fig3a-add-dpu-faster"].why_not
    # Table II: alpha = 1/3 for the addition, (n^2 + (n-1)^2) / 3n for the convolution.
    assert rows["table2-alpha-add-1024"].published == pytest.approx(1 / 3)
    assert rows["table2-alpha-conv-4096"].published == pytest.approx((4096**2 + 4095**2) / (3 * 4096))
    # Every quick row was executed whole on the emulated DPUs and equals the CPU loop.
    for r in result.report["by_n"] + result.report["by_dpus"]:
        assert r["executed_equal"] is True
    # Section IV-B: Fig. 7's "up to 21x slower", Figs. 4, 5 and 8's 97x and 13x; the quick NTT
    # rows ran both modes whole on the emulated DPUs, the HAL rows both backends.
    assert rows["fig7-ntt-stage-cpu-faster-with-copies"].published == 21
    assert rows["fig4-add-dpu-faster-than-single"].published == 97
    assert rows["fig8-helib-add-single-faster-with-copies"].published == 13
    assert [r["n"] for r in result.report["ntt_stages"]] == [1024, 4096]
    assert all(r["executed_equal"] is True for r in result.report["ntt_stages"] + result.report["hal"])
    # ... and the rows in MHY+'s own layout (the authors' benchmark: towers split over the DPUs).
    assert [(r["op"], r["towers"]) for r in result.report["hal_layout"]] == [
        ("add", 1), ("add", 4), ("mul", 1), ("mul", 4)]
    assert all(r["executed_equal"] is True for r in result.report["hal_layout"])
    assert rows["fig4-add-dpu-faster-than-single-layout"].published == 97
    assert [r["dpus"] for r in result.report["by_dpus"] if r["op"] == "add"] == [64, 128, 256, 512, 1024]
    # DRAMatic's Table 2: MHY+'s NTT of 64 ciphertexts on 128 DPUs, 2.542 s of compute.
    if os.path.exists(CSV):
        peers = result.report["dramatic_peers"]["rows"]
        mhy = [p for p in peers if p["peer"]["ciphertexts"] == 64 and p["peer"]["operation"] == "NTT"]
        assert mhy[0]["peer"]["compute_s"] == 2.542 and mhy[0]["dramatic"]["compute_s"] == 0.042


def test_gupta_quick_fig1_checked_on_the_emulator():
    result = pimhe.reproduce("gupta", quick=True, repeat=1, progress=False)
    rows = check_rows(result, "gupta")
    report = result.report
    assert report["dpus"] == 12 and report["dpu_hz"] == 425e6 and report["model"] == "upmem-v1b@1 (modeled)"
    # Section 3's widths: 1024 27-bit, 2048 54-bit, 4096 109-bit coefficients.
    widths = sorted({(r["coefficient_bits"], r["n"], r["limbs"]) for r in report["rows"]})
    assert widths == [(27, 1024, 1), (54, 2048, 2), (109, 4096, 4)]
    for r in report["rows"]:
        assert r["emulated_kernel_s"] == pytest.approx(r["kernel_s"], rel=1e-9)
        assert r["speedup"] == pytest.approx(r["cpu_s"] / r["kernel_s"], rel=1e-12)
    # The paper's stated figures: 4.2's 20-150x add over the CPU, 40-50x multiply, 11 tasklets.
    assert rows["saturation-mul"].published == 11
    add = rows["fig1-add-cpu-27b-20"]
    assert add.published == (20 + 150) / 2 and "20.000-150.000x" in add.quantity
    assert rows["fig1-mul-cpu-109b-20"].published == 45
    # The paper's own arithmetic measured on this CPU: the CPU side of the textbook rows, and
    # the tasklet sweep of the paper's kernels beside the RNS ones.
    assert sorted(t["coefficient_bits"] for t in report["paper_cpu"]) == [27, 54, 109]
    assert rows["fig1-mul-cpu-109b-20-textbook"].published == 45
    assert rows["saturation-mul-paper-kernels"].published == 11
    assert all(r.verdict == "not_judged" and "--quick" in r.why_not for r in result.rows)


def test_options_are_each_papers_own():
    with pytest.raises(pimhe.ParameterError, match="expected one of `kernel`, `rows`, `max_emulation_s`, `what_ifs`"):
        pimhe.reproduce("dramatic", kernal="best")
    with pytest.raises(pimhe.ParameterError, match="unknown field `skip_cpu`"):
        pimhe.reproduce("anaheim", skip_cpu=True)
    with pytest.raises(pimhe.ParameterError, match="expected one of `skip_cpu`, `repeat`, `threads`, `seal_python`"):
        pimhe.reproduce("ceram", workload_n=0)
    with pytest.raises(pimhe.ParameterError, match="expected `quick` or `skip_cpu`"):
        pimhe.reproduce("mhy", quik=True)
    with pytest.raises(pimhe.ParameterError, match="choose one of dramatic, mhy, gupta, anaheim, ceram"):
        pimhe.reproduce("sealpir")


def test_bench_scheme_times_the_special_moduli_bfv_of_a_case():
    report = pimhe.bench_scheme("bfv-special", case="B", repeat=1, threads=1)
    assert (report["scheme"], report["case"], report["n"], report["batch"]) == ("bfv-special", "B", 16384, 1)
    assert report["checked"] is True and report["params"]["moduli"] == ["2^146 - 1", "2^146", "2^146 + 1"]
    assert [o["op"] for o in report["ops"]] == ["encrypt", "decrypt", "add", "sub", "multiply_relin"]
    with pytest.raises(pimhe.ParameterError, match="case=D is not known; choose A or B"):
        pimhe.bench_scheme("bfv-special", case="D")
    with pytest.raises(pimhe.ParameterError, match="needs n"):
        pimhe.bench_scheme("bgv")
    with pytest.raises(pimhe.ParameterError, match="case applies to bfv-special only"):
        pimhe.bench_scheme("bgv", n=4096, case="A")
    with pytest.raises(pimhe.ParameterError, match=r"batch=4 is not allowed with scheme=bfv-special"):
        pimhe.bench_scheme("bfv-special", case="A", batch=4)
