"""``pimhe stats`` over Ray: the driver is the client (it holds the rows and the secret keys,
encrypts one range of users at a time and decrypts the result), workers add ranges up into
partial aggregates, partials are combined in a tree.

Every check is the library's (``pimhe_workloads::stats::sharded``, through
``pimhe._pimhe``): a user in two partials is refused when they meet, the driver decrypts only a
partial that holds exactly every user, and a shard or partial of another run is refused. Python
only moves bytes.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .._pimhe import StatsDriver, stats_aggregate_shard, stats_combine, workers_cost
from ._cluster import TaskStatus, cluster_workers, default_shards, ray_module, shard_bounds, task_status, tree_reduce

# Users per shard by default: a two-column mean's user is about 0.6 MB of ciphertexts at
# N = 8192, so a shard is at most about 150 MB of the object store.
SHARD_USERS = 256


def _aggregate(public: bytes, shard: bytes, users: int, backend: str, threads: Optional[int]) -> Tuple[TaskStatus, bytes]:
    """A worker: its status (with its users) and the partial of one shard."""
    start = time.perf_counter()
    return task_status(users, stats_aggregate_shard(public, shard, backend, threads), start)


def _combine(public: bytes, backend: str, threads: Optional[int], *partials: bytes) -> Tuple[TaskStatus, bytes]:
    """A worker: one partial of several (a node of the reduction tree)."""
    start = time.perf_counter()
    return task_status(0, stats_combine(public, list(partials), backend, threads), start)


@dataclass
class StatsRunResult:
    """``pimhe stats``'s output (``report``: its JSON object; ``text``: what it prints) and
    what the distribution did."""

    report: Dict[str, Any]
    text: str
    workers: int
    shards: int
    retries: int
    #: Bytes put into the object store: ``public`` once (header and relinearization keys),
    #: ``shards`` (every shard's ciphertexts), ``partials`` (every partial a task returned).
    object_store: Dict[str, int]
    shard_s: List[float] = field(default_factory=list)
    combine_s: List[float] = field(default_factory=list)

    def distributed(self) -> Dict[str, Any]:
        return {
            "workers": self.workers,
            "shards": self.shards,
            "retries": self.retries,
            "object_store_bytes": self.object_store,
            "shard_s": self.shard_s,
            "combine_s": self.combine_s,
        }

    def to_json(self) -> Dict[str, Any]:
        """``pimhe stats --json``'s object with a ``distributed`` entry."""
        return {**self.report, "distributed": self.distributed()}

    def render(self) -> str:
        """``pimhe stats``'s text, and a line on the distribution."""
        s = self.object_store
        return self.text + (
            f"\n  on Ray: {self.shards} shards over {self.workers} workers; object store: public material "
            f"{s['public']} bytes once, shards {s['shards']} bytes, partials {s['partials']} bytes"
        )


def run(
    statistic: str,
    columns: Sequence[str],
    *,
    input: Optional[str] = None,
    users: Optional[int] = None,
    synthetic: Optional[int] = None,
    decimals: Optional[int] = None,
    scheme: str = "bgv",
    n: int = 8192,
    seed: Optional[int] = None,
    shards: Optional[int] = None,
    backend: str = "cpu",
    threads: Optional[int] = 1,
    client_threads: Optional[int] = None,
    retries: int = 3,
    progress: Optional[bool] = None,
    ledger: Optional[List[Any]] = None,
    driver: Optional[StatsDriver] = None,
) -> StatsRunResult:
    """``pimhe stats statistic`` over the running Ray cluster (see :func:`connect`): the rows
    of ``input`` (a CSV file's ``columns``) or ``users`` synthetic users of seed
    ``synthetic``, encrypted here (``client_threads``), added up by the workers (``backend``,
    ``threads`` each) in ``shards`` ranges of users, decrypted here. ``seed``: keys and
    encryption randomness from a fixed seed (tests only). ``ledger``: a list that receives every
    object reference put into or returned through the object store. ``driver``: a
    :class:`pimhe._pimhe.StatsDriver` made already (then the data arguments are ignored).

    Raises :class:`ShardError` naming the shard that failed for good.
    """
    ray = ray_module()
    workers = cluster_workers()
    if retries < 0:
        raise ValueError(f"retries={retries}: allowed 0 or more")
    if driver is None:
        driver = StatsDriver(
            statistic, list(columns), input=input, users=users, synthetic=synthetic, decimals=decimals,
            scheme=scheme, n=n, seed=seed, threads=client_threads,
        )
    total = driver.users
    bounds = shard_bounds(total, shards if shards is not None else default_shards(total, workers, SHARD_USERS))
    shard_task = ray.remote(num_returns=2, max_retries=retries, num_cpus=1)(_aggregate)
    combine_task = ray.remote(num_returns=2, max_retries=retries, num_cpus=1)(_combine)
    public = driver.public_bytes()
    shipped = {"public": len(public), "shards": 0, "partials": 0}

    def put(value: Any) -> Any:
        ref = ray.put(value)
        if ledger is not None:
            ledger.append(ref)
        return ref

    start = time.monotonic()
    encrypt_s = 0.0
    public_ref = put(public)

    def submit_shard(i: int) -> Tuple[Any, Any]:
        # Each shard encrypted when a worker can take it.
        nonlocal encrypt_s
        lo, hi = bounds[i]
        began = time.monotonic()
        shard = driver.encrypt_shard(lo, hi)
        encrypt_s += time.monotonic() - began
        shipped["shards"] += len(shard)
        return shard_task.options(name=f"pimhe-stats-shard-{i}").remote(public_ref, put(shard), hi - lo, backend, threads)

    def submit_combine(a: Any, b: Any) -> Tuple[Any, Any]:
        return combine_task.options(name="pimhe-stats-combine").remote(public_ref, backend, threads, a, b)

    def describe(i: int) -> str:
        lo, hi = bounds[i]
        return f"users {lo}..{hi - 1}"

    tree = tree_reduce(
        len(bounds), submit_shard, submit_combine, describe, workers=workers, progress=progress, ledger=ledger
    )
    shipped["partials"] = tree.partial_bytes
    # The server's wall time: the run less the client's encryption, which the driver did
    # between submissions (pimhe stats reports it apart too).
    server_s = time.monotonic() - start - encrypt_s
    report_json, text = driver.finish(tree.final, server_s, backend)
    report = json.loads(report_json)
    summed = workers_cost(tree.costs)
    if summed is not None:
        # The workers' modeled costs added up (docs/DISTRIBUTED.md): the driver ran no model.
        report.update(json.loads(summed))
    return StatsRunResult(
        report=report,
        text=text,
        workers=workers,
        shards=len(bounds),
        retries=retries,
        object_store=shipped,
        shard_s=tree.shard_s,
        combine_s=tree.combine_s,
    )


