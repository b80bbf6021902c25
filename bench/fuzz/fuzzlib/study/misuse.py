"""Perturbations in how the parties run the commands: aliased secret and public directories, a
client with an edited copy of the public directory (and the wrap attack beyond the threat
model), too few or too many users, outputs written over, keygen again, users sharing a
directory, an honest user's values past the bound."""

import json
import os
import shutil

from .declaration import U64, Declaration, decimal_text, draw_rows, draw_umask, largest_bound, write_csv
from .scenario import CAPACITY, Stop
from .steps import decrypt, encrypt, evaluate


def dir_alias_at_keygen(sc, decl, seed):
    """keygen with a secret directory that is the public one, inside it or around it, under
    another spelling: refused, and no secret key written under the public directory."""
    rng = sc.rng
    os.makedirs(sc.path("a"), exist_ok=True)
    variant = rng.choice(["dot-slash", "absolute", "dot-dot", "inside", "around", "trailing-dot", "symlink",
                          "dangling-symlink", "dangling-symlink-inside", "double-slash"])
    # L is a link to X; "dangling": X does not exist yet, keygen creates it as the public directory.
    public, secret = "X", {
        "dot-slash": "./X/", "absolute": sc.path("X"), "dot-dot": "a/../X", "inside": "X/inner", "around": "X",
        "trailing-dot": "X/.", "symlink": "L", "dangling-symlink": "L", "dangling-symlink-inside": "L/sub",
        "double-slash": "a/..//X//",
    }[variant]
    if variant == "around":
        public = rng.choice(["X/inner", "./X/inner/deeper"])
    if variant == "symlink":
        os.makedirs(sc.path("X"), mode=0o700)
        os.chmod(sc.path("X"), 0o700)
    if variant.startswith(("symlink", "dangling-symlink")):
        os.symlink("X", sc.path("L"))
    if rng.random() < 0.4:
        public, secret = secret, public  # the other way round
    umask = draw_umask(rng)
    sc.note(f"dir-alias at keygen ({variant}): public {public!r}, secret {secret!r}")
    try:
        sc.run("keygen", decl.keygen_args(rng, public, secret, seed), "refuse", allow=CAPACITY, umask=umask)
    except Stop as stop:
        # Refused: nothing written anywhere. (After a wrong exit 0, say where the key went.)
        leaked = [os.path.relpath(os.path.join(d, f), sc.root) for d, _, files in os.walk(sc.root) for f in files
                  if f == "secret-keys.pimhe"]
        if leaked:
            raise Stop("wrong", f"keygen ({stop.cls}) left a secret key at {leaked}; public {public!r}, "
                                f"secret {secret!r}")
        raise
    raise Stop("wrong", "keygen exited 0 with aliased public and secret directories")


def dir_alias_at_decrypt(sc, decl, rows):
    """decrypt with directories under other spellings: the public one as the secret one is
    refused, a harmless alias of the secret one answered."""
    rng = sc.rng
    encrypt(sc)
    evaluate(sc)
    os.makedirs(sc.path("a"), exist_ok=True)
    variant = rng.choice(["same", "same-dot", "same-absolute", "same-dot-dot", "inside", "harmless"])
    secret = {"same": "pub", "same-dot": "./pub/", "same-absolute": sc.path("pub"), "same-dot-dot": "sec/../pub",
              "inside": "pub/inner", "harmless": rng.choice(["pub/../sec", "./sec/", sc.path("sec"), "a/../sec"])}[variant]
    sc.note(f"decrypt --secret-dir {secret!r} ({variant})")
    decrypt(sc, decl, rows if variant == "harmless" else None, secret=secret)


def client_copy(sc, decl, rows):
    """A client encrypting with an edited copy of the public directory: max_value raised (and
    values past the study's bound), columns reordered, or decimals changed. Decryption must
    refuse or print the exact statistic of what was submitted."""
    rng = sc.rng
    encrypt(sc, users=len(rows))
    os.makedirs(sc.path("client"))
    shutil.copyfile(sc.path("pub", "public-keys.pimhe"), sc.path("client", "public-keys.pimhe"))
    study = dict(sc.study)
    m, d = study["max_value"], decl.decimals
    count = rng.randint(1, min(3, decl.max_users - len(rows)))
    variant = rng.choice(["max-value", "max-value", "max-value", "columns", "decimals", "min-users"])
    client_decimals, client_columns = d, list(decl.columns)
    if variant == "max-value":
        # The most it can be raised to with the same plaintext moduli (a larger value changes
        # them, and the client's copy is refused): every total stays below half the moduli.
        low = largest_bound(decl.statistic, m, d, decl.max_users, decl.n, decl.max_users)
        raised = rng.choice([low, rng.randint(m, low), m + 1]) if low > m else m + rng.randint(1, 10)
        study["max_value"] = raised
        client = draw_rows(rng, decl, count)
        for row in client:
            c = rng.randrange(len(row))
            row[c] = rng.choice([-1, 1]) * rng.randint(min(m + 1, raised), raised)
    elif variant == "columns" and len(decl.columns) > 1:
        client_columns = decl.columns[1:] + decl.columns[:1]
        study["columns"] = client_columns
        client = draw_rows(rng, decl, count)
    elif variant == "decimals":
        client_decimals = rng.choice([x for x in range(0, 4) if x != d])
        study["decimals"] = client_decimals
        client = draw_rows(rng, decl, count)
        if client_decimals < d:  # values the client can write at its decimals
            step = 10 ** (d - client_decimals)
            client = [[v // step * step for v in row] for row in client]
    else:
        study["min_users"] = 1
        client = draw_rows(rng, decl, count)
    sc.write("client/study.json", json.dumps(study, indent=2).encode())
    sc.note(f"client copy ({variant}): max_value {study['max_value']}, columns {study['columns']}, "
            f"decimals {study['decimals']}; client rows {client}")
    # The client's CSV: its rows in the study's units, written at the client's decimals.
    client_decl = Declaration(decl.statistic, decl.columns, client_decimals, m, decl.max_users)
    scaled = [[v * 10**client_decimals // 10**d for v in row] for row in client]
    write_csv(rng, sc.path("client.csv"), client_decl, scaled)
    encrypt(sc, "may", csv="client.csv", public="client", seed=rng.randrange(U64))
    # What the study's slots hold: slot j gets the client's column client_columns[j], at the
    # client's scale, read at the study's.
    submitted_client = []
    for row in scaled:
        by_name = dict(zip(decl.columns, row))
        submitted_client.append([by_name[name] for name in client_columns])
    evaluate(sc, users=len(rows) + count)
    submitted = rows + submitted_client
    if decl.statistic == "linreg" and client_decimals != d:
        submitted = None  # its constant term is 10^(client's decimals): the totals cannot be a study's
    # Values within the bound at the study's scale must be answered; past it, refusing is right.
    within = submitted is not None and all(abs(v) <= m for row in submitted for v in row)
    decrypt(sc, decl, submitted, expect=None if within else "may")


def wrap_attack(sc, decl, rows):
    """Beyond the threat model (clients are honest), only with --attacks: one client edits its
    copy of study.json to max_users 1 and the largest max_value that keeps the plaintext moduli
    (the same bound), then submits k rows whose first column sums to P, the product of the
    moduli. Each row passes its client's check; the total wraps to the honest total, which
    passes every check decryption makes, and decryption prints the statistic without the
    client's values (the oracle, which knows them, calls that `wrong`)."""
    rng = sc.rng
    encrypt(sc, users=len(rows))
    m, d = sc.study["max_value"], decl.decimals
    product = 1
    for t in sc.study["plain_moduli"]:
        product *= t
    low = largest_bound("mean", m, d, decl.max_users, decl.n, 1)
    k = -(-product // low)
    if low <= m or len(rows) + k > decl.max_users:
        raise Stop("refused", f"no room for the attack (raised bound {low}, {k} rows)")
    cheat = [low] * (k - 1) + [product - (k - 1) * low]
    study = dict(sc.study, max_users=1, min_users=1, max_value=low)
    os.makedirs(sc.path("client"))
    shutil.copyfile(sc.path("pub", "public-keys.pimhe"), sc.path("client", "public-keys.pimhe"))
    sc.write("client/study.json", json.dumps(study, indent=2).encode())
    client = [[v] + [0] * (len(decl.columns) - 1) for v in cheat]
    write_csv(rng, sc.path("client.csv"), decl, client)
    sc.note(f"client copy: max_users 1, max_value {low} (same moduli, product {product}); "
            f"{k} rows summing to {sum(cheat)} in column {decl.columns[0]}")
    encrypt(sc, "may", csv="client.csv", public="client", seed=rng.randrange(U64))
    evaluate(sc, users=len(rows) + k)
    decrypt(sc, decl, rows + client, expect="may")


def too_few(sc, decl, rows):
    encrypt(sc, users=len(rows))
    evaluate(sc, users=len(rows))
    decrypt(sc, decl, None if len(rows) < decl.least_users else rows)


def too_many(sc, decl, rows):
    encrypt(sc, users=len(rows))
    evaluate(sc, "refuse" if len(rows) > decl.max_users else "must")
    decrypt(sc, decl, rows)


def overwrite(sc, decl, rows):
    """eval --out onto an existing file without --force: refused, the file left as it was; then
    with --force onto a file of its own, answered."""
    rng = sc.rng
    encrypt(sc)
    variant = rng.choice(["previous", "text", "secret-key", "study-json", "directory"])
    target = {"previous": "agg.pimhe", "text": "agg.pimhe", "secret-key": "sec/secret-keys.pimhe",
              "study-json": "pub/study.json", "directory": "subs"}[variant]
    if variant == "previous":
        evaluate(sc)
    elif variant == "text":
        sc.write("agg.pimhe", b"keep me\n")
    before = sc.read(target) if variant != "directory" else None
    sc.note(f"eval --out {target} ({variant}), which exists")
    try:
        evaluate(sc, "refuse", out=target)
    except Stop as stop:
        if before is not None and sc.read(target) != before:
            raise Stop("wrong", f"eval changed the existing {target} while refusing to overwrite it")
        if stop.cls != "caught" or variant not in ("previous", "text"):
            raise
    evaluate(sc, out="agg.pimhe", extra=["--force"], users=len(rows))
    decrypt(sc, decl, rows)


def keygen_again(sc, decl, rows):
    """keygen over the study's directories: refused without --force (the keys left as they
    were, the study still answers); with --force the old aggregates belong to no key."""
    rng = sc.rng
    encrypt(sc)
    evaluate(sc)
    secret_before = sc.read("sec/secret-keys.pimhe")
    force = rng.random() < 0.4
    argv = decl.keygen_args(rng, "pub", "sec", rng.randrange(U64)) + (["--force"] if force else [])
    sc.note("keygen again over pub/ and sec/" + (" with --force" if force else ""))
    if force:
        sc.run("keygen again", argv, "must", allow=CAPACITY)
        decrypt(sc, decl, None)
    try:
        sc.run("keygen again", argv, "refuse")
    except Stop as stop:
        if stop.cls != "caught":
            raise
        if sc.read("sec/secret-keys.pimhe") != secret_before:
            raise Stop("wrong", "keygen changed the secret key while refusing to replace it")
    decrypt(sc, decl, rows)


def shared_dir(sc, decl, rows):
    """Users encrypting in batches into one directory: every row counted once."""
    rng = sc.rng
    split = rng.randint(0, len(rows))
    first, second = rows[:split], rows[split:]
    for name, part in (("one.csv", first), ("two.csv", second)):
        write_csv(rng, sc.path(name), decl, part)
    if first:
        encrypt(sc, csv="one.csv", users=len(first), seed=rng.randrange(U64))
    if second:
        encrypt(sc, csv="two.csv", users=len(second), seed=rng.randrange(U64))
    if not rows:
        raise Stop("ok", "")
    evaluate(sc, users=len(rows))
    decrypt(sc, decl, rows)


def over_bound_csv(sc, decl, rows):
    """An honest user's mistake: a value past the declared bound, or with more places than
    declared. The client refuses it."""
    rng = sc.rng
    m, d = sc.study["max_value"], decl.decimals
    bad = [list(r) for r in rows]
    c = rng.randrange(len(decl.columns))
    r = rng.randrange(len(bad))
    if rng.random() < 0.6 or d >= 9:
        bad[r][c] = rng.choice([-1, 1]) * rng.choice([m + 1, m * 2 + 1, 10**15])
        write_csv(rng, sc.path("bad.csv"), decl, bad)
        sc.note(f"bad.csv row {r + 2}: {decimal_text(bad[r][c], d)} past the bound {decimal_text(m, d)}")
    else:
        more = Declaration(decl.statistic, decl.columns, d + 1, m * 10, decl.max_users)
        bad = [[v * 10 for v in row] for row in bad]
        bad[r][c] += rng.choice([-1, 1]) * rng.randint(1, 9)
        write_csv(rng, sc.path("bad.csv"), more, bad)
        sc.note(f"bad.csv row {r + 2} has {d + 1} decimal places")
    encrypt(sc, "refuse", csv="bad.csv")
