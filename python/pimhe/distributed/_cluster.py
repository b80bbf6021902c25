"""Ray, the cluster and the shards: what every distributed workload shares."""

from __future__ import annotations

import contextlib
import math
import os
import socket
import time
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from .. import _progress
from .._pimhe import ParameterError, PimheError

# Shards whose inputs sit in the object store at once, per worker: enough to keep a worker busy
# while the next shard is shipped, few enough that no worker holds more than its share.
IN_FLIGHT_PER_WORKER = 2


def ray_module() -> Any:
    """The ``ray`` module, or an ImportError saying how to install it (it is an optional
    dependency: ``pip install "pimhe[distributed]"``)."""
    try:
        import ray
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError('pimhe.distributed needs Ray: pip install "pimhe[distributed]" (or: pip install ray)') from e
    return ray


def parse_address(address: str) -> Tuple[Optional[str], Optional[int]]:
    """``(address, None)`` to join a running cluster, or ``(None, workers)`` for a local one:
    ``local`` (one worker per core) or ``local:W``."""
    if address == "local":
        return None, None
    if address.startswith("local:"):
        count = address[len("local:") :]
        if not count.isdigit() or int(count) < 1:
            raise ParameterError(f"ray address {address!r}: local:W needs a worker count W >= 1, e.g. local:2")
        return None, int(count)
    if not address:
        raise ParameterError("ray address is empty: give local, local:W, auto or a cluster's HOST:PORT")
    return address, None


@contextlib.contextmanager
def connect(address: str = "local") -> Iterator[None]:
    """Ray for the ``with`` block: ``local`` or ``local:W`` starts a cluster of W CPUs (one per
    core without W) on this machine, with no dashboard, and stops it after (Ray 2.60 listens on
    every interface even when asked for 127.0.0.1, and refuses clients without the cluster's
    token: docs/DISTRIBUTED.md); ``auto`` or ``HOST:PORT`` joins a running cluster (``ray start --head``)
    and leaves it running. When Ray is already initialized in this process, it is used as it
    is (and left so)."""
    ray = ray_module()
    if ray.is_initialized():
        yield
        return
    join, workers = parse_address(address)
    if join is None:
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    else:
        ray.init(address=join, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def cluster_workers() -> int:
    """Workers of the running cluster: its CPUs (each task takes one)."""
    ray = ray_module()
    if not ray.is_initialized():
        raise ParameterError(
            "no Ray cluster: run inside `with pimhe.distributed.connect(...)` or after ray.init()"
        )
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def cluster_nodes() -> int:
    """Machines of the running cluster (its live nodes)."""
    ray = ray_module()
    if not ray.is_initialized():
        raise ParameterError(
            "no Ray cluster: run inside `with pimhe.distributed.connect(...)` or after ray.init()"
        )
    return sum(1 for node in ray.nodes() if node.get("Alive"))


def shard_bounds(total: int, shards: int) -> List[Tuple[int, int]]:
    """``shards`` contiguous ranges ``[start, stop)`` covering ``0..total``, every index in
    exactly one, sizes differing by at most one (the first ``total % shards`` one larger)."""
    if total < 1:
        raise ParameterError("nothing to shard: no submissions")
    if shards < 1 or shards > total:
        raise ParameterError(f"shards={shards} for {total} submissions: allowed 1 ..= {total}")
    base, extra = divmod(total, shards)
    bounds, start = [], 0
    for i in range(shards):
        stop = start + base + (1 if i < extra else 0)
        bounds.append((start, stop))
        start = stop
    return bounds


def default_shards(total: int, workers: int, per_shard: int) -> int:
    """Enough shards of at most ``per_shard`` items to keep every worker busy (four per
    worker, so that a slow or retried one is not the last), at most one per item."""
    return max(1, min(total, max(4 * workers, math.ceil(total / per_shard))))


class ShardError(PimheError):
    """A shard (or a combination of shards) that failed for good: after Ray's retries of a
    worker that died, or at once for an error of the data, which a retry cannot fix.
    ``shards`` are the indices of the shards it covers, ``cause`` the worker's message, and
    ``usage`` whether the cause is the input's (a damaged or foreign file: the CLI's exit
    status 2) rather than a failed run (status 1)."""

    def __init__(self, shards: Sequence[int], what: str, cause: str, usage: bool) -> None:
        self.shards = tuple(shards)
        self.cause = cause
        self.usage = usage
        super().__init__(f"{what} failed for good: {cause}")


def shard_error(covered: Sequence[int], total: int, describe: Callable[[int], str], e: Exception) -> ShardError:
    """The ShardError of a task covering the shards ``covered`` (of ``total``) that failed with
    ``e``; ``describe(i)`` says what shard ``i`` holds (its users, its files)."""
    cause = getattr(e, "cause", None)
    message = str(cause) if cause is not None else str(e).strip().splitlines()[-1]
    if len(covered) == 1:
        what = f"shard {covered[0]} of {total} ({describe(covered[0])})"
    else:
        what = f"combining shards {list(covered)} of {total}"
    return ShardError(covered, what, message, usage=isinstance(cause, ValueError))


#: What a task returns beside its partial: (items: its shard's, 0 for a combination; bytes of
#: the partial; the worker's seconds; the worker, ``host:pid``; the backend's modeled cost of the
#: task as JSON, ``None`` on the CPU).
TaskStatus = Tuple[int, int, float, str, Optional[str]]


def task_status(items: int, partial_and_cost: Tuple[bytes, Optional[str]], start: float) -> Tuple[TaskStatus, bytes]:
    """A task's :data:`TaskStatus` and partial, from the library's ``(partial, cost)`` and the
    task's ``time.perf_counter()`` at its start."""
    partial, cost = partial_and_cost
    worker = f"{socket.gethostname()}:{os.getpid()}"
    return (items, len(partial), time.perf_counter() - start, worker, cost), partial


@dataclass
class TreeReduction:
    """What :func:`tree_reduce` returns: the last partial (fetched), the bytes of every partial
    returned through the object store, the workers' seconds per shard and per combination, and
    every task's modeled cost ``(worker, JSON)`` where its backend models one."""

    final: Any
    partial_bytes: int
    shard_s: List[float]
    combine_s: List[float]
    costs: List[Tuple[str, str]]


def tree_reduce(
    shards: int,
    submit_shard: Callable[[int], Tuple[Any, Any]],
    submit_combine: Callable[[Any, Any], Tuple[Any, Any]],
    describe: Callable[[int], str],
    *,
    workers: int,
    progress: Optional[bool] = None,
    ledger: Optional[List[Any]] = None,
) -> TreeReduction:
    """Runs ``shards`` shard tasks and combines their partials in a tree, on the running Ray
    cluster. ``submit_shard(i)`` ships shard ``i`` and starts its task, ``submit_combine(a, b)``
    starts the combination of two partials' references; both return the task's two references:
    its status (:data:`TaskStatus`, made by :func:`task_status`) and its partial. Shards are submitted as workers free up (at most ``IN_FLIGHT_PER_WORKER`` per
    worker in the store), any two partials ready are combined at once, and the first task that
    fails for good raises :func:`shard_error` (the others are cancelled). ``ledger`` receives
    every status and partial reference; ``progress``: a bar of shards done."""
    ray = ray_module()
    # Per pending task: its status reference -> (the shards it covers, its partial's reference).
    pending: Dict[Any, Tuple[Tuple[int, ...], Any]] = {}
    ready: List[Tuple[Tuple[int, ...], Any]] = []
    bar = _progress.Bar() if _progress.wanted(progress) else None
    if bar is not None:
        bar.start(shards, "shards done")
    next_shard, shards_running, partial_bytes = 0, 0, 0
    shard_s: List[float] = []
    combine_s: List[float] = []
    costs: List[Tuple[str, str]] = []
    try:
        while next_shard < shards or pending or len(ready) > 1:
            while next_shard < shards and shards_running < IN_FLIGHT_PER_WORKER * workers:
                status, partial = submit_shard(next_shard)
                pending[status] = ((next_shard,), partial)
                next_shard, shards_running = next_shard + 1, shards_running + 1
            while len(ready) >= 2:
                (a, pa), (b, pb) = ready.pop(), ready.pop()
                status, partial = submit_combine(pa, pb)
                pending[status] = (tuple(sorted(a + b)), partial)
            if not pending:
                break
            done, _ = ray.wait(list(pending), num_returns=1)
            for status in done:
                covered, partial = pending.pop(status)
                try:
                    count, size, seconds, worker, cost = ray.get(status)
                except ray.exceptions.RayError as e:
                    # The partial failed with the status; fetching it marks its error handled
                    # (Ray logs an error nobody fetched).
                    with contextlib.suppress(ray.exceptions.RayError):
                        ray.get(partial)
                    raise shard_error(covered, shards, describe, e) from None
                if ledger is not None:
                    ledger.extend([status, partial])
                partial_bytes += size
                ready.append((covered, partial))
                (shard_s if count else combine_s).append(seconds)
                if cost is not None:
                    costs.append((worker, cost))
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
                # Best effort: the run has failed already.
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
    return TreeReduction(final, partial_bytes, shard_s, combine_s, costs)
