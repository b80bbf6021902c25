"""pimhe: homomorphic encryption (BGV, BFV, CKKS) on CPUs and emulated UPMEM PIM.

A thin Python shell over the pimhe Rust library: every computation, check and parameter
choice is the library's. Numpy arrays go in and come out::

    import numpy as np, pimhe

    ctx = pimhe.Context.bgv(n=8192)                     # the 128-bit preset
    keys = ctx.keygen()                                 # secret, public, relin (+ galois)
    backend = pimhe.Backend.cpu()                       # or pimhe.Backend.upmem_emu(dpus=64)
    enc = ctx.encryptor(keys.public_key, backend)
    ev = ctx.evaluator(backend, relin_key=keys.relin_key)
    dec = ctx.decryptor(keys.secret_key, backend)

    x = enc.encrypt(np.arange(8192) % 100)              # one ciphertext (a batch of one)
    y = ev.relinearize(ev.multiply(x, x))
    assert (dec.decrypt(y)[0] == (np.arange(8192) % 100) ** 2 % ctx.plain_modulus).all()

Every object has a versioned binary encoding: ``obj.to_bytes()`` (keys: ``compressed=True``
for the seeded form), loaded with ``pimhe.Context.from_bytes`` and ``ctx.*_from_bytes``;
files are ``pathlib.Path(p).write_bytes(obj.to_bytes())`` and ``read_bytes()``.

Errors raise ``PimheError`` subclasses with the library's message (``ParameterError``,
``PlaintextError`` and ``MismatchError`` are also ``ValueError``\\s).
"""

from ._pimhe import (
    Backend,
    BackendError,
    BootstrapPlan,
    CapacityError,
    EncapsulationKeys,
    Chebyshev,
    CiphertextBatch,
    Context,
    Decryptor,
    Encryptor,
    Evaluator,
    FormatError,
    GaloisKeys,
    KeySet,
    LevelError,
    MismatchError,
    MissingKeyError,
    NoiseBudgetError,
    ParameterError,
    PimheError,
    PlaintextError,
    PublicKey,
    RelinKey,
    SecretKey,
    __version__,
    presets,
)
from ._pimhe import advise_json as _advise_json
from ._pimhe import bandwidth_json as _bandwidth_json
from ._pimhe import bootstrap_json as _bootstrap_json
from ._pimhe import reproduce_json as _reproduce_json
from ._pimhe import scheme_json as _scheme_json
from ._reports import (
    Comparison,
    Estimate,
    ModulusRun,
    NearbankKind,
    NearbankReport,
    Reproduction,
    StatsResult,
    UpmemReport,
)
from . import _progress, helr, stats, study

__all__ = [
    "advise",
    "bandwidth",
    "bench_bootstrap",
    "bench_scheme",
    "Backend",
    "BackendError",
    "BootstrapPlan",
    "CapacityError",
    "EncapsulationKeys",
    "Chebyshev",
    "ckks",
    "CiphertextBatch",
    "Comparison",
    "Context",
    "Decryptor",
    "Encryptor",
    "Estimate",
    "Evaluator",
    "FormatError",
    "GaloisKeys",
    "helr",
    "KeySet",
    "LevelError",
    "MismatchError",
    "MissingKeyError",
    "ModulusRun",
    "NoiseBudgetError",
    "ParameterError",
    "PimheError",
    "PlaintextError",
    "PublicKey",
    "RelinKey",
    "Reproduction",
    "SecretKey",
    "StatsResult",
    "UpmemReport",
    "NearbankReport",
    "NearbankKind",
    "__version__",
    "presets",
    "reproduce",
    "stats",
    "study",
]


def advise(workload, n, batch=None, *, users=None, dpus=(), what_ifs=(), max_batch=None, repeat=3, threads=None,
           seed=1, mode=None):
    """The CPU-vs-PIM verdict of ``pimhe advise``, as a dict (its ``--json`` report).

    For ``workload`` (``"pipeline"``, ``"bgv-mul-relin"``, ``"bfv-mul-relin"``,
    ``"ckks-mul-relin-rescale"`` with ``batch`` ciphertexts, or the statistics ``"mean"``,
    ``"variance"``, ``"linreg"`` over ``users`` users) at ring degree ``n``: per DPU count and
    hardware what-if (``"none"``, ``"mul-cycles=1"``, ``"zero-copy"``, or several joined by
    commas) the modeled PIM time, energy and energy-delay product beside the CPU measured here
    and scaled to DRAMatic's server, the crossover in time (or ``never`` with its bottleneck)
    and the energy and EDP verdicts. Empty ``dpus`` / ``what_ifs`` take the CLI's defaults.
    ``mode`` is ``"parallel"`` (the default: DRAMatic's prime groups, key switching's
    conversions on the host), ``"ciphertext-major"`` (everything on the DPUs), ``"auto"`` (the
    placement priced cheapest at each point; each row's ``placement`` names it), or for the
    statistics and CKKS also ``"sequential"`` or ``"hybrid"``.
    """
    import json

    report = _advise_json(
        workload,
        n,
        batch,
        users=users,
        dpus=list(dpus),
        what_ifs=list(what_ifs),
        max_batch=max_batch,
        repeat=repeat,
        threads=threads,
        seed=seed,
        mode=mode,
    )
    return json.loads(report)


def reproduce(name, *, progress=None, **options):
    """A seed paper's experiments beside its published figures (``pimhe bench reproduce NAME``),
    as a ``Reproduction``: ``rows`` (``Comparison``: the same fields for every paper) and
    ``report`` (the paper's own report as a dict, what ``--json`` prints besides the rows).

    ``name`` is ``"dramatic"``, ``"gupta"``, ``"anaheim"`` or ``"ceram"``; ``options`` are that
    paper's flags named as in ``pimhe bench reproduce NAME --help`` with ``_`` for ``-`` (``--what-if`` is
    ``what_ifs``, a list, as in ``pimhe.advise``); an option left out or ``None`` takes its
    default, another name is a ``ParameterError`` naming the allowed ones. ``progress`` draws a
    bar of the long steps (``None``: when stderr is a terminal)::

        r = pimhe.reproduce("ceram", skip_cpu=True)                # Tables 2-4, 6-10, s. 4.4, model only
        [row.id for row in r.rows if row.within is False]          # the cells outside 25%
        pimhe.reproduce("gupta", quick=True)                       # Fig. 1 small, checked on the emulator
        pimhe.reproduce("anaheim", workload_n=0).rows[0].ratio     # Fig. 9, ours / published
        pimhe.reproduce("anaheim", workload_n=0, boot=True)        # + Boot at N = 2^16 (12 GB)
        pimhe.reproduce("anaheim", workload_n=0, helr=True)        # + HELR per iteration, N = 2^16
        pimhe.reproduce("dramatic", rows="t2-ntt-1").report["rows"][0]["compute_s"]
    """
    import json

    given = {key: value for key, value in options.items() if value is not None}
    bar = _progress.Bar() if _progress.wanted(progress) else None
    # A path (seal_python) is sent as its text; any other value as JSON has it.
    text = _reproduce_json(name, json.dumps(given, default=str), progress=bar)
    return Reproduction._from_json(text)


def bandwidth(*, mib=256, repeat=5, threads=None):
    """This machine's memory bandwidth, STREAM-style (``pimhe bench bandwidth``), as a dict: the
    best of ``repeat`` passes of copy, add and triad over three arrays of ``mib`` MiB on
    ``threads`` threads (every core when None), in ``kernels`` (``kernel``, ``bytes_per_pass``,
    ``best_s``, ``gb_per_s``), and ``best_gb_per_s``, the limit a memory-bound operation is
    compared with::

        pimhe.bandwidth(mib=64)["best_gb_per_s"]
    """
    import json

    return json.loads(_bandwidth_json(mib=mib, repeat=repeat, threads=threads))


def bench_bootstrap(
    n, *, slots=None, backend="cpu", threads=None, system=None, buffer_entries=None, repeat=1, seed=1, real=False
):
    """One CKKS bootstrapping timed on ``backend`` (``pimhe bench bootstrap``), as a dict: the
    precision of the output against the input (``precision``: ``min_bits``, ``mean_bits``, ...),
    the levels before and after (``level_before``, ``level_after``, ``rescalings_left``), the
    Galois keys it needs (``galois_keys``, ``galois_key_bytes``), ``keygen_s`` and
    ``bootstrap_s``; on ``"nearbank"`` the modeled cost (``nearbank``). ``n`` = 65536 is the
    128-bit preset (a dense secret with sparse-secret encapsulation, 9 levels left; minutes and
    about 12 GB); 1024 to 16384 are INSECURE presets (``insecure`` is True). ``real``: real
    inputs, the error on the real parts (as OpenFHE measures)::

        pimhe.bench_bootstrap(1024)["precision"]["min_bits"]
    """
    import json

    report = _bootstrap_json(
        n,
        slots=slots,
        backend=backend,
        threads=threads,
        system=system,
        buffer_entries=buffer_entries,
        repeat=repeat,
        seed=seed,
        real=real,
    )
    return json.loads(report)


def bench_scheme(
    scheme="bgv",
    *,
    n=None,
    case=None,
    batch=None,
    backend="cpu",
    threads=None,
    system=None,
    buffer_entries=None,
    repeat=5,
    seed=1,
    dnum=None,
    scale_bits=None,
):
    """A scheme's operations timed on ``backend`` (``pimhe bench scheme``), as a dict: ``ops``
    (``op``, ``best_s``, ``median_s``, per-ciphertext times, ``times_s``), ``params`` and
    ``checked``. ``scheme`` is ``"bgv"``, ``"bfv"``, ``"ckks"`` (each needs ``n``), or
    ``"bfv-special"``: BFV on the CE-RAM B/FV paper's special moduli, ``case`` ``"A"`` (Barrett
    reductions) or ``"B"`` (its special reductions and FastBConv), at its N = 2^14, one
    ciphertext per call::

        pimhe.bench_scheme("bfv-special", case="B", repeat=1)["ops"][4]["op"]  # "multiply_relin"
    """
    import json

    report = _scheme_json(
        scheme,
        n=n,
        case=case,
        batch=batch,
        backend=backend,
        threads=threads,
        system=system,
        buffer_entries=buffer_entries,
        repeat=repeat,
        seed=seed,
        dnum=dnum,
        scale_bits=scale_bits,
    )
    return json.loads(report)


# Last: pimhe.ckks.bootstrap re-exports bench_bootstrap, defined above.
from . import ckks  # noqa: E402
