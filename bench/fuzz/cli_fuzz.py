#!/usr/bin/env python3
"""Fuzz the `pimhe` CLI with generated CSV files and flag sets, and check every answer exactly.

Case i of seed s is always the same case (its random generator is seeded with "s:i"), so any
case can be replayed alone. Each case runs the binary once, under a wall-clock timeout, an
address-space limit and a thread-count watch, and is classified as `ok`, `refused` (a clean
refusal) or one of the defect classes (fuzzlib/verdict.py's DEFECT_CLASSES). Stats answers are
compared with an exact rational computation from the CSV's decimal strings (fractions.Fraction).

    python3 bench/fuzz/cli_fuzz.py --cases 300 --seed 1 --jobs 2 --out report.json   # CI
    python3 bench/fuzz/cli_fuzz.py --seed 1 --replay 42                               # one case

Exit status: 0 if no case fell in a defect class, 1 otherwise, 2 on a harness usage error.
The pieces are in fuzzlib/ beside this file (its cli/ package: the cases; process.py, verdict.py,
oracle.py: running and judging one); see README.md for the classes and the oracle.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzzlib import driver  # noqa: E402  (beside this file)
from fuzzlib.case import LIGHT_ROWS  # noqa: E402
from fuzzlib.cli.driver import fuzz, replay  # noqa: E402


def main():
    parser = driver.options(__doc__.split("\n\n")[0], 300,
                            f"the light mix: at most {LIGHT_ROWS} rows or users, smaller N, less emulation")
    args = driver.parse(parser)
    sys.exit(replay(args) if args.replay is not None else fuzz(args))


if __name__ == "__main__":
    main()
