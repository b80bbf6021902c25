"""The CLI fuzzer's driver: a case generated, run and classified in a worker process; a run of
many tallied into the report and its summary; one case replayed in the foreground."""

import functools
import os
import shlex
import tempfile

from .. import driver
from ..case import INPUT
from ..oracle import exact_text, stats_expected
from ..process import ADDRESS_SPACE_GIB, TIMEOUT_S, execute
from ..verdict import CLASSES, DEFECT_CLASSES, classify
from .cases import generate

SCRIPT = os.path.join(driver.FUZZ_DIR, "cli_fuzz.py")


def run_one(binary, seed, index, light=False):
    """Generates, runs and classifies case `index` (in a worker process) of the default mix or
    the light one."""
    case = generate(seed, index, light)
    with tempfile.TemporaryDirectory(prefix="pimhe-fuzz-") as directory:
        run = execute(binary, case, directory)
    cls, detail = classify(case, run)
    result = {"index": index, "class": cls, "detail": detail, "exit": run.returncode,
              "seconds": round(run.seconds, 3), "subcommand": " ".join(case.argv[:2])}
    if cls in DEFECT_CLASSES:
        argv = [csv_name(seed, index) if a == INPUT else a for a in case.argv]
        result.update(command=shlex.join(["pimhe"] + argv),
                      stderr_tail=run.stderr[-1500:], stdout_tail=run.stdout[-800:],
                      csv_head=(case.csv or b"")[:2000].decode("utf-8", "replace") if case.csv is not None else None)
    elif cls == "refused":
        result["signature"] = driver.signature(detail)
    return result


def csv_name(seed, index):
    """Where --replay writes a case's CSV (the report's commands name it)."""
    return f"fuzz-case-{seed}-{index}.csv"


def fuzz(args):
    """Runs the cases of args, prints the summary, writes the report; the exit status."""
    flags = ["--light"] if args.light else []
    counts, by_command, defects, refusals, elapsed = driver.tally(
        args, functools.partial(run_one, args.binary, args.seed, light=args.light), CLASSES, DEFECT_CLASSES,
        "subcommand", chunksize=2, replay=lambda index: driver.replay_command(SCRIPT, args, index, flags),
        refusal_key=lambda result: result["signature"])
    report = {"binary": args.binary, "seed": args.seed, "mix": "light" if args.light else "full", "first": args.first,
              "cases": args.cases, "jobs": args.jobs,
              "timeout_s": TIMEOUT_S, "address_space_gib": ADDRESS_SPACE_GIB, "elapsed_s": round(elapsed, 1),
              "cases_per_s": round(args.cases / elapsed, 3), "counts": counts, "by_command": by_command, "defects": defects,
              "refusals": driver.most_first(refusals)}
    return driver.finish(report, args.out, print_summary)


def print_summary(report):
    """Counts per class and two examples of each distinct defect."""
    print(f"{report['cases']} cases (seed {report['seed']}, {report['mix']} mix) in {report['elapsed_s']} s: "
          f"{report['cases_per_s']} cases/s with {report['jobs']} jobs")
    driver.print_counts(report["counts"], CLASSES, 17)
    for d in driver.examples(report["defects"], "subcommand"):
        print(f"\n[{d['class']}] case {d['index']}: {d['detail']}\n  {d['command']}\n  replay: {d['replay']}")


def replay(args):
    """Runs one case in the foreground, leaving its CSV beside the command that reads it."""
    case = generate(args.seed, args.replay, args.light)
    csv_path = None
    if case.csv is not None:
        csv_path = os.path.abspath(csv_name(args.seed, args.replay))
        with open(csv_path, "wb") as f:
            f.write(case.csv)
    print(shlex.join([args.binary] + [csv_path if a == INPUT else a for a in case.argv]))
    e = case.expect
    print(f"expect: problems={e.problems} limits={e.limits} lenient={e.lenient} must_succeed={e.must_succeed}")
    with tempfile.TemporaryDirectory(prefix="pimhe-fuzz-") as directory:
        run = execute(args.binary, case, directory)
    print(f"--- exit {run.returncode} in {run.seconds:.2f} s, max threads seen {run.max_threads}")
    print(f"--- stdout (tail)\n{run.stdout[-3000:]}\n--- stderr (tail)\n{run.stderr[-3000:]}")
    if (e.oracle or {}).get("kind") == "stats":
        expected, condition = stats_expected(e.oracle)
        print(f"--- exact ({condition}): " + exact_text(expected))
    cls, detail = classify(case, run)
    print(f"--- class: {cls} {detail}")
    return 1 if cls in DEFECT_CLASSES else 0
