"""`demo`, `bench` (ops, `scheme`, `reproduce`), `params` and top-level cases (help, version,
no command, unknown commands): flags mostly valid and small, so that any refusal of a valid
one is a defect."""

from .flags import HUGE, U64_MAX, flag, seed_flag, threads_flag


def demo_case(rng, case):
    case.argv = ["demo"]
    ring_degrees = ["1024", "2048", "4096", "4096"]
    if rng.random() < 0.1:
        ring_degrees.append("8192")
    flag(rng, case, "n", ring_degrees, ["1000", "0", "3", "16", "65536", "abc", "-1", U64_MAX], p_invalid=0.08)
    flag(rng, case, "batch", [str(b) for b in range(1, 9)], ["0", "-1", "x"], HUGE, p_invalid=0.05,
         p_limit=0.06, p_omit=0.2)
    emulated = not case.light or case.argv[case.argv.index("--n") + 1] in ("1024", "2048")
    # The default backend is upmem-emu: the light mix names cpu where it must not emulate.
    backend = flag(rng, case, "backend", ["cpu", "cpu", "upmem-emu"] if emulated else ["cpu"], ["gpu", "CPU", ""],
                   p_invalid=0.04, p_omit=0.1 if emulated else 0.0)
    if backend in ("upmem-emu", None):
        flag(rng, case, "dpus", ["8", "16", "32"], ["0", "2561", "abc"], [U64_MAX], p_invalid=0.05, p_limit=0.02)
    elif rng.random() < 0.03:
        case.argv += ["--dpus", "16"]
        case.expect.problems.append("--dpus with --backend cpu")
    threads_flag(rng, case)
    seed_flag(rng, case)
    if "--n" in case.argv and case.argv[case.argv.index("--n") + 1] == "1024":
        # Its preset has no noise budget for the demo's product: refused before it runs.
        case.expect.problems.append("--n 1024: no budget for a product")
    case.expect.must_succeed = True
    case.expect.oracle = {"kind": "demo", "batch": case.argv[case.argv.index("--batch") + 1]
                          if "--batch" in case.argv else "8"}


PAIR_OPS = ["bgv-mul", "pipeline", "bfv-mul", "bfv-add"]


def bench_case(rng, case):
    roll = rng.random()
    if roll < 0.15:
        bench_scheme_case(rng, case)
    elif roll < 0.2:
        case.argv = ["bench", "reproduce", "dramatic", "--kernel", rng.choice(["fast", "", "BEST"])]
        case.expect.problems.append("unknown --kernel")
    else:
        bench_op_case(rng, case)
    case.expect.must_succeed = True
    case.expect.oracle = {"kind": "bench", "json": "--json" in case.argv}


def bench_op_case(rng, case):
    op = rng.choice(["ntt", "intt", "bgv-mul", "pipeline", "bfv-mul", "bfv-add"])
    case.argv = ["bench", op]
    bfv = op.startswith("bfv")
    flag(rng, case, "n", ["4096"] if bfv else ["1024", "2048", "4096"],
         ["1000", "8", "0", "abc", "-4", U64_MAX, "1073741824"], p_invalid=0.06)
    if not bfv:
        flag(rng, case, "primes", ["1", "2", "3"], ["0", "-1"], ["100000", U64_MAX], p_invalid=0.04, p_limit=0.02)
        flag(rng, case, "prime-bits", ["28", "30"], ["0", "1", "31", "64"], p_invalid=0.05, p_omit=0.7)
    even = [str(b) for b in (2, 4, 8, 16)]
    batch = flag(rng, case, "batch", even, ["0", "x"], HUGE, p_invalid=0.04, p_limit=0.05)
    if op in PAIR_OPS and rng.random() < 0.04:
        case.argv[case.argv.index("--batch") + 1] = "3"
        case.expect.problems.append(f"odd batch for {op}")
    emulated = [] if case.light and bfv else ["upmem-emu"]
    backend = flag(rng, case, "backend", ["cpu", "cpu", "cpu"] + emulated, ["gpu", ""], p_invalid=0.03)
    if backend == "upmem-emu":
        # BFV holds every prime it uses (q, P, BEHZ's, t); parallel mode needs a DPU for each.
        flag(rng, case, "dpus", ["32"] if bfv else ["4", "8", "16"], ["0", "2561"], p_invalid=0.05)
        flag(rng, case, "mode", ["parallel", "sequential"], ["fast", ""], p_invalid=0.05, p_omit=0.6)
        flag(rng, case, "kernel", ["best", "barrett"], ["avx", ""], p_invalid=0.05, p_omit=0.6)
        # BFV's ciphertexts are real data: every DPU is emulated, `full` is the only choice.
        flag(rng, case, "emulate", ["full"] if bfv else ["auto", "full", "subset"], ["some", ""], p_invalid=0.05,
             p_omit=0.6)
        if batch in HUGE:
            case.expect.lenient.append("a huge batch the model may price")
        if rng.random() < 0.03:
            case.argv += ["--repeat", "2"]
            case.expect.problems.append("--repeat without --backend cpu: one emulated run")
    else:
        threads_flag(rng, case)
        flag(rng, case, "repeat", ["1", "2"], ["x", "-1"], ["0", "4294967296"], p_invalid=0.03, p_limit=0.03)
    if rng.random() < 0.7:
        case.argv.append("--json")


def bench_scheme_case(rng, case):
    case.argv = ["bench", "scheme"]
    flag(rng, case, "scheme", ["bgv", "bfv"], ["ckks", ""], p_invalid=0.05)
    flag(rng, case, "n", ["4096"], ["1024", "1000", "x"], [U64_MAX], p_invalid=0.06, p_limit=0.02)
    flag(rng, case, "batch", ["1", "2", "4"], ["0"], HUGE, p_invalid=0.04, p_limit=0.04)
    flag(rng, case, "backend", ["cpu"], ["upmem-emu", "gpu"], p_invalid=0.05, p_omit=0.5)
    flag(rng, case, "repeat", ["1"], ["x"], ["0", "4294967296"], p_invalid=0.03, p_limit=0.03)
    # At N = 4096, dnum 1 and 2 leave two data primes: no noise budget for the product (refused).
    dnum = flag(rng, case, "dnum", ["1", "3"], ["x"], ["0", "100", U64_MAX], p_invalid=0.03, p_limit=0.1, p_omit=0.8)
    if dnum == "1":
        case.expect.limits.append("--dnum 1 at N = 4096: two data primes")
    threads_flag(rng, case)
    seed_flag(rng, case)
    if rng.random() < 0.7:
        case.argv.append("--json")


def params_case(rng, case):
    case.argv = ["params"] + rng.choice([[], ["--json"], ["--json"]])
    if rng.random() < 0.2:
        case.argv.append(rng.choice(["--n", "--frobnicate", "extra"]))
        case.expect.problems.append("unknown argument")
    case.expect.must_succeed = True
    case.expect.oracle = {"kind": "bench", "json": "--json" in case.argv}


def misc_case(rng, case):
    """Top-level oddities: help and version succeed; nonsense is a usage error."""
    good = [["--help"], ["--version"], ["help", "stats"], ["stats", "--help"], ["bench", "--help"]]
    bad = [[], ["frobnicate"], ["stats"], ["stats", "median", "--users", "3", "--synthetic", "1", "--columns", "x1"],
           ["demo", "extra"], ["bench"], ["bench", "fft", "--n", "1024", "--batch", "2"], ["--n", "1024"]]
    if rng.random() < 0.4:
        case.argv = rng.choice(good)
        case.expect.must_succeed = True
    else:
        case.argv = rng.choice(bad)
        case.expect.problems.append("not a valid command line")
