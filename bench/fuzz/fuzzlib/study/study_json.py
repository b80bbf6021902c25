"""study.json: what the CLI reads in it (to tell an edit that changes the study from one that
does not), and the hostile or odd edits a scenario makes to it."""

import json
import re

from .bundles import damage
from .declaration import U64

STUDY_FIELDS = ("id", "statistic", "columns", "decimals", "max_value", "max_users", "min_users", "scheme", "n",
                "plain_moduli", "submission_primes", "seeded_keys")


def study_meaning(data, last_wins=False):
    """What the CLI reads in study.json, comparable: its fields (unknown ones are ignored),
    typed, the identifier's hex in lower case; None when it is not a study (or has a key twice,
    unless `last_wins`)."""
    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        if len(keys) != len(set(keys)) and not last_wins:
            raise ValueError("duplicate key")
        return dict(pairs)

    def no_constants(name):
        raise ValueError(name)

    try:
        obj = json.loads(data.decode("utf-8"), object_pairs_hook=no_duplicates, parse_constant=no_constants)
    except RecursionError:
        # edit_study's unknown field "nest", nested deeper than Python's parser goes: the CLI
        # ignores unknown fields (its parser skips them without recursing), so judge the rest.
        shallow = re.sub(rb'"nest": \[+\]+,', b"", data, count=1)
        return study_meaning(shallow, last_wins) if shallow != data else None
    except ValueError:
        return None
    if not isinstance(obj, dict) or any(f not in obj for f in STUDY_FIELDS):
        return None
    kept = {f: obj[f] for f in STUDY_FIELDS}
    if isinstance(kept["id"], str):
        kept["id"] = kept["id"].lower()
    return json.dumps(kept, sort_keys=True)


def edit_study(rng, text):
    """A hostile or odd edit of study.json's text: (new bytes, what was done)."""
    study = json.loads(text)
    kind = rng.choices(["field", "remove", "unknown", "invalid", "huge", "reformat", "flip", "duplicate"],
                       [40, 5, 5, 8, 6, 5, 8, 3])[0]
    if kind == "invalid":
        variant = rng.choice(["truncate", "garbage", "empty", "null", "array", "bom", "not-utf8", "trailing"])
        data = {
            "truncate": text[: rng.randrange(len(text))].encode(),
            "garbage": bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))),
            "empty": b"",
            "null": b"null",
            "array": b"[" + text.encode() + b"]",
            "bom": b"\xef\xbb\xbf" + text.encode(),
            "not-utf8": text.encode().replace(b'"bgv"', b'"bg\xff"').replace(b'"bfv"', b'"bf\xff"'),
            "trailing": text.encode() + b"\n{}",
        }[variant]
        return data, f"study.json invalid: {variant}"
    if kind == "flip":
        data, what = damage(rng, text.encode())
        return data, "study.json " + what
    if kind == "reformat":
        variant = rng.choice(["compact", "sorted", "indent4", "escaped", "upper-id"])
        if variant == "escaped":
            return text.replace('"id"', '"\\u0069d"').encode(), "study.json reformatted: escaped key"
        if variant == "upper-id":
            study["id"] = study["id"].upper()
        return json.dumps(study, sort_keys=variant == "sorted", indent=None if variant == "compact" else 4,
                          ensure_ascii=rng.random() < 0.5).encode(), f"study.json reformatted: {variant}"
    if kind == "remove":
        name = rng.choice(STUDY_FIELDS)
        del study[name]
        return json.dumps(study, indent=2).encode(), f"study.json without {name}"
    if kind == "unknown":
        study[rng.choice(["comment", "x", "max_values", "Decimals"])] = rng.choice([1, "hello", [1, 2], None, 10**30])
        return json.dumps(study, indent=2).encode(), "study.json with an unknown field"
    if kind == "duplicate":
        name = rng.choice(STUDY_FIELDS)
        value = json.dumps(field_edit(rng, name, study[name], study) if rng.random() < 0.5 else study[name])
        return text.replace("{", "{\n  " + json.dumps(name) + ": " + value + ",", 1).encode(), \
            f"study.json with {name} twice"
    if kind == "huge":
        variant = rng.choice(["big-number", "padding", "deep", "long-name", "many-moduli"])
        if variant == "big-number":
            name = rng.choice(["decimals", "max_value", "max_users", "min_users", "n"])
            study[name] = rng.choice([U64 - 1, U64, 10**30, 2**63, 2**32])
            data = json.dumps(study, indent=2).encode()
            if rng.random() < 0.3:  # a number beyond every float
                data = data.replace(json.dumps(study[name]).encode(), b"1e400", 1)
            return data, f"study.json {name} huge"
        if variant == "padding":
            return text.encode() + b" " * rng.choice([1 << 20, (1 << 20) - len(text) - 1]), \
                "study.json padded to about 1 MiB"
        if variant == "deep":
            depth = rng.choice([200, 100000])
            return text.replace("{", '{"nest": ' + "[" * depth + "]" * depth + ",", 1).encode(), \
                f"study.json nested {depth} deep"
        if variant == "long-name":
            study["columns"][0] = "c" * rng.choice([300, 100000])
            return json.dumps(study, indent=2).encode(), "study.json with a long column name"
        study["plain_moduli"] = study["plain_moduli"] * rng.choice([2, 100000])
        return json.dumps(study, indent=2).encode(), "study.json with many plain moduli"
    name = rng.choice(STUDY_FIELDS)
    study[name] = field_edit(rng, name, study[name], study)
    return json.dumps(study, indent=2).encode(), f"study.json {name} -> {json.dumps(study[name])[:80]}"


def field_edit(rng, name, value, study):
    if name == "decimals":
        return rng.choice([value + 1, max(value - 1, 0) if value else 9, 10, -1, 4294967296, str(value), float(value), None])
    if name == "columns":
        edited = list(value)
        roll = rng.randrange(6)
        if roll == 0:
            edited[0] = edited[0] + "2"
        elif roll == 1 and len(edited) > 1:
            edited[0], edited[1] = edited[1], edited[0]
        elif roll == 2 and len(edited) > 1:
            edited.pop()
        elif roll == 3:
            edited.append("extra")
        elif roll == 4:
            edited = rng.choice([[], [edited[0], edited[0]], [" " + edited[0]], 5, edited[0]])
        else:
            edited = edited[::-1] if len(edited) > 1 else [edited[0].upper()]
        return edited
    if name == "max_value":
        return rng.choice([value * 2, value + 1, max(value - 1, 0), 0, value * 10, U64 - 1, U64, -5, 1.5, str(value)])
    if name == "max_users":
        return rng.choice([value + 1, max(value - 1, 0), 0, value * 2, U64 - 1, U64, 1])
    if name == "min_users":
        return rng.choice([0, 1, study["max_users"], study["max_users"] + 1, value + 1, U64 - 1])
    if name == "statistic":
        return rng.choice([s for s in ("mean", "variance", "linreg") if s != value] + ["median", "", 3, value.title()])
    if name == "scheme":
        return rng.choice([{"bgv": "bfv", "bfv": "bgv"}[value], "ckks", "", value.upper()])
    if name == "n":
        return rng.choice([{4096: 8192}.get(value, 4096), 1024, 2048, 16384, 0, 3, U64])
    if name == "submission_primes":
        return rng.choice([value + 1, max(value - 1, 0), 0, 1, 100, -1, str(value), None])
    if name == "plain_moduli":
        moduli = list(value)
        return rng.choice([[], moduli[:-1], moduli + [65537], moduli[::-1] if len(moduli) > 1 else [moduli[0] + 2],
                           [moduli[0] + 2] + moduli[1:], [0], [2**32], ["x"]])
    if name == "id":
        return rng.choice(["%032x" % rng.randrange(2**128), value[:-2], value + "00", "zz" * 16, 5, ""])
    return rng.choice([not value, "true", 1, None])  # seeded_keys
