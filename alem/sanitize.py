"""Text that leaves the process, made safe (the text bridge and the arena both use it): URLs without
secrets, server text without the credentials it was sent, text UTF-8 can hold.

:func:`redact_url` is the form of a URL that messages, logs and ``describe()`` carry (the
credentials in it are used for requests but never shown); :class:`Secrets` removes the
credentials a client sends (and their encoded forms) from whatever a server answers, before
anything stores or prints it; :func:`clean_text` replaces what UTF-8 cannot encode (lone
surrogates) by U+FFFD before anything stores it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlsplit

__all__ = ["redact_url", "clean_text", "Secrets", "REDACTED"]

#: What a redacted secret reads as.
REDACTED = "***"
# Names of query fields and headers whose values are secrets.
_SECRET_NAME = re.compile(r"key|token|secret|pass|auth|sig", re.I)


def redact_url(url: str) -> str:
    """``url`` without secrets: the password of ``user:password@`` and values of key-like query fields."""
    from urllib.parse import urlencode, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user = userinfo.split(":", 1)[0]
        netloc = f"{user}:{REDACTED}@{host}" if ":" in userinfo else f"{REDACTED}@{host}"
    query = parts.query
    if query:
        pairs = [
            (k, REDACTED if _SECRET_NAME.search(k) else v)
            for k, v in parse_qsl(query, keep_blank_values=True)
        ]
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


class Secrets:
    """The credentials a client sends a server, to remove from whatever that server answers.

    They are the API key, the URL's ``user:password`` pair and password (or its lone user, a
    token), key-like query values and secret-named header values; each also as sent (percent-
    decoded), percent-encoded, JSON-escaped and base64-encoded with and without padding (the
    value of a Basic header). Secrets shorter than :data:`MIN_CHARS` are left alone: they protect
    nothing and removing them would mangle replies. A URL's user name beside a password is not
    secret (:func:`redact_url` shows it too).
    """

    MIN_CHARS = 4

    def __init__(self, url: str = "", api_key: str | None = None, headers: Mapping[str, str] | None = None):
        raw = [api_key or ""]
        try:
            parts = urlsplit(url)
        except ValueError:
            parts = None
        if parts is not None and "@" in parts.netloc:
            userinfo = parts.netloc.rsplit("@", 1)[0]
            user, has_password, password = userinfo.partition(":")
            raw += [userinfo, password] if has_password else [user]
            # what a Basic header encodes: the decoded pair (httpx sends "token:" for a lone token)
            raw.append(f"{unquote(user)}:{unquote(password)}")
        if parts is not None:
            raw += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if _SECRET_NAME.search(k)]
        for name, value in (headers or {}).items():
            if _SECRET_NAME.search(name):
                raw += [value, value.split(" ", 1)[-1]]  # "Bearer <token>" and the token alone
        forms: set[str] = set()
        for secret in {unquote(r) for r in raw} | set(raw):
            b64 = base64.b64encode(secret.encode()).decode()
            escaped = json.dumps(secret)[1:-1]
            forms |= {
                secret,
                quote(secret, safe=""),
                escaped,
                escaped.replace("/", "\\/"),
                b64,
                b64.rstrip("="),
            }
        self.forms = sorted((f for f in forms if len(f) >= self.MIN_CHARS), key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, self.forms))) if self.forms else None

    def redact(self, text: str, *, cut: bool = False) -> str:
        """``text`` with every secret replaced by :data:`REDACTED`; ``cut``: the text was cut
        short, so a secret's beginning at its end goes too."""
        if self._pattern is None:
            return text
        text = self._pattern.sub(REDACTED, text)
        if cut:  # the longest beginning of any form that ends the text
            ends = (k for f in self.forms for k in range(self.MIN_CHARS, len(f)) if text.endswith(f[:k]))
            k = max(ends, default=0)
            text = text[:-k] + REDACTED if k else text
        return text

    def redact_tree(self, tree: Any) -> Any:
        """Parsed JSON with every string (keys too) redacted, in place where it can be; a loop,
        not recursion, since a hostile reply may nest as deep as the parser allowed."""
        if isinstance(tree, str):
            return self.redact(tree)
        if self._pattern is None:
            return tree
        stack = [tree]
        while stack:
            node = stack.pop()
            items = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
            if isinstance(node, dict):
                node.clear()
            for k, v in items:
                if isinstance(v, str):
                    v = self.redact(v)
                elif isinstance(v, dict | list):
                    stack.append(v)
                node[self.redact(k) if isinstance(k, str) else k] = v
        return tree
