"""Writes synthetic separable HELR data as CSV (standard library only), for runs that need more
samples than digits_3_8.csv has (357), such as Anaheim's 1024-sample batches at N = 2^16:

    python3 data/helr/synthetic.py 1400 64 > /tmp/synthetic_64.csv
    pimhe helr --input /tmp/synthetic_64.csv --label label --n 65536 --batch 1024 --per-bootstrap 2

SAMPLES rows of FEATURES standard normal features x0.. and a 0/1 label: the side of a random
hyperplane through offset 0.3, samples within 0.25 of it redrawn (separable with a gap, as
`LabeledData::synthetic_separable` draws; not the same numbers). Seed 1 unless given.
"""

import math
import random
import sys


def main() -> None:
    samples, features = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    normal = [rng.gauss(0.0, 1.0) for _ in range(features)]
    length = math.sqrt(sum(c * c for c in normal))
    normal = [c / length for c in normal]
    print(",".join([f"x{j}" for j in range(features)] + ["label"]))
    written = 0
    while written < samples:
        x = [rng.gauss(0.0, 1.0) for _ in range(features)]
        side = sum(a * b for a, b in zip(normal, x)) - 0.3
        if abs(side) < 0.25:
            continue
        print(",".join(f"{v:.6f}" for v in x) + f",{int(side > 0)}")
        written += 1


if __name__ == "__main__":
    main()
