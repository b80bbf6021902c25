"""pimhe.study (the CLI's keygen / encrypt / eval / decrypt as functions) and the server step's
pieces pimhe.distributed ships to workers, run here without Ray: against the exact mean of the
rows (Fractions), and shards combined against the one-process aggregates."""

from fractions import Fraction

import pytest

from pimhe import ParameterError, study
from pimhe._pimhe import (
    study_combine,
    study_evaluate_shard,
    study_read_submissions,
    study_server_inputs,
    study_write_aggregates,
)

ROWS = [(12, -5), (7, 30), (-40, 2), (25, 25), (0, -17)]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("study")
    pub, secret, subs = root / "pub", root / "secret", root / "subs"
    made = study.keygen("mean", ["x", "y"], max_value=100, max_users=50, public_dir=pub, secret_dir=secret, seed=3)
    assert made["study"]["statistic"] == "mean" and made["warnings"]
    csv = root / "rows.csv"
    csv.write_text("x,y\n" + "".join(f"{x},{y}\n" for x, y in ROWS))
    assert study.encrypt(pub, csv, subs, seed=4)["users"] == len(ROWS)
    return root, pub, secret, subs


def test_the_four_parties_give_the_exact_mean(setup):
    root, pub, secret, subs = setup
    assert study.evaluate(pub, subs, root / "agg.pimhe")["users"] == len(ROWS)
    result = study.decrypt(pub, secret, root / "agg.pimhe")
    exact = [float(Fraction(sum(r[c] for r in ROWS), len(ROWS))) for c in range(2)]
    assert result["users"] == len(ROWS)
    assert [e["value"] for e in result["estimates"]] == exact
    with pytest.raises(ParameterError, match="already exists"):
        study.evaluate(pub, subs, root / "agg.pimhe")


def test_shards_combined_decrypt_to_the_one_process_result(setup):
    root, pub, secret, subs = setup
    study.evaluate(pub, subs, root / "single.pimhe", force=True)
    study_json, keys, files, _ = study_server_inputs(pub, subs, root / "split.pimhe")
    named = list(zip(map(str, files), study_read_submissions(study_json, files)))
    # Shards of 2, 2 and 1 (5 users), combined as (0 1) 2.
    parts = [study_evaluate_shard(study_json, keys, named[lo:hi])[0] for lo, hi in [(0, 2), (2, 4), (4, 5)]]
    final, cost = study_combine(study_json, keys, [study_combine(study_json, keys, parts[:2])[0], parts[2]])
    assert cost is None  # the CPU: timed, not modeled
    assert study_write_aggregates(study_json, keys, final, len(files), root / "split.pimhe") == len(ROWS)
    assert study.decrypt(pub, secret, root / "split.pimhe") == study.decrypt(pub, secret, root / "single.pimhe")
    # A shard lost, and a submission in two shards, are refused.
    with pytest.raises(Exception, match="hold 4 submissions where 5 were sharded"):
        study_write_aggregates(study_json, keys, study_combine(study_json, keys, parts[:2])[0], 5, root / "x.pimhe")
    with pytest.raises(ParameterError, match="in two shards"):
        study_combine(study_json, keys, [parts[0], study_evaluate_shard(study_json, keys, named[1:3])[0]])
