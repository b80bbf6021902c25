"""Encrypted statistics over users (the workload of seed 002), over ``pimhe_workloads::stats``.

Every user's row is encrypted on its own (one ciphertext per user); the server adds the
users' ciphertexts (and products) up; the client decrypts the aggregates and finishes exactly.
Values are fixed-point decimals (``decimals`` places, by default the most found), and the
plaintext modulus is chosen by the library so that every aggregate is exact (several moduli
and CRT when needed)::

    result = pimhe.stats.mean(np.array([[1.5, 2.0], [2.5, 4.0]]), columns=["a", "b"])
    result.values()           # {'a': 2.0, 'b': 3.0}
    result.estimates[0]       # Estimate(name='a', encrypted=2.0, plaintext=2.0, abs_error=0.0)
"""

from __future__ import annotations

import io
import os
from typing import Optional, Sequence, Union

import numpy as np

from . import _progress
from ._pimhe import Backend, ParameterError, run_stats
from ._reports import StatsResult

Data = Union[np.ndarray, Sequence[Sequence[float]], str, "os.PathLike[str]"]
BackendArg = Union[Backend, str, None]

__all__ = ["mean", "variance", "linear_regression"]


def _refuse_repeated(columns: Sequence[str]) -> None:
    """A name given twice would read the first column of that name twice: a wrong statistic,
    silently."""
    seen = set()
    for name in columns:
        if name in seen:
            raise ParameterError(f"columns: {name!r} is named twice; name each column once")
        seen.add(name)


def _csv_bytes(data: Data, columns: Optional[Sequence[str]]) -> "tuple[bytes, list[str]]":
    """A CSV file's bytes (a path), or the CSV text of an array with a header row."""
    if columns is not None:
        _refuse_repeated(columns)
    if isinstance(data, (str, os.PathLike)):
        if not columns:
            raise ParameterError("columns= is required with a CSV file (the header names to use)")
        with open(data, "rb") as f:
            return f.read(), list(columns)
    array = np.asarray(data)
    if array.ndim == 1:
        array = array.reshape(-1, 1)
    if array.ndim != 2:
        raise ParameterError(f"data must be a 2-D array (users x columns); got {array.ndim} dimensions")
    if array.dtype.kind not in "iuf":
        raise ParameterError(f"data must be numeric; got dtype {array.dtype}")
    names = list(columns) if columns is not None else [f"x{i}" for i in range(array.shape[1])]
    if len(names) != array.shape[1]:
        raise ParameterError(f"{len(names)} column names for {array.shape[1]} columns")
    out = io.StringIO()
    out.write(",".join(names) + "\n")
    if array.dtype.kind == "f":
        # Shortest round-trip decimal, positional (the library reads plain decimals exactly).
        cell = lambda v: np.format_float_positional(v, trim="-")  # noqa: E731
    else:
        cell = str
    for row in array:
        out.write(",".join(cell(v) for v in row) + "\n")
    return out.getvalue().encode(), names


def _run(
    statistic: str,
    data: Data,
    columns: Optional[Sequence[str]],
    scheme: str,
    backend: BackendArg,
    n: int,
    decimals: Optional[int],
    seed: Optional[int],
    progress: Optional[bool],
) -> StatsResult:
    csv, names = _csv_bytes(data, columns)
    bar = _progress.Bar() if _progress.wanted(progress) else None
    return run_stats(statistic, csv, names, decimals=decimals, scheme=scheme, backend=backend, n=n, seed=seed, progress=bar)


def mean(
    data: Data,
    columns: Optional[Sequence[str]] = None,
    *,
    scheme: str = "bgv",
    backend: BackendArg = None,
    n: int = 8192,
    decimals: Optional[int] = None,
    seed: Optional[int] = None,
    progress: Optional[bool] = None,
) -> StatsResult:
    """The mean of every column of ``data`` (an array, users x columns, or a CSV path with
    ``columns`` naming header columns, each once), computed under encryption with ``scheme`` ("bgv" or
    "bfv") at ring degree ``n``, the server on ``backend`` ("cpu", "upmem-emu", "nearbank" or a Backend).
    ``seed`` makes keys and encryptions reproducible (tests only). ``progress`` draws a bar of
    the users encrypted (tqdm when installed); by default only when stderr is a terminal."""
    return _run("mean", data, columns, scheme, backend, n, decimals, seed, progress)


def variance(
    data: Data,
    columns: Optional[Sequence[str]] = None,
    *,
    scheme: str = "bgv",
    backend: BackendArg = None,
    n: int = 8192,
    decimals: Optional[int] = None,
    seed: Optional[int] = None,
    progress: Optional[bool] = None,
) -> StatsResult:
    """The population variance (E[x^2] - E[x]^2) of every column; arguments as ``mean``."""
    return _run("variance", data, columns, scheme, backend, n, decimals, seed, progress)


def linear_regression(
    data: Data,
    columns: Optional[Sequence[str]] = None,
    *,
    scheme: str = "bgv",
    backend: BackendArg = None,
    n: int = 8192,
    decimals: Optional[int] = None,
    seed: Optional[int] = None,
    progress: Optional[bool] = None,
) -> StatsResult:
    """Least squares of the last column on the others, with an intercept (at most 8
    features); arguments as ``mean``. The estimates are the intercept and the coefficients."""
    return _run("linreg", data, columns, scheme, backend, n, decimals, seed, progress)
