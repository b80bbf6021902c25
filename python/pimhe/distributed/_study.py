"""The study's server step over Ray: shards of submissions added up by workers into partial
aggregates, combined in a tree, written as the aggregates ``pimhe decrypt`` reads.

Every check is the library's (``pimhe_workloads::stats::study``, through ``pimhe._pimhe``):
the driver reads the public inputs and lists the submissions as ``pimhe eval`` does; the
submission files are read and checked by the workers where they share the driver's file
system (a one-machine cluster, by default) or by the driver, which ships their bytes (a
cluster of several machines, by default); a worker adds up its shard as the
one-process server does (a submission twice in a shard refused by both names), combining
refuses a submission in two shards and more users than declared, and the aggregates are
written only if they hold exactly the submissions that were sharded.
"""

from __future__ import annotations

import json
import os
import socket
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from .._pimhe import (
    ParameterError,
    study_combine,
    study_evaluate_shard,
    study_read_submissions,
    study_server_inputs,
    study_write_aggregates,
    workers_cost,
)
from ._cluster import (
    TaskStatus,
    cluster_nodes,
    cluster_workers,
    default_shards,
    ray_module,
    shard_bounds,
    task_status,
    tree_reduce,
)

# Submissions per shard by default: a two-column mean's submission is about 0.6 MB at N = 8192,
# so a shard is at most about 150 MB of the object store, and at most two per worker are in
# flight.
SHARD_SUBMISSIONS = 256

#: Where the submission files are read: ``"workers"`` (each its shard's, from a file system it
#: shares with the driver), ``"driver"`` (which ships their bytes), or ``"auto"``: the workers
#: on a one-machine cluster, the driver otherwise.
READ_ON = ("auto", "workers", "driver")


def _read_shard(study_json: str, names: List[str]) -> List[bytes]:
    """A worker reads and checks its shard's files as the driver would."""
    missing = next((name for name in names if not os.path.exists(name)), None)
    if missing is not None:
        raise ParameterError(
            f"submission {missing} is not on the file system of the worker on {socket.gethostname()}: "
            "with no file system shared with the driver, let the driver read the files (read_on=\"driver\", "
            "--read-on driver)"
        )
    return study_read_submissions(study_json, names)


def _evaluate_shard(
    study_json: str,
    public_keys: bytes,
    payload: Tuple[List[str], Optional[List[bytes]]],
    backend: str,
    threads: Optional[int],
) -> Tuple[TaskStatus, bytes]:
    """A worker: its status (with its submissions) and the partial aggregate of one shard.
    ``payload`` is the shard's file names and their bytes, or ``None`` for the bytes where the
    worker reads the files itself."""
    start = time.perf_counter()
    names, blobs = payload
    if blobs is None:
        blobs = _read_shard(study_json, names)
    return task_status(
        len(names), study_evaluate_shard(study_json, public_keys, list(zip(names, blobs)), backend, threads), start
    )


def _combine(
    study_json: str, public_keys: bytes, backend: str, threads: Optional[int], *partials: bytes
) -> Tuple[TaskStatus, bytes]:
    """A worker: one partial of several (a node of the reduction tree), as ``_evaluate_shard``."""
    start = time.perf_counter()
    return task_status(0, study_combine(study_json, public_keys, list(partials), backend, threads), start)


@dataclass
class EvalResult:
    """What the distributed server step did; ``to_json()`` is ``pimhe eval --json``'s object
    with a ``distributed`` entry."""

    users: int
    out: str
    load_s: float
    server_s: float
    backend: str
    workers: int
    shards: int
    retries: int
    #: Who read the submission files: ``"workers"`` or ``"driver"``.
    read_on: str
    #: Bytes put into the object store: ``study`` and ``public_keys`` once, ``submissions``
    #: (every shard's payload), ``partials`` (every partial a task returned).
    object_store: Dict[str, int]
    #: Workers' seconds per task (shards: load and add up; combines: a tree node), for
    #: projections to more machines (docs/DISTRIBUTED.md).
    shard_s: List[float] = field(default_factory=list)
    combine_s: List[float] = field(default_factory=list)
    warnings: List[str] = field(default_factory=list)
    #: The workers' modeled costs added up (``workers_cost``): ``{"upmem": ...}`` on upmem-emu,
    #: ``{"nearbank": ...}`` on nearbank (the one-process entry's fields and a ``distributed``
    #: entry saying how), empty on the CPU.
    cost: Dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "users": self.users,
            "out": self.out,
            "load_s": self.load_s,
            "server_s": self.server_s,
        }
        if self.warnings:
            out["warnings"] = self.warnings
        out.update(backend=self.backend, upmem=self.cost.get("upmem"))
        if "nearbank" in self.cost:
            out["nearbank"] = self.cost["nearbank"]
        out["distributed"] = {
            "workers": self.workers,
            "shards": self.shards,
            "retries": self.retries,
            "read_on": self.read_on,
            "object_store_bytes": self.object_store,
            "shard_s": self.shard_s,
            "combine_s": self.combine_s,
        }
        return out

    def render(self) -> str:
        """The text ``pimhe eval`` prints, and a line on the distribution."""
        s = self.object_store
        text = (
            f"pimhe eval: {self.users} submissions added up on {self.backend} into {self.out} "
            f"(load {_seconds(self.load_s)}, compute {_seconds(self.server_s)}; no secret key read)\n"
            f"  on Ray: {self.shards} shards over {self.workers} workers, submission files read by the "
            f"{self.read_on}; object store: study and public keys "
            f"{s['study'] + s['public_keys']} bytes once, submissions {s['submissions']} bytes, partials "
            f"{s['partials']} bytes"
        )
        return text + "".join(f"\n  {w}" for w in self.warnings)


def _seconds(s: float) -> str:
    """Seconds as the CLI prints them (``pimhe_bench::format::format_seconds``)."""
    if s >= 1.0:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    return f"{s * 1e6:.3f} us"


def evaluate(
    public_dir: "str | os.PathLike[str]",
    submissions: "str | os.PathLike[str]",
    out: "str | os.PathLike[str]",
    *,
    shards: Optional[int] = None,
    backend: str = "cpu",
    threads: Optional[int] = 1,
    retries: int = 3,
    read_on: str = "auto",
    force: bool = False,
    progress: Optional[bool] = None,
    ledger: Optional[List[Any]] = None,
) -> EvalResult:
    """Adds up every ``*.pimhe`` submission of ``submissions`` over the running Ray cluster
    (see :func:`connect`) with the public keys of ``public_dir``, and writes the aggregates to
    ``out`` (refused if it exists, unless ``force``).

    ``shards``: how many (by default enough of at most 256 submissions for four per worker);
    each file is in exactly one. ``backend``: each worker's ("cpu" with ``threads``,
    "upmem-emu", "nearbank"). ``retries``: how often Ray reruns a task whose worker died (an
    error of the data fails at once). ``read_on``: who reads the submission files, one of
    :data:`READ_ON` (the workers need the driver's file system; ``"auto"``: the workers on a
    one-machine cluster, the driver, shipping the bytes, on several). ``progress``: a bar of shards done (by default when
    stderr is a terminal). ``ledger``: a list that receives every object reference put into
    or returned through the object store, for audits and tests (it keeps them alive).

    Raises :class:`ShardError` naming the shard that failed for good; nothing is written then.
    """
    ray = ray_module()
    workers = cluster_workers()
    if retries < 0:
        raise ValueError(f"retries={retries}: allowed 0 or more")
    if read_on not in READ_ON:
        raise ValueError(f"read_on={read_on!r}: allowed {', '.join(map(repr, READ_ON))}")
    if read_on == "auto":
        read_on = "workers" if cluster_nodes() == 1 else "driver"
    start = time.monotonic()
    study_json, public_keys, files, warnings = study_server_inputs(
        os.fspath(public_dir), os.fspath(submissions), os.fspath(out), force
    )
    load_s = time.monotonic() - start
    start = time.monotonic()
    bounds = shard_bounds(len(files), shards if shards is not None else default_shards(len(files), workers, SHARD_SUBMISSIONS))
    shard_task = ray.remote(num_returns=2, max_retries=retries, num_cpus=1)(_evaluate_shard)
    combine_task = ray.remote(num_returns=2, max_retries=retries, num_cpus=1)(_combine)
    shipped = {"study": len(study_json.encode()), "public_keys": len(public_keys), "submissions": 0, "partials": 0}

    def put(value: Any) -> Any:
        ref = ray.put(value)
        if ledger is not None:
            ledger.append(ref)
        return ref

    study_ref, keys_ref = put(study_json), put(public_keys)

    def submit_shard(i: int) -> Tuple[Any, Any]:
        lo, hi = bounds[i]
        # Absolute: a worker's working directory is not the driver's.
        names = [os.path.abspath(p) for p in files[lo:hi]]
        blobs: Optional[List[bytes]] = None
        if read_on == "driver":
            blobs = study_read_submissions(study_json, files[lo:hi])
            shipped["submissions"] += sum(map(len, blobs))
        else:
            shipped["submissions"] += sum(len(name.encode()) for name in names)
        return shard_task.options(name=f"pimhe-shard-{i}").remote(study_ref, keys_ref, put((names, blobs)), backend, threads)

    def submit_combine(a: Any, b: Any) -> Tuple[Any, Any]:
        return combine_task.options(name="pimhe-combine").remote(study_ref, keys_ref, backend, threads, a, b)

    def describe(i: int) -> str:
        lo, hi = bounds[i]
        return f"submissions {lo}..{hi - 1}: {os.fspath(files[lo])} .. {os.fspath(files[hi - 1])}"

    tree = tree_reduce(
        len(bounds), submit_shard, submit_combine, describe, workers=workers, progress=progress, ledger=ledger
    )
    shipped["partials"] = tree.partial_bytes
    users = study_write_aggregates(study_json, public_keys, tree.final, len(files), os.fspath(out), force)
    summed = workers_cost(tree.costs)
    return EvalResult(
        users=users,
        out=os.fspath(out),
        load_s=load_s,
        server_s=time.monotonic() - start,
        backend=backend,
        workers=workers,
        shards=len(bounds),
        retries=retries,
        read_on=read_on,
        object_store=shipped,
        shard_s=tree.shard_s,
        combine_s=tree.combine_s,
        warnings=list(warnings),
        cost={} if summed is None else json.loads(summed),
    )


