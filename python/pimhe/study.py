"""The client/server study, one function per party, as ``pimhe keygen / encrypt / eval /
decrypt`` run them (over ``pimhe_workloads::stats::study``, which owns the files, their
permissions and every check). Each returns the library's outcome as a dict, the JSON the
CLI prints with ``--json``::

    pimhe.study.keygen("mean", ["age"], max_value=1500, max_users=1000, decimals=1,
                       public_dir="pub", secret_dir="secret")
    pimhe.study.encrypt("pub", "rows.csv", "submissions")     # each user, public keys only
    pimhe.study.evaluate("pub", "submissions", "agg.pimhe")   # the server, no secret
    pimhe.study.decrypt("pub", "secret", "agg.pimhe")["estimates"]

The server's step over a Ray cluster is ``pimhe.distributed.evaluate``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Optional, Sequence

from ._pimhe import study_decrypt, study_encrypt, study_eval, study_keygen

__all__ = ["keygen", "encrypt", "evaluate", "decrypt"]


def keygen(
    statistic: str,
    columns: Sequence[str],
    *,
    max_value: int,
    max_users: int,
    public_dir: "str | os.PathLike[str]",
    secret_dir: "str | os.PathLike[str]",
    decimals: int = 0,
    min_users: int = 2,
    scheme: str = "bgv",
    n: Optional[int] = None,
    seed: Optional[int] = None,
    force: bool = False,
) -> Dict[str, Any]:
    """Declares a study of ``statistic`` ("mean", "variance", "linreg") over ``columns`` and
    writes its public directory (study.json, public keys) and secret directory (the secret
    keys, owner only). ``max_value`` is in fixed point (``value * 10**decimals``), as
    study.json states it. ``n``: the ring degree; ``None`` lets keygen pick the smallest the bounds
    allow (the outcome's ``sizing`` says what and why). ``seed`` is for tests only (anyone with it can
    make the secret key)."""
    return json.loads(
        study_keygen(
            statistic,
            list(columns),
            decimals=decimals,
            max_value=max_value,
            max_users=max_users,
            min_users=min_users,
            scheme=scheme,
            n=n,
            public_dir=os.fspath(public_dir),
            secret_dir=os.fspath(secret_dir),
            seed=seed,
            force=force,
        )
    )


def encrypt(
    public_dir: "str | os.PathLike[str]",
    csv: "str | os.PathLike[str]",
    out: "str | os.PathLike[str]",
    seed: Optional[int] = None,
) -> Dict[str, Any]:
    """One submission file per row of ``csv`` (a header row naming the study's columns) into
    the directory ``out``, with the public keys only."""
    return json.loads(study_encrypt(os.fspath(public_dir), os.fspath(csv), os.fspath(out), seed))


def evaluate(
    public_dir: "str | os.PathLike[str]",
    submissions: "str | os.PathLike[str]",
    out: "str | os.PathLike[str]",
    force: bool = False,
) -> Dict[str, Any]:
    """The one-process server on the CPU: every ``*.pimhe`` of ``submissions`` added up into
    the aggregates file ``out``."""
    return json.loads(study_eval(os.fspath(public_dir), os.fspath(submissions), os.fspath(out), force))


def decrypt(
    public_dir: "str | os.PathLike[str]",
    secret_dir: "str | os.PathLike[str]",
    aggregates: "str | os.PathLike[str]",
) -> Dict[str, Any]:
    """The analyst's statistic from the aggregates file (``users``, ``estimates``, ...)."""
    return json.loads(study_decrypt(os.fspath(public_dir), os.fspath(secret_dir), os.fspath(aggregates)))
