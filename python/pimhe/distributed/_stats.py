"""``pimhe stats`` over Ray: the driver is the client (it holds the rows and the secret keys,
encrypts one range of users at a time and decrypts the result), workers add ranges up into
partial aggregates, partials are combined in a tree.

Every check is the library's (``pimhe_workloads::stats::sharded``, through
``pimhe._pimhe``): a user in two partials is refused when they meet, the driver decrypts only a
partial that holds exactly every user, and a shard or partial of another run is refused. Python
only moves bytes.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from .. import _progress
from .._pimhe import StatsDriver, stats_aggregate_shard, stats_combine
from ._cluster import ShardError, cluster_workers, default_shards, ray_module, shard_bounds

# Users per shard by default: a two-column mean's user is about 0.6 MB of ciphertexts at
# N = 8192, so a shard is at most about 150 MB of the object store.
SHARD_USERS = 256
IN_FLIGHT_PER_WORKER = 2


def _aggregate(public: bytes, shard: bytes, users: int, backend: str, threads: Optional[int]) -> Tuple[Tuple[int, int, float], bytes]:
    """A worker: the partial of one shard, and (its users, its bytes, the worker's seconds)."""
    start = time.perf_counter()
    partial = stats_aggregate_shard(public, shard, backend, threads)
    return (users, len(partial), time.perf_counter() - start), partial


def _combine(public: bytes, backend: str, threads: Optional[int], *partials: bytes) -> Tuple[Tuple[int, int, float], bytes]:
    """A worker: one partial of several (a node of the reduction tree)."""
    start = time.perf_counter()
    partial = stats_combine(public, list(partials), backend, threads)
    return (0, len(partial), time.perf_counter() - start), partial


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
    pending: Dict[Any, Tuple[Tuple[int, ...], Any]] = {}
    ready: List[Tuple[Tuple[int, ...], Any]] = []
    bar = _progress.Bar() if _progress.wanted(progress) else None
    if bar is not None:
        bar.start(len(bounds), "shards done")
    next_shard, shards_running = 0, 0
    shard_s: List[float] = []
    combine_s: List[float] = []
    try:
        while next_shard < len(bounds) or pending or len(ready) > 1:
            # Stream the shards: each encrypted when a worker can take it, at most a few per
            # worker in the store at once.
            while next_shard < len(bounds) and shards_running < IN_FLIGHT_PER_WORKER * workers:
                lo, hi = bounds[next_shard]
                began = time.monotonic()
                shard = driver.encrypt_shard(lo, hi)
                encrypt_s += time.monotonic() - began
                shipped["shards"] += len(shard)
                status, partial = shard_task.options(name=f"pimhe-stats-shard-{next_shard}").remote(
                    public_ref, put(shard), hi - lo, backend, threads
                )
                pending[status] = ((next_shard,), partial)
                next_shard, shards_running = next_shard + 1, shards_running + 1
            while len(ready) >= 2:
                (a, pa), (b, pb) = ready.pop(), ready.pop()
                status, partial = combine_task.options(name="pimhe-stats-combine").remote(
                    public_ref, backend, threads, pa, pb
                )
                pending[status] = (tuple(sorted(a + b)), partial)
            if not pending:
                break
            done, _ = ray.wait(list(pending), num_returns=1)
            for status in done:
                covered, partial = pending.pop(status)
                try:
                    count, size, seconds = ray.get(status)
                except ray.exceptions.RayError as e:
                    with contextlib.suppress(ray.exceptions.RayError):
                        ray.get(partial)
                    raise _failure(covered, bounds, e) from None
                if ledger is not None:
                    ledger.extend([status, partial])
                shipped["partials"] += size
                ready.append((covered, partial))
                (shard_s if count else combine_s).append(seconds)
                if count:
                    shards_running -= 1
                    if bar is not None:
                        bar.advance(1)
        final = ray.get(ready[0][1])
    finally:
        if bar is not None:
            bar.finish()
        for status, (_, partial) in pending.items():
            for ref in (status, partial):
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
    # The server's wall time: the run less the client's encryption, which the driver did
    # between submissions (pimhe stats reports it apart too).
    server_s = time.monotonic() - start - encrypt_s
    report_json, text = driver.finish(final, server_s, backend)
    return StatsRunResult(
        report=json.loads(report_json),
        text=text,
        workers=workers,
        shards=len(bounds),
        retries=retries,
        object_store=shipped,
        shard_s=shard_s,
        combine_s=combine_s,
    )


def _failure(covered: Sequence[int], bounds: Sequence[Tuple[int, int]], e: Exception) -> ShardError:
    """The ShardError of a task covering ``covered`` that failed with ``e``."""
    cause = getattr(e, "cause", None)
    message = str(cause) if cause is not None else str(e).strip().splitlines()[-1]
    if len(covered) == 1:
        (i,) = covered
        lo, hi = bounds[i]
        what = f"shard {i} of {len(bounds)} (users {lo}..{hi - 1})"
    else:
        what = f"combining shards {list(covered)} of {len(bounds)}"
    return ShardError(covered, what, message, usage=isinstance(cause, ValueError))
