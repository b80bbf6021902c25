"""One scenario: its directory, its random generator, the log of its steps, each command run
and judged against what it must do (succeed, may refuse, must refuse), and the oracle of a
decryption. A scenario ends by raising Stop with its class."""

import json
import os
import random
import re
import shlex

from ..case import Case
from ..oracle import exact_text, mismatch, stats_expected
from ..process import execute
from ..verdict import DEFECT_CLASSES, classify, first_line

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


class Stop(Exception):
    """Ends a scenario with its class."""

    def __init__(self, cls, detail, step=None):
        super().__init__(detail)
        self.cls, self.detail, self.step = cls, detail, step


class Scenario:
    """One case: the runs of its steps, in a directory of its own, and what each must do."""

    def __init__(self, binary, seed, index, root, light=False, attacks=False, verbose=False):
        self.binary, self.seed, self.index, self.root, self.verbose = binary, seed, index, root, verbose
        self.light, self.attacks = light, attacks  # the light mix; scenarios beyond the threat model
        self.rng = random.Random(f"study:{seed}:{index}")
        self.log = []  # steps and file operations, for the report and the replay
        self.kind = "?"  # the perturbation, once drawn

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
        expected, condition = stats_expected(oracle(decl, submitted))
        if condition == "singular":
            raise Stop("wrong", "decrypt exited 0 for a singular regression (the exact X^T X is singular)")
        if report.get("users") != len(submitted):
            raise Stop("wrong", f"decrypt: users {report.get('users')} != {len(submitted)} submitted")
        # The text output prints 10 decimal places.
        wrong = mismatch(report.get("estimates", []), expected, "value", 0.0 if is_json else 5e-11)
        if wrong:
            name, problem = wrong
            raise Stop("wrong", "decrypt: " + (f"{name} {problem}" if name else problem))
        if self.verbose:
            print("--- exact: " + exact_text(expected))

    @staticmethod
    def decrypt_expectation(decl, submitted):
        """Honest aggregates: a singular regression must be refused, an ill-conditioned one may
        be (the oracle's condition number above 10^6); anything else must be answered."""
        if decl.statistic != "linreg":
            return "must"
        _, condition = stats_expected(oracle(decl, submitted))
        return "refuse" if condition == "singular" else "may" if condition == "ill" else "must"


def oracle(decl, submitted):
    """The stats oracle's input for rows submitted to the study (fixed point at its decimals)."""
    return {"statistic": decl.statistic, "names": decl.columns,
            "columns": [[(row[c], decl.decimals) for row in submitted] for c in range(len(decl.columns))]}


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
