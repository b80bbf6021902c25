"""Ray, the cluster and the shards: what every distributed workload shares."""

from __future__ import annotations

import contextlib
import math
from typing import Any, Iterator, List, Optional, Sequence, Tuple

from .._pimhe import ParameterError, PimheError


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
