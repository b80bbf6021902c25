"""The exact answer of a `stats` request: mean, population variance and least squares with R^2
computed with integers and fractions.Fraction from the decimals as written, the condition of a
regression, and the tolerance each printed estimate is held to."""

import math
from fractions import Fraction

# Relative tolerance of every checked number (the CLI computes in f64 from exact aggregates).
REL_TOL = 1e-9
# Regressions whose standardized feature matrix has a condition number up to this are
# "well-posed": refusing them as singular is a defect. Beyond it a refusal is accepted and the
# tolerance grows with the condition number (what any f64 solver can promise).
KAPPA_WELL = 1e6


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



def matches(got, value, tol):
    if value is None:  # R^2 with SST = 0: null, or 1 since the intercept then fits exactly
        return got is None or got == 1.0
    return isinstance(got, (int, float)) and math.isfinite(got) and abs(got - float(value)) <= tol



def mismatch(estimates, expected, key, slack=0.0):
    """What is wrong with printed estimates (dicts with a name and the value under `key`) against
    the exact `expected` ones, within their tolerances plus `slack`: None when nothing, else
    (None, the names printed and expected) or (the estimate's name, its printed and exact value)."""
    names = [e.get("name") for e in estimates]
    if names != [name for name, _, _ in expected]:
        return None, f"estimates {names} != {[name for name, _, _ in expected]}"
    for estimate, (name, value, tol) in zip(estimates, expected):
        got = estimate.get(key)
        if not matches(got, value, tol + slack):
            shown = "undefined (null)" if value is None else f"{float(value):.17g}"
            return name, f"printed {got}, exact {shown} (tolerance {tol:.3g})"
    return None


def exact_text(expected):
    """The exact values, for a replay's output."""
    return ", ".join(f"{name}={'null' if v is None else format(float(v), '.17g')}" for name, v, _ in expected)
