"""What a comparison run concludes about issue 27's targets, computed from its tables instead
of counted by hand: pimhe's runs of one configuration pooled into one result, the rows under
1.5x the faster peer, and the operations where a larger batch is slower per ciphertext than a
smaller one.

Why pooling: on a shared machine a process's times drift by 20-60% between runs minutes apart,
more than most differences the table is read for. run.py therefore runs pimhe's batch sizes
in alternating order over several passes (8, 1 then 1, 8: drift that is linear in time then
weighs on both sizes alike) and pools every timed round of every pass: the median per
operation is over passes x rounds samples.
"""

import statistics

# Issue 27's target: pimhe at least this many times faster than the faster peer on every row.
TARGET_RATIO = 1.5

# A larger batch counts as slower than a smaller one past this ratio of medians per ciphertext:
# rounds of one configuration on this machine spread by about that much even when pooled.
BATCH_TOLERANCE = 1.05


def batch_orders(batches, passes):
    """The order pimhe's batch sizes run in, per pass: largest first, then reversed each pass."""
    first = sorted(batches, reverse=True)
    return [first if index % 2 == 0 else first[::-1] for index in range(passes)]


def pool(results):
    """One result from `results`, runs of `pimhe bench scheme` on one configuration (run.py's
    format, each with its `raw` report): per operation, every timed round of every run, the
    median and best per ciphertext over all of them. A memory-bound row's fraction of the
    bandwidth is taken against the highest probe figure of the runs (the machine's limit, so the
    fraction is never flattered by a slow probe). A run that failed makes the pooled result
    that failure."""
    failed = [r for r in results if "error" in r]
    if failed:
        return failed[0]
    merged = dict(results[0])
    batch = merged["batch"]
    merged["passes"] = len(results)
    merged["raw"] = [r["raw"] for r in results]
    ops = {}
    for op in results[0]["ops"]:
        reports = [next(o for o in r["raw"]["ops"] if o["op"] == op) for r in results]
        times = [t for o in reports for t in o["times_s"]]
        timing = {
            "median_s": statistics.median(times) / batch,
            "best_s": min(times) / batch,
            "batch_median_s": statistics.median(times),
            "rounds": len(times),
        }
        probes = [o["bandwidth"] for o in reports if "bandwidth" in o]
        if probes:
            gb_per_s = max(p["measured_gb_per_s"] for p in probes)
            moved = probes[0]["bytes_moved"]
            timing["bandwidth"] = {
                "bytes_moved": moved,
                "measured_gb_per_s": gb_per_s,
                "median_fraction": moved / timing["batch_median_s"] / (gb_per_s * 1e9),
                "best_fraction": moved / min(times) / (gb_per_s * 1e9),
            }
        ops[op] = timing
    merged["ops"] = ops
    return merged


def summary(median, rows, degrees, batches, peers):
    """Markdown lines: the rows under TARGET_RATIO x the faster peer, per batch size, and the
    rows where the largest batch is slower per ciphertext than the smallest by more than
    BATCH_TOLERANCE. `median(library, n, scheme, op, batch)` gives seconds or None; `rows` are
    (n-independent) (op, scheme, label) triples; `peers` are (key, label) pairs."""
    below, compared, slower, both = [], 0, [], 0
    small, large = min(batches), max(batches)
    for n in degrees:
        for op, scheme, label in rows:
            mine = {b: median("pimhe", n, scheme, op, b) for b in batches}
            theirs = [(median(key, n, scheme, op), name) for key, name in peers]
            theirs = [(s, name) for s, name in theirs if s]
            if theirs:
                fastest, name = min(theirs)
                for b, seconds in mine.items():
                    if seconds:
                        compared += 1
                        if fastest / seconds < TARGET_RATIO:
                            below.append(f"{label} at {n}, batch {b}: {fastest / seconds:.2f}x {name}")
            if small != large and mine[small] and mine[large]:
                both += 1
                if mine[large] / mine[small] > BATCH_TOLERANCE:
                    slower.append(f"{label} at {n}: {mine[large] / mine[small]:.2f}x")
    lines = [
        f"- **Rows under {TARGET_RATIO}x the faster peer: {len(below)} of {compared}**"
        + (": " + "; ".join(below) + "." if below else ".")
        if compared
        else "- No peer timed any of pimhe's rows.",
    ]
    if small != large:
        lines.append(
            f"- **Batch {large} slower per ciphertext than batch {small} by more than "
            f"{round(100 * (BATCH_TOLERANCE - 1))}%: {len(slower)} of {both} rows**"
            + (": " + "; ".join(slower) + "." if slower else ".")
        )
    return lines
