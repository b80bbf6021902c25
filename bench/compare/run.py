#!/usr/bin/env python3
"""Side-by-side comparison of pimhe's CPU backend with SEAL and OpenFHE, in one run on this
machine, at each ring degree N with every library's default 128-bit moduli.

    python3 bench/compare/run.py [--n 4096 8192 16384 32768] [--repeat R] [--threads T]
                                 [--batch B] [--json FILE]

Steps: installs the peers (requirements.txt) into virtual environments under the cache
directory if they are missing; builds pimhe in release mode once (cargo); runs
`pimhe bench scheme` and the peer scripts (peer_seal.py, peer_openfhe.py) for each N; prints
one Markdown table of per-ciphertext medians with each library's parameters and the ratios
peer / pimhe (above 1: pimhe is faster), then the NTT per coefficient-bit. A peer that cannot
be installed or lacks an operation is reported as n/a with the reason, and the run goes on.

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

# The rows of the table: (operation as the benchmarks name it, scheme, label).
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


def log(message):
    print(f"[compare] {message}", file=sys.stderr, flush=True)


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


def run_pimhe(binary, scheme, n, args):
    """`pimhe bench scheme` in the common result format (per-ciphertext times)."""
    command = [binary, "bench", "scheme", "--scheme", scheme, "--n", str(n), "--batch", str(args.batch)]
    command += ["--threads", str(args.threads), "--repeat", str(args.repeat), "--seed", str(args.seed), "--json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout)
    if done.returncode != 0:
        return {"n": n, "scheme": scheme, "error": last_line(done.stderr)}
    report = json.loads(done.stdout)
    p = report["params"]
    return {
        "n": n,
        "scheme": scheme,
        "threads": report["threads"],
        "batch": report["batch"],
        "checked": report["checked"],
        "params": {
            "plain_modulus": p["plain_modulus"],
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
            }
            for o in report["ops"]
        },
        "notes": {
            "decrypt": "pimhe decrypts in RNS only (BGV: CRT straight to t in f64; BFV: BEHZ Algorithm 1) and "
            "refuses a ciphertext whose noise budget is spent instead of returning a wrong message"
        },
        "raw": report,
    }


# ---------------------------------------------------------------------------------------------
# Peers


def run_peer(peer, python, args, match_log_q, threads):
    """Runs a peer script for every N; returns its JSON object (or raises RuntimeError)."""
    command = [str(python), str(HERE / peer.script), "--n", *map(str, args.n)]
    command += ["--repeat", str(args.repeat), "--seed", str(args.seed)]
    if peer.key == "openfhe":
        command += ["--match-log-q", *(f"{n}:{bits}" for n, bits in match_log_q.items())]
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
    """Collects results by (library, n, scheme) and prints the Markdown tables with footnotes."""

    def __init__(self):
        self.results = {}
        self.notes = []

    def add(self, library, result):
        self.results[(library, result["n"], result.get("scheme"))] = result

    def note(self, text):
        if text not in self.notes:
            self.notes.append(text)
        return f"[{self.notes.index(text) + 1}]"

    def lookup(self, library, n, scheme):
        return self.results.get((library, n, scheme)) or self.results.get((library, n, None))

    def median(self, library, n, scheme, op):
        """(seconds or None, cell text)."""
        result = self.lookup(library, n, scheme)
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
        if timing.get("threads") is not None:
            text += f" @{timing['threads']}t"
        if op in result.get("notes", {}):
            text += " " + self.note(f"{label}: {result['notes'][op]}")
        return timing["median_s"], text

    def main_table(self, degrees):
        peers = [(key, label) for key, label in LIBRARIES if key != "pimhe"]
        header = ["operation", "N", "pimhe log q", "pimhe"]
        for _, label in peers:
            header += [f"{label} log q", label, f"{label}/pimhe"]
        lines = [header]
        for n in degrees:
            for op, scheme, name in ROWS:
                base, base_text = self.median("pimhe", n, scheme, op)
                row = [name, str(n), format_params(self.lookup("pimhe", n, scheme)), base_text]
                for key, _ in peers:
                    seconds, text = self.median(key, n, scheme, op)
                    ratio = f"{seconds / base:.2f}x" if seconds and base else "-"
                    row += [format_params(self.lookup(key, n, scheme)), text, ratio]
                lines.append(row)
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
    parser.add_argument("--batch", type=int, default=8, help="ciphertexts per pimhe call")
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
    args = parser.parse_args()
    if args.repeat < 1 or args.threads < 1 or args.batch < 1:
        parser.error("--repeat, --threads and --batch must be at least 1")
    unknown = set(args.peers) - {p.key for p in PEERS}
    if unknown:
        parser.error(f"unknown peers {sorted(unknown)}; choose from {[p.key for p in PEERS]}")
    args.openfhe_threads = sorted(set(args.openfhe_threads or [1, args.threads]))
    return args


def main():
    args = parse_args()
    started = datetime.datetime.now(datetime.timezone.utc)
    table = Table()
    raw = {"pimhe": [], "peers": {}}

    try:
        binary = build_pimhe()
    except RuntimeError as e:
        binary = None
        for n in args.n:
            table.add("pimhe", {"n": n, "error": str(e)})
    match_log_q = {}
    for n in args.n:
        for scheme in ("bgv", "bfv"):
            if binary is None:
                continue
            log(f"pimhe {scheme} N={n}")
            result = run_pimhe(binary, scheme, n, args)
            raw["pimhe"].append(result)
            table.add("pimhe", result)
            if scheme == "bgv" and "params" in result:
                match_log_q[n] = result["params"]["log_q_total"]
        match_log_q.setdefault(n, MAX_LOG_Q_128.get(n, 0))

    versions = {"pimhe": f"pimhe {git_commit()}"}
    threads = {"pimhe": f"{args.threads} (rayon, --threads)"}
    for peer in PEERS:
        if peer.key not in args.peers:
            continue
        try:
            python = ensure_env(peer, args.cache, getattr(args, f"python_{peer.key}"))
            counts = args.openfhe_threads if peer.key == "openfhe" else [None]
            runs = []
            for count in counts:
                log(f"{peer.label} N={args.n}" + (f" OMP_NUM_THREADS={count}" if count else ""))
                runs.append(run_peer(peer, python, args, match_log_q, count))
            output = best_over_threads(runs) if len(runs) > 1 else runs[0]
        except RuntimeError as e:
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

    command = "python3 bench/compare/run.py " + " ".join(sys.argv[1:])
    info = machine()
    report = [
        f"Run {started:%Y-%m-%d %H:%M} UTC on {info['nproc']} cores of {info['cpu']} ({info['system']}).",
        f"Command: `{command.strip()}`",
        "",
        "Versions: " + "; ".join(versions.values()) + ".",
        "Threads: " + "; ".join(f"{dict(LIBRARIES)[k]} {v}" for k, v in threads.items()) + ".",
        f"Times are medians of {args.repeat} rounds, per ciphertext: pimhe runs each operation on a batch "
        f"of {args.batch} ciphertexts (time / {args.batch}); SEAL and OpenFHE on one ciphertext per call. "
        "Ratios are peer / pimhe (above 1: pimhe is faster). `log q` is the total modulus in bits = "
        "ciphertext primes (count x bits) + key-switching primes P. t = 65537 everywhere. Every benchmark "
        "that ran decrypted its product and checked it against the plaintext product.",
        "",
        table.main_table(args.n),
        "",
        "NTT and inverse NTT per coefficient-bit: time per ciphertext / (2 polynomials x N x log2 q of the "
        "ciphertext), in picoseconds (the libraries use primes of different sizes).",
        "",
        table.ntt_table(args.n),
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
