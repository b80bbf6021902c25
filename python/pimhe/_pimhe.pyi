"""Type stubs of the Rust extension ``pimhe._pimhe`` (the classes are re-exported by ``pimhe``)."""

from os import PathLike
from pathlib import Path
from typing import Any, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

from ._reports import NearbankReport, StatsResult, UpmemReport

__all__ = [
    "PimheError",
    "ParameterError",
    "PlaintextError",
    "MismatchError",
    "LevelError",
    "NoiseBudgetError",
    "MissingKeyError",
    "BackendError",
    "CapacityError",
    "FormatError",
    "Context",
    "Backend",
    "SecretKey",
    "PublicKey",
    "RelinKey",
    "GaloisKeys",
    "KeySet",
    "CiphertextBatch",
    "Encryptor",
    "Decryptor",
    "Evaluator",
    "Chebyshev",
    "BootstrapPlan",
    "EncapsulationKeys",
    "insecure_bootstrap_context",
    "secure_bootstrap_context",
    "presets",
    "run_stats",
    "StatsDriver",
    "stats_aggregate_shard",
    "stats_combine",
    "batch_apply_shard",
    "study_keygen",
    "study_encrypt",
    "study_eval",
    "study_decrypt",
    "study_server_inputs",
    "study_read_submissions",
    "study_evaluate_shard",
    "study_combine",
    "workers_cost",
    "study_write_aggregates",
    "reproduce_json",
    "bench_kernel",
    "advise_json",
    "bandwidth_json",
    "bootstrap_json",
    "scheme_json",
    "helr_json",
    "__version__",
]

__version__: str

# Type aliases for these stubs only (private: the compiled module has no such names).
_ArrayLike = npt.ArrayLike
_BackendArg = Union["Backend", Literal["cpu", "upmem-emu", "nearbank"], None]
_PathArg = Union[str, "PathLike[str]"]

class PimheError(Exception):
    """Base class of every error pimhe raises; the message is the Rust library's."""

class ParameterError(PimheError, ValueError):
    """Parameters or arguments that cannot work (insecure, unsupported, unknown names)."""

class PlaintextError(PimheError, ValueError):
    """Values the plaintext space cannot hold: too many, out of range, wrong dtype or shape."""

class MismatchError(PimheError, ValueError):
    """Objects of different contexts, schemes, backends, levels or batch sizes combined."""

class LevelError(PimheError):
    """No level left: modulus switching or rescaling at the last level."""

class NoiseBudgetError(PimheError):
    """The noise budget is exhausted: the decryption would be wrong, so it is refused."""

class MissingKeyError(PimheError):
    """Relinearization or an automorphism without its evaluation key."""

class BackendError(PimheError):
    """The backend failed (setup, device, shapes)."""

class CapacityError(PimheError):
    """A workload too large for exact results with these parameters, or for memory."""

class FormatError(PimheError, ValueError):
    """Serialized data that is malformed (truncated, damaged, another version) or made for other parameters."""

def advise_json(
    workload: str,
    n: int,
    batch: Optional[int] = None,
    *,
    users: Optional[int] = None,
    dpus: List[int] = ...,
    what_ifs: List[str] = ...,
    max_batch: Optional[int] = None,
    repeat: int = 3,
    threads: Optional[int] = None,
    seed: int = 1,
    mode: Optional[str] = None,
) -> str:
    """``pimhe advise``'s report as JSON; ``pimhe.advise`` parses it."""

def bandwidth_json(*, mib: int = 256, repeat: int = 5, threads: Optional[int] = None) -> str:
    """``pimhe bench bandwidth``'s report as JSON; ``pimhe.bandwidth`` parses it."""

def bootstrap_json(
    n: int,
    *,
    slots: Optional[int] = None,
    backend: str = "cpu",
    threads: Optional[int] = None,
    system: Optional[str] = None,
    buffer_entries: Optional[int] = None,
    repeat: int = 1,
    seed: int = 1,
    real: bool = False,
) -> str:
    """``pimhe bench bootstrap``'s report as JSON; ``pimhe.bench_bootstrap`` parses it."""

def scheme_json(
    scheme: str,
    *,
    n: Optional[int] = None,
    case: Optional[str] = None,
    batch: Optional[int] = None,
    backend: str = "cpu",
    threads: Optional[int] = None,
    system: Optional[str] = None,
    buffer_entries: Optional[int] = None,
    repeat: int = 5,
    seed: int = 1,
    dnum: Optional[int] = None,
    scale_bits: Optional[int] = None,
) -> str:
    """``pimhe bench scheme``'s report as JSON; ``pimhe.bench_scheme`` parses it."""

def insecure_bootstrap_context(n: int = 1024, *, levels_after: Optional[int] = None) -> "Context":
    """A CKKS context of the INSECURE bootstrapping presets (``pimhe.ckks.bootstrap.insecure_context``):
    N = 1024 or 2048 with 2 rescalings left after bootstrapping, or with ``levels_after`` any N
    from 2^10 to 2^14. Tests and experiments only: no security at all."""

def secure_bootstrap_context(*, levels_after: Optional[int] = None) -> "Context":
    """The 128-bit bootstrapping preset (``pimhe.ckks.bootstrap.secure_context``): N = 2^16, a
    dense secret with sparse-secret encapsulation, ``levels_after`` (1 to 12) levels left."""
def helr_json(
    input: _PathArg,
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
    progress: Optional[Any] = None,
) -> str:
    """``pimhe helr``'s report as JSON; ``pimhe.helr.train`` parses it."""

def reproduce_json(name: str, options: str, *, progress: Optional[Any] = None) -> str:
    """The reproduction of the paper ``name`` with ``options`` (a JSON object of its flags by
    Python's names) as its whole report's JSON; ``pimhe.reproduce`` parses it."""

def bench_kernel(
    op: str,
    n: int,
    batch: int,
    *,
    primes: Optional[int] = None,
    backend: str = "cpu",
    dpus: Optional[int] = None,
    threads: Optional[int] = None,
    repeat: Optional[int] = None,
) -> str:
    """One ``pimhe bench OP`` run as JSON (measured on cpu, modeled on upmem-emu)."""

def presets(scheme: Literal["bgv", "bfv", "ckks"] = "bgv") -> List[Dict[str, Any]]:
    """The library's 128-bit presets of a scheme, smallest first: the rows ``pimhe params
    --json`` prints (``n``, ``data_primes``, ``special_primes``, ``dnum``, ``log_q``,
    ``max_log_q_128``, ``security_bits``; BGV/BFV ``plain_modulus``, ``levels``,
    ``relinearization``; CKKS ``slots``, ``depth``, ``scale_bits``, ``primes_per_level``), each
    with its ``scheme``."""

def run_stats(
    statistic: str,
    csv: bytes,
    columns: Sequence[str],
    *,
    decimals: Optional[int] = None,
    scheme: str = "bgv",
    backend: _BackendArg = None,
    n: int = 8192,
    seed: Optional[int] = None,
    progress: Optional[Any] = None,
) -> StatsResult:
    """The statistics workload over a CSV's bytes; use ``pimhe.stats`` instead. ``progress``:
    an object with ``start(total, label)``, ``advance(n)`` and ``finish()``."""

# The client/server study's parties (use ``pimhe.study``) and the server step in pieces (used
# by ``pimhe.distributed``). The outcomes are the library's JSON.
def study_keygen(
    statistic: str,
    columns: Sequence[str],
    *,
    decimals: int,
    max_value: int,
    max_users: int,
    min_users: int,
    scheme: str,
    n: Optional[int] = None,
    public_dir: _PathArg,
    secret_dir: _PathArg,
    seed: Optional[int] = None,
    force: bool = False,
) -> str:
    """Declares a study and writes its public and secret directories (``pimhe keygen``)."""

def study_encrypt(public_dir: _PathArg, input: _PathArg, out: _PathArg, seed: Optional[int] = None) -> str:
    """One submission file per CSV row (``pimhe encrypt``)."""

def study_eval(public_dir: _PathArg, submissions: _PathArg, out: _PathArg, force: bool = False) -> str:
    """The one-process server on the CPU (``pimhe eval``)."""

def study_decrypt(public_dir: _PathArg, secret_dir: _PathArg, input: _PathArg) -> str:
    """The analyst's statistic from an aggregates file (``pimhe decrypt``)."""

def study_server_inputs(
    public_dir: _PathArg, submissions: _PathArg, out: _PathArg, force: bool = False
) -> Tuple[str, bytes, List[Path], List[str]]:
    """``(study_json, public_keys, submission files, warnings)``; refused if ``out`` exists and not ``force``."""

def study_read_submissions(study_json: str, paths: Sequence[_PathArg]) -> List[bytes]:
    """Each submission file's bytes, in order, each within a submission's size bound."""

def study_evaluate_shard(
    study_json: str,
    public_keys: bytes,
    submissions: Sequence[Tuple[str, bytes]],
    backend: str = "cpu",
    threads: Optional[int] = None,
) -> Tuple[bytes, Optional[str]]:
    """The partial aggregate of ``(name, bytes)`` submissions, and the backend's modeled cost of
    it as JSON (``{"backend": ..., "report": ...}``; ``None`` on the CPU)."""

def study_combine(
    study_json: str, public_keys: bytes, partials: Sequence[bytes], backend: str = "cpu", threads: Optional[int] = None
) -> Tuple[bytes, Optional[str]]:
    """One partial of several: refused if two hold the same submission or they pass the study's most users;
    and its modeled cost, as ``study_evaluate_shard``'s."""

def study_write_aggregates(
    study_json: str, public_keys: bytes, partial: bytes, expected: int, out: _PathArg, force: bool = False
) -> int:
    """Writes the final partial's aggregates to ``out`` if it holds ``expected`` submissions; the user count."""

def stats_aggregate_shard(
    public: bytes, shard: bytes, backend: str = "cpu", threads: Optional[int] = None
) -> Tuple[bytes, Optional[str]]:
    """The partial aggregate of a shard of users (``StatsDriver.encrypt_shard``), and the backend's
    modeled cost of it as JSON (``{"backend": ..., "report": ...}``; ``None`` on the CPU)."""

def stats_combine(
    public: bytes, partials: Sequence[bytes], backend: str = "cpu", threads: Optional[int] = None
) -> Tuple[bytes, Optional[str]]:
    """One partial of several: refused if two hold the same user or come from another run; and
    its modeled cost, as ``stats_aggregate_shard``'s."""

def workers_cost(costs: Sequence[Tuple[str, str]]) -> Optional[str]:
    """The modeled costs ``(worker, JSON)`` of a distributed run's tasks added up: JSON of
    ``{"upmem": ...}`` or ``{"nearbank": ...}``, each the one-process entry's fields and a
    ``distributed`` entry (the basis, per-worker totals and their maximum); ``None`` without any."""

def batch_apply_shard(
    params: bytes,
    key: bytes,
    op: Literal["multiply", "rotate"],
    inputs: Sequence[bytes],
    element: Optional[int] = None,
    threads: Optional[int] = None,
) -> bytes:
    """One shard of an element-wise operation: ``multiply`` (two batches, relinearized with the
    relinearization key) or ``rotate`` (the automorphism ``element`` with the Galois keys)."""

@final
class StatsDriver:
    """The client of a distributed ``pimhe stats``: the rows, the plan and the keys (the secret
    ones never leave it)."""

    def __new__(
        cls,
        statistic: str,
        columns: Sequence[str],
        *,
        input: Optional[_PathArg] = None,
        users: Optional[int] = None,
        synthetic: Optional[int] = None,
        decimals: Optional[int] = None,
        scheme: str = "bgv",
        n: int = 8192,
        seed: Optional[int] = None,
        threads: Optional[int] = None,
    ) -> "StatsDriver": ...
    @property
    def users(self) -> int: ...
    @property
    def plain_moduli(self) -> List[int]: ...
    def public_bytes(self) -> bytes:
        """The run's header and relinearization keys: what every worker receives once."""
    def contains_secret(self, blob: bytes) -> bool:
        """Whether ``blob`` holds a window of the secret keys' bytes (yes or no, never the key)."""
    def encrypt_shard(self, first: int, end: int) -> bytes:
        """Users ``first..end`` encrypted under every plaintext modulus."""
    def finish(self, partial: bytes, server_s: float, backend: str) -> Tuple[str, str]:
        """``(json, text)`` of ``pimhe stats`` from the last partial (refused unless it holds every user)."""

@final
class Context:
    """A scheme's parameters with everything precomputed from them."""

    def to_bytes(self) -> bytes:
        """The parameters in pimhe's binary format (docs/SERIALIZATION.md); the header names the scheme."""
    @classmethod
    def from_bytes(cls, data: bytes) -> "Context":
        """The context of parameters written by ``to_bytes``, of whichever scheme. Raises FormatError."""
    def save(self, path: _PathArg) -> None:
        """Writes ``to_bytes()`` to a file (OSError when it cannot)."""
    @classmethod
    def load(cls, path: _PathArg) -> "Context":
        """The context of a file written by ``save``."""
    def __reduce__(self) -> Tuple[Any, Tuple[bytes]]:
        """Contexts pickle as their parameters' encoding."""
    def secret_key_from_bytes(self, data: bytes) -> "SecretKey": ...
    def public_key_from_bytes(self, data: bytes) -> "PublicKey":
        """Full or compressed encodings."""
    def relin_key_from_bytes(self, data: bytes) -> "RelinKey": ...
    def galois_keys_from_bytes(self, data: bytes) -> "GaloisKeys": ...
    def ciphertext_from_bytes(self, data: bytes, backend: _BackendArg = None) -> "CiphertextBatch":
        """A batch written by ``CiphertextBatch.to_bytes`` or ``Encryptor.encrypt_seeded``, onto ``backend``."""

    @staticmethod
    def bgv(
        n: int = 8192,
        plain_modulus: Optional[int] = None,
        *,
        prime_bits: Optional[Sequence[int]] = None,
        special_prime_bits: Optional[int] = None,
        dnum: Optional[int] = None,
        insecure: bool = False,
    ) -> "Context":
        """BGV: the 128-bit preset of ring degree n, or a custom set (see the README)."""
    @staticmethod
    def bfv(
        n: int = 8192,
        plain_modulus: Optional[int] = None,
        *,
        prime_bits: Optional[Sequence[int]] = None,
        special_prime_bits: Optional[int] = None,
        dnum: Optional[int] = None,
        insecure: bool = False,
    ) -> "Context":
        """BFV (full-RNS BEHZ) with BGV's parameter sets."""
    @staticmethod
    def ckks(
        n: int = 16384,
        *,
        scale_bits: Optional[int] = None,
        depth: Optional[int] = None,
        first_prime_bits: Optional[int] = None,
        dnum: Optional[int] = None,
        insecure: bool = False,
    ) -> "Context":
        """CKKS: the preset of n (8192 .. 65536), or ``CkksParameters::builder`` with the arguments."""
    @property
    def scheme(self) -> Literal["bgv", "bfv", "ckks"]: ...
    @property
    def n(self) -> int:
        """Ring degree N."""
    @property
    def slots(self) -> int:
        """Slots per ciphertext: N (BGV, BFV) or N/2 (CKKS)."""
    @property
    def primes(self) -> List[int]:
        """The data primes."""
    @property
    def special_primes(self) -> List[int]:
        """The key-switching primes."""
    @property
    def dnum(self) -> int: ...
    @property
    def max_level(self) -> int:
        """Level of fresh ciphertexts."""
    @property
    def min_level(self) -> int:
        """The lowest level: 0, or for CKKS that of the base primes alone."""
    @property
    def log_q(self) -> int:
        """Total modulus bits (special primes included)."""
    @property
    def security_bits(self) -> Optional[int]:
        """128, or None below the standard's bound."""
    @property
    def plain_modulus(self) -> Optional[int]:
        """t (BGV, BFV)."""
    @property
    def scale(self) -> Optional[float]:
        """Default scale (CKKS)."""
    @property
    def scale_bits(self) -> Optional[int]: ...
    @property
    def depth(self) -> Optional[int]:
        """Rescalings a fresh CKKS ciphertext allows."""
    def galois_elements(self, steps: Sequence[int], conjugation: bool = False) -> List[int]:
        """CKKS: the Galois elements of slot rotations (and conjugation)."""
    def keygen(
        self,
        *,
        seed: Optional[int] = None,
        relin: bool = True,
        galois_elements: Optional[Sequence[int]] = None,
        rotations: Optional[Sequence[int]] = None,
        conjugation: bool = False,
        backend: _BackendArg = None,
    ) -> "KeySet":
        """Secret, public, relinearization and Galois keys (``seed``: reproducible, tests only)."""
    def encryptor(
        self, key: Union["PublicKey", "SecretKey"], backend: _BackendArg = None, *, seed: Optional[int] = None
    ) -> "Encryptor":
        """An encryptor with a public key or the secret key. Keys made under other parameters (even of
        the same scheme and N) raise MismatchError; so do the decryptor's and evaluator's."""
    def decryptor(self, secret_key: "SecretKey", backend: _BackendArg = None) -> "Decryptor":
        """A decryptor (the secret key, made under this context's parameters, on the backend)."""
    def evaluator(
        self,
        backend: _BackendArg = None,
        relin_key: Optional["RelinKey"] = None,
        galois_keys: Optional["GaloisKeys"] = None,
        bootstrap: Optional["BootstrapPlan"] = None,
        encapsulation_keys: Optional["EncapsulationKeys"] = None,
    ) -> "Evaluator":
        """An evaluator with the evaluation keys given (made under this context's parameters).
        CKKS: ``bootstrap=plan`` prepares ``Evaluator.bootstrap`` (needs ``relin_key``,
        ``galois_keys=plan.keygen(sk)`` and, for a dense secret,
        ``encapsulation_keys=plan.encapsulation_keygen(sk)``; MissingKeyError names what is
        missing)."""

@final
class Backend:
    """Where ciphertexts live and operations run."""

    @staticmethod
    def cpu(threads: Optional[int] = None) -> "Backend":
        """The CPU with ``threads`` workers (all cores when None)."""
    @staticmethod
    def upmem_emu(
        dpus: int = 64,
        mode: Literal["parallel", "sequential", "ciphertext-major"] = "parallel",
        variant: Literal["best", "barrett"] = "best",
        tasklets: Optional[int] = None,
        model: Literal["upmem-v1b@1", "upmem-v1b@2"] = "upmem-v1b@2",
    ) -> "Backend":
        """Emulated UPMEM DPUs with times and energy modeled by ``model`` (``report()``).
        ``dpus`` outside 1..=2560, ``tasklets`` outside what a DPU runs or another ``model``
        raise ParameterError here."""
    @staticmethod
    def nearbank(
        system: Literal["a100-nearbank", "a100-custom-hbm", "rtx4090-nearbank"] = "a100-nearbank",
        buffer_entries: Optional[int] = None,
        threads: Optional[int] = None,
    ) -> "Backend":
        """A GPU with near-bank PIM (Anaheim): computed on the host, the recorded program's cost
        modeled on ``system`` (``report()``)."""
    @staticmethod
    def from_name(name: Literal["cpu", "upmem-emu", "nearbank"]) -> "Backend": ...
    @property
    def name(self) -> Literal["cpu", "upmem-emu", "nearbank"]: ...
    @property
    def threads(self) -> int: ...
    @property
    def dpus(self) -> Optional[int]: ...
    def report(self) -> Optional[Union[UpmemReport, NearbankReport]]:
        """upmem-emu, nearbank: the modeled cost of everything run so far; None for the CPU."""
    def reset_report(self) -> None: ...

@final
class SecretKey:
    """The secret key; it stays in Rust (unless written with ``to_bytes``/``save``) and is wiped when collected."""

    @property
    def scheme(self) -> str: ...
    def to_bytes(self) -> bytes:
        """Whoever holds these bytes can decrypt."""
    def save(self, path: _PathArg) -> None:
        """Writes ``to_bytes()`` to a file readable by its owner only (mode 0600 on POSIX, whatever
        the umask; a file already there is replaced): whoever reads it can decrypt."""
    @classmethod
    def from_bytes(cls, ctx: Context, data: bytes) -> "SecretKey":
        """The key of ``ctx`` in ``data`` (full or compressed). Raises FormatError."""
    @classmethod
    def load(cls, ctx: Context, path: _PathArg) -> "SecretKey":
        """The key of ``ctx`` in a file written by ``save``."""
    def __reduce__(self) -> Any:
        """Raises TypeError: a key needs its context; use ``to_bytes`` and ``from_bytes(ctx, data)``."""

@final
class PublicKey:
    @property
    def scheme(self) -> str: ...
    def to_bytes(self, compressed: bool = False) -> bytes:
        """``compressed=True``: uniform parts as 32-byte seeds (half the size; keys made here only)."""
    def save(self, path: _PathArg, compressed: bool = False) -> None:
        """Writes ``to_bytes(compressed)`` to a file."""
    @classmethod
    def from_bytes(cls, ctx: Context, data: bytes) -> "PublicKey":
        """The key of ``ctx`` in ``data`` (full or compressed). Raises FormatError."""
    @classmethod
    def load(cls, ctx: Context, path: _PathArg) -> "PublicKey":
        """The key of ``ctx`` in a file written by ``save``."""
    def __reduce__(self) -> Any:
        """Raises TypeError: a key needs its context; use ``to_bytes`` and ``from_bytes(ctx, data)``."""

@final
class RelinKey:
    @property
    def scheme(self) -> str: ...
    def to_bytes(self, compressed: bool = False) -> bytes:
        """``compressed=True``: uniform parts as 32-byte seeds (half the size; keys made here only)."""
    def save(self, path: _PathArg, compressed: bool = False) -> None:
        """Writes ``to_bytes(compressed)`` to a file."""
    @classmethod
    def from_bytes(cls, ctx: Context, data: bytes) -> "RelinKey":
        """The key of ``ctx`` in ``data`` (full or compressed). Raises FormatError."""
    @classmethod
    def load(cls, ctx: Context, path: _PathArg) -> "RelinKey":
        """The key of ``ctx`` in a file written by ``save``."""
    def __reduce__(self) -> Any:
        """Raises TypeError: a key needs its context; use ``to_bytes`` and ``from_bytes(ctx, data)``."""
    @property
    def size_bytes(self) -> int: ...

@final
class GaloisKeys:
    @property
    def scheme(self) -> str: ...
    def to_bytes(self, compressed: bool = False) -> bytes:
        """``compressed=True``: uniform parts as 32-byte seeds (half the size; keys made here only)."""
    def save(self, path: _PathArg, compressed: bool = False) -> None:
        """Writes ``to_bytes(compressed)`` to a file."""
    @classmethod
    def from_bytes(cls, ctx: Context, data: bytes) -> "GaloisKeys":
        """The key of ``ctx`` in ``data`` (full or compressed). Raises FormatError."""
    @classmethod
    def load(cls, ctx: Context, path: _PathArg) -> "GaloisKeys":
        """The key of ``ctx`` in a file written by ``save``."""
    def __reduce__(self) -> Any:
        """Raises TypeError: a key needs its context; use ``to_bytes`` and ``from_bytes(ctx, data)``."""
    @property
    def elements(self) -> List[int]: ...
    @property
    def size_bytes(self) -> int: ...

@final
class KeySet:
    """``sk, pk, rk, gk = ctx.keygen()``."""

    secret_key: SecretKey
    public_key: PublicKey
    relin_key: Optional[RelinKey]
    galois_keys: Optional[GaloisKeys]
    def __iter__(self) -> Iterator[Any]: ...

@final
class CiphertextBatch:
    """``count`` ciphertexts at one level on one backend."""

    @property
    def count(self) -> int: ...
    def __len__(self) -> int: ...
    @property
    def level(self) -> int: ...
    @property
    def size(self) -> int:
        """Components: 2, or 3 after a product."""
    @property
    def scale(self) -> Optional[float]:
        """CKKS scale."""
    @property
    def slots(self) -> int: ...
    @property
    def correction_factor(self) -> Optional[int]:
        """BGV's correction factor."""
    @property
    def depth_left(self) -> Optional[int]:
        """CKKS rescalings left."""
    @property
    def scheme(self) -> str: ...
    @property
    def backend(self) -> Literal["cpu", "upmem-emu"]: ...
    def to(self, backend: _BackendArg) -> "CiphertextBatch":
        """The same ciphertexts on another backend."""
    def to_bytes(self) -> bytes:
        """The batch in pimhe's binary format; load with ``CiphertextBatch.from_bytes(ctx, data)``."""
    def save(self, path: _PathArg) -> None:
        """Writes ``to_bytes()`` to a file."""
    @classmethod
    def from_bytes(cls, ctx: Context, data: bytes, backend: _BackendArg = None) -> "CiphertextBatch":
        """The batch of ``ctx`` in ``data`` (``to_bytes`` or ``Encryptor.encrypt_seeded``), onto ``backend``.
        Raises FormatError (also for data made under other parameters)."""
    @classmethod
    def load(cls, ctx: Context, path: _PathArg, backend: _BackendArg = None) -> "CiphertextBatch":
        """The batch of ``ctx`` in a file written by ``save``, onto ``backend``."""
    def __reduce__(self) -> Any:
        """Raises TypeError: a batch needs its context; use ``to_bytes`` and ``from_bytes(ctx, data)``."""

@final
class Encryptor:
    @property
    def backend(self) -> str: ...
    def encrypt(self, values: _ArrayLike, *, scale: Optional[float] = None, slots: Optional[int] = None) -> CiphertextBatch:
        """Encrypts the rows of a 1-D or 2-D array into one batch."""
    def encrypt_seeded(self, values: _ArrayLike, *, scale: Optional[float] = None, slots: Optional[int] = None) -> bytes:
        """Secret-key encryptors only: the compressed (seeded) encoding of the batch, about half the size."""

@final
class Decryptor:
    def decrypt(self, batch: CiphertextBatch, *, signed: bool = False, complex: bool = False) -> np.ndarray:
        """The slots of every ciphertext, 2-D (count x slots)."""
    def noise_budget(self, batch: CiphertextBatch) -> List[int]:
        """BGV/BFV: the remaining noise budget of each ciphertext, in bits."""

@final
class Chebyshev:
    """A Chebyshev series for CKKS polynomial evaluation."""

    @staticmethod
    def from_coefficients(coefficients: Sequence[float], interval: Tuple[float, float]) -> "Chebyshev": ...
    @staticmethod
    def sigmoid(interval: Tuple[float, float] = (-8.0, 8.0), degree: int = 31) -> "Chebyshev": ...
    @staticmethod
    def exp(interval: Tuple[float, float], degree: int) -> "Chebyshev": ...
    @staticmethod
    def inverse(interval: Tuple[float, float], degree: int) -> "Chebyshev": ...
    @property
    def coefficients(self) -> List[float]: ...
    @property
    def interval(self) -> Tuple[float, float]: ...
    @property
    def degree(self) -> int: ...
    @property
    def depth(self) -> int: ...
    def evaluate_plain(self, x: float) -> float: ...

@final
class BootstrapPlan:
    """What CKKS bootstrapping under ``ctx`` needs, before any key: levels, rotations, Galois keys.
    ParameterError for a context that cannot bootstrap (make one with
    ``pimhe.ckks.bootstrap.insecure_context``). ``slots``: N/2 (full packing, the default) or a
    power of two below it (sparse packing)."""

    def __new__(cls, ctx: Context, *, slots: Optional[int] = None) -> "BootstrapPlan": ...
    @property
    def slots(self) -> int:
        """The slot count of the ciphertexts it bootstraps."""
    @property
    def output_level(self) -> int:
        """The level of a bootstrapped ciphertext."""
    @property
    def depth_after(self) -> int:
        """Rescalings a bootstrapped ciphertext has left."""
    @property
    def depth(self) -> int:
        """Rescalings one bootstrapping consumes."""
    @property
    def hamming_weight(self) -> int: ...
    @property
    def uses_encapsulation(self) -> bool:
        """Whether the secret is dense, so bootstrapping needs ``encapsulation_keygen``'s keys."""
    def encapsulation_keygen(
        self, secret_key: SecretKey, *, seed: Optional[int] = None, backend: _BackendArg = None
    ) -> "EncapsulationKeys":
        """The sparse-secret encapsulation keys of a dense secret (public material)."""
    @property
    def rotations(self) -> List[int]: ...
    @property
    def galois_elements(self) -> List[int]:
        """The rotations' Galois elements and conjugation's."""
    @property
    def key_count(self) -> int: ...
    @property
    def galois_key_bytes(self) -> int: ...
    def check_message_range(self, decryptor: Decryptor, a: CiphertextBatch) -> None:
        """The client's check that ``a`` is within EvalMod's range (message coefficients at most
        q0 / 2^5); raises ``ParameterError`` otherwise (an evaluator cannot tell)."""
    def keygen(
        self, secret_key: SecretKey, *, seed: Optional[int] = None, backend: _BackendArg = None
    ) -> GaloisKeys:
        """Exactly the plan's Galois keys (public: ``save(path, compressed=True)``)."""

@final
class EncapsulationKeys:
    """The two switching keys of bootstrapping's sparse-secret encapsulation (public)."""

    @property
    def hamming_weight(self) -> int: ...
    def size_bytes(self) -> int: ...
    def to_bytes(self, compressed: bool = False) -> bytes: ...
    def save(self, path: _PathArg, compressed: bool = False) -> None: ...
    @classmethod
    def from_bytes(cls, ctx: Context, data: bytes) -> "EncapsulationKeys": ...
    @classmethod
    def load(cls, ctx: Context, path: _PathArg) -> "EncapsulationKeys": ...
    def __reduce__(self) -> Any: ...

@final
class Evaluator:
    """Homomorphic operations on batches (the server side)."""

    @property
    def backend(self) -> str: ...
    def add(self, a: CiphertextBatch, b: CiphertextBatch) -> CiphertextBatch: ...
    def sub(self, a: CiphertextBatch, b: CiphertextBatch) -> CiphertextBatch: ...
    def negate(self, a: CiphertextBatch) -> CiphertextBatch: ...
    def multiply(self, a: CiphertextBatch, b: CiphertextBatch) -> CiphertextBatch: ...
    def square(self, a: CiphertextBatch) -> CiphertextBatch: ...
    def relinearize(self, a: CiphertextBatch) -> CiphertextBatch: ...
    def sum(self, a: CiphertextBatch) -> CiphertextBatch:
        """Slot-wise sum of all ciphertexts of the batch (a batch of one)."""
    def add_plain(self, a: CiphertextBatch, values: _ArrayLike) -> CiphertextBatch: ...
    def mul_plain(self, a: CiphertextBatch, values: _ArrayLike) -> CiphertextBatch: ...
    def automorphism(self, a: CiphertextBatch, k: int) -> CiphertextBatch: ...
    def automorphisms(self, a: CiphertextBatch, elements: Sequence[int]) -> List[CiphertextBatch]: ...
    def has_galois_key(self, k: int) -> bool: ...
    def mod_switch_to_next(self, a: CiphertextBatch) -> CiphertextBatch:
        """BGV only."""
    def mod_switch_to(self, a: CiphertextBatch, level: int) -> CiphertextBatch:
        """BGV only."""
    def rescale(self, a: CiphertextBatch) -> CiphertextBatch:
        """CKKS only."""
    def multiply_relin_rescale(self, a: CiphertextBatch, b: CiphertextBatch) -> CiphertextBatch: ...
    def drop_to_level(self, a: CiphertextBatch, level: int) -> CiphertextBatch: ...
    def match_scale(self, a: CiphertextBatch, level: int, scale: float) -> CiphertextBatch: ...
    def add_const(self, a: CiphertextBatch, c: complex) -> CiphertextBatch: ...
    def mul_const(self, a: CiphertextBatch, c: complex) -> CiphertextBatch:
        """CKKS: every slot times ``c``. An integer (a real whole number: 3, -2, 3.0; below 2**53
        in magnitude) costs no level and keeps the scale: do NOT rescale after it. Any other
        constant (0.25, 2+1j) multiplies the scale by the primes the next rescaling drops:
        ``rescale`` right after it (one level) brings the scale back."""
    def rotate(self, a: CiphertextBatch, steps: int) -> CiphertextBatch:
        """CKKS: rotate slots left by ``steps`` (needs its Galois key); a multiple of N/2 (0
        among them) moves nothing and returns a copy, with no key."""
    def rotate_hoisted(self, a: CiphertextBatch, steps: Sequence[int]) -> List[CiphertextBatch]:
        """CKKS: ``rotate`` by each of ``steps``, hoisted, in order."""
    def conjugate(self, a: CiphertextBatch) -> CiphertextBatch: ...
    def sum_slots(self, a: CiphertextBatch) -> CiphertextBatch: ...
    def evaluate_polynomial(self, a: CiphertextBatch, p: Chebyshev, levels: Optional[int] = None) -> CiphertextBatch:
        """CKKS: p(a) in every slot, consuming ``p.depth`` levels, or ``levels`` (at least
        ``p.depth``): one level more lets the leading quotients keep their leaves, fewer
        products (a degree-31 sigmoid on [-8, 8]: 10 instead of 12)."""
    def bootstrap(self, a: CiphertextBatch) -> CiphertextBatch:
        """CKKS: ``a`` refreshed to the plan's ``output_level`` (an evaluator made with ``bootstrap=plan``)."""
    def _time_multiply_relinearize(self, a: CiphertextBatch, b: CiphertextBatch, repeats: int) -> List[float]: ...
