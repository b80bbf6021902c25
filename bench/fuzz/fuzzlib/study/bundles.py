"""The bytes of the study's files: bundles read and rewritten (docs/SERIALIZATION.md,
"Bundles"), and damage (bytes flipped, cut, appended or zeroed)."""

import hashlib
import struct


def read_bundle(data):
    """(version, [(name, bytes)]) of a bundle (docs/SERIALIZATION.md, "Bundles")."""
    assert data[:8] == b"PIMHEBDL", "not a bundle"
    version, count = struct.unpack_from("<HI", data, 8)
    at, entries = 14, []
    for _ in range(count):
        length = data[at]
        name = data[at + 1: at + 1 + length].decode()
        at += 1 + length
        (size,) = struct.unpack_from("<I", data, at)
        entries.append((name, data[at + 4: at + 4 + size]))
        at += 4 + size
    return version, entries


def write_bundle(entries, version=2):
    out = bytearray(b"PIMHEBDL" + struct.pack("<HI", version, len(entries)))
    for name, payload in entries:
        raw = name.encode()
        out += bytes([len(raw)]) + raw + struct.pack("<I", len(payload)) + payload
    if version >= 2:
        out += hashlib.sha256(bytes(out)).digest()
    return bytes(out)


def damage(rng, data):
    """Bytes flipped, cut, appended or zeroed: (new bytes, what was done)."""
    data = bytearray(data)
    op = rng.choice(["flip", "flip", "flip", "truncate", "append", "zero", "header", "checksum"])
    if op == "truncate":
        cut = rng.randrange(len(data))
        return bytes(data[:cut]), f"truncated to {cut} of {len(data)} bytes"
    if op == "append":
        extra = bytes(rng.randrange(256) for _ in range(rng.randint(1, 64)))
        return bytes(data) + extra, f"{len(extra)} bytes appended"
    if op == "zero":
        start = rng.randrange(len(data))
        length = min(rng.randint(1, 4096), len(data) - start)
        if not any(data[start: start + length]):
            data[start] ^= 0xFF
        data[start: start + length] = bytes(length)
        return bytes(data), f"{length} bytes zeroed at {start}"
    region = {"header": (0, min(len(data), 64)), "checksum": (max(0, len(data) - 32), len(data))}.get(op, (0, len(data)))
    flips = []
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        at = rng.randrange(*region)
        mask = 1 << rng.randrange(8) if rng.random() < 0.7 else rng.randint(1, 255)
        data[at] ^= mask
        flips.append(f"{at}^{mask:#x}")
    return bytes(data), "bytes flipped at " + ", ".join(flips)
