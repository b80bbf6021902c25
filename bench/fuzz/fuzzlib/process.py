"""One run of the `pimhe` binary on a case: under a wall-clock timeout, an address-space limit
and a thread-count watch, in a directory of its own, its output kept."""

import os
import resource
import subprocess
import time
from dataclasses import dataclass

from .case import INPUT

TIMEOUT_S = 120
ADDRESS_SPACE_GIB = 8
# A run with more threads than this is killed: `--threads 100000` must not fork-bomb the host.
THREAD_LIMIT = 512


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False
    max_threads: int = 0
    storm: bool = False
    timeout_s: int = TIMEOUT_S  # the limit it ran under


def limit_child():
    """In the child, before exec: cap its address space so that a huge allocation fails fast
    instead of pushing the host into swap, and write no core files."""
    limit = ADDRESS_SPACE_GIB * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def thread_count(pid):
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("Threads:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def execute(binary, case, directory, timeout_s=TIMEOUT_S):
    """Runs the case's command, watching its wall time and thread count."""
    path = os.path.join(directory, "input.csv")
    if case.csv is not None:
        with open(path, "wb") as f:
            f.write(case.csv)
    argv = [binary] + [path if a == INPUT else a for a in case.argv]
    out_path, err_path = os.path.join(directory, "out"), os.path.join(directory, "err")
    start = time.monotonic()
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=directory,
                                preexec_fn=limit_child)
        run = Run(0, "", "", 0.0, timeout_s=timeout_s)
        interval = 0.002
        while True:
            try:
                run.returncode = proc.wait(timeout=interval)
                break
            except subprocess.TimeoutExpired:
                run.max_threads = max(run.max_threads, thread_count(proc.pid))
                run.storm = run.max_threads > THREAD_LIMIT
                run.timed_out = time.monotonic() - start > timeout_s
                if run.storm or run.timed_out:
                    proc.kill()
                    run.returncode = proc.wait()
                    break
                interval = min(interval * 2, 0.05)
    run.seconds = time.monotonic() - start
    with open(out_path, "rb") as out, open(err_path, "rb") as err:
        run.stdout = out.read().decode("utf-8", "replace")
        run.stderr = err.read().decode("utf-8", "replace")
    return run
