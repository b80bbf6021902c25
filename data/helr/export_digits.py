#!/usr/bin/env python3
"""Exports two classes of scikit-learn's digits data set as a CSV for the HELR workload.

Run once, from the repository root, in an environment with scikit-learn:

    python3 -m venv /tmp/skl && /tmp/skl/bin/pip install scikit-learn
    /tmp/skl/bin/python data/helr/export_digits.py 3 8

It writes data/helr/digits_<a>_<b>.csv: a header of the 64 pixel columns (pixel_<row>_<col>,
8x8 images, integer intensities 0..16) and `label`, then one row per image of class a or b in
the data set's own order, labelled 0 for a and 1 for b. Nothing is shuffled or scaled here:
the split and the standardization belong to the Rust loader, which is what is tested.
"""

import csv
import os
import sys

from sklearn.datasets import load_digits


def main() -> None:
    if len(sys.argv) != 3:
        sys.exit("usage: export_digits.py <class a> <class b>  (two different digits 0..9)")
    a, b = int(sys.argv[1]), int(sys.argv[2])
    if a == b or not (0 <= a <= 9 and 0 <= b <= 9):
        sys.exit(f"two different digits 0..9 are needed, not {a} and {b}")
    digits = load_digits()
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"digits_{a}_{b}.csv")
    rows = 0
    with open(out, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(list(digits.feature_names) + ["label"])
        for image, target in zip(digits.data, digits.target):
            if target in (a, b):
                # The intensities are whole numbers stored as floats: written as integers.
                writer.writerow([int(v) for v in image] + [int(target == b)])
                rows += 1
    print(f"{out}: {rows} rows, {len(digits.feature_names)} features, label 1 = digit {b}")


if __name__ == "__main__":
    main()
