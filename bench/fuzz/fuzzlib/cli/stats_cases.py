"""`stats mean|variance|linreg` cases: on a generated CSV (datasets.py) or the CLI's own
synthetic data, with the ring degree, scheme, backend, threads, decimals, seed and output flags."""

from ..case import INPUT, LIGHT_ROWS
from .datasets import capacity_dataset, generate_dataset
from .flags import HUGE, U64_MAX, flag, seed_flag, threads_flag


def stats_case(rng, case):
    statistic = rng.choices(["mean", "variance", "linreg"], [3, 3, 4])[0]
    case.argv = ["stats", statistic]
    if rng.random() < 0.08:
        stats_n_flag(rng, case, statistic)
        synthetic_input(rng, case, statistic)
    else:
        if statistic != "linreg" and rng.random() < 0.03:
            dataset = capacity_dataset(rng, case.light)
            case.argv += ["--n", "8192"]
        else:
            dataset = generate_dataset(rng, statistic, stats_n_flag(rng, case, statistic), case.light)
        case.csv = dataset.render(rng)
        case.argv += ["--input", INPUT, "--columns", ",".join(dataset.selection)]
        case.expect.problems += dataset.problems
        case.expect.lenient += dataset.lenient
        if dataset.columns is not None:
            case.expect.oracle = {"kind": "stats", "statistic": statistic, "names": dataset.selection,
                                  "columns": dataset.columns}
    stats_option_flags(rng, case, synthetic="--synthetic" in case.argv)


def stats_n_flag(rng, case, statistic):
    """Mostly 4096 or 8192; products (variance, linreg) keep too little noise budget at 4096
    for large values, so they get 8192 more often."""
    roll = rng.random()
    if roll < 0.06:
        value = rng.choice(["1024", "2048"])
        case.expect.lenient.append(f"--n {value}: no relinearization below 4096")
    elif roll < 0.12:
        value = rng.choice(["1000", "0", "3", "65536", "abc", "-8", U64_MAX])
        case.expect.problems.append(f"--n {value}")
    else:
        weights = [3, 1] if statistic == "mean" else [1, 2]
        if case.light:
            # A product at 4096 keeps budget for a few users only: half go to 8192 to be answered.
            weights = [1, 0] if statistic == "mean" else [1, 1]
        value = rng.choices(["4096", "8192"], weights)[0]
    case.argv += ["--n", value]
    return value


def stats_option_flags(rng, case, synthetic):
    """Scheme, backend, threads, decimals, seed, json: mostly valid, sometimes not."""
    scheme = flag(rng, case, "scheme", ["bgv", "bfv"], ["ckks", "BGV", ""], p_invalid=0.02, p_omit=0.7)
    backend = flag(rng, case, "backend", ["cpu", "cpu", "cpu", "cpu", "upmem-emu"], ["gpu", "upmem", ""],
                   p_invalid=0.02, p_omit=0.5)
    if backend == "upmem-emu":
        # BFV holds 18 primes at N = 8192; fewer DPUs is a legitimate refusal.
        dpus = flag(rng, case, "dpus", ["8", "16", "24", "32"], ["0", "2561", "-3"], [U64_MAX],
                    p_invalid=0.05, p_limit=0.02)
        if scheme == "bfv" and dpus in ("8", "16"):
            case.expect.lenient.append("--dpus below BFV's prime count")
    elif rng.random() < 0.03:
        case.argv += ["--dpus", "16"]
        case.expect.problems.append("--dpus without --backend upmem-emu")
    threads_flag(rng, case)
    decimals = flag(rng, case, "decimals", [str(d) for d in range(10)], ["-1", "x"], ["10", "20", "4294967295"],
                    p_invalid=0.1, p_limit=0.2, p_omit=0.88)
    if decimals is not None and synthetic:
        case.expect.problems.append("--decimals with --synthetic")
    elif decimals is not None:
        case.expect.lenient.append("--decimals may be below a cell's places")
    seed_flag(rng, case)
    if rng.random() < 0.95:
        case.argv.append("--json")
    if rng.random() < 0.01:
        case.argv.append("--frobnicate")
        case.expect.problems.append("unknown flag")


def synthetic_input(rng, case, statistic):
    names = [f"x{i}" for i in range(1, 9)] + ["y"]
    count = rng.randint(2, 5) if statistic == "linreg" else rng.randint(1, 4)
    selection = rng.sample(names[:-1], count - 1) + ["y"] if statistic == "linreg" else rng.sample(names, count)
    if rng.random() < 0.05:
        selection[0] = "z"
        case.expect.problems.append("synthetic column 'z'")
    most = LIGHT_ROWS if case.light else 300
    users = flag(rng, case, "users", [str(rng.randint(1, most))] * 9 + [str(rng.randint(most, 7 * most))],
                 ["0", "-5", "abc"], HUGE, p_invalid=0.05, p_limit=0.06)
    case.argv += ["--synthetic", str(rng.randrange(1000)), "--columns", ",".join(selection)]
    if users is not None and users.isdigit() and statistic == "linreg" and int(users) <= count:
        case.expect.lenient.append("fewer users than coefficients")
    if rng.random() < 0.03:
        case.argv += ["--input", INPUT]
        case.csv = b"x1,y\n1,2\n"
        case.expect.problems.append("--input and --users together")
    case.expect.oracle = {"kind": "synthetic", "statistic": statistic}
