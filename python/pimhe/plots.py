"""Figures of the modeled UPMEM runs beside DRAMatic's published ones (matplotlib, the ``plot``
extra). The numbers are the library's reproduction (``pimhe bench reproduce dramatic``); every
figure names the model it shows and says "modeled".

    import pimhe.plots
    pimhe.plots.dramatic_breakdown("breakdown.png")     # DRAMatic's Figs. 9-12 style
    pimhe.plots.dpu_scaling("scaling.png")
    pimhe.plots.cpu_vs_pim("cpu_vs_pim.png")            # this machine's CPU vs modeled DPUs
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence

from . import reproduce
from ._pimhe import bench_kernel

PARTS = ("transfer_s", "compute_s", "retrieve_s")
COLORS = {"transfer_s": "#4c72b0", "compute_s": "#dd8452", "retrieve_s": "#55a868"}


def dramatic_rows(kernel: str = "barrett", rows: Optional[str] = None) -> List[Dict[str, Any]]:
    """The reproduction's rows as dicts (``rows`` selects ids or prefixes, e.g. ``"t3-ntt"``)."""
    return reproduce("dramatic", kernel=kernel, rows=rows).report["rows"]


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("pimhe.plots needs matplotlib: pip install 'pimhe[plot]'") from e
    return plt


def _model(rows: List[Dict[str, Any]]) -> str:
    return rows[0]["model"] if rows else "no rows"


def dramatic_breakdown(path: str, rows: str = "t3-ntt,t3-intt", kernel: str = "barrett"):
    """Stacked transfer / compute / retrieve seconds per experiment: pimhe's modeled bar beside
    the published one (hatched; rows the paper does not break down have none). Log scale, since
    N spans 1024..32768. Saves to ``path`` and returns the figure."""
    plt = _pyplot()
    data = dramatic_rows(kernel, rows)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(data)), 4.5))
    width = 0.38
    for i, row in enumerate(data):
        for offset, prefix, hatch in ((-width / 2, "", None), (width / 2, "published_", "//")):
            bottom = 0.0
            for part in PARTS:
                value = row.get(prefix + part)
                if value is None:
                    break
                ax.bar(i + offset, value, width, bottom=bottom, color=COLORS[part], hatch=hatch, edgecolor="black", linewidth=0.4)
                bottom += value
    ax.set_xticks(range(len(data)))
    ax.set_xticklabels([f"{r['op']}\nN={r['n']}\n{r['ciphertexts']} ct" for r in data], fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("time (s)")
    dpus = data[0]["dpus"] if data else 0
    ax.set_title(f"DRAMatic experiments on {dpus} DPUs: {_model(data)} (left) vs published (hatched, right)", fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLORS[p]) for p in PARTS]
    ax.legend(handles, ["transfer (host to DPUs)", "compute (DPUs)", "retrieve (DPUs to host)"], fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return fig


def dpu_scaling(path: str, kernel: str = "barrett"):
    """DRAMatic Table 5's pipeline (NTT, tensor, iNTT of 32768 ciphertexts at N = 4096) against
    the number of DPUs: modeled compute, transfer and total seconds, and published values where
    the paper gives them. Saves to ``path`` and returns the figure."""
    plt = _pyplot()
    data = sorted(dramatic_rows(kernel, "t5-pipeline"), key=lambda r: r["dpus"])
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    dpus = [r["dpus"] for r in data]
    for part in PARTS:
        ax.plot(dpus, [r[part] for r in data], marker="o", color=COLORS[part], label=f"{part[:-2]} (modeled)")
        published = [(r["dpus"], r.get("published_" + part)) for r in data if r.get("published_" + part) is not None]
        if published:
            ax.plot(*zip(*published), marker="x", linestyle="--", color=COLORS[part], label=f"{part[:-2]} (published)")
    ax.plot(dpus, [r["total_s"] for r in data], marker="s", color="black", label="total (modeled)")
    ax.set_xlabel("DPUs")
    ax.set_ylabel("time (s)")
    ax.set_yscale("log")
    ax.set_title(f"Pipeline of 32768 ciphertexts vs DPU count: {_model(data)}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return fig


def cpu_vs_pim(
    path: str,
    op: str = "pipeline",
    n: int = 4096,
    primes: int = 3,
    batches: Sequence[int] = (16, 64, 256, 1024),
    dpus: int = 383,
    threads: Optional[int] = None,
):
    """``op`` (``pimhe bench`` names: ntt, intt, bgv-mul, pipeline) on growing batches: the CPU
    backend measured on this machine beside the UPMEM system modeled with ``dpus`` DPUs (its
    transfer, compute and retrieve stacked). Saves to ``path`` and returns the figure and the
    rows (one dict per batch with ``cpu_s`` and the modeled seconds)."""
    plt = _pyplot()
    rows = []
    for batch in batches:
        cpu = json.loads(bench_kernel(op, n, batch, primes=primes, backend="cpu", threads=threads))
        pim = json.loads(bench_kernel(op, n, batch, primes=primes, backend="upmem-emu", dpus=dpus))
        rows.append({"batch": batch, "cpu_s": cpu["wall_s"], **{k: pim[k] for k in (*PARTS, "total_s", "model")}})
    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    x = list(range(len(rows)))
    width = 0.38
    ax.bar([i - width / 2 for i in x], [r["cpu_s"] for r in rows], width, color="#8172b3", label="CPU (measured, this machine)")
    bottom = [0.0] * len(rows)
    for part in PARTS:
        values = [r[part] for r in rows]
        ax.bar([i + width / 2 for i in x], values, width, bottom=bottom, color=COLORS[part], label=f"UPMEM {part[:-2]} (modeled)")
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_xticks(x)
    ax.set_xticklabels([str(r["batch"]) for r in rows])
    ax.set_xlabel(f"ciphertexts (N={n}, {primes} primes)")
    ax.set_ylabel("time (s)")
    ax.set_yscale("log")
    ax.set_title(f"{op}: CPU vs {dpus} DPUs, {rows[0]['model'] if rows else ''}", fontsize=9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    return fig, rows
