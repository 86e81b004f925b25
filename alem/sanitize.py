"""Text that leaves the process, made safe (the text bridge and the arena both use it): URLs without
secrets, text UTF-8 can hold.

:func:`redact_url` is the form of a URL that messages, logs and ``describe()`` carry (the
credentials in it are used for requests but never shown); :func:`clean_text` replaces what
UTF-8 cannot encode (lone surrogates) by U+FFFD before anything stores it.
"""

from __future__ import annotations

import re

__all__ = ["redact_url", "clean_text"]


def redact_url(url: str) -> str:
    """``url`` without secrets: the password of ``user:password@`` and values of key-like query fields."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in userinfo else f"***@{host}"
    query = parts.query
    if query:
        secret = re.compile(r"key|token|secret|pass|auth|sig", re.I)
        pairs = [(k, "***" if secret.search(k) else v) for k, v in parse_qsl(query, keep_blank_values=True)]
        query = urlencode(pairs, safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_text(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (lone surrogates) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
