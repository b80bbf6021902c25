#!/usr/bin/env python3
"""Lists the test executables of the named packages from `cargo test --no-run
--message-format=json` on standard input: one line per executable, its package's
directory (where cargo runs a test) and the executable, separated by a tab.

.ci/run runs them again on the scalar kernels. Running the binaries that `cargo test
--workspace` built, instead of `cargo test -p ...`, keeps the workspace's feature set: a
selection of packages resolves its dependencies' features apart (clap, serde, syn) and rebuilds
them and everything above them, minutes of a 2-core machine.

Fails when a named package has no test executable (a changed message format would otherwise
run nothing and pass).
"""
import json
import os
import re
import sys


def package_name(package_id: str) -> str:
    # "path+file:///repo/crates/math#pimhe-math@0.1.0" (cargo >= 1.77) or
    # "pimhe-math 0.1.0 (path+file:///repo/crates/math)" (older cargo).
    spec = re.search(r"#([^@#]+)@[^#]*$", package_id)
    return spec.group(1) if spec else package_id.split(" ")[0]


def main() -> int:
    wanted = set(sys.argv[1:])
    if not wanted:
        print("usage: test_binaries.py PACKAGE... < cargo-json", file=sys.stderr)
        return 2
    found = {name: 0 for name in wanted}
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if message.get("reason") != "compiler-artifact" or not message.get("executable"):
            continue
        if not message["profile"]["test"]:
            continue
        name = package_name(message["package_id"])
        if name in wanted:
            found[name] += 1
            print(f"{os.path.dirname(message['manifest_path'])}\t{message['executable']}")
    missing = sorted(name for name, count in found.items() if count == 0)
    if missing:
        print(f"no test executable for {', '.join(missing)} in cargo's messages", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
