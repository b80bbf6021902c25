"""The CSV files of `stats` cases: columns drawn from value profiles (small, decimal, huge,
tiny, near the i64 range, constant, offset...), regressions of every shape (well-posed,
collinear, nearly singular, too few rows...), the file's layout and cell spellings, and the
corruptions that make a file one the CLI must refuse. Each value is kept as an exact decimal
(mantissa, places) for the oracle."""

import math
from dataclasses import dataclass, field

from ..case import I64_MAX, LIGHT_ROWS


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


def generate_dataset(rng, statistic, n, light):
    rows = row_count(rng, n, light)
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


def row_count(rng, n, light):
    """Mostly a few rows; rarely thousands (only at N = 4096, where rows are cheap); at most
    LIGHT_ROWS in the light mix."""
    roll = rng.random()
    if roll < 0.7:
        return rng.randint(1, 20)
    if light:
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


def capacity_dataset(rng, light):
    """One column whose sum of squares n x^2 is near the plaintext capacity at N = 8192 (four
    29-bit moduli: about 2^112), on either side of it. (The variance's i128 overflow needs
    n^2 x^2 > 2^127, so more than 65536 such users: too slow for a fuzz case; see README.)"""
    rows = rng.randint(20, LIGHT_ROWS) if light else rng.randint(130, 400)
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
