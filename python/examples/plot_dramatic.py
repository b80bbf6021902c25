"""The modeled UPMEM time breakdown beside DRAMatic's published one, the DPU scaling of the
pipeline, and this machine's CPU beside the modeled DPUs, as PNG files (needs matplotlib: pip install './python[plot]')."""

import tempfile
from pathlib import Path

import pimhe.plots

out = Path(tempfile.mkdtemp(prefix="pimhe-plots-"))
rows = pimhe.plots.dramatic_rows(rows="t3-ntt")
# The model against the paper on the rows it breaks down: each modeled compute time within 25%
# (where the published values are at hand: shared/reference/dramatic_calibration.csv beside the
# checkout, or PIMHE_DRAMATIC_CSV).
published = [row for row in rows if row.get("published_compute_s") is not None]
for row in published:
    ratio = row["compute_s"] / row["published_compute_s"]
    assert 0.75 < ratio < 1.25, (row["id"], ratio)
if not published:
    print("DRAMatic's published values are not at hand: plotting the modeled bars only")
pimhe.plots.dramatic_breakdown(str(out / "breakdown.png"), rows="t3-ntt,t3-intt")
pimhe.plots.dpu_scaling(str(out / "scaling.png"))
_, cpu_rows = pimhe.plots.cpu_vs_pim(str(out / "cpu_vs_pim.png"), batches=(16, 128))
assert all(r["cpu_s"] > 0 and r["total_s"] > 0 for r in cpu_rows)
for name in ("breakdown.png", "scaling.png", "cpu_vs_pim.png"):
    assert (out / name).stat().st_size > 10_000
print(f"wrote breakdown.png, scaling.png and cpu_vs_pim.png in {out} ({rows[0]['model']})")
