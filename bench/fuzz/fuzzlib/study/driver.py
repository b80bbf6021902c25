"""The study fuzzer's driver: a scenario run in a directory of its own (in a worker process)
and its result; a run of many tallied into the report and its summary; one scenario replayed
in the foreground, its directory kept."""

import functools
import os
import shutil
import stat
import tempfile
import time

from .. import driver
from .plan import run_scenario
from .scenario import CLASSES, DEFECTS, STEP_TIMEOUT_S, Scenario, Stop

SCRIPT = os.path.join(driver.FUZZ_DIR, "study_fuzz.py")


def run_case(binary, seed, index, light=False, verbose=False, keep=None, attacks=False):
    """Runs case `index` in a directory of its own; the result as a dict."""
    root = keep or tempfile.mkdtemp(prefix="pimhe-study-fuzz-")
    sc = Scenario(binary, seed, index, root, light, attacks, verbose)
    start = time.monotonic()
    try:
        run_scenario(sc)
        cls, detail, tails = "harness-error", "the scenario ended without a verdict", None
    except Stop as stop:
        cls, detail, tails = stop.cls, stop.detail, stop.step
    except Exception as e:  # noqa: BLE001  (reported as a defect of the fuzzer, with its case)
        cls, detail, tails = "harness-error", f"{type(e).__name__}: {e}", None
        if verbose:
            raise
    finally:
        if keep is None:
            remove_tree(root)
    result = {"index": index, "class": cls, "detail": detail, "kind": sc.kind,
              "seconds": round(time.monotonic() - start, 3)}
    if cls in DEFECTS:
        result["steps"] = sc.log
        if tails:
            result.update(tails)
    elif cls in ("refused", "caught"):
        result["signature"] = driver.signature(detail)
    return result


def remove_tree(root):
    """Removes a case's directory, whatever modes and special files it holds."""
    for directory, _, _ in os.walk(root):
        try:
            os.chmod(directory, stat.S_IRWXU)
        except OSError:
            pass
    shutil.rmtree(root, ignore_errors=True)


def fuzz(args):
    """Runs the scenarios of args, prints the summary, writes the report; the exit status."""
    flags = (["--light"] if args.light else []) + (["--attacks"] if args.attacks else [])
    counts, by_kind, defects, refusals, elapsed = driver.tally(
        args, functools.partial(run_case, args.binary, args.seed, light=args.light, attacks=args.attacks), CLASSES,
        DEFECTS, "kind", chunksize=1, replay=lambda index: driver.replay_command(SCRIPT, args, index, flags),
        refusal_key=lambda result: f"{result['class']}: {result['signature']}")
    report = {"binary": args.binary, "seed": args.seed,
              "mix": ("light" if args.light else "full") + (" + attacks" if args.attacks else ""),
              "first": args.first, "cases": args.cases, "jobs": args.jobs, "step_timeout_s": STEP_TIMEOUT_S,
              "elapsed_s": round(elapsed, 1), "cases_per_s": round(args.cases / elapsed, 3), "counts": counts,
              "by_kind": dict(sorted(by_kind.items())), "defects": defects, "refusals": driver.most_first(refusals)}
    return driver.finish(report, args.out, print_summary)


def print_summary(report):
    """Counts per class and per scenario, and two examples of each distinct defect with its
    last steps."""
    print(f"{report['cases']} study scenarios (seed {report['seed']}, {report['mix']} mix, first {report['first']}) "
          f"in {report['elapsed_s']} s: {report['cases_per_s']} cases/s with {report['jobs']} jobs")
    driver.print_counts(report["counts"], CLASSES, 15)
    print("  per scenario: " + "; ".join(
        f"{kind} " + " ".join(f"{c}={n}" for c, n in sorted(per.items())) for kind, per in report["by_kind"].items()))
    for d in driver.examples(report["defects"], "kind"):
        print(f"\n[{d['class']}] case {d['index']} ({d['kind']}): {d['detail']}\n  replay: {d['replay']}")
        for line in d["steps"][-6:]:
            print(f"    {line[:300]}")


def replay(args):
    """Runs one case in the foreground, in ./study-fuzz-case-SEED-INDEX/ (left there)."""
    keep = os.path.abspath(f"study-fuzz-case-{args.seed}-{args.replay}")
    if os.path.exists(keep):
        remove_tree(keep)
    os.makedirs(keep)
    print(f"case {args.replay} of seed {args.seed} in {keep} (commands run there)")
    result = run_case(args.binary, args.seed, args.replay, args.light, verbose=True, keep=keep, attacks=args.attacks)
    print(f"--- class: {result['class']} {result['detail']}")
    return 1 if result["class"] in DEFECTS else 0
