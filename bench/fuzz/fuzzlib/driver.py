"""What the two fuzzers' drivers share: their common options, running cases in worker processes
and tallying the classes of their results, the replay command of a case, grouping refusals by
message, and writing the JSON report."""

import argparse
import concurrent.futures
import json
import os
import re
import shlex
import sys
import time

FUZZ_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(os.path.dirname(FUZZ_DIR))
DEFAULT_BINARY = os.path.join(REPO, "target", "release", "pimhe")


def options(description, cases, light_help):
    """A parser of the options both fuzzers take; a fuzzer adds its own before `parse`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--binary", default=DEFAULT_BINARY, help="the pimhe binary [target/release/pimhe]")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cases", type=int, default=cases)
    parser.add_argument("--first", type=int, default=0, help="index of the first case (to split a long run)")
    parser.add_argument("--jobs", type=int, default=2, help="cases run at once")
    parser.add_argument("--out", help="write the JSON report here")
    parser.add_argument("--replay", type=int, metavar="CASE_INDEX", help="run this one case and show everything")
    parser.add_argument("--light", action="store_true", help=light_help)
    return parser


def parse(parser):
    """The options, with --binary made absolute; a usage error (status 2) if it cannot run."""
    args = parser.parse_args()
    args.binary = os.path.abspath(args.binary)
    if not os.access(args.binary, os.X_OK):
        parser.error(f"no executable at {args.binary} (cargo build --release, or --binary)")
    return args


def tally(args, work, classes, defects, group, chunksize, replay, refusal_key):
    """Runs `work(index)` for the cases --first.. --first + --cases - 1 in --jobs worker
    processes, printing progress to stderr every 100 cases. Returns the counts per class, the
    counts per class of each value of result[group], the defects (each with its replay(index)
    command), the refusals (results with a signature) counted by refusal_key(result), and the
    seconds it took."""
    start = time.monotonic()
    counts = {c: 0 for c in classes}
    found, refusals, by_group = [], {}, {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = pool.map(work, range(args.first, args.first + args.cases), chunksize=chunksize)
        for done, result in enumerate(results, 1):
            counts[result["class"]] += 1
            per = by_group.setdefault(result[group], {})
            per[result["class"]] = per.get(result["class"], 0) + 1
            if result["class"] in defects:
                result["replay"] = replay(result["index"])
                found.append(result)
            elif "signature" in result:
                key = refusal_key(result)
                refusals[key] = refusals.get(key, 0) + 1
            if done % 100 == 0 or done == args.cases:
                print(f"  {done}/{args.cases} cases, {sum(counts[c] for c in defects)} defects, "
                      f"{done / (time.monotonic() - start):.2f} cases/s", file=sys.stderr)
    return counts, by_group, found, refusals, time.monotonic() - start


def replay_command(script, args, index, flags):
    """The command that replays case `index` of this run alone (`flags`: the mix's)."""
    return shlex.join(["python3", os.path.relpath(script, REPO), "--binary", args.binary,
                       "--seed", str(args.seed), "--replay", str(index)] + flags)


def signature(message):
    """A refusal message without its numbers and quoted values, to group similar refusals."""
    return re.sub(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|-?\d+(\.\d+)?(e-?\d+)?", "#", message)[:120]


def examples(defects, group):
    """The defects a summary shows: the first two of each (class, result[group], signature)."""
    shown = {}
    for d in defects:
        key = (d["class"], d[group], signature(d["detail"]))
        shown[key] = shown.get(key, 0) + 1
        if shown[key] <= 2:
            yield d


def most_first(refusals):
    """The refusal groups, the most frequent first."""
    return dict(sorted(refusals.items(), key=lambda kv: -kv[1]))


def print_counts(counts, classes, width):
    """The summary's lines of the classes that occurred, with their counts."""
    for cls in classes:
        if counts[cls]:
            print(f"  {cls:<{width}} {counts[cls]}")


def finish(report, out, summary):
    """Prints the summary(report), writes the report to `out` (if given); the exit status: 1 if
    the report holds a defect."""
    summary(report)
    if out:
        with open(out, "w") as f:
            json.dump(report, f, indent=1)
        print(f"report: {out}")
    return 1 if report["defects"] else 0
