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
The scenarios are in fuzzlib/study/ beside this file; the process runner, the classes of a
single run and the exact statistics are fuzzlib's, shared with cli_fuzz.py. See README.md for
the scenarios and the oracle.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzzlib import driver  # noqa: E402  (beside this file)
from fuzzlib.study.driver import fuzz, replay  # noqa: E402


def main():
    parser = driver.options(__doc__.split("\n\n")[0], 100, "the light mix: fewer rows, N = 8192 and emulation rarer")
    parser.add_argument("--attacks", action="store_true",
                        help="add scenarios beyond the threat model (a client wrapping the plaintext modulus)")
    args = driver.parse(parser)
    sys.exit(replay(args) if args.replay is not None else fuzz(args))


if __name__ == "__main__":
    main()
