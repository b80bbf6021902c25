"""Element-wise operations over a large ciphertext set on Ray (``batch_map``): the driver
streams shards (each a batch, or two for a product) into the object store as workers can take
them, each worker computes its shard alone (``pimhe_workloads::batch_ops``, through
``pimhe._pimhe.batch_apply_shard``) and the results come back in shard order. No worker holds
more than its shard; the parameters and the one evaluation key are put once."""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Union

from .._pimhe import CiphertextBatch, Context, GaloisKeys, RelinKey, batch_apply_shard
from ._cluster import IN_FLIGHT_PER_WORKER, ShardError, cluster_workers, ray_module

Shard = Union[CiphertextBatch, bytes, Tuple[Union[CiphertextBatch, bytes], Union[CiphertextBatch, bytes]]]


def _apply(params: bytes, key: bytes, op: str, element: Optional[int], threads: Optional[int], *inputs: bytes) -> Tuple[float, bytes]:
    """A worker: one shard's result, and the worker's seconds."""
    start = time.perf_counter()
    out = batch_apply_shard(params, key, op, list(inputs), element, threads)
    return time.perf_counter() - start, out


@dataclass
class BatchResult:
    """The results' bytes in shard order (``CiphertextBatch.from_bytes(ctx, data)`` loads one;
    empty when a ``sink`` took them), and what went through the object store."""

    results: List[bytes]
    shards: int
    workers: int
    #: Bytes put: ``params`` and ``key`` once, ``inputs`` (every shard's batches), ``outputs``.
    object_store: Dict[str, int]
    shard_s: List[float] = field(default_factory=list)


def _bytes(batch: Union[CiphertextBatch, bytes]) -> bytes:
    return batch if isinstance(batch, bytes) else batch.to_bytes()


def batch_map(
    ctx: Context,
    op: str,
    shards: Iterable[Shard],
    *,
    key: Union[RelinKey, GaloisKeys],
    element: Optional[int] = None,
    threads: Optional[int] = 1,
    retries: int = 3,
    sink: Optional[Callable[[int, bytes], None]] = None,
    ledger: Optional[List[Any]] = None,
) -> BatchResult:
    """``op`` over every shard of ``shards`` on the running Ray cluster: ``"multiply"`` (each
    shard a pair of batches ``(a, b)`` of one count: ``a * b`` relinearized with the relinearization
    key ``key``) or ``"rotate"`` (each shard a batch: the automorphism of Galois element
    ``element`` with the Galois keys ``key``). ``shards`` is consumed lazily: a shard is
    serialized and put only when a worker can take it (at most two per worker in the store).
    ``sink(index, bytes)`` receives each result as it arrives (then none is kept); otherwise
    they are returned in shard order. Workers run on the CPU with ``threads`` each.

    Raises :class:`ShardError` naming the shard that failed for good.
    """
    ray = ray_module()
    workers = cluster_workers()
    if op not in ("multiply", "rotate"):
        raise ValueError(f"op {op!r}: allowed multiply, rotate")
    params, key_bytes = ctx.to_bytes(), key.to_bytes()
    shipped = {"params": len(params), "key": len(key_bytes), "inputs": 0, "outputs": 0}

    def put(value: Any) -> Any:
        ref = ray.put(value)
        if ledger is not None:
            ledger.append(ref)
        return ref

    task = ray.remote(num_returns=2, max_retries=retries, num_cpus=1)(_apply)
    params_ref, key_ref = put(params), put(key_bytes)
    source = enumerate(shards)
    pending: Dict[Any, Tuple[int, Any]] = {}
    results: Dict[int, bytes] = {}
    shard_s: List[float] = []
    exhausted, count = False, 0
    try:
        while not exhausted or pending:
            while not exhausted and len(pending) < IN_FLIGHT_PER_WORKER * workers:
                item = next(source, None)
                if item is None:
                    exhausted = True
                    break
                index, shard = item
                inputs = [_bytes(b) for b in shard] if isinstance(shard, tuple) else [_bytes(shard)]
                shipped["inputs"] += sum(map(len, inputs))
                status, out = task.options(name=f"pimhe-batch-shard-{index}").remote(
                    params_ref, key_ref, op, element, threads, *[put(b) for b in inputs]
                )
                pending[status] = (index, out)
                count += 1
            if not pending:
                break
            done, _ = ray.wait(list(pending), num_returns=1)
            for status in done:
                index, out = pending.pop(status)
                try:
                    seconds = ray.get(status)
                    data = ray.get(out)
                except ray.exceptions.RayError as e:
                    cause = getattr(e, "cause", None)
                    message = str(cause) if cause is not None else str(e).strip().splitlines()[-1]
                    raise ShardError((index,), f"shard {index}", message, usage=isinstance(cause, ValueError)) from None
                if ledger is not None:
                    ledger.extend([status, out])
                shipped["outputs"] += len(data)
                shard_s.append(seconds)
                if sink is not None:
                    sink(index, data)
                else:
                    results[index] = data
    finally:
        for status, (_, out) in pending.items():
            for ref in (status, out):
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)
    return BatchResult(
        results=[results[i] for i in range(count)] if sink is None else [],
        shards=count,
        workers=workers,
        object_store=shipped,
        shard_s=shard_s,
    )
