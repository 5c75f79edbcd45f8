#!/usr/bin/env python3
"""Verify a rath session JSONL file without rath: an independent check of the
chunk hash chain described in docs/canonical-encoding.md.

usage: verify_chain.py FILE.jsonl     exit 0 if the chain verifies, 1 if not
"""
import decimal
import hashlib
import json
import sys


def es6_number(x):
    """Format a JSON number the way ECMAScript's Number.prototype.toString does."""
    f = float(x)
    if f != f or f in (float("inf"), float("-inf")):
        raise ValueError("non-finite number")
    if f == 0:
        return "0"
    sign = "-" if f < 0 else ""
    # repr gives the shortest digits that round-trip, as ES6 requires.
    _, digs, exp = decimal.Decimal(repr(abs(f))).as_tuple()
    digits = "".join(map(str, digs))
    stripped = digits.rstrip("0")  # value = int(digits) * 10**exp
    exp += len(digits) - len(stripped)
    digits = stripped
    k, n = len(digits), len(digits) + exp  # value = 0.digits * 10**n
    if k <= n <= 21:
        out = digits + "0" * (n - k)
    elif 0 < n <= 21:
        out = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mant = digits if k == 1 else digits[0] + "." + digits[1:]
        out = mant + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + out


def canonical(v):
    """RFC 8785 JSON Canonicalization Scheme."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return es6_number(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ",".join(canonical(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(v[k]) for k in keys) + "}"
    raise TypeError(type(v))


def chunk_id(chunk):
    body = {k: v for k, v in chunk.items() if k != "id"}
    return "sha256:" + hashlib.sha256(canonical(body).encode("utf-8")).hexdigest()


def main(path):
    parent, count = None, 0
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            rec = json.loads(line)
            if rec["type"] != "chunk":
                continue
            c = rec["chunk"]
            if c.get("parent") != parent:
                print(f"{path}:{lineno}: chunk {rec['index']}: parent {c.get('parent')} != previous id {parent}")
                return 1
            want = chunk_id(c)
            if want != c["id"]:
                print(f"{path}:{lineno}: chunk {rec['index']}: recorded id {c['id']}, content hashes to {want}")
                return 1
            parent, count = c["id"], count + 1
    print(f"{path}: {count} chunks verify")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
