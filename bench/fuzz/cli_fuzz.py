#!/usr/bin/env python3
"""Fuzz the `pimhe` CLI with generated CSV files and flag sets, and check every answer exactly.

Case i of seed s is always the same case (its random generator is seeded with "s:i"), so any
case can be replayed alone. Each case runs the binary once, under a wall-clock timeout, an
address-space limit and a thread-count watch, and is classified as `ok`, `refused` (a clean
refusal) or one of the defect classes in DEFECT_CLASSES. Stats answers are compared with an
exact rational computation from the CSV's decimal strings (fractions.Fraction).

    python3 bench/fuzz/cli_fuzz.py --cases 300 --seed 1 --jobs 2 --out report.json   # CI
    python3 bench/fuzz/cli_fuzz.py --seed 1 --replay 42                               # one case

Exit status: 0 if no case fell in a defect class, 1 otherwise, 2 on a harness usage error.
See README.md beside this file for the classes and the oracle.
"""

import argparse
import concurrent.futures
import json
import math
import os
import random
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from fractions import Fraction

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_BINARY = os.path.join(REPO, "target", "release", "pimhe")

TIMEOUT_S = 120
ADDRESS_SPACE_GIB = 8
# A run with more threads than this is killed: `--threads 100000` must not fork-bomb the host.
THREAD_LIMIT = 512
# Relative tolerance of every checked number (the CLI computes in f64 from exact aggregates).
REL_TOL = 1e-9
# Regressions whose standardized feature matrix has a condition number up to this are
# "well-posed": refusing them as singular is a defect. Beyond it a refusal is accepted and the
# tolerance grows with the condition number (what any f64 solver can promise).
KAPPA_WELL = 1e6

DEFECT_CLASSES = (
    "panic", "abort", "timeout", "thread-storm", "wrong", "refused-valid", "bad-exit", "exit-code",
    "misleading-error",
)
# `long`: a valid request at a size limit (10^8 users, say) still computing when the timeout
# ends it; such a run may be refused up front or may take hours, and neither is a defect.
CLASSES = ("ok", "refused", "long") + DEFECT_CLASSES

INPUT = "{input}"  # placeholder in a case's argv for its CSV file
I64_MAX = 2**63 - 1
U64_MAX = "18446744073709551615"
HUGE = [U64_MAX, "1000000000", "100000000"]
NOT_NUMBERS = ["-1", "abc", "1.5", "", "0x10", "18446744073709551616", "1e3", "\u0663"]
# The light mix (--light) caps what makes a case slow, so that 10^5 cases fit in under an hour
# on two cores: at most LIGHT_ROWS rows or users, means at N = 4096 and half the products at
# 8192 (and the capacity datasets), and the emulator only at N <= 2048 in demos and for BGV-level bench ops. The
# default mix keeps them all.
LIGHT_ROWS = 40
LIGHT = False

DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")


# ---------------------------------------------------------------------------------------------
# Cases


@dataclass
class Expect:
    """What a correct CLI does with a case."""

    problems: list = field(default_factory=list)  # malformed input: must be refused, status 2
    limits: list = field(default_factory=list)  # out of range / too large: may be refused, status 2
    lenient: list = field(default_factory=list)  # may be refused with status 1 or 2
    must_succeed: bool = False  # valid and small: any refusal is a defect
    oracle: dict = None  # how to check the output of a successful run


@dataclass
class Case:
    index: int
    argv: list  # arguments after the binary; INPUT stands for the CSV file
    csv: bytes = None
    expect: Expect = field(default_factory=Expect)
    # Scales the chance of each invalid or limit flag value: 0 in most cases, so that most
    # cases reach the computation instead of stopping at the first bad flag.
    mischief: float = 0.0


def generate(seed, index):
    """Case `index` of `seed`: the same case on every machine and every run."""
    rng = random.Random(f"{seed}:{index}")
    builder = rng.choices([stats_case, demo_case, bench_case, params_case, misc_case], [66, 12, 13, 3, 6])[0]
    case = Case(index, [], mischief=0.0 if rng.random() < 0.7 else 2.5)
    builder(rng, case)
    e = case.expect
    e.must_succeed = e.must_succeed and not (e.problems or e.limits or e.lenient)
    return case


def flag(rng, case, name, valid, invalid=(), limits=(), p_invalid=0.05, p_limit=0.0, p_omit=0.0):
    """Appends `--name value` with a valid, invalid (must refuse) or limit value, or nothing."""
    roll = rng.random()
    if roll < p_omit:
        return None
    roll -= p_omit
    p_invalid, p_limit = p_invalid * case.mischief, p_limit * case.mischief
    if invalid and roll < p_invalid:
        value = rng.choice(list(invalid))
        case.expect.problems.append(f"--{name} {value!r}")
    elif limits and roll < p_invalid + p_limit:
        value = rng.choice(list(limits))
        case.expect.limits.append(f"--{name} {value}")
    else:
        value = rng.choice(list(valid))
    case.argv += [f"--{name}", str(value)]
    return value


def threads_flag(rng, case):
    flag(rng, case, "threads", ["1", "2"], ["0"] + NOT_NUMBERS, ["100000"] + HUGE, 0.04, 0.03, 0.4)


def seed_flag(rng, case):
    valid = [str(rng.randrange(2**64)), U64_MAX, "0"]
    flag(rng, case, "seed", valid, ["-1", "x", "18446744073709551616"], p_invalid=0.02, p_omit=0.2)


# --- stats ------------------------------------------------------------------------------------


def stats_case(rng, case):
    statistic = rng.choices(["mean", "variance", "linreg"], [3, 3, 4])[0]
    case.argv = ["stats", statistic]
    if rng.random() < 0.08:
        stats_n_flag(rng, case, statistic)
        synthetic_input(rng, case, statistic)
    else:
        if statistic != "linreg" and rng.random() < 0.03:
            dataset = capacity_dataset(rng)
            case.argv += ["--n", "8192"]
        else:
            dataset = generate_dataset(rng, statistic, stats_n_flag(rng, case, statistic))
        case.csv = dataset.render(rng)
        case.argv += ["--input", INPUT, "--columns", ",".join(dataset.selection)]
        case.expect.problems += dataset.problems
        case.expect.lenient += dataset.lenient
        if dataset.columns is not None:
            case.expect.oracle = {"kind": "stats", "statistic": statistic, "names": dataset.selection,
                                  "columns": dataset.columns}
    stats_option_flags(rng, case, synthetic="--synthetic" in case.argv)


def stats_n_flag(rng, case, statistic):
    """Mostly 4096 or 8192; products (variance, linreg) keep too little noise budget at 4096
    for large values, so they get 8192 more often."""
    roll = rng.random()
    if roll < 0.06:
        value = rng.choice(["1024", "2048"])
        case.expect.lenient.append(f"--n {value}: no relinearization below 4096")
    elif roll < 0.12:
        value = rng.choice(["1000", "0", "3", "65536", "abc", "-8", U64_MAX])
        case.expect.problems.append(f"--n {value}")
    else:
        weights = [3, 1] if statistic == "mean" else [1, 2]
        if LIGHT:
            # A product at 4096 keeps budget for a few users only: half go to 8192 to be answered.
            weights = [1, 0] if statistic == "mean" else [1, 1]
        value = rng.choices(["4096", "8192"], weights)[0]
    case.argv += ["--n", value]
    return value


def stats_option_flags(rng, case, synthetic):
    """Scheme, backend, threads, decimals, seed, json: mostly valid, sometimes not."""
    scheme = flag(rng, case, "scheme", ["bgv", "bfv"], ["ckks", "BGV", ""], p_invalid=0.02, p_omit=0.7)
    backend = flag(rng, case, "backend", ["cpu", "cpu", "cpu", "cpu", "upmem-emu"], ["gpu", "upmem", ""],
                   p_invalid=0.02, p_omit=0.5)
    if backend == "upmem-emu":
        # BFV holds 18 primes at N = 8192; fewer DPUs is a legitimate refusal.
        dpus = flag(rng, case, "dpus", ["8", "16", "24", "32"], ["0", "2561", "-3"], [U64_MAX],
                    p_invalid=0.05, p_limit=0.02)
        if scheme == "bfv" and dpus in ("8", "16"):
            case.expect.lenient.append("--dpus below BFV's prime count")
    elif rng.random() < 0.03:
        case.argv += ["--dpus", "16"]
        case.expect.problems.append("--dpus without --backend upmem-emu")
    threads_flag(rng, case)
    decimals = flag(rng, case, "decimals", [str(d) for d in range(10)], ["-1", "x"], ["10", "20", "4294967295"],
                    p_invalid=0.1, p_limit=0.2, p_omit=0.88)
    if decimals is not None and synthetic:
        case.expect.problems.append("--decimals with --synthetic")
    elif decimals is not None:
        case.expect.lenient.append("--decimals may be below a cell's places")
    seed_flag(rng, case)
    if rng.random() < 0.95:
        case.argv.append("--json")
    if rng.random() < 0.01:
        case.argv.append("--frobnicate")
        case.expect.problems.append("unknown flag")


def synthetic_input(rng, case, statistic):
    names = [f"x{i}" for i in range(1, 9)] + ["y"]
    count = rng.randint(2, 5) if statistic == "linreg" else rng.randint(1, 4)
    selection = rng.sample(names[:-1], count - 1) + ["y"] if statistic == "linreg" else rng.sample(names, count)
    if rng.random() < 0.05:
        selection[0] = "z"
        case.expect.problems.append("synthetic column 'z'")
    most = LIGHT_ROWS if LIGHT else 300
    users = flag(rng, case, "users", [str(rng.randint(1, most))] * 9 + [str(rng.randint(most, 7 * most))],
                 ["0", "-5", "abc"], HUGE, p_invalid=0.05, p_limit=0.06)
    case.argv += ["--synthetic", str(rng.randrange(1000)), "--columns", ",".join(selection)]
    if users is not None and users.isdigit() and statistic == "linreg" and int(users) <= count:
        case.expect.lenient.append("fewer users than coefficients")
    if rng.random() < 0.03:
        case.argv += ["--input", INPUT]
        case.csv = b"x1,y\n1,2\n"
        case.expect.problems.append("--input and --users together")
    case.expect.oracle = {"kind": "synthetic", "statistic": statistic}


@dataclass
class Dataset:
    """A generated CSV: its header and cell texts, what to select, and the exact values."""

    header: list
    records: list  # rows of cell texts
    selection: list  # --columns
    columns: list = None  # per selected column, [(mantissa, places)] per row; None: no oracle
    problems: list = field(default_factory=list)
    lenient: list = field(default_factory=list)
    raw: bytes = None  # the file's bytes when they are not rendered from records

    def render(self, rng):
        """The CSV bytes: quoting, blank lines, CRLF, BOM and a final newline vary."""
        if self.raw is not None:
            return self.raw
        newline = "\r\n" if rng.random() < 0.2 else "\n"
        lines = [",".join(quote(rng, c) for c in self.header)]
        blank_every = rng.randint(2, 20) if rng.random() < 0.1 else 0
        for i, record in enumerate(self.records):
            if blank_every and i % blank_every == 0:
                lines.append("")
            lines.append(",".join(quote(rng, c) for c in record))
        text = newline.join(lines) + (newline if rng.random() < 0.9 else "")
        bom = "\ufeff" if rng.random() < 0.02 else ""
        if bom:
            self.lenient.append("UTF-8 byte-order mark")
        return (bom + text).encode("utf-8")


def quote(rng, cell):
    """A CSV field: quoted when it must be, and sometimes when it need not be."""
    if any(c in cell for c in ',"\r\n') or rng.random() < 0.03:
        return '"' + cell.replace('"', '""') + '"'
    return cell


NAME_POOL = ["age", "income", "x", "x1", "x2", "score", "h\u00f6he", "\u5e74\u9f62", "a b", "col_9", "Y", "w"]
JUNK_CELLS = ["ann", "Zo\u00eb", "\u6771\u4eac", "", "n/a", "1e5", "quoted, comma", 'say "hi"', "-", "\u2603"]
BAD_CELLS = ["abc", "1e3", "1E-7", "1.2.3", "--1", "+-1", "NaN", "inf", "-inf", "0x1F", "1_000", "\uff11\uff12",
             "\u0663", "\u00bd", "1 000", "- 1", ".", "-", "+", "1,5", "$5", "5%", "(5)", "", "  "]


def generate_dataset(rng, statistic, n):
    rows = row_count(rng, n)
    if statistic == "linreg":
        selection, columns = regression_columns(rng, rows)
    else:
        count = rng.choice([1, 1, 2, 3, 4])
        selection = pick_names(rng, count)
        columns = [profile_values(rng, pick_profile(rng), rows) for _ in range(count)]
    twice = statistic != "linreg" and len(selection) > 1 and rng.random() < 0.05
    if twice:
        selection[1], columns[1] = selection[0], columns[0]
    dataset = table(rng, selection, columns)
    if twice:
        dataset.problems.append("a column selected twice")
    if rng.random() < 0.22:
        corrupt(rng, dataset)
    return dataset


def row_count(rng, n):
    """Mostly a few rows; rarely thousands (only at N = 4096, where rows are cheap)."""
    roll = rng.random()
    if roll < 0.7:
        return rng.randint(1, 20)
    if LIGHT:
        return rng.randint(21, LIGHT_ROWS)
    if roll < 0.92:
        return rng.randint(21, 200)
    if roll < 0.985 or n != "4096":
        return rng.randint(201, 600)
    return rng.randint(601, 3000)


def pick_names(rng, count):
    return rng.sample(NAME_POOL, count)


PROFILES = ["small", "decimal", "many_decimals", "too_many_decimals", "huge", "tiny", "near_i64", "constant",
            "signs", "zeros", "offset"]
PROFILE_WEIGHTS = [20, 25, 6, 1, 8, 6, 2, 5, 4, 2, 5]


def pick_profile(rng):
    return rng.choices(PROFILES, PROFILE_WEIGHTS)[0]


def profile_values(rng, profile, rows):
    """One column of `rows` exact decimals (mantissa, places) of a kind that stresses something."""
    if profile == "small":
        return [(rng.randint(-100, 100), 0) for _ in range(rows)]
    if profile in ("decimal", "many_decimals", "too_many_decimals"):
        places = {"decimal": rng.randint(1, 4), "many_decimals": rng.randint(5, 9),
                  "too_many_decimals": rng.randint(10, 14)}[profile]
        bound = 10 ** (places + rng.randint(0, 4))
        return [(rng.randint(-bound, bound), places) for _ in range(rows)]
    if profile == "huge":
        bound = 10 ** rng.randint(9, 15)
        return [(rng.randint(-bound, bound), 0) for _ in range(rows)]
    if profile == "tiny":  # 1e-7 and the like, written as plain decimals
        places = rng.randint(7, 9)
        return [(rng.randint(-99, 99), places) for _ in range(rows)]
    if profile == "near_i64":  # digits around the i64 range, some just outside it
        places = rng.choice([0, 0, 1, 2])
        return [(rng.choice([1, -1]) * (I64_MAX + rng.randint(-1000, 2)), places) for _ in range(rows)]
    if profile == "constant":
        value = (rng.randint(-10**6, 10**6), rng.randint(0, 3))
        return [value] * rows
    if profile == "signs":
        c = rng.randint(1, 10**rng.randint(1, 12))
        return [(c if i % 2 == 0 else -c, 0) for i in range(rows)]
    if profile == "zeros":
        return [(0, rng.randint(0, 2))] * rows
    # "offset": a large mean and a small spread, e.g. 1000000.01, 1000000.04
    places = rng.randint(1, 3)
    base = 10 ** rng.randint(4, 12) * 10**places
    return [(base + rng.randint(-99, 99), places) for _ in range(rows)]


def regression_columns(rng, rows):
    """Features and a response, shaped to be well-posed, collinear, singular or ill-conditioned."""
    shape = rng.choices(["random", "collinear", "constant", "few_rows", "near_singular", "offset", "tiny",
                         "duplicate", "brief", "many_features"], [40, 6, 5, 5, 6, 8, 6, 3, 2, 3])[0]
    k = rng.choice([1, 1, 2, 2, 3, 4])
    if shape == "few_rows":
        rows = rng.randint(1, k)
    if shape == "many_features":
        k = rng.choice([8, 9])
    if shape == "brief":  # the example: well-posed, once refused as singular
        names = pick_names(rng, 2)
        return names, [[(10**12, 0), (-2 * 10**12, 0), (7, 0)], [(3, 0), (5, 0), (1, 0)]]
    profile = {"offset": "offset", "tiny": "tiny"}.get(shape)
    features = [profile_values(rng, profile or pick_profile(rng), rows) for _ in range(k)]
    if shape in ("collinear", "near_singular", "duplicate") and k >= 2:
        features[1] = derived_feature(rng, shape, features[0])
    if shape == "constant":
        features[rng.randrange(k)] = profile_values(rng, "constant", rows)
    names = pick_names(rng, k + 1) if k + 1 <= len(NAME_POOL) else [f"f{i}" for i in range(k + 1)]
    if shape == "duplicate" and k >= 2:
        names[1] = names[0]
    return names, features + [response(rng, features, rows)]


def derived_feature(rng, shape, base):
    """x2 = a x1 + b (collinear), x1 with one row nudged (nearly singular), or x1 itself."""
    if shape == "duplicate":
        return base
    a, b = rng.randint(-3, 3) or 1, rng.randint(-5, 5)
    derived = [add(scale(v, a), (b, 0)) for v in base]
    if shape == "near_singular":
        row = rng.randrange(len(derived))
        derived[row] = add(derived[row], (1, rng.randint(3, 9)))
    return derived


def response(rng, features, rows):
    """y = sum c_j x_j + noise, exactly; or a constant (SST = 0), an exact fit (SSE = 0), or a
    large mean with a small spread (SST tiny beside y^T y)."""
    kind = rng.choices(["fit", "exact", "constant", "offset", "independent"], [55, 10, 8, 7, 20])[0]
    if kind in ("constant", "offset"):
        return profile_values(rng, kind, rows)
    if kind == "independent":
        return profile_values(rng, pick_profile(rng), rows)
    coefs = [rng.randint(-5, 5) for _ in features]
    noise = profile_values(rng, rng.choice(["small", "decimal"]), rows)
    y = []
    for i in range(rows):
        total = (rng.randint(-100, 100), 0)
        for c, column in zip(coefs, features):
            total = add(total, scale(column[i], c))
        y.append(total if kind == "exact" else add(total, noise[i]))
    return y


def add(a, b):
    places = max(a[1], b[1])
    return (a[0] * 10 ** (places - a[1]) + b[0] * 10 ** (places - b[1]), places)


def scale(a, factor):
    return (a[0] * factor, a[1])


def capacity_dataset(rng):
    """One column whose sum of squares n x^2 is near the plaintext capacity at N = 8192 (four
    29-bit moduli: about 2^112), on either side of it. (The variance's i128 overflow needs
    n^2 x^2 > 2^127, so more than 65536 such users: too slow for a fuzz case; see README.)"""
    rows = rng.randint(20, LIGHT_ROWS) if LIGHT else rng.randint(130, 400)
    c = math.isqrt(2 ** rng.randint(100, 116) // rows) * rng.randint(50, 100) // 100
    pattern = rng.choice(["alternate", "same", "jitter"])
    cells = [(c if pattern == "same" or i % 2 == 0 else -c, 0) for i in range(rows)]
    if pattern == "jitter":
        cells = [(v - rng.randint(0, 10**6), 0) for v, _ in cells]
    return table(rng, pick_names(rng, 1), [cells])


def table(rng, selection, columns):
    """Lays the selected columns out with unselected junk columns, odd headers and cell spellings."""
    unique = list(dict.fromkeys(selection))
    data = {name: columns[selection.index(name)] for name in unique}
    header = list(unique)
    for _ in range(rng.choice([0, 0, 1, 2])):
        header.insert(rng.randint(0, len(header)), rng.choice(["name", "id", "note", "\u00e9t\u00e9", "  "]))
    problems = []
    if rng.random() < 0.05:
        header.append(unique[0])
        problems.append("a selected column named twice in the header")
    rows = len(columns[0])
    records = []
    for r in range(rows):
        seen, record = set(), []
        for name in header:
            if name in data and name not in seen:
                seen.add(name)
                record.append(spell(rng, *data[name][r]))
            else:
                record.append(rng.choice(JUNK_CELLS))
        records.append(record)
    header = [pad(rng, h) for h in header]
    return Dataset(header, records, list(selection), [data[name] for name in selection], problems)


def pad(rng, text):
    """Spaces around a cell: the CLI trims them."""
    return f" {text}  " if rng.random() < 0.05 else text


def spell(rng, mantissa, places):
    """A valid spelling of mantissa / 10^places: '+5', '.5', '5.', '007', '1.50', ' 3 '."""
    sign = "-" if mantissa < 0 else rng.choice(["", "", "", "", "+"])
    digits = str(abs(mantissa)).rjust(places + 1, "0")
    whole, fraction = digits[: len(digits) - places], digits[len(digits) - places:]
    roll = rng.random()
    if places and whole == "0" and roll < 0.15:
        whole = ""  # '.5'
    elif roll < 0.05:
        whole = "00" + whole
    text = whole + "." + fraction if places else whole
    if rng.random() < 0.05:
        text += "0" if places else "."  # '1.50', '5.'
    return pad(rng, sign + text)


def corrupt(rng, dataset):
    """Makes the file one that must be refused."""
    kind = rng.choice(["bad_cell", "bad_cell", "bad_cell", "ragged", "whitespace_line", "missing_column",
                       "header_only", "empty_file", "blank_only"])
    records, selected = dataset.records, dataset.selection
    # In a one-column file an empty cell is a blank line, which CSV readers skip: not an error.
    single = len(dataset.header) == 1
    if kind == "bad_cell":
        name = rng.choice(selected)
        column = [h.strip() for h in dataset.header].index(name)
        row = rng.randrange(len(records))
        records[row][column] = rng.choice([c for c in BAD_CELLS if c or not single])
        dataset.problems.append(f"row {row + 2} column {name!r}: bad cell {records[row][column]!r}")
    elif kind == "ragged":
        row = rng.randrange(len(records))
        # A row cut down to nothing but empty cells is a blank line, which readers skip.
        shorter = rng.random() < 0.5 and not single and any(records[row][:-1])
        records[row] = records[row][:-1] if shorter else records[row] + ["1"]
        dataset.problems.append(f"row {row + 2} has a different field count")
    elif kind == "whitespace_line":
        records.insert(rng.randrange(len(records) + 1), ["   "])
        dataset.problems.append("a line of spaces")
    elif kind == "missing_column":
        selected.insert(rng.randrange(len(selected) + 1), "no_such_column")
        dataset.problems.append("a selected column is not in the header")
    elif kind == "header_only":
        dataset.records = []
        dataset.problems.append("no data rows")
    elif kind == "empty_file":
        dataset.raw = b""
        dataset.problems.append("empty file")
    else:
        dataset.raw = (",".join(dataset.header) + "\n\n\n").encode()
        dataset.problems.append("only blank lines after the header")
    dataset.columns = None  # whatever the program prints, there is nothing to compare it with


# --- demo, bench, params, misc ----------------------------------------------------------------


def demo_case(rng, case):
    case.argv = ["demo"]
    ring_degrees = ["1024", "2048", "4096", "4096"]
    if rng.random() < 0.1:
        ring_degrees.append("8192")
    flag(rng, case, "n", ring_degrees, ["1000", "0", "3", "16", "65536", "abc", "-1", U64_MAX], p_invalid=0.08)
    flag(rng, case, "batch", [str(b) for b in range(1, 9)], ["0", "-1", "x"], HUGE, p_invalid=0.05,
         p_limit=0.06, p_omit=0.2)
    emulated = not LIGHT or case.argv[case.argv.index("--n") + 1] in ("1024", "2048")
    # The default backend is upmem-emu: the light mix names cpu where it must not emulate.
    backend = flag(rng, case, "backend", ["cpu", "cpu", "upmem-emu"] if emulated else ["cpu"], ["gpu", "CPU", ""],
                   p_invalid=0.04, p_omit=0.1 if emulated else 0.0)
    if backend in ("upmem-emu", None):
        flag(rng, case, "dpus", ["8", "16", "32"], ["0", "2561", "abc"], [U64_MAX], p_invalid=0.05, p_limit=0.02)
    elif rng.random() < 0.03:
        case.argv += ["--dpus", "16"]
        case.expect.problems.append("--dpus with --backend cpu")
    threads_flag(rng, case)
    seed_flag(rng, case)
    if "--n" in case.argv and case.argv[case.argv.index("--n") + 1] == "1024":
        # Its preset has no noise budget for the demo's product: refused before it runs.
        case.expect.problems.append("--n 1024: no budget for a product")
    case.expect.must_succeed = True
    case.expect.oracle = {"kind": "demo", "batch": case.argv[case.argv.index("--batch") + 1]
                          if "--batch" in case.argv else "8"}


PAIR_OPS = ["bgv-mul", "pipeline", "bfv-mul", "bfv-add"]


def bench_case(rng, case):
    roll = rng.random()
    if roll < 0.15:
        bench_scheme_case(rng, case)
    elif roll < 0.2:
        case.argv = ["bench", "reproduce", "dramatic", "--kernel", rng.choice(["fast", "", "BEST"])]
        case.expect.problems.append("unknown --kernel")
    else:
        bench_op_case(rng, case)
    case.expect.must_succeed = True
    case.expect.oracle = {"kind": "bench", "json": "--json" in case.argv}


def bench_op_case(rng, case):
    op = rng.choice(["ntt", "intt", "bgv-mul", "pipeline", "bfv-mul", "bfv-add"])
    case.argv = ["bench", op]
    bfv = op.startswith("bfv")
    flag(rng, case, "n", ["4096"] if bfv else ["1024", "2048", "4096"],
         ["1000", "8", "0", "abc", "-4", U64_MAX, "1073741824"], p_invalid=0.06)
    if not bfv:
        flag(rng, case, "primes", ["1", "2", "3"], ["0", "-1"], ["100000", U64_MAX], p_invalid=0.04, p_limit=0.02)
        flag(rng, case, "prime-bits", ["28", "30"], ["0", "1", "31", "64"], p_invalid=0.05, p_omit=0.7)
    even = [str(b) for b in (2, 4, 8, 16)]
    batch = flag(rng, case, "batch", even, ["0", "x"], HUGE, p_invalid=0.04, p_limit=0.05)
    if op in PAIR_OPS and rng.random() < 0.04:
        case.argv[case.argv.index("--batch") + 1] = "3"
        case.expect.problems.append(f"odd batch for {op}")
    emulated = [] if LIGHT and bfv else ["upmem-emu"]
    backend = flag(rng, case, "backend", ["cpu", "cpu", "cpu"] + emulated, ["gpu", ""], p_invalid=0.03)
    if backend == "upmem-emu":
        # BFV holds every prime it uses (q, P, BEHZ's, t); parallel mode needs a DPU for each.
        flag(rng, case, "dpus", ["32"] if bfv else ["4", "8", "16"], ["0", "2561"], p_invalid=0.05)
        flag(rng, case, "mode", ["parallel", "sequential"], ["fast", ""], p_invalid=0.05, p_omit=0.6)
        flag(rng, case, "kernel", ["best", "barrett"], ["avx", ""], p_invalid=0.05, p_omit=0.6)
        # BFV's ciphertexts are real data: every DPU is emulated, `full` is the only choice.
        flag(rng, case, "emulate", ["full"] if bfv else ["auto", "full", "subset"], ["some", ""], p_invalid=0.05,
             p_omit=0.6)
        if batch in HUGE:
            case.expect.lenient.append("a huge batch the model may price")
        if rng.random() < 0.03:
            case.argv += ["--repeat", "2"]
            case.expect.problems.append("--repeat without --backend cpu: one emulated run")
    else:
        threads_flag(rng, case)
        flag(rng, case, "repeat", ["1", "2"], ["x", "-1"], ["0", "4294967296"], p_invalid=0.03, p_limit=0.03)
    if rng.random() < 0.7:
        case.argv.append("--json")


def bench_scheme_case(rng, case):
    case.argv = ["bench", "scheme"]
    flag(rng, case, "scheme", ["bgv", "bfv"], ["ckks", ""], p_invalid=0.05)
    flag(rng, case, "n", ["4096"], ["1024", "1000", "x"], [U64_MAX], p_invalid=0.06, p_limit=0.02)
    flag(rng, case, "batch", ["1", "2", "4"], ["0"], HUGE, p_invalid=0.04, p_limit=0.04)
    flag(rng, case, "backend", ["cpu"], ["upmem-emu", "gpu"], p_invalid=0.05, p_omit=0.5)
    flag(rng, case, "repeat", ["1"], ["x"], ["0", "4294967296"], p_invalid=0.03, p_limit=0.03)
    # At N = 4096, dnum 1 and 2 leave two data primes: no noise budget for the product (refused).
    dnum = flag(rng, case, "dnum", ["1", "3"], ["x"], ["0", "100", U64_MAX], p_invalid=0.03, p_limit=0.1, p_omit=0.8)
    if dnum == "1":
        case.expect.limits.append("--dnum 1 at N = 4096: two data primes")
    threads_flag(rng, case)
    seed_flag(rng, case)
    if rng.random() < 0.7:
        case.argv.append("--json")


def params_case(rng, case):
    case.argv = ["params"] + rng.choice([[], ["--json"], ["--json"]])
    if rng.random() < 0.2:
        case.argv.append(rng.choice(["--n", "--frobnicate", "extra"]))
        case.expect.problems.append("unknown argument")
    case.expect.must_succeed = True
    case.expect.oracle = {"kind": "bench", "json": "--json" in case.argv}


def misc_case(rng, case):
    """Top-level oddities: help and version succeed; nonsense is a usage error."""
    good = [["--help"], ["--version"], ["help", "stats"], ["stats", "--help"], ["bench", "--help"]]
    bad = [[], ["frobnicate"], ["stats"], ["stats", "median", "--users", "3", "--synthetic", "1", "--columns", "x1"],
           ["demo", "extra"], ["bench"], ["bench", "fft", "--n", "1024", "--batch", "2"], ["--n", "1024"]]
    if rng.random() < 0.4:
        case.argv = rng.choice(good)
        case.expect.must_succeed = True
    else:
        case.argv = rng.choice(bad)
        case.expect.problems.append("not a valid command line")


# ---------------------------------------------------------------------------------------------
# The exact oracle


def scaled_columns(oracle):
    """The selected columns as integers over one denominator 10^D: value = int / 10^D, exactly."""
    places = max(p for column in oracle["columns"] for _, p in column)
    return [[m * 10 ** (places - p) for m, p in column] for column in oracle["columns"]], 10**places


def stats_expected(oracle):
    """[(name, exact value or None when undefined, absolute tolerance)] and the problem's
    condition: 'singular', 'ill' or 'well' (always 'well' for mean and variance)."""
    columns, den = scaled_columns(oracle)
    names, statistic = oracle["names"], oracle["statistic"]
    if statistic == "linreg":
        return regression(names, columns, den)
    expected = []
    for name, column in zip(names, columns):
        size = max(abs(x) for x in column) / den
        if statistic == "mean":
            value = Fraction(sum(column), len(column) * den)
            expected.append((f"mean({name})", value, REL_TOL * abs(float(value)) + 1e-15 * size))
        else:
            value = Fraction(centred_square(column, column), len(column) ** 2 * den**2)
            expected.append((f"variance({name})", value, REL_TOL * abs(float(value)) + 1e-15 * size**2))
    return expected, "well"


def centred_square(f, g):
    """n * sum(f g) - sum(f) sum(g): n^2 times the covariance, an exact integer."""
    return len(f) * sum(a * b for a, b in zip(f, g)) - sum(f) * sum(g)


def regression(names, columns, den):
    """Least squares of the last column on the others with an intercept, exactly. The columns
    are integers over the denominator `den`, so the integer normal equations with an intercept
    column of 1 have the true slopes as solution, and the true intercept times `den`."""
    features, y = columns[:-1], columns[-1]
    n = len(y)
    rows = [[1] + [f[i] for f in features] for i in range(n)]
    size = len(features) + 1
    xtx = [[sum(r[a] * r[b] for r in rows) for b in range(size)] for a in range(size)]
    xty = [sum(r[a] * yi for r, yi in zip(rows, y)) for a in range(size)]
    labels = ["intercept"] + [f"coef({name})" for name in names[:-1]] + ["r2"]
    beta = solve_exact(xtx, xty)
    if beta is None:
        return [(label, None, 0.0) for label in labels], "singular"
    kappa = condition_number(features)
    yy = sum(v * v for v in y)
    sst = Fraction(centred_square(y, y), n)
    sse = yy - sum(b * v for b, v in zip(beta, xty))
    r2 = None if sst == 0 else 1 - sse / sst  # undefined: the CLI prints null
    # Tolerances relative to each coefficient's natural size (response spread over feature
    # spread), loosened with the condition number beyond KAPPA_WELL.
    loose = REL_TOL * max(1.0, kappa / KAPPA_WELL)
    sd_y, y_bar = math.sqrt(float(sst / n)) / den, abs(float(Fraction(sum(y), n * den)))
    unit = sd_y or y_bar or 1.0
    slope_sizes = [max(abs(float(b)), unit * n * den / math.sqrt(float(centred_square(f, f))))
                   for b, f in zip(beta[1:], features)]
    intercept = beta[0] / den
    intercept_size = max(abs(float(intercept)), y_bar + sd_y + sum(
        s * abs(float(Fraction(sum(f), n * den))) for s, f in zip(slope_sizes, features)))
    expected = [("intercept", intercept, loose * intercept_size)]
    expected += [(label, b, loose * s) for label, b, s in zip(labels[1:-1], beta[1:], slope_sizes)]
    expected.append(("r2", r2, loose))
    return expected, "well" if kappa <= KAPPA_WELL else "ill"


def solve_exact(a, b):
    """Gaussian elimination over the rationals; None when `a` is singular."""
    size = len(b)
    a = [[Fraction(v) for v in row] + [Fraction(bi)] for row, bi in zip(a, b)]
    for col in range(size):
        pivot = next((r for r in range(col, size) if a[r][col] != 0), None)
        if pivot is None:
            return None
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, size):
            factor = a[r][col] / a[col][col]
            if factor:
                a[r] = [x - factor * p for x, p in zip(a[r], a[col])]
    x = [Fraction(0)] * size
    for r in reversed(range(size)):
        x[r] = (a[r][size] - sum(a[r][c] * x[c] for c in range(r + 1, size))) / a[r][r]
    return x


def condition_number(features):
    """Condition number of the features' correlation matrix (centred and scaled exactly, then
    in floating point): what an f64 solver of the centred problem loses, whatever the offsets
    and units of the columns. Only called when the exact X^T X is nonsingular."""
    centred = [[centred_square(f, g) for g in features] for f in features]
    diag = [math.sqrt(float(centred[i][i])) for i in range(len(features))]
    corr = [[float(c) / (diag[i] * diag[j]) for j, c in enumerate(row)] for i, row in enumerate(centred)]
    eigen = symmetric_eigenvalues(corr)
    smallest, largest = min(eigen), max(eigen)
    return largest / smallest if smallest > 0 else math.inf


def symmetric_eigenvalues(a):
    """Cyclic Jacobi rotations until the off-diagonal part vanishes (k <= 9, so cheap)."""
    a = [row[:] for row in a]
    k = len(a)
    for _ in range(100):
        if sum(a[i][j] ** 2 for i in range(k) for j in range(k) if i != j) < 1e-40:
            break
        for p in range(k):
            for q in range(p + 1, k):
                if a[p][q] == 0:
                    continue
                theta = (a[q][q] - a[p][p]) / (2 * a[p][q])
                t = math.copysign(1.0, theta) / (abs(theta) + math.hypot(theta, 1.0))
                c = 1 / math.hypot(t, 1.0)
                s = t * c
                for r in range(k):
                    a[r][p], a[r][q] = c * a[r][p] - s * a[r][q], s * a[r][p] + c * a[r][q]
                for r in range(k):
                    a[p][r], a[q][r] = c * a[p][r] - s * a[q][r], s * a[p][r] + c * a[q][r]
    return [a[i][i] for i in range(k)]


# ---------------------------------------------------------------------------------------------
# Running and classifying


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    max_threads: int = 0
    storm: bool = False


def limit_child():
    """In the child, before exec: cap its address space so that a huge allocation fails fast
    instead of pushing the host into swap, and write no core files."""
    limit = ADDRESS_SPACE_GIB * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def thread_count(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def execute(binary, case, directory):
    """Runs the case's command, watching its wall time and thread count."""
    path = os.path.join(directory, "input.csv")
    if case.csv is not None:
        with open(path, "wb") as f:
            f.write(case.csv)
    argv = [binary] + [path if a == INPUT else a for a in case.argv]
    out_path, err_path = os.path.join(directory, "out"), os.path.join(directory, "err")
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=directory,
                                preexec_fn=limit_child)
        run = Run(0, "", "", 0.0)
        interval = 0.002
        while True:
            try:
                run.returncode = proc.wait(timeout=interval)
                break
            except subprocess.TimeoutExpired:
                run.max_threads = max(run.max_threads, thread_count(proc.pid))
                run.storm = run.max_threads > THREAD_LIMIT
                run.timed_out = time.monotonic() - start > TIMEOUT_S
                if run.storm or run.timed_out:
                    proc.kill()
                    run.returncode = proc.wait()
                    break
                interval = min(interval * 2, 0.05)
    run.seconds = time.monotonic() - start
    with open(out_path, "rb") as out, open(err_path, "rb") as err:
        run.stdout = out.read().decode("utf-8", "replace")
        run.stderr = err.read().decode("utf-8", "replace")
    return run


def classify(case, run):
    """(class, detail) of one run."""
    if run.storm:
        return "thread-storm", f"killed at {run.max_threads} threads (limit {THREAD_LIMIT})"
    if run.timed_out:
        if case.expect.limits and not case.expect.problems:
            return "long", f"still computing after {TIMEOUT_S} s at {'; '.join(case.expect.limits)}"
        return "timeout", f"killed after {TIMEOUT_S} s"
    rc = run.returncode
    if rc < 0 or rc in (134, 137):
        return "abort", f"signal {-rc}" if rc < 0 else f"exit {rc}"
    if rc == 101 or "panicked at" in run.stderr:
        return "panic", first_line(run.stderr, "panicked at") or f"exit {rc}"
    if rc not in (0, 1, 2):
        return "bad-exit", f"exit {rc}"
    if rc == 0:
        return classify_success(case, run)
    return classify_refusal(case, run)


def classify_success(case, run):
    e = case.expect
    if e.problems:
        return "wrong", "exit 0 for input that must be refused: " + "; ".join(e.problems)
    kind = (e.oracle or {}).get("kind")
    if kind == "stats":
        return check_stats(case, run.stdout)
    if kind == "synthetic":
        return check_synthetic(run.stdout, "--json" in case.argv)
    if kind == "demo" and not re.search(rf"^OK: all {e.oracle['batch']} x \d+ slot products match", run.stdout, re.M):
        return "wrong", "exit 0 without the demo's OK line"
    if kind == "bench" and e.oracle["json"]:
        try:
            [json.loads(line) for line in run.stdout.splitlines() if line.strip()]
        except ValueError:
            return "wrong", "--json output is not JSON lines"
    return "ok", ""


def classify_refusal(case, run):
    e = case.expect
    # clap answers a bare `pimhe` with its usage text instead of an error line; that will do.
    message = first_line(run.stderr, "error:") or first_line(run.stderr, "Usage:")
    if not message:
        return "bad-exit", f"exit {run.returncode} without an 'error: ...' message"
    if e.must_succeed:
        return "refused-valid", message
    if (e.oracle or {}).get("kind") == "stats":
        verdict = check_stats_refusal(case, run.stderr)
        if verdict:
            return verdict
    if run.returncode == 1 and (e.problems or e.limits) and not e.lenient:
        return "exit-code", f"exit 1 (a usage error is 2) for {'; '.join(e.problems + e.limits)}: {message}"
    return "refused", message


def check_stats_refusal(case, stderr):
    """Refusals that are themselves wrong: singular for a well-posed regression, and cells
    misjudged by the decimal parser."""
    cell = re.search(r"the cell '(.*)' is not a plain decimal number", stderr, re.S)
    if cell:
        text = cell.group(1).strip()
        if DECIMAL.fullmatch(text):
            digits = int(re.sub(r"[^0-9]", "", text))
            if digits <= I64_MAX:
                return "refused-valid", f"the valid decimal {text!r} called not a plain decimal number"
            return "misleading-error", f"{text!r} is a decimal beyond 64 bits, called not a plain decimal number"
    if "singular" in stderr and case.expect.oracle["statistic"] == "linreg":
        _, condition = stats_expected(case.expect.oracle)
        if condition == "well":
            return "refused-valid", "refused as singular; the exact X^T X is nonsingular and well-conditioned"
    return None


def check_stats(case, stdout):
    """Every encrypted estimate against the exact value; aggregates_exact must be true."""
    try:
        report = json.loads(stdout)
    except ValueError:
        return ("ok", "human output, not checked") if "--json" not in case.argv else ("wrong", "output is not JSON")
    expected, condition = stats_expected(case.expect.oracle)
    if condition == "singular":
        return "wrong", "exit 0 for a singular regression (the exact X^T X is singular)"
    if report.get("aggregates_exact") is not True:
        return "wrong", "aggregates_exact is not true"
    if report.get("users") != len(case.expect.oracle["columns"][0]):
        return "wrong", f"users {report.get('users')} != {len(case.expect.oracle['columns'][0])} data rows"
    estimates = report.get("estimates", [])
    if [e.get("name") for e in estimates] != [name for name, _, _ in expected]:
        return "wrong", f"estimates {[e.get('name') for e in estimates]} != {[name for name, _, _ in expected]}"
    for estimate, (name, value, tol) in zip(estimates, expected):
        got = estimate.get("encrypted")
        if not matches(got, value, tol):
            shown = "undefined (null)" if value is None else f"{float(value):.17g}"
            return "wrong", f"{name}: printed {got}, exact {shown} (tolerance {tol:.3g})"
    return "ok", ""


def matches(got, value, tol):
    if value is None:  # R^2 with SST = 0: null, or 1 since the intercept then fits exactly
        return got is None or got == 1.0
    return isinstance(got, (int, float)) and math.isfinite(got) and abs(got - float(value)) <= tol


def check_synthetic(stdout, is_json):
    """No exact oracle for the CLI's own generator: encrypted must agree with its plaintext
    column (f64 on well-conditioned data) and the aggregates be exact."""
    if not is_json:
        return "ok", "human output, not checked"
    try:
        report = json.loads(stdout)
    except ValueError:
        return "wrong", "output is not JSON"
    if report.get("aggregates_exact") is not True:
        return "wrong", "aggregates_exact is not true"
    for e in report.get("estimates", []):
        enc, plain = e.get("encrypted"), e.get("plaintext")
        if enc is None and plain is None:
            continue
        if not (isinstance(enc, (int, float)) and isinstance(plain, (int, float))
                and abs(enc - plain) <= 1e-6 * (abs(plain) + 1)):
            return "wrong", f"{e.get('name')}: encrypted {enc} vs plaintext {plain}"
    return "ok", ""


def first_line(text, marker):
    for line in text.splitlines():
        if marker in line:
            return line.strip()[:300]
    return ""


# ---------------------------------------------------------------------------------------------
# Driver


def run_one(binary, seed, index, light=False):
    """Generates, runs and classifies case `index` (in a worker process) of the default mix or
    the light one."""
    global LIGHT
    LIGHT = light
    case = generate(seed, index)
    with tempfile.TemporaryDirectory(prefix="pimhe-fuzz-") as directory:
        run = execute(binary, case, directory)
    cls, detail = classify(case, run)
    result = {"index": index, "class": cls, "detail": detail, "exit": run.returncode,
              "seconds": round(run.seconds, 3), "subcommand": " ".join(case.argv[:2])}
    if cls in DEFECT_CLASSES:
        argv = [csv_name(seed, index) if a == INPUT else a for a in case.argv]
        result.update(command=shlex.join(["pimhe"] + argv),
                      stderr_tail=run.stderr[-1500:], stdout_tail=run.stdout[-800:],
                      csv_head=(case.csv or b"")[:2000].decode("utf-8", "replace") if case.csv is not None else None)
    elif cls == "refused":
        result["signature"] = signature(detail)
    return result


def csv_name(seed, index):
    """Where --replay writes a case's CSV (the report's commands name it)."""
    return f"fuzz-case-{seed}-{index}.csv"


def signature(message):
    """A refusal message without its numbers and quoted values, to group similar refusals."""
    return re.sub(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|-?\d+(\.\d+)?(e-?\d+)?", "#", message)[:120]


def fuzz(args):
    start = time.monotonic()
    counts = {c: 0 for c in CLASSES}
    defects, refusals, by_command = [], {}, {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = pool.map(run_one, [args.binary] * args.cases, [args.seed] * args.cases,
                           range(args.first, args.first + args.cases), [args.light] * args.cases, chunksize=2)
        for done, result in enumerate(results, 1):
            counts[result["class"]] += 1
            per = by_command.setdefault(result["subcommand"], {})
            per[result["class"]] = per.get(result["class"], 0) + 1
            if result["class"] in DEFECT_CLASSES:
                result["replay"] = replay_command(args, result["index"])
                defects.append(result)
            elif result["class"] == "refused":
                refusals[result["signature"]] = refusals.get(result["signature"], 0) + 1
            if done % 100 == 0 or done == args.cases:
                print(f"  {done}/{args.cases} cases, {sum(counts[c] for c in DEFECT_CLASSES)} defects, "
                      f"{done / (time.monotonic() - start):.2f} cases/s", file=sys.stderr)
    elapsed = time.monotonic() - start
    report = {"binary": args.binary, "seed": args.seed, "mix": "light" if args.light else "full", "first": args.first,
              "cases": args.cases, "jobs": args.jobs,
              "timeout_s": TIMEOUT_S, "address_space_gib": ADDRESS_SPACE_GIB, "elapsed_s": round(elapsed, 1),
              "cases_per_s": round(args.cases / elapsed, 3), "counts": counts, "by_command": by_command, "defects": defects,
              "refusals": dict(sorted(refusals.items(), key=lambda kv: -kv[1]))}
    print_summary(report)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
        print(f"report: {args.out}")
    return 1 if defects else 0


def replay_command(args, index):
    return shlex.join(["python3", os.path.relpath(__file__, REPO), "--binary", args.binary,
                       "--seed", str(args.seed), "--replay", str(index)] + (["--light"] if args.light else []))


def print_summary(report):
    print(f"{report['cases']} cases (seed {report['seed']}, {report['mix']} mix) in {report['elapsed_s']} s: "
          f"{report['cases_per_s']} cases/s with {report['jobs']} jobs")
    for cls in CLASSES:
        if report["counts"][cls]:
            print(f"  {cls:<17} {report['counts'][cls]}")
    shown = {}
    for d in report["defects"]:
        group = (d["class"], d["subcommand"], signature(d["detail"]))
        shown[group] = shown.get(group, 0) + 1
        if shown[group] <= 2:
            print(f"\n[{d['class']}] case {d['index']}: {d['detail']}\n  {d['command']}\n  replay: {d['replay']}")


def replay(args):
    """Runs one case in the foreground, leaving its CSV beside the command that reads it."""
    global LIGHT
    LIGHT = args.light
    case = generate(args.seed, args.replay)
    csv_path = None
    if case.csv is not None:
        csv_path = os.path.abspath(csv_name(args.seed, args.replay))
        with open(csv_path, "wb") as f:
            f.write(case.csv)
    print(shlex.join([args.binary] + [csv_path if a == INPUT else a for a in case.argv]))
    e = case.expect
    print(f"expect: problems={e.problems} limits={e.limits} lenient={e.lenient} must_succeed={e.must_succeed}")
    with tempfile.TemporaryDirectory(prefix="pimhe-fuzz-") as directory:
        run = execute(args.binary, case, directory)
    print(f"--- exit {run.returncode} in {run.seconds:.2f} s, max threads seen {run.max_threads}")
    print(f"--- stdout (tail)\n{run.stdout[-3000:]}\n--- stderr (tail)\n{run.stderr[-3000:]}")
    if (e.oracle or {}).get("kind") == "stats":
        expected, condition = stats_expected(e.oracle)
        print(f"--- exact ({condition}): " + ", ".join(
            f"{name}={'null' if v is None else format(float(v), '.17g')}" for name, v, _ in expected))
    cls, detail = classify(case, run)
    print(f"--- class: {cls} {detail}")
    return 1 if cls in DEFECT_CLASSES else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=DEFAULT_BINARY, help="the pimhe binary [target/release/pimhe]")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--first", type=int, default=0, help="index of the first case (to split a long run)")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once")
    parser.add_argument("--out", help="write the JSON report here")
    parser.add_argument("--replay", type=int, metavar="CASE_INDEX", help="run this one case and show everything")
    parser.add_argument("--light", action="store_true",
                        help=f"the light mix: at most {LIGHT_ROWS} rows or users, smaller N, less emulation")
    args = parser.parse_args()
    args.binary = os.path.abspath(args.binary)
    if not os.access(args.binary, os.X_OK):
        parser.error(f"no executable at {args.binary} (cargo build --release, or --binary)")
    sys.exit(replay(args) if args.replay is not None else fuzz(args))


if __name__ == "__main__":
    main()
