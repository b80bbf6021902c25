#!/usr/bin/env python3
"""Side-by-side comparison of pimhe's CPU backend with SEAL and OpenFHE, in one run on this
machine, at each ring degree N: BGV and BFV with every library's default 128-bit moduli, CKKS
at pimhe's preset (depth and scale) with each library's own 128-bit primes.

    python3 bench/compare/run.py [--n 4096 8192 16384 32768] [--schemes bgv bfv ckks]
                                 [--repeat R] [--passes K] [--threads T] [--batch B [B ...]]
                                 [--json FILE] [--no-progress]

Steps: installs the peers (requirements.txt) into virtual environments under the cache
directory if they are missing; builds pimhe in release mode once (cargo); runs
`pimhe bench scheme` K times for each scheme, N and batch size (the batch sizes in alternating
order, the rounds pooled: verdict.py), then the peer scripts (peer_seal.py, peer_openfhe.py)
once for all N; prints what the run concludes (rows under 1.5x the faster peer, batches slower
per ciphertext than smaller ones), then Markdown tables of per-ciphertext medians with each
library's parameters and the ratios peer / pimhe (above 1: pimhe is faster), the NTT per
coefficient-bit, and CKKS's parameters and precision. A peer that cannot be installed or lacks
an operation is reported as n/a with the reason, and the run goes on. While it runs, a progress
line on stderr counts the steps done (pimhe's K x N x scheme x batch runs, then each peer's N x
scheme) with the elapsed time, when stderr is a terminal and --no-progress is not given.

Only the standard library is used here; the peers run in their own environments.
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import verdict

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
REQUIREMENTS = HERE / "requirements.txt"

# Largest log2(q) for 128-bit security (HomomorphicEncryption.org standard, ternary secret):
# the modulus OpenFHE is matched to when pimhe has no preset at N.
MAX_LOG_Q_128 = {1024: 27, 2048: 54, 4096: 109, 8192: 218, 16384: 438, 32768: 881}


class Peer:
    """A library compared with pimhe: the script that times it in its own environment, the
    Python versions its pinned wheels exist for, and the module that proves it is installed."""

    def __init__(self, key, label, script, module, pythons):
        self.key, self.label, self.script, self.module, self.pythons = key, label, script, module, pythons


PEERS = [
    Peer("seal", "SEAL", "peer_seal.py", "tenseal.sealapi", ("3.11", "3.12", "3.13")),
    Peer("openfhe", "OpenFHE", "peer_openfhe.py", "openfhe", ("3.10",)),
]
LIBRARIES = [("pimhe", "pimhe")] + [(p.key, p.label) for p in PEERS]

SCHEMES = ("bgv", "bfv", "ckks")

# The rows of the CKKS table: (operation as the benchmarks name it, label).
CKKS_ROWS = [
    ("encrypt", "CKKS encode + encrypt (public key)"),
    ("decrypt", "CKKS decrypt + decode"),
    ("add", "CKKS add"),
    ("multiply_relin_rescale", "CKKS multiply + relin + rescale"),
    ("rescale", "CKKS rescale"),
    ("rotate", "CKKS rotate (1 slot)"),
    ("rotate_hoisted_8", "CKKS 8 hoisted rotations (1..8)"),
    ("linear_transform_64", "CKKS 64x64 linear transform (BSGS)"),
    ("sigmoid", "CKKS sigmoid (Chebyshev, [-8, 8])"),
    ("sigmoid_spare_level", "CKKS sigmoid, one level more than the least"),
]

# pimhe's rows timed against another of the peers' operations: the sigmoid with a spare level
# is compared with the peers' only sigmoid (OpenFHE's takes that level too: 7 at degree 31).
PEER_OPS = {"sigmoid_spare_level": "sigmoid"}

# The rows of the BGV/BFV table: (operation as the benchmarks name it, scheme, label).
ROWS = [
    ("encrypt", "bgv", "BGV encrypt (public key)"),
    ("decrypt", "bgv", "BGV decrypt"),
    ("multiply", "bgv", "BGV multiply (no relin)"),
    ("relinearize", "bgv", "BGV relinearize"),
    ("multiply_relin", "bgv", "BGV multiply + relin"),
    ("mod_switch", "bgv", "BGV mod switch"),
    ("ntt", "bgv", "NTT of a ciphertext"),
    ("intt", "bgv", "iNTT of a ciphertext"),
    ("encrypt", "bfv", "BFV encrypt (public key)"),
    ("decrypt", "bfv", "BFV decrypt"),
    ("multiply", "bfv", "BFV multiply (no relin)"),
    ("relinearize", "bfv", "BFV relinearize"),
    ("multiply_relin", "bfv", "BFV multiply + relin"),
]


class ProgressLine:
    """A tqdm-style line on stderr: `[compare] 5/12 steps [=====     ] 42% elapsed 1:23`, redrawn
    in place. Drawn only when `enabled` (stderr is a terminal and --no-progress is not given);
    a log message clears it and is printed above it."""

    WIDTH = 30

    def __init__(self, total=0, enabled=False):
        self.total, self.done, self.enabled, self.start = total, 0, enabled, time.perf_counter()
        self.shown = False

    def advance(self, steps=1):
        self.done = min(self.total, self.done + steps)
        self.draw()

    def draw(self):
        if not self.enabled or self.total <= 0:
            return
        fraction = self.done / self.total
        filled = int(fraction * self.WIDTH)
        elapsed = int(time.perf_counter() - self.start)
        bar = "=" * filled + " " * (self.WIDTH - filled)
        line = f"[compare] {self.done}/{self.total} steps [{bar}] {fraction:4.0%} elapsed {elapsed // 60}:{elapsed % 60:02d}"
        sys.stderr.write("\r" + line + "\x1b[K")
        sys.stderr.flush()
        self.shown = True

    def clear(self):
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()
            self.shown = False

    def close(self):
        self.clear()
        self.enabled = False


# The run's progress line (replaced by main once the steps are known).
PROGRESS = ProgressLine()


def log(message):
    PROGRESS.clear()
    print(f"[compare] {message}", file=sys.stderr, flush=True)
    PROGRESS.draw()


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else "no output"


# ---------------------------------------------------------------------------------------------
# Peer environments


def python_version(interpreter):
    try:
        out = subprocess.run(
            [interpreter, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def find_python(versions):
    """An interpreter of one of `versions`: this one, pythonX.Y on PATH, or a pyenv install."""
    candidates = [sys.executable]
    for v in versions:
        candidates.append(shutil.which(f"python{v}"))
        pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
        candidates.extend(str(p / "bin" / f"python{v}") for p in sorted(pyenv.glob(f"{v}.*"), reverse=True))
    for candidate in filter(None, candidates):
        if Path(candidate).exists() and python_version(candidate) in versions:
            return candidate
    return None


def ensure_env(peer, cache, override):
    """The Python of the peer's environment, installed from requirements.txt if needed; or
    raises RuntimeError saying why the peer is unavailable."""
    interpreter = override or find_python(peer.pythons)
    if interpreter is None:
        raise RuntimeError(
            f"no CPython {' or '.join(peer.pythons)} found (its pinned wheels need one); "
            f"pass --python-{peer.key} PATH"
        )
    version = python_version(interpreter)
    if version is None:
        raise RuntimeError(f"the interpreter {interpreter} does not run")
    env = cache / f"venv-{peer.key}-py{version}"
    python = env / "bin" / "python"
    stamp = env / ".requirements.sha256"
    wanted = hashlib.sha256(REQUIREMENTS.read_bytes()).hexdigest()
    if not (stamp.exists() and stamp.read_text() == wanted and imports(python, peer.module)):
        log(f"installing {peer.label} into {env} (Python {version} from {interpreter})")
        if env.exists():
            shutil.rmtree(env)
        steps = [
            [interpreter, "-m", "venv", str(env)],
            [str(python), "-m", "pip", "install", "--quiet", "-r", str(REQUIREMENTS)],
        ]
        for step in steps:
            done = subprocess.run(step, capture_output=True, text=True)
            if done.returncode != 0:
                raise RuntimeError(f"install failed ({' '.join(step[-3:])}): {last_line(done.stderr)}")
        if not imports(python, peer.module):
            error = subprocess.run([str(python), "-c", f"import {peer.module}"], capture_output=True, text=True)
            raise RuntimeError(f"installed but `import {peer.module}` fails: {last_line(error.stderr)}")
        stamp.write_text(wanted)
    return python


def imports(python, module):
    if not python.exists():
        return False
    return subprocess.run([str(python), "-c", f"import {module}"], capture_output=True).returncode == 0


# ---------------------------------------------------------------------------------------------
# pimhe


def build_pimhe():
    """Builds the pimhe binary in release mode; returns its path."""
    log("building pimhe (cargo build --release -p pimhe-cli)")
    done = subprocess.run(
        ["cargo", "build", "--release", "-p", "pimhe-cli", "--message-format=json-render-diagnostics"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"cargo build failed (status {done.returncode})")
    for line in done.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("executable"):
            if message["target"]["name"] == "pimhe":
                return message["executable"]
    raise RuntimeError("cargo built no pimhe executable")


def run_pimhe(binary, scheme, n, batch, args):
    """`pimhe bench scheme` in the common result format (per-ciphertext times)."""
    command = [binary, "bench", "scheme", "--scheme", scheme, "--n", str(n), "--batch", str(batch)]
    command += ["--threads", str(args.threads), "--repeat", str(args.repeat), "--seed", str(args.seed), "--json"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return {"n": n, "scheme": scheme, "batch": batch, "error": f"ran past --timeout {args.timeout} s"}
    if done.returncode != 0:
        return {"n": n, "scheme": scheme, "batch": batch, "error": last_line(done.stderr)}
    report = json.loads(done.stdout)
    p = report["params"]
    result = {
        "n": n,
        "scheme": scheme,
        "threads": report["threads"],
        "batch": report["batch"],
        "checked": report["checked"],
        "params": {
            "ciphertext_prime_bits": p["data_prime_bits"],
            "special_prime_bits": list(p["special_prime_bits"]),
            "log_q_ciphertext": p["log_q_ciphertext"],
            "log_q_total": p["log_q_total"],
        },
        "ops": {
            o["op"]: {
                "median_s": o["median_per_ciphertext_s"],
                "best_s": o["best_per_ciphertext_s"],
                "batch_median_s": o["median_s"],
                **({"bandwidth": o["bandwidth"]} if "bandwidth" in o else {}),
            }
            for o in report["ops"]
        },
        "notes": {},
        "raw": report,
    }
    if scheme == "ckks":
        result["params"].update(
            depth=p["depth"], scale_bits=p["scale_bits"], dnum=p["dnum"], primes_per_level=p["primes_per_level"]
        )
        result["sigmoid_degree"] = report["sigmoid_degree"]
        result["precision_after_multiply"] = report["precision_after_multiply"]
        result["notes"] = {
            "rotate_hoisted_8": "Evaluator::rotate_hoisted: one decomposition shared by the 8 rotations",
            "linear_transform_64": "apply_linear_transform: hoisted baby steps, diagonals pre-encoded",
            "sigmoid": "evaluate_polynomial: the least depth (6 levels at degree 31, where OpenFHE's evaluation "
            "takes 7); the leading quotients split again, 12 products",
            "sigmoid_spare_level": "evaluate_polynomial_in_levels with the depth + 1 (OpenFHE's depth at degree 31): "
            "10 products",
        }
    else:
        result["params"]["plain_modulus"] = p["plain_modulus"]
        result["notes"] = {
            "decrypt": "pimhe decrypts in RNS only (BGV: CRT straight to t in f64; BFV: BEHZ Algorithm 1) and "
            "refuses a ciphertext whose noise budget is spent instead of returning a wrong message"
        }
    return result


# ---------------------------------------------------------------------------------------------
# Peers


def run_peer(peer, python, args, match_log_q, ckks, threads):
    """Runs a peer script for every N and scheme; returns its JSON object (or raises
    RuntimeError). `ckks` holds pimhe's CKKS preset per N (`N:DEPTH:SCALE_BITS:DEGREE:K`)."""
    command = [str(python), str(HERE / peer.script), "--n", *map(str, args.n), "--schemes", *args.schemes]
    command += ["--repeat", str(args.repeat), "--seed", str(args.seed)]
    if peer.key == "openfhe":
        command += ["--match-log-q", *(f"{n}:{bits}" for n, bits in match_log_q.items())]
    if ckks:
        command += ["--ckks", *ckks]
    env = dict(os.environ)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=HERE, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{peer.script} ran past --timeout {args.timeout} s")
    if done.returncode != 0:
        raise RuntimeError(f"{peer.script} failed: {last_line(done.stderr)}")
    return json.loads(done.stdout)


def best_over_threads(runs):
    """Merges runs of one peer at several thread counts: per operation, the fastest median,
    with the thread count that gave it."""
    merged = {"library": runs[0]["library"], "version": runs[0]["version"], "threads": None, "results": []}
    for index, result in enumerate(runs[0]["results"]):
        result = json.loads(json.dumps(result))
        for op, timing in result.get("ops", {}).items():
            timing["threads"] = runs[0]["threads"]
            for run in runs[1:]:
                other = run["results"][index].get("ops", {}).get(op)
                if other and other["median_s"] < timing["median_s"]:
                    timing.update(other, threads=run["threads"])
        merged["results"].append(result)
    return merged


# ---------------------------------------------------------------------------------------------
# Report


def format_time(seconds):
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} us"


def format_params(result):
    """`218 = 2x43,2x44 + P 44`: total bits = ciphertext primes (count x bits) + special primes."""
    if result is None or "params" not in result:
        return "-"
    p = result["params"]

    def groups(bits):
        counts = {}
        for b in bits:
            counts[b] = counts.get(b, 0) + 1
        return ",".join(f"{c}x{b}" for b, c in sorted(counts.items()))

    special = groups(p["special_prime_bits"]) or "none"
    approx = "~" if p.get("special_primes_estimated") else ""
    return f"{p['log_q_total']} = {groups(p['ciphertext_prime_bits'])} + P {approx}{special}"


class Table:
    """Collects results by (library, n, scheme, batch) and prints the Markdown tables with
    footnotes. pimhe has one result per batch size; the peers run one ciphertext per call and
    have one (batch None) that every pimhe batch is compared with."""

    def __init__(self, batches):
        self.batches = batches
        self.results = {}
        self.notes = []

    def add(self, library, result):
        self.results[(library, result["n"], result.get("scheme"), result.get("batch"))] = result

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)
        return f"[{self.notes.index(text) + 1}]"

    def lookup(self, library, n, scheme, batch=None):
        if library != "pimhe":
            batch = None
        elif batch is None:
            batch = self.batches[0]
        for key in ((library, n, scheme, batch), (library, n, scheme, None), (library, n, None, None)):
            if key in self.results:
                return self.results[key]
        return None

    def seconds(self, library, n, scheme, op, batch=None):
        """The median per ciphertext in seconds, or None."""
        return self.median(library, n, scheme, op, batch)[0]

    def median(self, library, n, scheme, op, batch=None):
        """(seconds or None, cell text)."""
        if library != "pimhe":
            op = PEER_OPS.get(op, op)
        result = self.lookup(library, n, scheme, batch)
        label = dict(LIBRARIES)[library]
        if result is None:
            return None, "n/a"
        if "error" in result:
            return None, "n/a " + self.note(f"{label}: {result['error']}")
        if op in result.get("unavailable", {}):
            return None, "n/a " + self.note(f"{label}: {result['unavailable'][op]}")
        timing = result["ops"].get(op)
        if timing is None:
            return None, "n/a"
        text = format_time(timing["median_s"])
        if timing.get("bandwidth") is not None:
            used = timing["bandwidth"]
            text += f" ({100 * used['median_fraction']:.0f}% bw) " + self.note(
                f"{label}: memory-bound row; % bw = bytes that must move (4 per residue of every operand read "
                f"and result written) / median time / this machine's bandwidth "
                f"({used['measured_gb_per_s']:.1f} GB/s, `pimhe bench bandwidth`-style probe run by bench scheme)"
            )
        if timing.get("threads") is not None:
            text += f" @{timing['threads']}t"
        if op in result.get("notes", {}):
            text += " " + self.note(f"{label}: {result['notes'][op]}")
        return timing["median_s"], text

    def timing_row(self, name, n, scheme, op, with_params):
        """One operation at N: pimhe's median per batch size, then each peer's median and its
        ratio to each of pimhe's."""
        peers = [key for key, _ in LIBRARIES if key != "pimhe"]
        row = [name, str(n)]
        if with_params:
            row.append(format_params(self.lookup("pimhe", n, scheme)))
        bases = []
        for batch in self.batches:
            base, text = self.median("pimhe", n, scheme, op, batch)
            bases.append(base)
            row.append(text)
        for key in peers:
            seconds, text = self.median(key, n, scheme, op)
            if with_params:
                row.append(format_params(self.lookup(key, n, scheme)))
            row.append(text)
            row += [f"{seconds / base:.2f}x" if seconds and base else "-" for base in bases]
        return row

    def timing_header(self, with_params):
        peers = [label for key, label in LIBRARIES if key != "pimhe"]
        several = len(self.batches) > 1
        header = ["operation", "N"] + (["pimhe log q"] if with_params else [])
        header += [f"pimhe (batch {b})" if several else "pimhe" for b in self.batches]
        for label in peers:
            header += ([f"{label} log q"] if with_params else []) + [label]
            header += [f"{label}/pimhe (batch {b})" if several else f"{label}/pimhe" for b in self.batches]
        return header

    def main_table(self, degrees, schemes):
        lines = [self.timing_header(True)]
        for n in degrees:
            for op, scheme, name in ROWS:
                if scheme in schemes:
                    lines.append(self.timing_row(name, n, scheme, op, True))
        return markdown(lines)

    def ckks_table(self, degrees):
        lines = [self.timing_header(False)]
        for n in degrees:
            for op, name in CKKS_ROWS:
                lines.append(self.timing_row(name, n, "ckks", op, False))
        return markdown(lines)

    def ckks_params_table(self, degrees):
        """Per N and library: depth, scale, modulus, digits, the sigmoid's degree and the precision
        of x * y after one multiply + relinearize + rescale."""
        lines = [
            [
                "N",
                "library",
                "depth",
                "scale",
                "log q = Q primes + P",
                "dnum",
                "sigmoid degree",
                "precision after multiply: min / mean bits",
                "slots compared",
            ]
        ]
        largest = max(self.batches)
        for n in degrees:
            for key, label in LIBRARIES:
                result = self.lookup(key, n, "ckks", largest)
                if result is None:
                    continue
                if "error" in result:
                    lines.append([str(n), label] + ["n/a " + self.note(f"{label}: {result['error']}")] + ["-"] * 6)
                    continue
                p = result["params"]
                stats = result.get("precision_after_multiply")
                bits = f"{stats['min_bits']:.1f} / {stats['mean_bits']:.1f}" if stats else "-"
                lines.append(
                    [
                        str(n),
                        label,
                        str(p["depth"]),
                        f"2^{p['scale_bits']}",
                        format_params(result),
                        str(p["dnum"]),
                        str(result.get("sigmoid_degree", "-")),
                        bits,
                        str(stats["slots"]) if stats else "-",
                    ]
                )
        return markdown(lines)

    def ntt_table(self, degrees):
        """Time per coefficient-bit: time per ciphertext / (2 polynomials x N x log2 q)."""
        lines = [["operation", "N"] + [f"{label} ps/coeff-bit" for _, label in LIBRARIES] + ["SEAL/pimhe"]]
        for n in degrees:
            for op, scheme, name in ROWS:
                if op not in ("ntt", "intt"):
                    continue
                per_bit = {}
                row = [name, str(n)]
                for key, _ in LIBRARIES:
                    seconds, _ = self.median(key, n, scheme, op)
                    result = self.lookup(key, n, scheme)
                    if seconds is None:
                        row.append("n/a")
                        continue
                    bits = result["params"]["log_q_ciphertext"]
                    per_bit[key] = seconds / (2 * n * bits)
                    row.append(f"{per_bit[key] * 1e12:.1f} ({bits}-bit q)")
                ratio = per_bit.get("seal", 0) / per_bit["pimhe"] if per_bit.get("pimhe") else 0
                row.append(f"{ratio:.2f}x" if ratio else "-")
                lines.append(row)
        return markdown(lines)


def markdown(lines):
    out = ["| " + " | ".join(lines[0]) + " |", "|" + "---|" * len(lines[0])]
    out += ["| " + " | ".join(row) + " |" for row in lines[1:]]
    return "\n".join(out)


def machine():
    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "system": platform.platform()}


def git_commit():
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return (done.stdout.strip() or "unknown") + (" (modified)" if dirty else "")


# ---------------------------------------------------------------------------------------------


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[4096, 8192, 16384], help="ring degrees")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds; the median is reported")
    parser.add_argument("--threads", type=int, default=2, help="pimhe's worker threads (--threads)")
    parser.add_argument(
        "--batch",
        type=int,
        nargs="+",
        default=[8],
        help="ciphertexts per pimhe call; several values run pimhe once per value and give a column each",
    )
    parser.add_argument(
        "--schemes", nargs="+", default=list(SCHEMES), choices=SCHEMES, help="schemes to compare [all]"
    )
    parser.add_argument(
        "--passes",
        type=int,
        default=2,
        help="runs of pimhe per N, scheme and batch size, the batch sizes in alternating order; "
        "their rounds are pooled (bench/compare/verdict.py)",
    )
    parser.add_argument("--seed", type=int, default=1, help="seed of keys, randomness and slots")
    parser.add_argument(
        "--openfhe-threads",
        type=int,
        nargs="+",
        help="OMP_NUM_THREADS values to run OpenFHE with; per operation the fastest is kept "
        "[default: 1 and --threads]",
    )
    parser.add_argument("--peers", nargs="*", default=[p.key for p in PEERS], help="peers to run")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(os.environ.get("PIMHE_COMPARE_CACHE", Path.home() / ".cache" / "pimhe-compare")),
        help="where the peers' virtual environments live [$PIMHE_COMPARE_CACHE or ~/.cache/pimhe-compare]",
    )
    for peer in PEERS:
        parser.add_argument(f"--python-{peer.key}", help=f"interpreter for {peer.label}'s environment")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds one benchmark process may run")
    parser.add_argument("--json", type=Path, help="also write every result and the tables as JSON here")
    parser.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress line on stderr (it is drawn only when stderr is a terminal anyway)",
    )
    args = parser.parse_args()
    if min(args.repeat, args.threads, args.passes, *args.batch) < 1:
        parser.error("--repeat, --threads, --passes and --batch must be at least 1")
    args.batch = list(dict.fromkeys(args.batch))
    args.schemes = [s for s in SCHEMES if s in args.schemes]
    unknown = set(args.peers) - {p.key for p in PEERS}
    if unknown:
        parser.error(f"unknown peers {sorted(unknown)}; choose from {[p.key for p in PEERS]}")
    args.openfhe_threads = sorted(set(args.openfhe_threads or [1, args.threads]))
    return args


def main():
    global PROGRESS
    args = parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    # Steps: pimhe --passes times per N x scheme x batch; each peer run (one per OpenFHE thread
    # count) covers every N x scheme.
    grid = len(args.n) * len(args.schemes)
    peer_runs = sum(
        len(args.openfhe_threads) if peer.key == "openfhe" else 1 for peer in PEERS if peer.key in args.peers
    )
    steps = grid * len(args.batch) * args.passes + grid * peer_runs
    PROGRESS = ProgressLine(steps, sys.stderr.isatty() and not args.no_progress)
    table = Table(args.batch)
    raw = {"pimhe": [], "peers": {}}

    try:
        binary = build_pimhe()
    except RuntimeError as e:
        binary = None
        for n in args.n:
            table.add("pimhe", {"n": n, "error": str(e)})
    match_log_q = {}
    ckks = []  # pimhe's CKKS preset per N, for the peers: N:DEPTH:SCALE_BITS:SIGMOID_DEGREE:K
    for n in args.n:
        for scheme in args.schemes:
            # The batch sizes alternate in order over the passes (verdict.batch_orders); the
            # largest batch's CKKS preset and inputs are what the peers match.
            runs = {batch: [] for batch in args.batch}
            for index, order in enumerate(verdict.batch_orders(args.batch, args.passes)):
                for batch in order:
                    if binary is None:
                        PROGRESS.advance()
                        continue
                    log(f"pimhe {scheme} N={n} batch={batch} pass {index + 1}/{args.passes}")
                    runs[batch].append(run_pimhe(binary, scheme, n, batch, args))
                    PROGRESS.advance()
            for batch, results in runs.items():
                if not results:
                    continue
                result = verdict.pool(results)
                raw["pimhe"].append(result)
                table.add("pimhe", result)
                if "params" not in result or batch != max(args.batch):
                    continue
                if scheme == "bgv":
                    match_log_q[n] = result["params"]["log_q_total"]
                if scheme == "ckks":
                    p = result["params"]
                    ckks.append(f"{n}:{p['depth']}:{p['scale_bits']}:{result['sigmoid_degree']}:{batch}")
        match_log_q.setdefault(n, MAX_LOG_Q_128.get(n, 0))

    versions = {"pimhe": f"pimhe {git_commit()}"}
    threads = {"pimhe": f"{args.threads} (rayon, --threads)"}
    for peer in PEERS:
        if peer.key not in args.peers:
            continue
        counts = args.openfhe_threads if peer.key == "openfhe" else [None]
        runs = []
        try:
            python = ensure_env(peer, args.cache, getattr(args, f"python_{peer.key}"))
            for count in counts:
                log(f"{peer.label} N={args.n} {'/'.join(args.schemes)}" + (f" OMP_NUM_THREADS={count}" if count else ""))
                runs.append(run_peer(peer, python, args, match_log_q, ckks, count))
                PROGRESS.advance(grid)
            output = best_over_threads(runs) if len(runs) > 1 else runs[0]
        except RuntimeError as e:
            PROGRESS.advance(grid * (len(counts) - len(runs)))
            log(f"{peer.label} unavailable: {e}")
            errors = [{"n": n, "error": str(e)} for n in args.n]
            output = {"library": peer.key, "version": f"{peer.label} unavailable", "results": errors}
        raw["peers"][peer.key] = output
        versions[peer.key] = output["version"]
        if "threads" not in output:
            threads[peer.key] = "did not run"
        elif peer.key == "openfhe":
            threads[peer.key] = f"OMP_NUM_THREADS in {args.openfhe_threads}, fastest per operation (@Nt)"
        else:
            threads[peer.key] = f"{output.get('threads', 1)} (single-threaded per operation)"
        for result in output["results"]:
            table.add(peer.key, result)

    PROGRESS.close()
    command = "python3 bench/compare/run.py " + " ".join(sys.argv[1:])
    info = machine()
    batches = " and ".join(map(str, args.batch))
    report = [
        f"Run {started:%Y-%m-%d %H:%M} UTC on {info['nproc']} cores of {info['cpu']} ({info['system']}).",
        f"Command: `{command.strip()}`",
        "",
        "Versions: " + "; ".join(versions.values()) + ".",
        "Threads: " + "; ".join(f"{dict(LIBRARIES)[k]} {v}" for k, v in threads.items()) + ".",
        f"Times are medians per ciphertext: pimhe's of {args.passes} x {args.repeat} rounds ({args.passes} "
        f"runs of `bench scheme`, batch sizes in alternating order, rounds pooled), the peers' of "
        f"{args.repeat} rounds. pimhe runs each operation on a batch of {batches} ciphertexts (batch time / "
        "batch); SEAL and OpenFHE on one ciphertext per call. "
        "Ratios are peer / pimhe (above 1: pimhe is faster). `log q` is the total modulus in bits = "
        "ciphertext primes (count x bits) + key-switching primes P. Every benchmark that ran decrypted its "
        "results and checked them against the plaintext computation (BGV/BFV: exactly, mod t; CKKS: within "
        "pimhe's bounds) before its times were used.",
    ]
    rows = [row for row in ROWS if row[1] in args.schemes]
    rows += [(op, "ckks", label) for op, label in CKKS_ROWS] if "ckks" in args.schemes else []
    peers = [(key, label) for key, label in LIBRARIES if key != "pimhe"]
    report += ["", *verdict.summary(table.seconds, rows, args.n, args.batch, peers)]
    integer = [s for s in args.schemes if s != "ckks"]
    if integer:
        report += [
            "",
            "BGV and BFV, t = 65537, each library's default 128-bit moduli:",
            "",
            table.main_table(args.n, integer),
        ]
    if "bgv" in args.schemes:
        report += [
            "",
            "NTT and inverse NTT per coefficient-bit: time per ciphertext / (2 polynomials x N x log2 q of the "
            "ciphertext), in picoseconds (the libraries use primes of different sizes).",
            "",
            table.ntt_table(args.n),
        ]
    if "ckks" in args.schemes:
        report += [
            "",
            "CKKS at pimhe's preset: the same N, depth and scale, each library's own primes at 128-bit "
            "security, N/2 slots of real inputs (the linear transform: 64 slots). Precision: -log2 of the "
            "largest (min) and of the mean slot error of x * y after one multiply + relinearize + rescale, "
            f"over the {max(args.batch)} ciphertexts of pimhe's batch of {max(args.batch)} (the same inputs "
            "in every library).",
            "",
            table.ckks_params_table(args.n),
            "",
            table.ckks_table(args.n),
        ]
    if table.notes:
        report += ["", "Notes:", ""] + [f"{i + 1}. {text}" for i, text in enumerate(table.notes)]
    text = "\n".join(report)
    print(text)
    if args.json:
        document = {
            "started": started.isoformat(),
            "command": command,
            "machine": info,
            "args": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
            "versions": versions,
            "threads": threads,
            "results": raw,
            "report_markdown": text,
        }
        args.json.write_text(json.dumps(document, indent=1))
        log(f"wrote {args.json}")


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    log(f"done in {time.perf_counter() - start:.0f} s")
