"""Flags of a generated case: each drawn valid, invalid (the CLI must refuse it) or at a limit
(it may), as the case's mischief allows, and what that means for the case recorded."""

U64_MAX = "18446744073709551615"
HUGE = [U64_MAX, "1000000000", "100000000"]
NOT_NUMBERS = ["-1", "abc", "1.5", "", "0x10", "18446744073709551616", "1e3", "\u0663"]


def flag(rng, case, name, valid, invalid=(), limits=(), p_invalid=0.05, p_limit=0.0, p_omit=0.0):
    """Appends `--name value` with a valid, invalid (must refuse) or limit value, or nothing."""
    roll = rng.random()
    if roll < p_omit:
        return None
    roll -= p_omit
    p_invalid, p_limit = p_invalid * case.mischief, p_limit * case.mischief
    if invalid and roll < p_invalid:
        value = rng.choice(list(invalid))
        case.expect.problems.append(f"--{name} {value!r}")
    elif limits and roll < p_invalid + p_limit:
        value = rng.choice(list(limits))
        case.expect.limits.append(f"--{name} {value}")
    else:
        value = rng.choice(list(valid))
    case.argv += [f"--{name}", str(value)]
    return value


def threads_flag(rng, case):
    flag(rng, case, "threads", ["1", "2"], ["0"] + NOT_NUMBERS, ["100000"] + HUGE, 0.04, 0.03, 0.4)


def seed_flag(rng, case):
    valid = [str(rng.randrange(2**64)), U64_MAX, "0"]
    flag(rng, case, "seed", valid, ["-1", "x", "18446744073709551616"], p_invalid=0.02, p_omit=0.2)
