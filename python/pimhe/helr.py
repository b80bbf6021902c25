"""HELR: logistic-regression training on encrypted data (``pimhe helr``).

The client (keys, standardization, encryption, decryption) runs on this machine's CPU, the
server's iterations and bootstrappings on ``backend``; the report puts the encrypted-trained
model beside the plaintext one trained with the same sigmoid polynomial and iterations::

    import pimhe
    r = pimhe.helr.train("data/helr/digits_3_8.csv", "label")
    r["encrypted"]["accuracy"], r["plaintext"]["accuracy"], r["bootstraps"]

``n=65536`` trains on the 128-bit bootstrapping preset (``r["insecure"]`` is False; a
bootstrapping there takes about half a minute and 12 GB); ``n`` from 1024 to 16384 on INSECURE
presets for quick runs (``r["insecure"]`` is True). A batch larger than one ciphertext's N/2
slots is cut over several ciphertexts (``r["packing"]["ciphertexts"]``).
"""

from __future__ import annotations

import json
from os import PathLike
from typing import Any, Dict, Optional, Union

from . import _progress
from ._pimhe import helr_json as _helr_json

__all__ = ["train"]


def train(
    input: Union[str, "PathLike[str]"],
    label: str,
    *,
    iterations: int = 32,
    batch: Optional[int] = None,
    test_fraction: float = 0.25,
    learning_rate: float = 0.5,
    n: int = 2048,
    per_bootstrap: int = 1,
    seed: int = 1,
    backend: str = "cpu",
    threads: Optional[int] = None,
    dpus: Optional[int] = None,
    system: Optional[str] = None,
    buffer_entries: Optional[int] = None,
    progress: Optional[bool] = None,
) -> Dict[str, Any]:
    """Trains on the CSV ``input`` (numeric features, the 0/1 column ``label``) and returns
    ``pimhe helr --json``'s report as a dict: ``per_iteration`` (``seconds``,
    ``bootstrapped``, ``bootstrap_seconds``, ``loss``: the client's, on decrypted weights),
    ``bootstraps``, ``encrypted`` and ``plaintext`` (held-out ``accuracy`` and ``loss``),
    ``accuracy_gap_points``, ``max_weight_difference``, ``weights``, the parameters (``params``,
    ``insecure``) and, on ``"nearbank"`` / ``"upmem-emu"``, the modeled cost (``nearbank`` or
    ``upmem``, and ``modeled_iteration_s``: the modeled total over the iterations). The keyword
    arguments are the command's flags (``per_bootstrap`` is ``--per-bootstrap``). Bad input
    raises ``ParameterError`` with what is wrong. ``progress`` draws a bar of the iterations
    (``None``: when stderr is a terminal).
    """
    bar = _progress.Bar() if _progress.wanted(progress) else None
    text = _helr_json(
        input,
        label,
        iterations=iterations,
        batch=batch,
        test_fraction=test_fraction,
        learning_rate=learning_rate,
        n=n,
        per_bootstrap=per_bootstrap,
        seed=seed,
        backend=backend,
        threads=threads,
        dpus=dpus,
        system=system,
        buffer_entries=buffer_entries,
        progress=bar,
    )
    report: Dict[str, Any] = json.loads(text)
    return report
