#!/usr/bin/env python3
"""The encrypted statistics of seed 002 (mean, variance, linear regression) for 640, 1280 and
2560 users, on the CPU and on the emulated UPMEM server, with every scheme pimhe has: one table.

Each cell is one run of `pimhe stats STAT --users U --synthetic SEED --json`; the table shows
the client's encode + encrypt and decrypt time (measured), the server's wall time (measured; on
upmem-emu the emulator's on this host) and, on upmem-emu, the server's modeled UPMEM time
(transfer + compute + retrieve, upmem model as labelled), and whether every decrypted aggregate
equals the plaintext one. A scheme the binary does not have is shown as n/a with its error.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = {"mean": "x1,x2,y", "variance": "x1,x2,y", "linreg": "x1,x2,x3,x4,y"}


def build():
    """Builds pimhe in release mode and returns the binary's path."""
    done = subprocess.run(
        ["cargo", "build", "--release", "-p", "pimhe-cli", "--message-format=json-render-diagnostics"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"cargo build failed (status {done.returncode})")
    for line in done.stdout.splitlines():
        message = json.loads(line)
        if message.get("reason") == "compiler-artifact" and message.get("target", {}).get("name") == "pimhe":
            if message.get("executable"):
                return message["executable"]
    sys.exit("cargo built no pimhe executable")


def run(binary, args, statistic, users, scheme, backend):
    command = [binary, "stats", statistic, "--users", str(users), "--synthetic", str(args.seed)]
    command += ["--columns", COLUMNS[statistic], "--scheme", scheme, "--backend", backend, "--n", str(args.n)]
    command += ["--dpus", str(args.dpus), "--seed", str(args.seed), "--json"]
    if args.threads:
        command += ["--threads", str(args.threads)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["(no message)"]
        return {"error": lines[-1]}
    return json.loads(done.stdout)


def row(statistic, users, scheme, backend, result):
    cells = [statistic, str(users), scheme, backend]
    if "error" in result:
        return cells + ["n/a", "", "", "", result["error"]]
    upmem = result.get("upmem")
    modeled = f"{upmem['transfer_s'] + upmem['compute_s'] + upmem['retrieve_s']:.4f} s" if upmem else "-"
    return cells + [
        f"{result['client_encrypt_s']:.3f} s",
        f"{result['client_decrypt_s']:.3f} s",
        f"{result['server_wall_s']:.3f} s",
        modeled,
        "yes" if result["aggregates_exact"] else "NO",
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[640, 1280, 2560])
    parser.add_argument("--statistics", nargs="+", default=["mean", "variance", "linreg"], choices=list(COLUMNS))
    parser.add_argument("--schemes", nargs="+", default=["bgv", "bfv"])
    parser.add_argument("--backends", nargs="+", default=["cpu", "upmem-emu"])
    parser.add_argument("--n", type=int, default=8192, help="ring degree (a 128-bit preset)")
    parser.add_argument("--dpus", type=int, default=64, help="upmem-emu: DPUs, parallel mode")
    parser.add_argument("--threads", type=int, help="CPU threads of client and CPU server")
    parser.add_argument("--seed", type=int, default=1, help="seed of the data, keys and randomness")
    parser.add_argument("--binary", help="a built pimhe binary (default: cargo build --release)")
    parser.add_argument("--json", type=Path, help="also write every raw result here")
    args = parser.parse_args()

    binary = args.binary or build()
    header = ["statistic", "users", "scheme", "server", "client encrypt", "client decrypt", "server wall",
              "server modeled (UPMEM)", "exact"]
    rows, raw = [], []
    for statistic in args.statistics:
        for users in args.users:
            for scheme in args.schemes:
                for backend in args.backends:
                    result = run(binary, args, statistic, users, scheme, backend)
                    raw.append({"statistic": statistic, "users": users, "scheme": scheme, "backend": backend,
                                "result": result})
                    rows.append(row(statistic, users, scheme, backend, result))
                    print(" | ".join(rows[-1]), file=sys.stderr, flush=True)
    model = next((r["result"]["upmem"]["model"] for r in raw if r["result"].get("upmem")), "none ran")
    print(f"N = {args.n}; upmem-emu: {args.dpus} DPUs, parallel mode; model: {model}; seed {args.seed}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for cells in rows:
        print("| " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1))


if __name__ == "__main__":
    main()
