"""A study's declaration (statistic, columns, decimals, bounds, scheme, N) drawn to fit the ring
degree, its keygen command line, and the honest rows of a CSV within its bounds."""

from dataclasses import dataclass

NAMES = ["age", "income", "x", "x1", "x2", "score", "h\u00f6he", "\u5e74\u9f62", "col_9", "Y", "w", "bmi"]
U64 = 2**64


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


def term(statistic, m, decimals):
    """The largest magnitude of one user's term of an aggregate (the CLI's Layout::term_bound)."""
    if statistic == "mean":
        return max(m, 1)
    largest = max(m, 10**decimals) if statistic == "linreg" else m
    return max(largest * largest, 1)


def moduli_size(statistic, m, decimals, users, n):
    """What decides the study's plaintext moduli: the bits of the smallest prime size tried
    (stats::balanced_plain_moduli: the bound's bits decide the count and each one's size). Two
    bounds with the same size have the same moduli."""
    needed = (2 * term(statistic, m, decimals) * users + 1).bit_length()
    return max(needed + 1, n.bit_length() - 1 + 3)


def largest_bound(statistic, m, decimals, users, n, copy_users):
    """The largest max_value, at least m, that a copy of the study declaring `copy_users` users
    may have and keep the study's plaintext moduli (those of m and `users`)."""
    size = moduli_size(statistic, m, decimals, users, n)
    low, high = m, 2**62
    while low < high:
        mid = (low + high + 1) // 2
        if moduli_size(statistic, mid, decimals, copy_users, n) == size:
            low = mid
        else:
            high = mid - 1
    return low


def draw_declaration(rng, light):
    """A random declaration (N = 8192 rarer in the light mix), mostly one keygen accepts."""
    statistic = rng.choices(["mean", "variance", "linreg"], [4, 3, 3])[0]
    count = rng.randint(1, 4) if statistic != "linreg" else rng.choice([2, 2, 3, 3, 4])
    if statistic == "linreg" and rng.random() < 0.02:
        count = 1  # a regression without a feature: refused by keygen
    columns = rng.sample(NAMES, count)
    decimals = rng.randint(0, 3)
    n = 8192 if rng.random() < (0.1 if light else 0.2) else 4096
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


def row_count(rng, decl, light):
    """How many honest users, within the declaration's bounds (fewer in the light mix); None
    when its minimum is above its maximum."""
    most = 8 if light else 20
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
