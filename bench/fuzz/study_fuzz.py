#!/usr/bin/env python3
"""Fuzz the study commands (`pimhe keygen / encrypt / eval / decrypt`) with multi-command
scenarios: an honest study, or one hostile perturbation of it, and check every step.

Case i of seed s is always the same scenario (its random generator is seeded with
"study:s:i"), so any case can be replayed alone. Each scenario declares a random study, writes a
CSV of honest rows within its bounds, runs keygen, encrypt, eval and decrypt, and perturbs at
most one thing on the way: hostile study.json edits, duplicated and foreign submissions,
non-regular files among the submissions, a rewritten user count, damaged files, a secret key in
the public directory, secret and public directories that alias, a client past the bound, too
few or too many users, outputs written over. Every step must succeed or refuse cleanly (exit 1
or 2 with an `error:` line); a decrypt that exits 0 must print exactly the statistic of the
values actually submitted (fractions.Fraction, from the CSV text); a perturbation that must be
refused is `wrong` if the step that must refuse it exits 0.

    python3 bench/fuzz/study_fuzz.py --cases 200 --seed 1 --jobs 2 --light      # CI
    python3 bench/fuzz/study_fuzz.py --seed 1 --replay 42                        # one case

Exit status: 0 if no case fell in a defect class, 1 otherwise, 2 on a harness usage error.
The process runner, the classes of a single run and the exact statistics are fuzzlib/'s, shared
with cli_fuzz.py; see README.md beside this file for the scenarios and the oracle.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import stat
import struct
import sys
import tempfile
import time
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzzlib.case import Case  # noqa: E402  (beside this file)
from fuzzlib.driver import DEFAULT_BINARY, REPO, signature  # noqa: E402
from fuzzlib.oracle import matches, stats_expected  # noqa: E402
from fuzzlib.process import execute  # noqa: E402
from fuzzlib.verdict import DEFECT_CLASSES, classify, first_line  # noqa: E402

# Each study command at these sizes takes well under a second; a step still running after this
# long is a hang (a FIFO read, say), not a slow computation.
STEP_TIMEOUT_S = 60

# `caught`: a hostile perturbation refused where it must be (or earlier, cleanly).
# `harness-error`: an exception in this script (a defect of the fuzzer, reported, not hidden).
DEFECTS = DEFECT_CLASSES + ("harness-error",)
CLASSES = ("ok", "caught", "refused") + DEFECTS

# Refusals an honest study may get at keygen: its bounds need more plaintext capacity or noise
# budget than the ring degree has (the declaration is drawn to fit, but the frontier is the CLI's).
CAPACITY = re.compile(r"noise budget|2\^126|plaintext moduli|too few for parallel mode")

STUDY_FIELDS = ("id", "statistic", "columns", "decimals", "max_value", "max_users", "min_users", "scheme", "n",
                "plain_moduli", "seeded_keys")
NAMES = ["age", "income", "x", "x1", "x2", "score", "h\u00f6he", "\u5e74\u9f62", "col_9", "Y", "w", "bmi"]
U64 = 2**64

# Perturbations and their weights in the mix (README.md describes each).
KINDS = {
    "honest": 16, "json-edit": 16, "duplicate": 5, "foreign": 6, "special-file": 8, "junk-ignored": 2,
    "rewrite-count": 6, "damage": 10, "secret-in-public": 4, "dir-alias": 6, "client-copy": 8, "too-few": 3,
    "too-many": 2, "overwrite": 4, "keygen-again": 2, "shared-dir": 2, "over-bound-csv": 2,
}
# --attacks adds scenarios beyond the threat model (README.md): what they show is known.
ATTACKS = {"wrap-attack": 20}
LIGHT = False
WITH_ATTACKS = False


class Stop(Exception):
    """Ends a scenario with its class."""

    def __init__(self, cls, detail, step=None):
        super().__init__(detail)
        self.cls, self.detail, self.step = cls, detail, step


@dataclass
class Declaration:
    statistic: str
    columns: list
    decimals: int
    max_value: int  # fixed point: the bound as the analyst means it, M = V * 10^decimals
    max_users: int
    min_users: int = None  # None: the default (2)
    scheme: str = None  # None: the default (bgv)
    n: int = 4096

    def keygen_args(self, rng, public, secret, seed):
        v = decimal_text(self.max_value, self.decimals, self.decimals if rng.random() < 0.2 else None)
        argv = ["keygen", "--statistic", self.statistic, "--columns", ",".join(self.columns),
                "--max-value", v, "--max-users", str(self.max_users)]
        if self.decimals or rng.random() < 0.5:
            argv += ["--decimals", str(self.decimals)]
        if self.min_users is not None:
            argv += ["--min-users", str(self.min_users)]
        if self.scheme is not None:
            argv += ["--scheme", self.scheme]
        if self.n != 8192 or rng.random() < 0.7:
            argv += ["--n", str(self.n)]
        argv += ["--public-dir", public, "--secret-dir", secret]
        if seed is not None:
            argv += ["--seed", str(seed)]
        return argv + json_flag(rng) + threads_flag(rng)

    @property
    def least_users(self):
        return 2 if self.min_users is None else self.min_users


def draw_umask(rng):
    """The analyst's umask (None: the harness's own): secrets must stay the owner's whatever it is."""
    return rng.choice([None, None, 0o077, 0o027, 0o000])


def json_flag(rng):
    return ["--json"] if rng.random() < 0.9 else []


def threads_flag(rng):
    return ["--threads", rng.choice(["1", "2"])] if rng.random() < 0.2 else []


def decimal_text(fixed, decimals, places=None):
    """fixed / 10^decimals written exactly, with `places` decimal places (at least the fewest
    that write it exactly; None: the fewest)."""
    sign, digits = ("-" if fixed < 0 else ""), str(abs(fixed)).rjust(decimals + 1, "0")
    whole, fraction = digits[: len(digits) - decimals], digits[len(digits) - decimals:]
    fewest = len(fraction.rstrip("0"))
    places = fewest if places is None else max(places, fewest)
    fraction = fraction[:places]
    return sign + whole + ("." + fraction if places else "")


# ---------------------------------------------------------------------------------------------
# Declarations and data


def term(statistic, m, decimals):
    """The largest magnitude of one user's term of an aggregate (the CLI's Layout::term_bound)."""
    if statistic == "mean":
        return max(m, 1)
    largest = max(m, 10**decimals) if statistic == "linreg" else m
    return max(largest * largest, 1)


def moduli_size(statistic, m, decimals, users, n):
    """What decides the study's plaintext moduli: the bits of the smallest prime size tried
    (stats::plain_moduli_for). Two bounds with the same size have the same moduli."""
    needed = (2 * term(statistic, m, decimals) * users + 1).bit_length()
    return max(needed + 1, n.bit_length() - 1 + 3)


def draw_declaration(rng):
    statistic = rng.choices(["mean", "variance", "linreg"], [4, 3, 3])[0]
    count = rng.randint(1, 4) if statistic != "linreg" else rng.choice([2, 2, 3, 3, 4])
    if statistic == "linreg" and rng.random() < 0.02:
        count = 1  # a regression without a feature: refused by keygen
    columns = rng.sample(NAMES, count)
    decimals = rng.randint(0, 3)
    n = 8192 if rng.random() < (0.1 if LIGHT else 0.2) else 4096
    scale = rng.choices([1, 2, 3, 4, 6, 9, 12], [4, 6, 6, 4, 3, 2, 1])[0]
    m = rng.randint(1, 10**scale) if rng.random() < 0.97 else 0
    users = rng.choice([8, 10, 20, 50, 100, 1000, 10**5]) if rng.random() < 0.7 else rng.randint(1, 12)
    decl = Declaration(statistic, columns, decimals, m, users, n=n)
    # Products at N = 4096 keep noise budget for small bounds only: most go to 8192.
    if statistic != "mean" and n == 4096 and term(statistic, m, decimals) * users > 10**6 and rng.random() < 0.9:
        decl.n = 8192
    if rng.random() < 0.4:
        decl.min_users = rng.randint(1, min(users, 4))
    decl.scheme = rng.choice([None, None, "bgv", "bfv"])
    return decl


def draw_rows(rng, decl, count):
    """`count` honest rows: per column, fixed-point integers within the bound."""
    m = decl.max_value
    columns = []
    for _ in decl.columns:
        profile = rng.choices(["uniform", "edges", "small", "constant", "positive"], [10, 3, 3, 2, 2])[0]
        if profile == "uniform":
            column = [rng.randint(-m, m) for _ in range(count)]
        elif profile == "edges":
            column = [rng.choice([-m, m, 0, m, -m]) for _ in range(count)]
        elif profile == "small":
            column = [rng.randint(-min(m, 10), min(m, 10)) for _ in range(count)]
        elif profile == "constant":
            column = [rng.randint(-m, m)] * count
        else:
            column = [rng.randint(0, m) for _ in range(count)]
        columns.append(column)
    return [list(row) for row in zip(*columns)]


def row_count(rng, decl):
    most = 8 if LIGHT else 20
    low = max(decl.least_users, 1)
    high = min(decl.max_users, most if rng.random() < 0.9 else most * 2)
    return rng.randint(low, high) if low <= high else None


def write_csv(rng, path, decl, rows, columns=None):
    """The rows (fixed point at decl.decimals) as a CSV: the study's columns, sometimes reordered,
    with a junk column, spelled with any number of places up to the declared ones."""
    columns = list(columns or decl.columns)
    header = columns[:]
    if rng.random() < 0.3:
        rng.shuffle(header)
    junk = rng.random() < 0.2
    if junk:
        header.insert(rng.randint(0, len(header)), "note")
    lines = [",".join(header)]
    for row in rows:
        cells = []
        for name in header:
            if name == "note":
                cells.append(rng.choice(["x", "", "n/a"]))
            else:
                value = row[columns.index(name)]
                places = rng.randint(0, decl.decimals) if rng.random() < 0.3 else None
                cells.append(decimal_text(value, decl.decimals, places))
        lines.append(",".join(cells))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + ("\n" if rng.random() < 0.9 else ""))


# ---------------------------------------------------------------------------------------------
# Files: study.json's meaning, bundles


def study_meaning(data, last_wins=False):
    """What the CLI reads in study.json, comparable: its fields (unknown ones are ignored),
    typed, the identifier's hex in lower case; None when it is not a study (or has a key twice,
    unless `last_wins`)."""
    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)) and not last_wins:
            raise ValueError("duplicate key")
        return dict(pairs)

    def no_constants(name):
        raise ValueError(name)

    try:
        obj = json.loads(data.decode("utf-8"), object_pairs_hook=no_duplicates, parse_constant=no_constants)
    except RecursionError:
        # edit_study's unknown field "nest", nested deeper than Python's parser goes: the CLI
        # ignores unknown fields (its parser skips them without recursing), so judge the rest.
        shallow = re.sub(rb'"nest": \[+\]+,', b"", data, count=1)
        return study_meaning(shallow, last_wins) if shallow != data else None
    except ValueError:
        return None
    if not isinstance(obj, dict) or any(f not in obj for f in STUDY_FIELDS):
        return None
    kept = {f: obj[f] for f in STUDY_FIELDS}
    if isinstance(kept["id"], str):
        kept["id"] = kept["id"].lower()
    return json.dumps(kept, sort_keys=True)


def read_bundle(data):
    """(version, [(name, bytes)]) of a bundle (docs/SERIALIZATION.md, "Bundles")."""
    assert data[:8] == b"PIMHEBDL", "not a bundle"
    version, count = struct.unpack_from("<HI", data, 8)
    at, entries = 14, []
    for _ in range(count):
        length = data[at]
        name = data[at + 1: at + 1 + length].decode()
        at += 1 + length
        (size,) = struct.unpack_from("<I", data, at)
        entries.append((name, data[at + 4: at + 4 + size]))
        at += 4 + size
    return version, entries


def write_bundle(entries, version=2):
    out = bytearray(b"PIMHEBDL" + struct.pack("<HI", version, len(entries)))
    for name, payload in entries:
        raw = name.encode()
        out += bytes([len(raw)]) + raw + struct.pack("<I", len(payload)) + payload
    if version >= 2:
        out += hashlib.sha256(bytes(out)).digest()
    return bytes(out)


def damage(rng, data):
    """Bytes flipped, cut, appended or zeroed: (new bytes, what was done)."""
    data = bytearray(data)
    op = rng.choice(["flip", "flip", "flip", "truncate", "append", "zero", "header", "checksum"])
    if op == "truncate":
        cut = rng.randrange(len(data))
        return bytes(data[:cut]), f"truncated to {cut} of {len(data)} bytes"
    if op == "append":
        extra = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        return bytes(data) + extra, f"{len(extra)} bytes appended"
    if op == "zero":
        start = rng.randrange(len(data))
        length = min(rng.randint(1, 4096), len(data) - start)
        if not any(data[start: start + length]):
            data[start] ^= 0xFF
        data[start: start + length] = bytes(length)
        return bytes(data), f"{length} bytes zeroed at {start}"
    region = {"header": (0, min(len(data), 64)), "checksum": (max(0, len(data) - 32), len(data))}.get(op, (0, len(data)))
    flips = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        at = rng.randrange(*region)
        mask = 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randint(1, 255)
        data[at] ^= mask
        flips.append(f"{at}^{mask:#x}")
    return bytes(data), "bytes flipped at " + ", ".join(flips)


# --- study.json edits ---------------------------------------------------------------------------


def edit_study(rng, text, decl):
    """A hostile or odd edit of study.json's text: (new bytes, what was done)."""
    study = json.loads(text)
    kind = rng.choices(["field", "remove", "unknown", "invalid", "huge", "reformat", "flip", "duplicate"],
                       [40, 5, 5, 8, 6, 5, 8, 3])[0]
    if kind == "invalid":
        variant = rng.choice(["truncate", "garbage", "empty", "null", "array", "bom", "not-utf8", "trailing"])
        data = {
            "truncate": text[: rng.randrange(len(text))].encode(),
            "garbage": bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))),
            "empty": b"",
            "null": b"null",
            "array": b"[" + text.encode() + b"]",
            "bom": b"\xef\xbb\xbf" + text.encode(),
            "not-utf8": text.encode().replace(b'"bgv"', b'"bg\xff"').replace(b'"bfv"', b'"bf\xff"'),
            "trailing": text.encode() + b"\n{}",
        }[variant]
        return data, f"study.json invalid: {variant}"
    if kind == "flip":
        data, what = damage(rng, text.encode())
        return data, "study.json " + what
    if kind == "reformat":
        variant = rng.choice(["compact", "sorted", "indent4", "escaped", "upper-id"])
        if variant == "escaped":
            return text.replace('"id"', '"\\u0069d"').encode(), "study.json reformatted: escaped key"
        if variant == "upper-id":
            study["id"] = study["id"].upper()
        return json.dumps(study, sort_keys=variant == "sorted", indent=None if variant == "compact" else 4,
                          ensure_ascii=rng.random() < 0.5).encode(), f"study.json reformatted: {variant}"
    if kind == "remove":
        name = rng.choice(STUDY_FIELDS)
        del study[name]
        return json.dumps(study, indent=2).encode(), f"study.json without {name}"
    if kind == "unknown":
        study[rng.choice(["comment", "x", "max_values", "Decimals"])] = rng.choice([1, "hello", [1, 2], None, 10**30])
        return json.dumps(study, indent=2).encode(), "study.json with an unknown field"
    if kind == "duplicate":
        name = rng.choice(STUDY_FIELDS)
        value = json.dumps(field_edit(rng, name, study[name], study) if rng.random() < 0.5 else study[name])
        return text.replace("{", "{\n  " + json.dumps(name) + ": " + value + ",", 1).encode(), \
            f"study.json with {name} twice"
    if kind == "huge":
        variant = rng.choice(["big-number", "padding", "deep", "long-name", "many-moduli"])
        if variant == "big-number":
            name = rng.choice(["decimals", "max_value", "max_users", "min_users", "n"])
            study[name] = rng.choice([U64 - 1, U64, 10**30, 2**63, 2**32])
            data = json.dumps(study, indent=2).encode()
            if rng.random() < 0.3:  # a number beyond every float
                data = data.replace(json.dumps(study[name]).encode(), b"1e400", 1)
            return data, f"study.json {name} huge"
        if variant == "padding":
            return text.encode() + b" " * rng.choice([1 << 20, (1 << 20) - len(text) - 1]), \
                "study.json padded to about 1 MiB"
        if variant == "deep":
            depth = rng.choice([200, 100000])
            return text.replace("{", '{"nest": ' + "[" * depth + "]" * depth + ",", 1).encode(), \
                f"study.json nested {depth} deep"
        if variant == "long-name":
            study["columns"][0] = "c" * rng.choice([300, 100000])
            return json.dumps(study, indent=2).encode(), "study.json with a long column name"
        study["plain_moduli"] = study["plain_moduli"] * rng.choice([2, 100000])
        return json.dumps(study, indent=2).encode(), "study.json with many plain moduli"
    name = rng.choice(STUDY_FIELDS)
    study[name] = field_edit(rng, name, study[name], study)
    return json.dumps(study, indent=2).encode(), f"study.json {name} -> {json.dumps(study[name])[:80]}"


def field_edit(rng, name, value, study):
    if name == "decimals":
        return rng.choice([value + 1, max(value - 1, 0) if value else 9, 10, -1, 4294967296, str(value), float(value), None])
    if name == "columns":
        edited = list(value)
        roll = rng.randrange(6)
        if roll == 0:
            edited[0] = edited[0] + "2"
        elif roll == 1 and len(edited) > 1:
            edited[0], edited[1] = edited[1], edited[0]
        elif roll == 2 and len(edited) > 1:
            edited.pop()
        elif roll == 3:
            edited.append("extra")
        elif roll == 4:
            edited = rng.choice([[], [edited[0], edited[0]], [" " + edited[0]], 5, edited[0]])
        else:
            edited = edited[::-1] if len(edited) > 1 else [edited[0].upper()]
        return edited
    if name == "max_value":
        return rng.choice([value * 2, value + 1, max(value - 1, 0), 0, value * 10, U64 - 1, U64, -5, 1.5, str(value)])
    if name == "max_users":
        return rng.choice([value + 1, max(value - 1, 0), 0, value * 2, U64 - 1, U64, 1])
    if name == "min_users":
        return rng.choice([0, 1, study["max_users"], study["max_users"] + 1, value + 1, U64 - 1])
    if name == "statistic":
        return rng.choice([s for s in ("mean", "variance", "linreg") if s != value] + ["median", "", 3, value.title()])
    if name == "scheme":
        return rng.choice([{"bgv": "bfv", "bfv": "bgv"}[value], "ckks", "", value.upper()])
    if name == "n":
        return rng.choice([{4096: 8192, 8192: 4096}[value], 1024, 2048, 16384, 0, 3, U64])
    if name == "plain_moduli":
        moduli = list(value)
        return rng.choice([[], moduli[:-1], moduli + [65537], moduli[::-1] if len(moduli) > 1 else [moduli[0] + 2],
                           [moduli[0] + 2] + moduli[1:], [0], [2**32], ["x"]])
    if name == "id":
        return rng.choice(["%032x" % rng.randrange(2**128), value[:-2], value + "00", "zz" * 16, 5, ""])
    return rng.choice([not value, "true", 1, None])  # seeded_keys


# ---------------------------------------------------------------------------------------------
# A scenario


class Scenario:
    """One case: the runs of its steps, in a directory of its own, and what each must do."""

    def __init__(self, binary, seed, index, root, verbose=False):
        self.binary, self.seed, self.index, self.root, self.verbose = binary, seed, index, root, verbose
        self.rng = random.Random(f"study:{seed}:{index}")
        self.log = []  # steps and file operations, for the report and the replay

    def path(self, *parts):
        return os.path.join(self.root, *parts)

    def note(self, text):
        self.log.append("# " + text)
        if self.verbose:
            print("# " + text)

    def run(self, name, argv, expect="must", allow=None, exit1=False, umask=None):
        """Runs one command. expect: 'must' (succeed: a refusal is refused-valid unless its
        message matches `allow`), 'may' (succeed or refuse) or 'refuse' (exit 0 is wrong).
        exit1: a refusal may have status 1 (decryption's integrity checks); else it must be 2.
        Returns the run when it succeeded; raises Stop otherwise."""
        case = Case(self.index, argv)
        previous = os.umask(umask) if umask is not None else None  # inherited by the command
        try:
            run = execute(self.binary, case, self.root, STEP_TIMEOUT_S)
        finally:
            if previous is not None:
                os.umask(previous)
        cls, detail = classify(case, run)
        shown = (f"(umask {umask:03o}; pimhe " if umask is not None else "pimhe ") + shlex.join(argv) + \
            (")" if umask is not None else "")
        self.log.append(f"{shown}  -> exit {run.returncode}")
        if self.verbose:
            print(f"$ {shown}\n--- exit {run.returncode} in {run.seconds:.2f} s")
            print((run.stdout[-2000:] + run.stderr[-2000:]).rstrip())
        if cls in DEFECT_CLASSES:
            raise Stop(cls, f"{name}: {detail}", self.stderr_of(name, run))
        if cls == "ok":
            if expect == "refuse":
                raise Stop("wrong", f"{name} exited 0 where it must refuse", self.stderr_of(name, run))
            return run
        message = first_line(run.stderr, "error:")
        if run.returncode == 1 and not exit1:
            raise Stop("exit-code", f"{name}: exit 1 (a usage or input error is 2): {message}", self.stderr_of(name, run))
        if expect == "must" and not (allow and allow.search(run.stderr)):
            raise Stop("refused-valid", f"{name}: {message}", self.stderr_of(name, run))
        raise Stop("caught" if expect == "refuse" else "refused", f"{name}: {message}", self.stderr_of(name, run))

    @staticmethod
    def stderr_of(name, run):
        return {"step": name, "stdout_tail": run.stdout[-800:], "stderr_tail": run.stderr[-1500:]}

    def write(self, relative, data):
        path = self.path(relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path) and not os.path.isdir(path):
            os.chmod(path, 0o600)
            os.remove(path)
        with open(path, "wb") as f:
            f.write(data)

    def read(self, relative):
        with open(self.path(relative), "rb") as f:
            return f.read()

    def submissions(self, directory="subs"):
        return sorted(f for f in os.listdir(self.path(directory)) if f.endswith(".pimhe"))

    # --- the oracle of a decryption ---------------------------------------------------------

    def check_decrypt(self, run, decl, submitted, is_json):
        """`submitted`: every row the aggregates hold, fixed point at decl.decimals, in the
        study's column order."""
        if is_json:
            try:
                report = json.loads(run.stdout)
            except ValueError:
                raise Stop("wrong", "decrypt --json: output is not JSON")
        else:
            report = human_report(run.stdout)
        if not isinstance(report, dict):
            raise Stop("wrong", "decrypt --json: output is not a JSON object")
        oracle = {"statistic": decl.statistic, "names": decl.columns,
                  "columns": [[(row[c], decl.decimals) for row in submitted] for c in range(len(decl.columns))]}
        expected, condition = stats_expected(oracle)
        if condition == "singular":
            raise Stop("wrong", "decrypt exited 0 for a singular regression (the exact X^T X is singular)")
        if report.get("users") != len(submitted):
            raise Stop("wrong", f"decrypt: users {report.get('users')} != {len(submitted)} submitted")
        estimates = report.get("estimates", [])
        if [e.get("name") for e in estimates] != [name for name, _, _ in expected]:
            raise Stop("wrong", f"decrypt: estimates {[e.get('name') for e in estimates]} != "
                                f"{[name for name, _, _ in expected]}")
        for estimate, (name, value, tol) in zip(estimates, expected):
            got = estimate.get("value")
            # The text output prints 10 decimal places.
            if not matches(got, value, tol if is_json else tol + 5e-11):
                shown = "undefined (null)" if value is None else f"{float(value):.17g}"
                raise Stop("wrong", f"decrypt: {name} printed {got}, exact {shown} (tolerance {tol:.3g})")
        if self.verbose:
            print("--- exact: " + ", ".join(
                f"{name}={'null' if v is None else format(float(v), '.17g')}" for name, v, _ in expected))

    @staticmethod
    def decrypt_expectation(decl, submitted):
        """Honest aggregates: a singular regression must be refused, an ill-conditioned one may
        be (the oracle's condition number above 10^6); anything else must be answered."""
        if decl.statistic != "linreg":
            return "must"
        oracle = {"statistic": "linreg", "names": decl.columns,
                  "columns": [[(row[c], decl.decimals) for row in submitted] for c in range(len(decl.columns))]}
        _, condition = stats_expected(oracle)
        return "refuse" if condition == "singular" else "may" if condition == "ill" else "must"


def human_report(stdout):
    """decrypt's text output as its JSON would be: 'pimhe decrypt: S over N users', then one
    line per estimate (name, value with 10 decimals), then the noise budget."""
    lines = stdout.splitlines()
    head = re.match(r"pimhe decrypt: .* over (\d+) users$", lines[0]) if lines else None
    if not head:
        raise Stop("wrong", f"decrypt: text output without its 'over N users' line: {stdout[:200]!r}")
    estimates = []
    for line in lines[1:]:
        if line.strip().startswith("noise budget"):
            break
        name, _, value = line.strip().rpartition(" ")
        try:
            number = float(value)
        except ValueError:
            raise Stop("wrong", f"decrypt: text output line {line!r} is not 'name value'")
        estimates.append({"name": name.strip(), "value": None if number != number else number})
    return {"users": int(head.group(1)), "estimates": estimates}


# ---------------------------------------------------------------------------------------------
# The scenarios


def scenario(sc):
    """Draws and runs case sc.index: raises Stop with its class."""
    rng = sc.rng
    kinds = dict(KINDS, **ATTACKS) if WITH_ATTACKS else KINDS
    kind = rng.choices(list(kinds), list(kinds.values()))[0]
    sc.kind = kind
    decl = draw_declaration(rng)
    if kind == "wrap-attack":
        decl.statistic, decl.max_users, decl.min_users = "mean", rng.choice([50, 100, 1000]), None
    rows = None
    if kind == "too-few":
        decl.min_users = rng.randint(2, min(decl.max_users, 5)) if decl.max_users >= 2 else None
        count = rng.randint(1, max(decl.least_users - 1, 1))
    elif kind == "too-many":
        decl.max_users = rng.randint(1, 6)
        decl.min_users = None if rng.random() < 0.5 else 1
        count = decl.max_users + rng.randint(1, 3)
    else:
        count = row_count(rng, decl)
        if count is None:  # min users above max users: keygen refuses
            count = 1
    if kind == "client-copy":  # room for the client's rows
        decl.max_users = max(decl.max_users, count + 3)
    rows = draw_rows(rng, decl, count)
    sc.note(f"scenario {kind}: {decl}")
    write_csv(rng, sc.path("data.csv"), decl, rows)
    seed = rng.randrange(U64) if rng.random() < 0.9 else None
    keygen_expect = "must"
    if decl.statistic == "linreg" and len(decl.columns) == 1:
        keygen_expect = "refuse"
    if decl.least_users > decl.max_users:
        keygen_expect = "refuse"
    public, secret = "pub", "sec"
    if kind == "dir-alias" and rng.random() < 0.6:
        return dir_alias_at_keygen(sc, decl, seed)
    if rng.random() < 0.2:
        public, secret = rng.choice([("./pub/", sc.path("sec")), (sc.path("pub"), "./sec"), ("a/../pub", "sec/")])
        os.makedirs(sc.path("a"), exist_ok=True)
    sc.run("keygen", decl.keygen_args(rng, public, secret, seed), keygen_expect, allow=CAPACITY, umask=draw_umask(rng))
    if keygen_expect == "refuse":
        raise Stop("wrong", "keygen exited 0 for a declaration it must refuse")
    sc.study_text = sc.read("pub/study.json").decode()
    sc.study = json.loads(sc.study_text)
    if sc.study["max_value"] < decl.max_value:
        raise Stop("wrong", f"keygen --max-value {decimal_text(decl.max_value, decl.decimals)} "
                            f"declared max_value {sc.study['max_value']} < {decl.max_value}")
    sc.enc_seed = rng.randrange(U64)
    return {
        "honest": honest, "json-edit": json_edit, "duplicate": duplicate, "foreign": foreign,
        "special-file": special_file, "junk-ignored": junk_ignored, "rewrite-count": rewrite_count,
        "damage": damage_file, "secret-in-public": secret_in_public, "dir-alias": dir_alias_at_decrypt,
        "client-copy": client_copy, "too-few": too_few, "too-many": too_many, "overwrite": overwrite,
        "keygen-again": keygen_again, "shared-dir": shared_dir, "over-bound-csv": over_bound_csv,
        "wrap-attack": wrap_attack,
    }[kind](sc, decl, rows)


def encrypt(sc, expect="must", csv="data.csv", public="pub", out="subs", seed=None, users=None):
    rng = sc.rng
    seed = sc.enc_seed if seed is None else seed
    argv = ["encrypt", "--public-dir", public, "--input", csv, "--out", out]
    if seed is not None and rng.random() < 0.95:
        argv += ["--seed", str(seed)]
    json_out = rng.random() < 0.9
    run = sc.run("encrypt", argv + (["--json"] if json_out else []) + threads_flag(rng), expect)
    if json_out and users is not None and reported_users(run, "encrypt") != users:
        raise Stop("wrong", f"encrypt: users {reported_users(run, 'encrypt')} != {users} rows")
    return run


def reported_users(run, step):
    try:
        return json.loads(run.stdout).get("users")
    except (ValueError, AttributeError):
        raise Stop("wrong", f"{step} --json: the output is not a JSON object")


def evaluate(sc, expect="must", out="agg.pimhe", users=None, extra=(), public="pub", subs="subs"):
    rng = sc.rng
    argv = ["eval", "--public-dir", public, "--submissions", subs, "--out", out] + list(extra)
    allow = None
    if rng.random() < (0.04 if LIGHT else 0.1):
        argv += ["--backend", "upmem-emu", "--dpus", rng.choice(["16", "32", "64"])]
        allow = CAPACITY  # fewer DPUs than the study has primes
    elif rng.random() < 0.2:
        argv += ["--backend", "cpu"]
    json_out = rng.random() < 0.9
    run = sc.run("eval", argv + (["--json"] if json_out else []) + threads_flag(rng), expect, allow=allow)
    if json_out and users is not None and reported_users(run, "eval") != users:
        raise Stop("wrong", f"eval: users {reported_users(run, 'eval')} != {users} submissions")
    return run


def decrypt(sc, decl, submitted, expect=None, agg="agg.pimhe", public="pub", secret="sec"):
    """The analyst's step and its oracle. `submitted` None: nothing may be printed (exit 0 is
    wrong); else the rows the aggregates hold."""
    rng = sc.rng
    if expect is None:
        expect = sc.decrypt_expectation(decl, submitted) if submitted is not None else "refuse"
    is_json = rng.random() < 0.95
    argv = ["decrypt", "--public-dir", public, "--secret-dir", secret, "--input", agg]
    run = sc.run("decrypt", argv + (["--json"] if is_json else []) + threads_flag(rng), expect, exit1=True)
    if submitted is None:
        raise Stop("wrong", "decrypt printed a statistic where it must refuse")
    sc.check_decrypt(run, decl, submitted, is_json)
    raise Stop("ok", "")


def honest(sc, decl, rows):
    encrypt(sc, users=len(rows))
    if len(sc.submissions()) != len(rows):
        raise Stop("wrong", f"encrypt wrote {len(sc.submissions())} submissions for {len(rows)} rows")
    evaluate(sc, users=len(rows))
    decrypt(sc, decl, rows)


def json_edit(sc, decl, rows):
    """study.json edited before encrypt, eval or decrypt: decrypt must refuse unless the edit
    left its meaning alone (then it must answer right, or refuse)."""
    rng = sc.rng
    stage = rng.choice(["encrypt", "eval", "decrypt"])
    data, what = edit_study(rng, sc.study_text, decl)
    # A key written twice is ambiguous: refusing it is right, reading the last one harmless.
    changed = study_meaning(data, last_wins="twice" in what) != study_meaning(sc.study_text.encode())
    after = "may"

    def edit():
        sc.write("pub/study.json", data)
        sc.note(f"before {stage}: {what} ({'changed' if changed else 'same meaning'})")

    if stage == "encrypt":
        edit()
    encrypt(sc, after if stage == "encrypt" else "must")
    if stage == "eval":
        edit()
    evaluate(sc, after if stage != "decrypt" else "must")
    if stage == "decrypt":
        edit()
    decrypt(sc, decl, None if changed else rows, expect="refuse" if changed else "may")


def duplicate(sc, decl, rows):
    rng = sc.rng
    encrypt(sc)
    original = rng.choice(sc.submissions())
    name = rng.choice(["copy.pimhe", "zz.pimhe", "00.pimhe", original.upper().replace(".PIMHE", ".pimhe")])
    how = rng.choice(["copy", "copy", "hardlink", "symlink"])
    if os.path.lexists(sc.path("subs", name)):
        name = "copy.pimhe"
    src, dst = sc.path("subs", original), sc.path("subs", name)
    if how == "copy":
        shutil.copyfile(src, dst)
    elif how == "hardlink":
        os.link(src, dst)
    else:
        os.symlink(original, dst)
    sc.note(f"{how} of subs/{original} as subs/{name}")
    evaluate(sc, "refuse")


def foreign(sc, decl, rows):
    """Another study of the same declaration: its submission among ours, its aggregates, its
    keys or its secret key."""
    rng = sc.rng
    other_seed = rng.randrange(U64) if rng.random() < 0.9 else None
    sc.run("keygen (other study)", decl.keygen_args(rng, "pub2", "sec2", other_seed), "must", allow=CAPACITY)
    variant = rng.choice(["submission", "aggregates", "public-keys", "public-dir", "secret-keys"])
    sc.note(f"foreign {variant}")
    if variant == "public-keys":
        shutil.copyfile(sc.path("pub2", "public-keys.pimhe"), sc.path("pub", "public-keys.pimhe"))
        encrypt(sc, "refuse")
    encrypt(sc, users=len(rows))
    if variant == "submission":
        encrypt(sc, csv="data.csv", public="pub2", out="subs2", seed=rng.randrange(U64))
        name = rng.choice(sc.submissions("subs2"))
        shutil.copyfile(sc.path("subs2", name), sc.path("subs", rng.choice(["zz-foreign.pimhe", name])))
        evaluate(sc, "refuse")
    evaluate(sc, users=len(rows))
    if variant == "aggregates":
        encrypt(sc, public="pub2", out="subs2", seed=rng.randrange(U64))
        evaluate(sc, public="pub2", subs="subs2", out="agg2.pimhe")
        decrypt(sc, decl, None, agg="agg2.pimhe")
    if variant == "public-dir":
        for name in ("study.json", "public-keys.pimhe"):
            shutil.copyfile(sc.path("pub2", name), sc.path("pub", name))
        decrypt(sc, decl, None)
    if variant == "secret-keys":
        decrypt(sc, decl, None, secret="sec2")
    decrypt(sc, decl, rows)


def special_file(sc, decl, rows):
    """A *.pimhe entry among the submissions that is not a submission (mostly), or one of the
    study's own files replaced by something that is not a file of its kind: the step that reads
    it must refuse it, without hanging or reading it whole."""
    rng = sc.rng
    target = rng.choices(["submission", "aggregates", "study.json", "public-keys", "secret-keys", "linked"],
                         [10, 2, 2, 2, 2, 1])[0]
    if target == "submission":
        encrypt(sc)
        path = sc.path("subs", rng.choice(["x.pimhe", "zz.pimhe", "0.pimhe"]))
        special(sc, rng, path)
        evaluate(sc, "refuse")
    if target == "linked":  # the study's files moved elsewhere and linked back: still regular files
        os.makedirs(sc.path("elsewhere"))
        for name in ("study.json", "public-keys.pimhe"):
            os.rename(sc.path("pub", name), sc.path("elsewhere", name))
            os.symlink(os.path.join("..", "elsewhere", name), sc.path("pub", name))
        sc.note("pub/study.json and pub/public-keys.pimhe are links to elsewhere/")
        encrypt(sc, "may", users=len(rows))
        evaluate(sc, "may", users=len(rows))
        decrypt(sc, decl, rows, expect="may")
    stage = "decrypt" if target in ("aggregates", "secret-keys") else rng.choice(["encrypt", "eval", "decrypt"])
    path = sc.path(*{"aggregates": ("agg.pimhe",), "study.json": ("pub", "study.json"),
                     "public-keys": ("pub", "public-keys.pimhe"), "secret-keys": ("sec", "secret-keys.pimhe")}[target])
    if stage == "encrypt":
        special(sc, rng, path)
    encrypt(sc, "refuse" if stage == "encrypt" else "must")
    if stage == "eval":
        special(sc, rng, path)
    evaluate(sc, "refuse" if stage == "eval" else "must")
    if stage == "decrypt":
        special(sc, rng, path)
    decrypt(sc, decl, None)


def special(sc, rng, path):
    """Puts at `path` (replacing what is there) something that is not a study's file."""
    if os.path.lexists(path):
        os.remove(path)
    variant = rng.choice(["fifo", "dev-zero", "directory", "empty", "huge-sparse", "large", "dangling", "not-bundle",
                          "padded"])
    if variant == "fifo":
        os.mkfifo(path)
    elif variant == "dev-zero":
        os.symlink("/dev/zero", path)
    elif variant == "directory":
        os.mkdir(path)
    elif variant == "empty":
        open(path, "wb").close()
    elif variant == "huge-sparse":
        with open(path, "wb") as f:
            try:
                f.truncate(rng.choice([1 << 31, 1 << 40]))
            except OSError:  # a file system without sparse files that large
                f.truncate(1 << 31)
    elif variant == "large":
        with open(path, "wb") as f:
            f.write(bytes(rng.choice([2 << 20, 8 << 20])))
    elif variant == "dangling":
        os.symlink("no-such-file", path)
    elif variant == "not-bundle":
        with open(path, "wb") as f:
            f.write(rng.choice([b"hello\n", b"PIMHEBDL", b"PIMHEBDL\x02\x00\xff\xff\xff\xff"]))
    else:  # a real file of the study with bytes after it
        with open(path, "wb") as f:
            f.write(sc.read("pub/public-keys.pimhe") + bytes(rng.randint(1, 100)))
    sc.note(f"{os.path.relpath(path, sc.root)}: {variant}")


def junk_ignored(sc, decl, rows):
    """Entries that are not *.pimhe are not read: a FIFO, a text file, a directory."""
    rng = sc.rng
    encrypt(sc)
    os.mkfifo(sc.path("subs", "pipe"))
    with open(sc.path("subs", "notes.txt"), "w") as f:
        f.write("not a submission\n")
    os.mkdir(sc.path("subs", "old"))
    if rng.random() < 0.5:
        os.symlink("/dev/zero", sc.path("subs", "zero.pimhe.bak"))
    sc.note("subs/ also holds a FIFO 'pipe', notes.txt, a directory 'old' (none *.pimhe)")
    evaluate(sc, users=len(rows))
    decrypt(sc, decl, rows)


def rewrite_count(sc, decl, rows):
    """The aggregates rebuilt with another user count (and a valid checksum), or otherwise
    reframed."""
    rng = sc.rng
    encrypt(sc)
    evaluate(sc)
    version, entries = read_bundle(sc.read("agg.pimhe"))
    real = len(rows)
    variant = rng.choice(["count", "count", "count", "count", "version-1", "version-1-count", "short-count",
                          "no-count", "extra-entry", "reordered"])
    users = rng.choice([real + 1, real - 1, 0, decl.max_users, decl.max_users + 1, decl.least_users - 1, U64 - 1,
                        2**63, 2**32 + real, real + 2])
    if users == real:
        users = real + 1
    out_version, must_refuse = 2, True
    if variant in ("count", "version-1-count"):
        entries = [(n, struct.pack("<Q", users % U64) if n == "users" else b) for n, b in entries]
        out_version = 1 if variant == "version-1-count" else 2
        what = f"user count {real} -> {users % U64}"
    elif variant == "version-1":
        out_version, must_refuse, what = 1, False, "rewritten as a version 1 bundle (no checksum), same content"
    elif variant == "short-count":
        entries = [(n, b[:4] if n == "users" else b) for n, b in entries]
        what = "user count of 4 bytes"
    elif variant == "no-count":
        entries = [(n, b) for n, b in entries if n != "users"]
        what = "without the user count"
    elif variant == "extra-entry":
        entries = entries + [("note", b"hello")]
        what = "with an extra entry"
    else:
        entries = entries[::-1]
        must_refuse, what = False, "entries in reverse order"
    sc.write("agg.pimhe", write_bundle(entries, out_version))
    sc.note(f"agg.pimhe {what}")
    decrypt(sc, decl, None if must_refuse else rows, expect="refuse" if must_refuse else "may")


def damage_file(sc, decl, rows):
    """Bytes flipped, cut or added in a file some later step reads: that step must refuse."""
    rng = sc.rng
    target = rng.choice(["public-keys@encrypt", "public-keys@eval", "public-keys@decrypt", "submission@eval",
                         "aggregates@decrypt", "secret-keys@decrypt", "version-1@encrypt", "version-1@eval",
                         "version-1@decrypt"])
    what, stage = target.split("@")

    def hit(relative):
        data = sc.read(relative)
        if what == "version-1":  # no checksum to catch the damage: the contents must
            _, entries = read_bundle(data)
            index = rng.randrange(len(entries))
            name, payload = entries[index]
            payload = bytearray(payload)
            at = rng.randrange(len(payload))
            payload[at] ^= 1 << rng.randrange(8)
            entries[index] = (name, bytes(payload))
            sc.write(relative, write_bundle(entries, 1))
            sc.note(f"{relative} rewritten as version 1 with entry {name} byte {at} flipped")
        else:
            damaged, how = damage(rng, data)
            sc.write(relative, damaged)
            sc.note(f"{relative}: {how}")

    # A checksummed file with any byte changed must be refused by the first step that reads it.
    # A version 1 rewrite has no checksum: the server cannot tell a flipped ciphertext byte, so
    # eval may add it up, and the analyst's checks must then refuse the garbage, or (the flip
    # fell on a submission's own identifier, say) print the exact statistic.
    refuse = "may" if what == "version-1" else "refuse"
    if stage == "encrypt":  # the public keys (a version 1 rewrite: a key encrypting into garbage)
        hit("pub/public-keys.pimhe")
    encrypt(sc, refuse if stage == "encrypt" else "must")
    if stage == "eval":
        hit("pub/public-keys.pimhe" if what == "public-keys" else os.path.join("subs", rng.choice(sc.submissions())))
    evaluate(sc, refuse if stage == "eval" else "must")
    if stage == "decrypt":
        hit({"public-keys": "pub/public-keys.pimhe", "aggregates": "agg.pimhe", "secret-keys": "sec/secret-keys.pimhe",
             "version-1": "agg.pimhe"}[what])
    decrypt(sc, decl, rows if what == "version-1" else None, expect="may" if what == "version-1" else None)


def secret_in_public(sc, decl, rows):
    """The secret key copied (or linked) into the public directory: no party reads it."""
    rng = sc.rng
    stage = rng.choice(["encrypt", "eval", "decrypt"])
    how = rng.choice(["copy", "copy", "symlink"])

    def leak():
        target = sc.path("pub", "secret-keys.pimhe")
        if how == "copy":
            shutil.copyfile(sc.path("sec", "secret-keys.pimhe"), target)
        else:
            os.symlink(os.path.join("..", "sec", "secret-keys.pimhe"), target)
        sc.note(f"before {stage}: the secret key {how} in pub/")

    if stage == "encrypt":
        leak()
    encrypt(sc, "refuse" if stage == "encrypt" else "must")
    if stage == "eval":
        leak()
    evaluate(sc, "refuse" if stage == "eval" else "must")
    if stage == "decrypt":
        leak()
    decrypt(sc, decl, None)


def dir_alias_at_keygen(sc, decl, seed):
    """keygen with a secret directory that is the public one, inside it or around it, under
    another spelling: refused, and no secret key written under the public directory."""
    rng = sc.rng
    os.makedirs(sc.path("a"), exist_ok=True)
    variant = rng.choice(["dot-slash", "absolute", "dot-dot", "inside", "around", "trailing-dot", "symlink",
                          "dangling-symlink", "dangling-symlink-inside", "double-slash"])
    # L is a link to X; "dangling": X does not exist yet, keygen creates it as the public directory.
    public, secret = "X", {
        "dot-slash": "./X/", "absolute": sc.path("X"), "dot-dot": "a/../X", "inside": "X/inner", "around": "X",
        "trailing-dot": "X/.", "symlink": "L", "dangling-symlink": "L", "dangling-symlink-inside": "L/sub",
        "double-slash": "a/..//X//",
    }[variant]
    if variant == "around":
        public = rng.choice(["X/inner", "./X/inner/deeper"])
    if variant == "symlink":
        os.makedirs(sc.path("X"), mode=0o700)
        os.chmod(sc.path("X"), 0o700)
    if variant.startswith(("symlink", "dangling-symlink")):
        os.symlink("X", sc.path("L"))
    if rng.random() < 0.4:
        public, secret = secret, public  # the other way round
    umask = draw_umask(rng)
    sc.note(f"dir-alias at keygen ({variant}): public {public!r}, secret {secret!r}")
    try:
        sc.run("keygen", decl.keygen_args(rng, public, secret, seed), "refuse", allow=CAPACITY, umask=umask)
    except Stop as stop:
        # Refused: nothing written anywhere. (After a wrong exit 0, say where the key went.)
        leaked = [os.path.relpath(os.path.join(d, f), sc.root) for d, _, files in os.walk(sc.root) for f in files
                  if f == "secret-keys.pimhe"]
        if leaked:
            raise Stop("wrong", f"keygen ({stop.cls}) left a secret key at {leaked}; public {public!r}, "
                                f"secret {secret!r}")
        raise
    raise Stop("wrong", "keygen exited 0 with aliased public and secret directories")


def dir_alias_at_decrypt(sc, decl, rows):
    """decrypt with directories under other spellings: the public one as the secret one is
    refused, a harmless alias of the secret one answered."""
    rng = sc.rng
    encrypt(sc)
    evaluate(sc)
    os.makedirs(sc.path("a"), exist_ok=True)
    variant = rng.choice(["same", "same-dot", "same-absolute", "same-dot-dot", "inside", "harmless"])
    secret = {"same": "pub", "same-dot": "./pub/", "same-absolute": sc.path("pub"), "same-dot-dot": "sec/../pub",
              "inside": "pub/inner", "harmless": rng.choice(["pub/../sec", "./sec/", sc.path("sec"), "a/../sec"])}[variant]
    sc.note(f"decrypt --secret-dir {secret!r} ({variant})")
    decrypt(sc, decl, rows if variant == "harmless" else None, secret=secret)


def client_copy(sc, decl, rows):
    """A client encrypting with an edited copy of the public directory: max_value raised (and
    values past the study's bound), columns reordered, or decimals changed. Decryption must
    refuse or print the exact statistic of what was submitted."""
    rng = sc.rng
    encrypt(sc, users=len(rows))
    os.makedirs(sc.path("client"))
    shutil.copyfile(sc.path("pub", "public-keys.pimhe"), sc.path("client", "public-keys.pimhe"))
    study = dict(sc.study)
    m, d = study["max_value"], decl.decimals
    count = rng.randint(1, min(3, decl.max_users - len(rows)))
    variant = rng.choice(["max-value", "max-value", "max-value", "columns", "decimals", "min-users"])
    client_decimals, client_columns = d, list(decl.columns)
    if variant == "max-value":
        # The most it can be raised to with the same plaintext moduli (a larger value changes
        # them, and the client's copy is refused): every total stays below half the moduli.
        size = moduli_size(decl.statistic, m, d, decl.max_users, decl.n)
        low, high = m, 2**62
        while low < high:
            mid = (low + high + 1) // 2
            if moduli_size(decl.statistic, mid, d, decl.max_users, decl.n) == size:
                low = mid
            else:
                high = mid - 1
        raised = rng.choice([low, rng.randint(m, low), m + 1]) if low > m else m + rng.randint(1, 10)
        study["max_value"] = raised
        client = draw_rows(rng, decl, count)
        for row in client:
            c = rng.randrange(len(row))
            row[c] = rng.choice([-1, 1]) * rng.randint(min(m + 1, raised), raised)
    elif variant == "columns" and len(decl.columns) > 1:
        client_columns = decl.columns[1:] + decl.columns[:1]
        study["columns"] = client_columns
        client = draw_rows(rng, decl, count)
    elif variant == "decimals":
        client_decimals = rng.choice([x for x in range(0, 4) if x != d])
        study["decimals"] = client_decimals
        client = draw_rows(rng, decl, count)
        if client_decimals < d:  # values the client can write at its decimals
            step = 10 ** (d - client_decimals)
            client = [[v // step * step for v in row] for row in client]
    else:
        study["min_users"] = 1
        client = draw_rows(rng, decl, count)
    sc.write("client/study.json", json.dumps(study, indent=2).encode())
    sc.note(f"client copy ({variant}): max_value {study['max_value']}, columns {study['columns']}, "
            f"decimals {study['decimals']}; client rows {client}")
    # The client's CSV: its rows in the study's units, written at the client's decimals.
    client_decl = Declaration(decl.statistic, decl.columns, client_decimals, m, decl.max_users)
    scaled = [[v * 10**client_decimals // 10**d for v in row] for row in client]
    write_csv(rng, sc.path("client.csv"), client_decl, scaled)
    encrypt(sc, "may", csv="client.csv", public="client", seed=rng.randrange(U64))
    # What the study's slots hold: slot j gets the client's column client_columns[j], at the
    # client's scale, read at the study's.
    submitted_client = []
    for row in scaled:
        by_name = dict(zip(decl.columns, row))
        submitted_client.append([by_name[name] for name in client_columns])
    evaluate(sc, users=len(rows) + count)
    submitted = rows + submitted_client
    if decl.statistic == "linreg" and client_decimals != d:
        submitted = None  # its constant term is 10^(client's decimals): the totals cannot be a study's
    # Values within the bound at the study's scale must be answered; past it, refusing is right.
    within = submitted is not None and all(abs(v) <= m for row in submitted for v in row)
    decrypt(sc, decl, submitted, expect=None if within else "may")


def wrap_attack(sc, decl, rows):
    """Beyond the threat model (clients are honest), only with --attacks: one client edits its
    copy of study.json to max_users 1 and the largest max_value that keeps the plaintext moduli
    (the same bound), then submits k rows whose first column sums to P, the product of the
    moduli. Each row passes its client's check; the total wraps to the honest total, which
    passes every check decryption makes, and decryption prints the statistic without the
    client's values (the oracle, which knows them, calls that `wrong`)."""
    rng = sc.rng
    encrypt(sc, users=len(rows))
    m, d = sc.study["max_value"], decl.decimals
    product = 1
    for t in sc.study["plain_moduli"]:
        product *= t
    size = moduli_size("mean", m, d, decl.max_users, decl.n)
    low, high = m, 2**62
    while low < high:
        mid = (low + high + 1) // 2
        if moduli_size("mean", mid, d, 1, decl.n) == size:
            low = mid
        else:
            high = mid - 1
    k = -(-product // low)
    if low <= m or len(rows) + k > decl.max_users:
        raise Stop("refused", f"no room for the attack (raised bound {low}, {k} rows)")
    cheat = [low] * (k - 1) + [product - (k - 1) * low]
    study = dict(sc.study, max_users=1, min_users=1, max_value=low)
    os.makedirs(sc.path("client"))
    shutil.copyfile(sc.path("pub", "public-keys.pimhe"), sc.path("client", "public-keys.pimhe"))
    sc.write("client/study.json", json.dumps(study, indent=2).encode())
    client = [[v] + [0] * (len(decl.columns) - 1) for v in cheat]
    write_csv(rng, sc.path("client.csv"), decl, client)
    sc.note(f"client copy: max_users 1, max_value {low} (same moduli, product {product}); "
            f"{k} rows summing to {sum(cheat)} in column {decl.columns[0]}")
    encrypt(sc, "may", csv="client.csv", public="client", seed=rng.randrange(U64))
    evaluate(sc, users=len(rows) + k)
    decrypt(sc, decl, rows + client, expect="may")


def too_few(sc, decl, rows):
    encrypt(sc, users=len(rows))
    evaluate(sc, users=len(rows))
    decrypt(sc, decl, None if len(rows) < decl.least_users else rows)


def too_many(sc, decl, rows):
    encrypt(sc, users=len(rows))
    evaluate(sc, "refuse" if len(rows) > decl.max_users else "must")
    decrypt(sc, decl, rows)


def overwrite(sc, decl, rows):
    """eval --out onto an existing file without --force: refused, the file left as it was; then
    with --force onto a file of its own, answered."""
    rng = sc.rng
    encrypt(sc)
    variant = rng.choice(["previous", "text", "secret-key", "study-json", "directory"])
    target = {"previous": "agg.pimhe", "text": "agg.pimhe", "secret-key": "sec/secret-keys.pimhe",
              "study-json": "pub/study.json", "directory": "subs"}[variant]
    if variant == "previous":
        evaluate(sc)
    elif variant == "text":
        sc.write("agg.pimhe", b"keep me\n")
    before = sc.read(target) if variant != "directory" else None
    sc.note(f"eval --out {target} ({variant}), which exists")
    try:
        evaluate(sc, "refuse", out=target)
    except Stop as stop:
        if before is not None and sc.read(target) != before:
            raise Stop("wrong", f"eval changed the existing {target} while refusing to overwrite it")
        if stop.cls != "caught" or variant not in ("previous", "text"):
            raise
    evaluate(sc, out="agg.pimhe", extra=["--force"], users=len(rows))
    decrypt(sc, decl, rows)


def keygen_again(sc, decl, rows):
    """keygen over the study's directories: refused without --force (the keys left as they
    were, the study still answers); with --force the old aggregates belong to no key."""
    rng = sc.rng
    encrypt(sc)
    evaluate(sc)
    secret_before = sc.read("sec/secret-keys.pimhe")
    force = rng.random() < 0.4
    argv = decl.keygen_args(rng, "pub", "sec", rng.randrange(U64)) + (["--force"] if force else [])
    sc.note("keygen again over pub/ and sec/" + (" with --force" if force else ""))
    if force:
        sc.run("keygen again", argv, "must", allow=CAPACITY)
        decrypt(sc, decl, None)
    try:
        sc.run("keygen again", argv, "refuse")
    except Stop as stop:
        if stop.cls != "caught":
            raise
        if sc.read("sec/secret-keys.pimhe") != secret_before:
            raise Stop("wrong", "keygen changed the secret key while refusing to replace it")
    decrypt(sc, decl, rows)


def shared_dir(sc, decl, rows):
    """Users encrypting in batches into one directory: every row counted once."""
    rng = sc.rng
    split = rng.randint(0, len(rows))
    first, second = rows[:split], rows[split:]
    for name, part in (("one.csv", first), ("two.csv", second)):
        write_csv(rng, sc.path(name), decl, part)
    if first:
        encrypt(sc, csv="one.csv", users=len(first), seed=rng.randrange(U64))
    if second:
        encrypt(sc, csv="two.csv", users=len(second), seed=rng.randrange(U64))
    if not rows:
        raise Stop("ok", "")
    evaluate(sc, users=len(rows))
    decrypt(sc, decl, rows)


def over_bound_csv(sc, decl, rows):
    """An honest user's mistake: a value past the declared bound, or with more places than
    declared. The client refuses it."""
    rng = sc.rng
    m, d = sc.study["max_value"], decl.decimals
    bad = [list(r) for r in rows]
    c = rng.randrange(len(decl.columns))
    r = rng.randrange(len(bad))
    if rng.random() < 0.6 or d >= 9:
        bad[r][c] = rng.choice([-1, 1]) * rng.choice([m + 1, m * 2 + 1, 10**15])
        write_csv(rng, sc.path("bad.csv"), decl, bad)
        sc.note(f"bad.csv row {r + 2}: {decimal_text(bad[r][c], d)} past the bound {decimal_text(m, d)}")
    else:
        more = Declaration(decl.statistic, decl.columns, d + 1, m * 10, decl.max_users)
        bad = [[v * 10 for v in row] for row in bad]
        bad[r][c] += rng.choice([-1, 1]) * rng.randint(1, 9)
        write_csv(rng, sc.path("bad.csv"), more, bad)
        sc.note(f"bad.csv row {r + 2} has {d + 1} decimal places")
    encrypt(sc, "refuse", csv="bad.csv")


# ---------------------------------------------------------------------------------------------
# Driver


def run_case(binary, seed, index, light=False, verbose=False, keep=None, attacks=False):
    """Runs case `index` in a directory of its own; the result as a dict."""
    global LIGHT, WITH_ATTACKS
    LIGHT, WITH_ATTACKS = light, attacks
    root = keep or tempfile.mkdtemp(prefix="pimhe-study-fuzz-")
    sc = Scenario(binary, seed, index, root, verbose)
    sc.kind = "?"
    start = time.monotonic()
    try:
        scenario(sc)
        cls, detail, tails = "harness-error", "the scenario ended without a verdict", None
    except Stop as stop:
        cls, detail, tails = stop.cls, stop.detail, stop.step
    except Exception as e:  # noqa: BLE001  (reported as a defect of the fuzzer, with its case)
        cls, detail, tails = "harness-error", f"{type(e).__name__}: {e}", None
        if verbose:
            raise
    finally:
        if keep is None:
            remove_tree(root)
    result = {"index": index, "class": cls, "detail": detail, "kind": sc.kind,
              "seconds": round(time.monotonic() - start, 3)}
    if cls in DEFECTS:
        result["steps"] = sc.log
        if tails:
            result.update(tails)
    elif cls in ("refused", "caught"):
        result["signature"] = signature(detail)
    return result


def remove_tree(root):
    """Removes a case's directory, whatever modes and special files it holds."""
    for directory, _, _ in os.walk(root):
        try:
            os.chmod(directory, stat.S_IRWXU)
        except OSError:
            pass
    shutil.rmtree(root, ignore_errors=True)


def fuzz(args):
    start = time.monotonic()
    counts = {c: 0 for c in CLASSES}
    defects, refusals, by_kind = [], {}, {}
    indices = range(args.first, args.first + args.cases)
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = pool.map(run_case, [args.binary] * args.cases, [args.seed] * args.cases, indices,
                           [args.light] * args.cases, [False] * args.cases, [None] * args.cases,
                           [args.attacks] * args.cases, chunksize=1)
        for done, result in enumerate(results, 1):
            counts[result["class"]] += 1
            per = by_kind.setdefault(result["kind"], {})
            per[result["class"]] = per.get(result["class"], 0) + 1
            if result["class"] in DEFECTS:
                result["replay"] = replay_command(args, result["index"])
                defects.append(result)
            elif "signature" in result:
                key = f"{result['class']}: {result['signature']}"
                refusals[key] = refusals.get(key, 0) + 1
            if done % 100 == 0 or done == args.cases:
                print(f"  {done}/{args.cases} cases, {sum(counts[c] for c in DEFECTS)} defects, "
                      f"{done / (time.monotonic() - start):.2f} cases/s", file=sys.stderr)
    elapsed = time.monotonic() - start
    report = {"binary": args.binary, "seed": args.seed,
              "mix": ("light" if args.light else "full") + (" + attacks" if args.attacks else ""),
              "first": args.first, "cases": args.cases, "jobs": args.jobs, "step_timeout_s": STEP_TIMEOUT_S,
              "elapsed_s": round(elapsed, 1), "cases_per_s": round(args.cases / elapsed, 3), "counts": counts,
              "by_kind": dict(sorted(by_kind.items())), "defects": defects,
              "refusals": dict(sorted(refusals.items(), key=lambda kv: -kv[1]))}
    print_summary(report)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
        print(f"report: {args.out}")
    return 1 if defects else 0


def replay_command(args, index):
    return shlex.join(["python3", os.path.relpath(__file__, REPO), "--binary", args.binary,
                       "--seed", str(args.seed), "--replay", str(index)] + (["--light"] if args.light else [])
                      + (["--attacks"] if args.attacks else []))


def print_summary(report):
    print(f"{report['cases']} study scenarios (seed {report['seed']}, {report['mix']} mix, first {report['first']}) "
          f"in {report['elapsed_s']} s: {report['cases_per_s']} cases/s with {report['jobs']} jobs")
    for cls in CLASSES:
        if report["counts"][cls]:
            print(f"  {cls:<15} {report['counts'][cls]}")
    print("  per scenario: " + "; ".join(
        f"{kind} " + " ".join(f"{c}={n}" for c, n in sorted(per.items())) for kind, per in report["by_kind"].items()))
    shown = {}
    for d in report["defects"]:
        group = (d["class"], d["kind"], signature(d["detail"]))
        shown[group] = shown.get(group, 0) + 1
        if shown[group] <= 2:
            print(f"\n[{d['class']}] case {d['index']} ({d['kind']}): {d['detail']}\n  replay: {d['replay']}")
            for line in d["steps"][-6:]:
                print(f"    {line[:300]}")


def replay(args):
    """Runs one case in the foreground, in ./study-fuzz-case-SEED-INDEX/ (left there)."""
    keep = os.path.abspath(f"study-fuzz-case-{args.seed}-{args.replay}")
    if os.path.exists(keep):
        remove_tree(keep)
    os.makedirs(keep)
    print(f"case {args.replay} of seed {args.seed} in {keep} (commands run there)")
    result = run_case(args.binary, args.seed, args.replay, args.light, verbose=True, keep=keep, attacks=args.attacks)
    print(f"--- class: {result['class']} {result['detail']}")
    return 1 if result["class"] in DEFECTS else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=DEFAULT_BINARY, help="the pimhe binary [target/release/pimhe]")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--first", type=int, default=0, help="index of the first case (to split a long run)")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once")
    parser.add_argument("--out", help="write the JSON report here")
    parser.add_argument("--replay", type=int, metavar="CASE_INDEX", help="run this one case and show everything")
    parser.add_argument("--light", action="store_true", help="the light mix: fewer rows, N = 8192 and emulation rarer")
    parser.add_argument("--attacks", action="store_true",
                        help="add scenarios beyond the threat model (a client wrapping the plaintext modulus)")
    args = parser.parse_args()
    args.binary = os.path.abspath(args.binary)
    if not os.access(args.binary, os.X_OK):
        parser.error(f"no executable at {args.binary} (cargo build --release, or --binary)")
    sys.exit(replay(args) if args.replay is not None else fuzz(args))


if __name__ == "__main__":
    main()
