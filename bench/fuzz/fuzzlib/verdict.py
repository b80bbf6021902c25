"""The class of one run of the binary: `ok`, `refused` (clean), `long` (a valid request at a
size limit still computing), or a defect class; and the checks of a successful run's output
that decide between `ok` and `wrong` (the exact stats oracle, the synthetic data's plaintext
column, the demo's OK line, JSON lines)."""

import json
import re

from .case import I64_MAX
from .oracle import mismatch, stats_expected
from .process import THREAD_LIMIT

DEFECT_CLASSES = (
    "panic", "abort", "timeout", "thread-storm", "wrong", "refused-valid", "bad-exit", "exit-code",
    "misleading-error",
)
# `long`: a valid request at a size limit (10^8 users, say) still computing when the timeout
# ends it; such a run may be refused up front or may take hours, and neither is a defect.
CLASSES = ("ok", "refused", "long") + DEFECT_CLASSES

DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)")


def classify(case, run):
    """(class, detail) of one run."""
    if run.storm:
        return "thread-storm", f"killed at {run.max_threads} threads (limit {THREAD_LIMIT})"
    if run.timed_out:
        if case.expect.limits and not case.expect.problems:
            return "long", f"still computing after {run.timeout_s} s at {'; '.join(case.expect.limits)}"
        return "timeout", f"killed after {run.timeout_s} s"
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
    wrong = mismatch(report.get("estimates", []), expected, "encrypted")
    if wrong is None:
        return "ok", ""
    name, problem = wrong
    return "wrong", f"{name}: {problem}" if name else problem


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
