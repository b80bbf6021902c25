"""``python -m pimhe.distributed eval ...``: the study's server step over a Ray cluster, with
``pimhe eval``'s flags and output (text, or one JSON object with ``--json``) and the cluster's
address (``--ray local[:WORKERS] | auto | HOST:PORT``). ``python -m pimhe.distributed stats
mean|variance|linreg ...``: ``pimhe stats`` with its server's step over the cluster, with
``pimhe stats``'s flags and output. Exit status 2 for bad input, 1 for a
failed run (a shard that failed for good), as the Rust CLI."""

from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from .._pimhe import ParameterError, PimheError
from ._cluster import ShardError, connect
from ._stats import run as run_stats
from ._study import evaluate


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m pimhe.distributed", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    ev = commands.add_parser("eval", help="the study's server step (pimhe eval) over Ray")
    ev.add_argument("--public-dir", required=True, help="the study's public directory (pimhe keygen --public-dir)")
    ev.add_argument("--submissions", required=True, help="directory of submission files (every *.pimhe in it)")
    ev.add_argument("--out", required=True, help="file for the aggregates (not replaced if it exists, unless --force)")
    ev.add_argument("--force", action="store_true", help="replace --out if it exists")
    ev.add_argument("--backend", default="cpu", help="each worker's backend: cpu (default), upmem-emu or nearbank")
    ev.add_argument("--threads", type=int, default=1, help="CPU threads per worker (cpu backend; default 1)")
    ev.add_argument(
        "--ray", default="local", help="local (a cluster on this machine), local:WORKERS, auto, or a cluster's HOST:PORT"
    )
    ev.add_argument("--shards", type=int, help="number of shards (default: at most 256 submissions each, 4+ per worker)")
    ev.add_argument("--retries", type=int, default=3, help="reruns of a task whose worker died (default 3)")
    ev.add_argument(
        "--read-on",
        default="auto",
        choices=["auto", "workers", "driver"],
        help="who reads the submission files: the workers (on the driver's file system), the driver (which ships "
        "their bytes), or auto (default: the workers on one machine, the driver on several)",
    )
    ev.add_argument("--json", action="store_true", help="print one JSON object instead of text")

    st = commands.add_parser("stats", help="pimhe stats with its server's step over Ray (this process is the client)")
    st.add_argument("statistic", choices=["mean", "variance", "linreg"])
    st.add_argument("--input", help="CSV file with a header row, one row per user")
    st.add_argument("--columns", required=True, help="numeric columns, comma separated (linreg: features, then the response)")
    st.add_argument("--decimals", type=int, help="fixed-point decimal places of --input (default: the most found)")
    st.add_argument("--users", type=int, help="generate this many users instead of reading --input (with --synthetic)")
    st.add_argument("--synthetic", type=int, help="seed of the synthetic data (with --users)")
    st.add_argument("--scheme", default="bgv", help="bgv (default) or bfv")
    st.add_argument("--n", type=int, default=8192, help="ring degree (a 128-bit preset; default 8192)")
    st.add_argument("--seed", type=int, help="seed of keys and encryption randomness (tests only: insecure)")
    st.add_argument("--backend", default="cpu", help="each worker's backend: cpu (default), upmem-emu or nearbank")
    st.add_argument("--threads", type=int, default=1, help="CPU threads per worker and of the client (default 1)")
    st.add_argument("--ray", default="local", help="local, local:WORKERS, auto, or a cluster's HOST:PORT")
    st.add_argument("--shards", type=int, help="number of shards (default: at most 256 users each, 4+ per worker)")
    st.add_argument("--retries", type=int, default=3, help="reruns of a task whose worker died (default 3)")
    st.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def _stats(args: argparse.Namespace) -> str:
    """Runs ``stats`` and returns what it prints (flags checked as ``pimhe stats`` checks them)."""
    if args.input is not None and (args.users is not None or args.synthetic is not None):
        raise ParameterError("--input conflicts with --users/--synthetic")
    if args.input is None and (args.users is None or args.synthetic is None):
        raise ParameterError("give --input FILE.csv, or --users N --synthetic SEED")
    if args.decimals is not None and args.input is None:
        raise ParameterError("--decimals applies to --input only (synthetic data has 2)")
    columns = [c for c in args.columns.split(",")]
    with connect(args.ray):
        result = run_stats(
            args.statistic, columns, input=args.input, users=args.users, synthetic=args.synthetic,
            decimals=args.decimals, scheme=args.scheme, n=args.n, seed=args.seed, shards=args.shards,
            backend=args.backend, threads=args.threads, client_threads=args.threads, retries=args.retries,
            progress=False if args.json else None,
        )
    # One JSON object on one line, as pimhe stats --json prints it.
    return json.dumps(result.to_json()) if args.json else result.render()


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.threads is not None and args.threads < 1:
        print(f"error: --threads {args.threads}: allowed 1 or more", file=sys.stderr)
        return 2
    try:
        if args.command == "stats":
            print(_stats(args))
            return 0
        with connect(args.ray):
            result = evaluate(
                args.public_dir,
                args.submissions,
                args.out,
                shards=args.shards,
                backend=args.backend,
                threads=args.threads,
                retries=args.retries,
                read_on=args.read_on,
                force=args.force,
                progress=False if args.json else None,
            )
    except (ParameterError, ValueError, ImportError) as e:
        # ImportError: Ray is not installed (the message says how to install it).
        print(f"error: {e}", file=sys.stderr)
        return 2
    except ShardError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2 if e.usage else 1
    except PimheError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    print(json.dumps(result.to_json(), indent=2) if args.json else result.render())
    return 0


if __name__ == "__main__":
    sys.exit(main())
