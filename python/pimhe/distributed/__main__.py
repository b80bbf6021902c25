"""``python -m pimhe.distributed eval ...``: the study's server step over a Ray cluster, with
``pimhe eval``'s flags and output (text, or one JSON object with ``--json``) and the cluster's
address (``--ray local[:WORKERS] | auto | HOST:PORT``). Exit status 2 for bad input, 1 for a
failed run (a shard that failed for good), as the Rust CLI."""

from __future__ import annotations

import argparse
import json
import sys
from typing import List, Optional

from .._pimhe import ParameterError, PimheError
from ._cluster import ShardError, connect
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
    ev.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    if args.threads is not None and args.threads < 1:
        print(f"error: --threads {args.threads}: allowed 1 or more", file=sys.stderr)
        return 2
    try:
        with connect(args.ray):
            result = evaluate(
                args.public_dir,
                args.submissions,
                args.out,
                shards=args.shards,
                backend=args.backend,
                threads=args.threads,
                retries=args.retries,
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
