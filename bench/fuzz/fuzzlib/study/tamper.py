"""Perturbations of the study's files between steps: study.json edited, submissions duplicated
or foreign, special files, a rewritten user count, damaged bytes, the secret key in the public
directory. The step that reads the changed file must refuse it (or, where the change leaves
the meaning alone, answer exactly)."""

import os
import shutil
import struct

from .bundles import damage, read_bundle, write_bundle
from .declaration import U64
from .scenario import CAPACITY
from .steps import decrypt, encrypt, evaluate
from .study_json import edit_study, study_meaning


def json_edit(sc, decl, rows):
    """study.json edited before encrypt, eval or decrypt: decrypt must refuse unless the edit
    left its meaning alone (then it must answer right, or refuse)."""
    rng = sc.rng
    stage = rng.choice(["encrypt", "eval", "decrypt"])
    data, what = edit_study(rng, sc.study_text)
    # A key written twice is ambiguous: refusing it is right, reading the last one harmless.
    changed = study_meaning(data, last_wins="twice" in what) != study_meaning(sc.study_text.encode())
    after = "may"

    def edit():
        sc.write("pub/study.json", data)
        sc.note(f"before {stage}: {what} ({'changed' if changed else 'same meaning'})")

    if stage == "encrypt":
        edit()
    encrypt(sc, after if stage == "encrypt" else "must")
    if stage == "eval":
        edit()
    evaluate(sc, after if stage != "decrypt" else "must")
    if stage == "decrypt":
        edit()
    decrypt(sc, decl, None if changed else rows, expect="refuse" if changed else "may")


def duplicate(sc, decl, rows):
    """A submission copied, hard-linked or symlinked under another *.pimhe name: eval refuses."""
    rng = sc.rng
    encrypt(sc)
    original = rng.choice(sc.submissions())
    name = rng.choice(["copy.pimhe", "zz.pimhe", "00.pimhe", original.upper().replace(".PIMHE", ".pimhe")])
    how = rng.choice(["copy", "copy", "hardlink", "symlink"])
    if os.path.lexists(sc.path("subs", name)):
        name = "copy.pimhe"
    src, dst = sc.path("subs", original), sc.path("subs", name)
    if how == "copy":
        shutil.copyfile(src, dst)
    elif how == "hardlink":
        os.link(src, dst)
    else:
        os.symlink(original, dst)
    sc.note(f"{how} of subs/{original} as subs/{name}")
    evaluate(sc, "refuse")


def foreign(sc, decl, rows):
    """Another study of the same declaration: its submission among ours, its aggregates, its
    keys or its secret key."""
    rng = sc.rng
    other_seed = rng.randrange(U64) if rng.random() < 0.9 else None
    sc.run("keygen (other study)", decl.keygen_args(rng, "pub2", "sec2", other_seed), "must", allow=CAPACITY)
    variant = rng.choice(["submission", "aggregates", "public-keys", "public-dir", "secret-keys"])
    sc.note(f"foreign {variant}")
    if variant == "public-keys":
        shutil.copyfile(sc.path("pub2", "public-keys.pimhe"), sc.path("pub", "public-keys.pimhe"))
        encrypt(sc, "refuse")
    encrypt(sc, users=len(rows))
    if variant == "submission":
        encrypt(sc, csv="data.csv", public="pub2", out="subs2", seed=rng.randrange(U64))
        name = rng.choice(sc.submissions("subs2"))
        shutil.copyfile(sc.path("subs2", name), sc.path("subs", rng.choice(["zz-foreign.pimhe", name])))
        evaluate(sc, "refuse")
    evaluate(sc, users=len(rows))
    if variant == "aggregates":
        encrypt(sc, public="pub2", out="subs2", seed=rng.randrange(U64))
        evaluate(sc, public="pub2", subs="subs2", out="agg2.pimhe")
        decrypt(sc, decl, None, agg="agg2.pimhe")
    if variant == "public-dir":
        for name in ("study.json", "public-keys.pimhe"):
            shutil.copyfile(sc.path("pub2", name), sc.path("pub", name))
        decrypt(sc, decl, None)
    if variant == "secret-keys":
        decrypt(sc, decl, None, secret="sec2")
    decrypt(sc, decl, rows)


def special_file(sc, decl, rows):
    """A *.pimhe entry among the submissions that is not a submission (mostly), or one of the
    study's own files replaced by something that is not a file of its kind: the step that reads
    it must refuse it, without hanging or reading it whole."""
    rng = sc.rng
    target = rng.choices(["submission", "aggregates", "study.json", "public-keys", "secret-keys", "linked"],
                         [10, 2, 2, 2, 2, 1])[0]
    if target == "submission":
        encrypt(sc)
        path = sc.path("subs", rng.choice(["x.pimhe", "zz.pimhe", "0.pimhe"]))
        special(sc, rng, path)
        evaluate(sc, "refuse")
    if target == "linked":  # the study's files moved elsewhere and linked back: still regular files
        os.makedirs(sc.path("elsewhere"))
        for name in ("study.json", "public-keys.pimhe"):
            os.rename(sc.path("pub", name), sc.path("elsewhere", name))
            os.symlink(os.path.join("..", "elsewhere", name), sc.path("pub", name))
        sc.note("pub/study.json and pub/public-keys.pimhe are links to elsewhere/")
        encrypt(sc, "may", users=len(rows))
        evaluate(sc, "may", users=len(rows))
        decrypt(sc, decl, rows, expect="may")
    stage = "decrypt" if target in ("aggregates", "secret-keys") else rng.choice(["encrypt", "eval", "decrypt"])
    path = sc.path(*{"aggregates": ("agg.pimhe",), "study.json": ("pub", "study.json"),
                     "public-keys": ("pub", "public-keys.pimhe"), "secret-keys": ("sec", "secret-keys.pimhe")}[target])
    if stage == "encrypt":
        special(sc, rng, path)
    encrypt(sc, "refuse" if stage == "encrypt" else "must")
    if stage == "eval":
        special(sc, rng, path)
    evaluate(sc, "refuse" if stage == "eval" else "must")
    if stage == "decrypt":
        special(sc, rng, path)
    decrypt(sc, decl, None)


def special(sc, rng, path):
    """Puts at `path` (replacing what is there) something that is not a study's file."""
    if os.path.lexists(path):
        os.remove(path)
    variant = rng.choice(["fifo", "dev-zero", "directory", "empty", "huge-sparse", "large", "dangling", "not-bundle",
                          "padded"])
    if variant == "fifo":
        os.mkfifo(path)
    elif variant == "dev-zero":
        os.symlink("/dev/zero", path)
    elif variant == "directory":
        os.mkdir(path)
    elif variant == "empty":
        open(path, "wb").close()
    elif variant == "huge-sparse":
        with open(path, "wb") as f:
            try:
                f.truncate(rng.choice([1 << 31, 1 << 40]))
            except OSError:  # a file system without sparse files that large
                f.truncate(1 << 31)
    elif variant == "large":
        with open(path, "wb") as f:
            f.write(bytes(rng.choice([2 << 20, 8 << 20])))
    elif variant == "dangling":
        os.symlink("no-such-file", path)
    elif variant == "not-bundle":
        with open(path, "wb") as f:
            f.write(rng.choice([b"hello\n", b"PIMHEBDL", b"PIMHEBDL\x02\x00\xff\xff\xff\xff"]))
    else:  # a real file of the study with bytes after it
        with open(path, "wb") as f:
            f.write(sc.read("pub/public-keys.pimhe") + bytes(rng.randint(1, 100)))
    sc.note(f"{os.path.relpath(path, sc.root)}: {variant}")


def junk_ignored(sc, decl, rows):
    """Entries that are not *.pimhe are not read: a FIFO, a text file, a directory."""
    rng = sc.rng
    encrypt(sc)
    os.mkfifo(sc.path("subs", "pipe"))
    with open(sc.path("subs", "notes.txt"), "w") as f:
        f.write("not a submission\n")
    os.mkdir(sc.path("subs", "old"))
    if rng.random() < 0.5:
        os.symlink("/dev/zero", sc.path("subs", "zero.pimhe.bak"))
    sc.note("subs/ also holds a FIFO 'pipe', notes.txt, a directory 'old' (none *.pimhe)")
    evaluate(sc, users=len(rows))
    decrypt(sc, decl, rows)


def rewrite_count(sc, decl, rows):
    """The aggregates rebuilt with another user count (and a valid checksum), or otherwise
    reframed."""
    rng = sc.rng
    encrypt(sc)
    evaluate(sc)
    version, entries = read_bundle(sc.read("agg.pimhe"))
    real = len(rows)
    variant = rng.choice(["count", "count", "count", "count", "version-1", "version-1-count", "short-count",
                          "no-count", "extra-entry", "reordered"])
    users = rng.choice([real + 1, real - 1, 0, decl.max_users, decl.max_users + 1, decl.least_users - 1, U64 - 1,
                        2**63, 2**32 + real, real + 2])
    if users == real:
        users = real + 1
    out_version, must_refuse = 2, True
    if variant in ("count", "version-1-count"):
        entries = [(n, struct.pack("<Q", users % U64) if n == "users" else b) for n, b in entries]
        out_version = 1 if variant == "version-1-count" else 2
        what = f"user count {real} -> {users % U64}"
    elif variant == "version-1":
        out_version, must_refuse, what = 1, False, "rewritten as a version 1 bundle (no checksum), same content"
    elif variant == "short-count":
        entries = [(n, b[:4] if n == "users" else b) for n, b in entries]
        what = "user count of 4 bytes"
    elif variant == "no-count":
        entries = [(n, b) for n, b in entries if n != "users"]
        what = "without the user count"
    elif variant == "extra-entry":
        entries = entries + [("note", b"hello")]
        what = "with an extra entry"
    else:
        entries = entries[::-1]
        must_refuse, what = False, "entries in reverse order"
    sc.write("agg.pimhe", write_bundle(entries, out_version))
    sc.note(f"agg.pimhe {what}")
    decrypt(sc, decl, None if must_refuse else rows, expect="refuse" if must_refuse else "may")


def damage_file(sc, decl, rows):
    """Bytes flipped, cut or added in a file some later step reads: that step must refuse."""
    rng = sc.rng
    target = rng.choice(["public-keys@encrypt", "public-keys@eval", "public-keys@decrypt", "submission@eval",
                         "aggregates@decrypt", "secret-keys@decrypt", "version-1@encrypt", "version-1@eval",
                         "version-1@decrypt"])
    what, stage = target.split("@")

    def hit(relative):
        data = sc.read(relative)
        if what == "version-1":  # no checksum to catch the damage: the contents must
            _, entries = read_bundle(data)
            index = rng.randrange(len(entries))
            name, payload = entries[index]
            payload = bytearray(payload)
            at = rng.randrange(len(payload))
            payload[at] ^= 1 << rng.randrange(8)
            entries[index] = (name, bytes(payload))
            sc.write(relative, write_bundle(entries, 1))
            sc.note(f"{relative} rewritten as version 1 with entry {name} byte {at} flipped")
        else:
            damaged, how = damage(rng, data)
            sc.write(relative, damaged)
            sc.note(f"{relative}: {how}")

    # A checksummed file with any byte changed must be refused by the first step that reads it.
    # A version 1 rewrite has no checksum: the server cannot tell a flipped ciphertext byte, so
    # eval may add it up, and the analyst's checks must then refuse the garbage, or (the flip
    # fell on a submission's own identifier, say) print the exact statistic.
    refuse = "may" if what == "version-1" else "refuse"
    if stage == "encrypt":  # the public keys (a version 1 rewrite: a key encrypting into garbage)
        hit("pub/public-keys.pimhe")
    encrypt(sc, refuse if stage == "encrypt" else "must")
    if stage == "eval":
        hit("pub/public-keys.pimhe" if what == "public-keys" else os.path.join("subs", rng.choice(sc.submissions())))
    evaluate(sc, refuse if stage == "eval" else "must")
    if stage == "decrypt":
        hit({"public-keys": "pub/public-keys.pimhe", "aggregates": "agg.pimhe", "secret-keys": "sec/secret-keys.pimhe",
             "version-1": "agg.pimhe"}[what])
    decrypt(sc, decl, rows if what == "version-1" else None, expect="may" if what == "version-1" else None)


def secret_in_public(sc, decl, rows):
    """The secret key copied (or linked) into the public directory: no party reads it."""
    rng = sc.rng
    stage = rng.choice(["encrypt", "eval", "decrypt"])
    how = rng.choice(["copy", "copy", "symlink"])

    def leak():
        target = sc.path("pub", "secret-keys.pimhe")
        if how == "copy":
            shutil.copyfile(sc.path("sec", "secret-keys.pimhe"), target)
        else:
            os.symlink(os.path.join("..", "sec", "secret-keys.pimhe"), target)
        sc.note(f"before {stage}: the secret key {how} in pub/")

    if stage == "encrypt":
        leak()
    encrypt(sc, "refuse" if stage == "encrypt" else "must")
    if stage == "eval":
        leak()
    evaluate(sc, "refuse" if stage == "eval" else "must")
    if stage == "decrypt":
        leak()
    decrypt(sc, decl, None)
