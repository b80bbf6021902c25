"""Tests of verdict.py on hand-made runs whose pooled figures are worked out by hand."""

import verdict


def run(batch, times, gb_per_s=None):
    """A run.py result of one operation, `add`, with per-batch round times `times`."""
    op = {"op": "add", "times_s": times}
    if gb_per_s is not None:
        op["bandwidth"] = {"bytes_moved": 8e9, "measured_gb_per_s": gb_per_s}
    return {"batch": batch, "ops": {"add": {}}, "raw": {"ops": [op]}}


def test_batch_sizes_alternate_in_order_largest_first():
    assert verdict.batch_orders([1, 8], 3) == [[8, 1], [1, 8], [8, 1]]
    assert verdict.batch_orders([4], 2) == [[4], [4]]


def test_pooled_median_is_over_every_round_of_every_run():
    pooled = verdict.pool([run(8, [8.0, 16.0], 20.0), run(8, [32.0, 24.0], 40.0)])
    add = pooled["ops"]["add"]
    # Rounds 8, 16, 24, 32 s per batch of 8: median 20 s, 2.5 s per ciphertext; best 1 s.
    assert (add["median_s"], add["best_s"], add["batch_median_s"], add["rounds"]) == (2.5, 1.0, 20.0, 4)
    assert pooled["passes"] == 2
    # Against the faster probe, 40 GB/s: 8 GB in 20 s is 1%, in 8 s 2.5%.
    assert abs(add["bandwidth"]["median_fraction"] - 0.01) < 1e-12
    assert abs(add["bandwidth"]["best_fraction"] - 0.025) < 1e-12


def test_a_failed_run_is_the_pooled_result():
    failure = {"batch": 8, "error": "ran past --timeout 10 s"}
    assert verdict.pool([run(8, [1.0]), failure]) is failure


def test_summary_lists_rows_under_target_and_slower_batches():
    seconds = {
        ("pimhe", "add", 1): 1.0,
        ("pimhe", "add", 8): 1.2,  # batch 8 slower by 20%
        ("pimhe", "mul", 1): 2.0,
        ("pimhe", "mul", 8): 2.08,  # 4%: within the tolerance
        ("seal", "add", None): 1.4,  # 1.4x batch 1, 1.17x batch 8: both under 1.5x
        ("openfhe", "add", None): 9.0,
        ("seal", "mul", None): 4.0,  # 2x and 1.92x
    }

    def median(library, n, scheme, op, batch=None):
        return seconds.get((library, op, batch))

    rows = [("add", "ckks", "CKKS add"), ("mul", "ckks", "CKKS mul")]
    lines = verdict.summary(median, rows, [8192], [1, 8], [("seal", "SEAL"), ("openfhe", "OpenFHE")])
    assert lines[0] == (
        "- **Rows under 1.5x the faster peer: 2 of 4**: CKKS add at 8192, batch 1: 1.40x SEAL; "
        "CKKS add at 8192, batch 8: 1.17x SEAL."
    )
    assert lines[1] == "- **Batch 8 slower per ciphertext than batch 1 by more than 5%: 1 of 2 rows**: CKKS add at 8192: 1.20x."
