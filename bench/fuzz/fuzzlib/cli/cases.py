"""Case i of seed s: its random generator is seeded with "s:i", so it is the same case on
every machine and every run, and any case replays alone."""

import random

from ..case import Case
from .command_cases import bench_case, demo_case, misc_case, params_case
from .stats_cases import stats_case


def generate(seed, index, light=False):
    """Case `index` of `seed`, of the default mix or the light one."""
    rng = random.Random(f"{seed}:{index}")
    builder = rng.choices([stats_case, demo_case, bench_case, params_case, misc_case], [66, 12, 13, 3, 6])[0]
    case = Case(index, [], mischief=0.0 if rng.random() < 0.7 else 2.5, light=light)
    builder(rng, case)
    e = case.expect
    e.must_succeed = e.must_succeed and not (e.problems or e.limits or e.lenient)
    return case
