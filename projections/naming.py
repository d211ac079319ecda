"""Safe file names for arbitrary keys (session keys, project paths).

A key can hold anything: ``/``, ``..``, NUL, newlines, emoji, a thousand characters.
``safe_name`` maps it to a name that is a single path component on any common file
system: letters, digits, ``-`` and ``_`` stay; every other UTF-8 byte becomes ``%XX``
(so ``.``, ``/``, ``%`` and NUL can never form ``..``, a separator or a hidden file).
The mapping is reversible with ``key_from_name`` as long as the encoded key fits in
``MAX_STEM`` bytes; longer keys keep a readable prefix and end in ``~`` plus a hash,
and the full key is always stored inside the file (line 1 of a session file).
"""

from __future__ import annotations

from urllib.parse import unquote

MAX_STEM = 180  # bytes; leaves room for a suffix under the usual 255-byte name limit
_KEEP = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")  # string's, without importing it


def safe_name(key: str, suffix: str = "") -> str:
    """A safe, single-component file name for ``key`` (see module docstring)."""
    raw = key.encode("utf-8", "surrogatepass")
    stem = "".join(chr(b) if b in _KEEP else f"%{b:02X}" for b in raw)
    if not stem:
        stem = "%"  # the empty key: "%" alone never comes out of a non-empty key
    if len(stem) > MAX_STEM:
        import xxhash  # here: a context hook reads project names (key_from_name) and never hashes one

        digest = xxhash.xxh3_64_hexdigest(raw)
        cut = stem[: MAX_STEM - 17]
        cut = cut[: cut.rfind("%")] if "%" in cut[-2:] else cut  # never split a %XX escape
        stem = f"{cut}~{digest}"
    return stem + suffix


def key_from_name(name: str, suffix: str = "") -> str | None:
    """The key a name came from, or None when the name is a hashed (long-key) name."""
    stem = name[: -len(suffix)] if suffix and name.endswith(suffix) else name
    if "~" in stem:
        return None
    if stem == "%":
        return ""
    return unquote(stem, encoding="utf-8", errors="surrogatepass")
