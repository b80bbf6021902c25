"""The draw of a scenario: its perturbation (by weight), its declaration and honest rows, the
keygen every scenario starts with, then the perturbation's steps."""

import json
import os

from . import misuse, tamper
from .declaration import U64, decimal_text, draw_declaration, draw_rows, draw_umask, row_count, write_csv
from .scenario import CAPACITY, Stop
from .steps import decrypt, encrypt, evaluate

# Perturbations and their weights in the mix (README.md describes each).
KINDS = {
    "honest": 16, "json-edit": 16, "duplicate": 5, "foreign": 6, "special-file": 8, "junk-ignored": 2,
    "rewrite-count": 6, "damage": 10, "secret-in-public": 4, "dir-alias": 6, "client-copy": 8, "too-few": 3,
    "too-many": 2, "overwrite": 4, "keygen-again": 2, "shared-dir": 2, "over-bound-csv": 2,
}
# --attacks adds scenarios beyond the threat model (README.md): what they show is known.
ATTACKS = {"wrap-attack": 20}


def run_scenario(sc):
    """Draws and runs case sc.index: raises Stop with its class."""
    rng = sc.rng
    kinds = dict(KINDS, **ATTACKS) if sc.attacks else KINDS
    kind = rng.choices(list(kinds), list(kinds.values()))[0]
    sc.kind = kind
    decl = draw_declaration(rng, sc.light)
    if kind == "wrap-attack":
        decl.statistic, decl.max_users, decl.min_users = "mean", rng.choice([50, 100, 1000]), None
    if kind == "too-few":
        decl.min_users = rng.randint(2, min(decl.max_users, 5)) if decl.max_users >= 2 else None
        count = rng.randint(1, max(decl.least_users - 1, 1))
    elif kind == "too-many":
        decl.max_users = rng.randint(1, 6)
        decl.min_users = None if rng.random() < 0.5 else 1
        count = decl.max_users + rng.randint(1, 3)
    else:
        count = row_count(rng, decl, sc.light)
        if count is None:  # min users above max users: keygen refuses
            count = 1
    if kind == "client-copy":  # room for the client's rows
        decl.max_users = max(decl.max_users, count + 3)
    rows = draw_rows(rng, decl, count)
    sc.note(f"scenario {kind}: {decl}")
    write_csv(rng, sc.path("data.csv"), decl, rows)
    seed = rng.randrange(U64) if rng.random() < 0.9 else None
    keygen_expect = "must"
    if decl.statistic == "linreg" and len(decl.columns) == 1:
        keygen_expect = "refuse"
    if decl.least_users > decl.max_users:
        keygen_expect = "refuse"
    public, secret = "pub", "sec"
    if kind == "dir-alias" and rng.random() < 0.6:
        return misuse.dir_alias_at_keygen(sc, decl, seed)
    if rng.random() < 0.2:
        public, secret = rng.choice([("./pub/", sc.path("sec")), (sc.path("pub"), "./sec"), ("a/../pub", "sec/")])
        os.makedirs(sc.path("a"), exist_ok=True)
    sc.run("keygen", decl.keygen_args(rng, public, secret, seed), keygen_expect, allow=CAPACITY, umask=draw_umask(rng))
    if keygen_expect == "refuse":
        raise Stop("wrong", "keygen exited 0 for a declaration it must refuse")
    sc.study_text = sc.read("pub/study.json").decode()
    sc.study = json.loads(sc.study_text)
    # Without --n keygen picks the degree (the smallest the bounds allow, or 8192): what later
    # steps reason about is the one it wrote.
    if isinstance(sc.study.get("n"), int):
        decl.n = sc.study["n"]
    if sc.study["max_value"] < decl.max_value:
        raise Stop("wrong", f"keygen --max-value {decimal_text(decl.max_value, decl.decimals)} "
                            f"declared max_value {sc.study['max_value']} < {decl.max_value}")
    sc.enc_seed = rng.randrange(U64)
    return {
        "honest": honest, "json-edit": tamper.json_edit, "duplicate": tamper.duplicate, "foreign": tamper.foreign,
        "special-file": tamper.special_file, "junk-ignored": tamper.junk_ignored,
        "rewrite-count": tamper.rewrite_count, "damage": tamper.damage_file,
        "secret-in-public": tamper.secret_in_public, "dir-alias": misuse.dir_alias_at_decrypt,
        "client-copy": misuse.client_copy, "too-few": misuse.too_few, "too-many": misuse.too_many,
        "overwrite": misuse.overwrite, "keygen-again": misuse.keygen_again, "shared-dir": misuse.shared_dir,
        "over-bound-csv": misuse.over_bound_csv, "wrap-attack": misuse.wrap_attack,
    }[kind](sc, decl, rows)


def honest(sc, decl, rows):
    """No perturbation: every step succeeds, decrypt prints the exact statistic."""
    encrypt(sc, users=len(rows))
    if len(sc.submissions()) != len(rows):
        raise Stop("wrong", f"encrypt wrote {len(sc.submissions())} submissions for {len(rows)} rows")
    evaluate(sc, users=len(rows))
    decrypt(sc, decl, rows)
