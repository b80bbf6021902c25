"""Result objects: plain dataclasses built from the JSON the Rust library serializes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional


@dataclass(frozen=True)
class UpmemReport:
    """What the work run on an ``upmem-emu`` backend cost, **modeled** by the UPMEM timing and
    energy model (``model``, e.g. ``"upmem-v1b@2 (modeled)"``): transfer, compute and retrieve
    seconds and energy are the model's figures for real DPUs, not measurements. Only
    ``host_fallback_s`` is measured (wall time of the operations that fell back to the CPU);
    ``host_fallback_modeled_s`` prices the same work by the host model."""

    model: str
    model_name: str
    model_version: str
    dpus: int
    mode: str
    variant: str
    transfer_s: float
    compute_s: float
    retrieve_s: float
    total_s: float
    energy_j: float
    host_fallback_s: float
    launches: int
    rounds: int
    fallbacks: int
    bytes_to_dpus: int
    bytes_from_dpus: int
    #: The conversions' host fallbacks priced by the host model (``seal-host@1``): what
    #: ``--mode auto`` compares, the same on every run.
    host_fallback_modeled_s: float = 0.0
    #: Buffers evicted from MRAM to the host to make room, and pushed back on use.
    evictions: int = 0
    restores: int = 0
    counted: Dict[str, int] = field(default_factory=dict)
    modeled: bool = True

    @classmethod
    def _from_json(cls, text: str) -> "UpmemReport":
        d = json.loads(text)
        names = {f for f in cls.__dataclass_fields__ if f != "modeled"}
        return cls(**{k: v for k, v in d.items() if k in names})

    def __str__(self) -> str:
        return (
            f"{self.model}: transfer {self.transfer_s:.6f} s, compute {self.compute_s:.6f} s, "
            f"retrieve {self.retrieve_s:.6f} s, total {self.total_s:.6f} s, energy {self.energy_j:.4f} J; "
            f"{self.launches} launches, {self.fallbacks} host fallbacks ({self.host_fallback_s:.4f} s measured)"
        )


@dataclass(frozen=True)
class NearbankKind:
    """One kind of PIM instruction (``"PAccum(4)"``) or GPU kernel (``"NTT"``) of a program."""

    kind: str
    count: int
    seconds: float
    without_pim_seconds: float


@dataclass(frozen=True)
class NearbankReport:
    """What the work run on a ``nearbank`` backend would cost on a GPU with near-bank PIM
    (Anaheim), **modeled** by the ``anaheim-nb`` model (``model``, e.g.
    ``"anaheim-nb@1 a100-nearbank B=16 (modeled)"``): the recorded program planned into PIM
    instructions and GPU kernels, beside the same program on the GPU alone ("w/o PIM"). The
    results themselves were computed on this host."""

    model: str
    system: str
    buffer_entries: int
    gpu_s: float
    pim_s: float
    transition_s: float
    overlap_s: float
    total_s: float
    energy_j: float
    edp_js: float
    without_pim_s: float
    without_pim_energy_j: float
    without_pim_edp_js: float
    speedup: float
    energy_ratio: float
    edp_ratio: float
    pim_instructions: int
    gpu_kernels: int
    gpu_fallbacks: int
    kinds: List[NearbankKind] = field(default_factory=list)
    modeled: bool = True

    @classmethod
    def _from_json(cls, text: str) -> "NearbankReport":
        d = json.loads(text)
        names = {f for f in cls.__dataclass_fields__ if f not in ("modeled", "kinds")}
        kinds = [NearbankKind(**k) for k in d.get("kinds", [])]
        return cls(kinds=kinds, **{k: v for k, v in d.items() if k in names})

    def __str__(self) -> str:
        return (
            f"{self.model}: gpu {self.gpu_s:.6f} s + pim {self.pim_s:.6f} s + switches {self.transition_s:.6f} s "
            f"= {self.total_s:.6f} s, {self.energy_j:.4f} J; w/o PIM {self.without_pim_s:.6f} s, "
            f"{self.without_pim_energy_j:.4f} J: speedup {self.speedup:.2f}x, EDP {self.edp_ratio:.2f}x"
        )


@dataclass(frozen=True)
class Estimate:
    """One statistic: the decrypted estimate beside the plaintext computation."""

    name: str
    encrypted: float
    plaintext: float
    abs_error: float


@dataclass(frozen=True)
class ModulusRun:
    """The computation under one plaintext modulus (measured times)."""

    plain_modulus: int
    client_encrypt_s: float
    server_s: float
    client_decrypt_s: float
    noise_budget_bits: int


@dataclass(frozen=True)
class StatsResult:
    """What ``pimhe.stats.*`` returns: the estimates, exactness, parameters and timings
    (measured; ``upmem`` holds the modeled UPMEM report of an ``upmem-emu`` server, ``nearbank``
    the modeled GPU + near-bank PIM report of a ``nearbank`` server)."""

    statistic: str
    scheme: str
    backend: str
    n: int
    users: int
    columns: List[str]
    decimals: int
    plain_moduli: List[int]
    estimates: List[Estimate]
    aggregates_exact: bool
    runs: List[ModulusRun]
    client_encrypt_s: float
    client_decrypt_s: float
    server_wall_s: float
    upmem: Optional[UpmemReport] = None
    nearbank: Optional[NearbankReport] = None

    @classmethod
    def _from_json(cls, text: str, upmem: Optional[UpmemReport] = None) -> "StatsResult":
        d: Dict[str, Any] = json.loads(text)
        return cls(
            statistic=d["statistic"],
            scheme=d["scheme"],
            backend=d["backend"],
            n=d["n"],
            users=d["users"],
            columns=list(d["columns"]),
            decimals=d["decimals"],
            plain_moduli=list(d["plain_moduli"]),
            estimates=[Estimate(**e) for e in d["estimates"]],
            aggregates_exact=d["aggregates_exact"],
            runs=[ModulusRun(**r) for r in d["runs"]],
            client_encrypt_s=d["client_encrypt_s"],
            client_decrypt_s=d["client_decrypt_s"],
            server_wall_s=d["server_wall_s"],
            upmem=upmem,
            nearbank=NearbankReport._from_json(json.dumps(d["nearbank"])) if d.get("nearbank") else None,
        )

    def values(self) -> Dict[str, float]:
        """The encrypted estimates by name."""
        return {e.name: e.encrypted for e in self.estimates}

    def __str__(self) -> str:
        lines = [
            f"pimhe stats {self.statistic}: {self.users} users, {self.scheme} N={self.n} "
            f"t={'*'.join(map(str, self.plain_moduli))}, server on {self.backend}"
        ]
        for e in self.estimates:
            lines.append(f"  {e.name:<20} {e.encrypted:>20.10f} {e.plaintext:>20.10f} {e.abs_error:>12.3e}")
        lines.append(f"  exact aggregates: {self.aggregates_exact}; server {self.server_wall_s:.3f} s")
        if self.upmem is not None:
            lines.append(f"  {self.upmem}")
        if self.nearbank is not None:
            lines.append(f"  {self.nearbank}")
        return "\n".join(lines)


@dataclass(frozen=True)
class Comparison:
    """One published figure of a paper beside ours: the row every reproduction makes, whatever
    the paper (``pimhe bench reproduce PAPER --json``'s ``comparison``).

    ``published`` is the paper's figure and ``ours`` pimhe's, both in ``unit`` (``None`` where
    either has none); ``basis`` says how ours was obtained: ``"modeled"`` (by ``model``, its
    name and version) or ``"measured"`` (on ``machine``). ``ratio`` is ours / published;
    ``source`` the paper's table, figure or section. ``verdict`` is ``"within"`` or
    ``"outside"`` the relative ``tolerance``, or ``"not_judged"``; ``why_not`` says why a figure
    is outside or not judged."""

    id: str
    quantity: str
    unit: str
    published: Optional[float]
    ours: Optional[float]
    basis: str
    ratio: Optional[float]
    source: str
    verdict: str
    model: Optional[str] = None
    machine: Optional[str] = None
    tolerance: Optional[float] = None
    why_not: Optional[str] = None

    @property
    def within(self) -> Optional[bool]:
        """True within the tolerance, False outside, None not judged."""
        return {"within": True, "outside": False}.get(self.verdict)


@dataclass(frozen=True)
class Reproduction:
    """What ``pimhe.reproduce`` returns: the paper, its published figures beside ours
    (``rows``, the same fields for every paper) and the paper's own report (``report``, a dict
    of what ``--json`` prints besides the rows: its tables as the paper lays them out)."""

    paper: str
    citation: str
    rows: List[Comparison]
    report: Dict[str, Any]

    @classmethod
    def _from_json(cls, text: str) -> "Reproduction":
        d: Dict[str, Any] = json.loads(text)
        paper, citation = d.pop("paper"), d.pop("citation")
        rows = [Comparison(**r) for r in d.pop("comparison")]
        return cls(paper=paper, citation=citation, rows=rows, report=d)

    def __str__(self) -> str:
        verdicts = [r.within for r in self.rows]
        return (
            f"{self.paper} ({self.citation}): {len(self.rows)} figures; {verdicts.count(True)} within the "
            f"tolerance, {verdicts.count(False)} outside, {verdicts.count(None)} not judged"
        )
