"""Turn alem's reST-flavoured docstrings into the Markdown mkdocstrings renders.

alem's docstrings are Google style with a few reStructuredText habits: ``:class:`X```
roles, ``Card`` headings underlined with dashes, ``::`` literal blocks, ``>>>``
examples, two-space continuation lines in bullet lists and one simple table (the
pathfinding collision systems). :func:`rst_to_markdown` rewrites those so Python-Markdown
renders them; roles become optional cross-references (a link when the target is in the
API reference, plain code otherwise, never a warning).

Used twice: as a griffe extension for the API reference (``extensions:`` in mkdocs.yml) and
by ``docs/hooks.py`` for the environment cards.
"""

from __future__ import annotations

import re
from typing import Any

try:  # the extension needs griffe; the text functions do not
    import griffe
except ImportError:  # pragma: no cover
    griffe = None

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|attr|data|obj|exc|const|ref):`(?P<target>[^`]+)`")
_UNDERLINE = re.compile(r"^(-{3,}|={3,}|~{3,})$")
_TABLE_RULE = re.compile(r"^=+( +=+)+$")
_BULLET = re.compile(r"^(?P<indent> *)(?:[-*+]|\d+\.) ")


def _role(match: re.Match, base: str | None) -> str:
    target = match["target"].strip()
    if "<" in target and target.endswith(">"):  # :class:`title <target>`
        title, target = target[:-1].split("<", 1)
        title = title.strip()
    else:
        title = None
    short = target.startswith("~")
    target = target.lstrip("~.")
    if title is None:
        title = target.rsplit(".", 1)[-1] if short else target
    identifier = target
    if base and not target.startswith("alem."):
        identifier = f"{base}.{target}"
    return f'<autoref identifier="{identifier}" optional><code>{title}</code></autoref>'


def _table(lines: list[str]) -> list[str]:
    """A reST simple table (``===`` rules, blank first cell = continuation row) as Markdown."""
    rule = lines[0]
    spans = [(m.start(), m.end()) for m in re.finditer(r"=+", rule)]

    def cells(line: str) -> list[str]:
        out = [""] * len(spans)
        for m in re.finditer(r"\S+(?: \S+)*", line):  # words separated by single spaces
            col = max([i for i, (start, _) in enumerate(spans) if start <= m.start()] or [0])
            out[col] = f"{out[col]} {m.group()}".strip()
        return out

    rows: list[list[str]] = []
    header_rows = 0
    rules_seen = 0
    for line in lines:
        if _TABLE_RULE.match(line.strip()):
            rules_seen += 1
            if rules_seen == 2:
                header_rows = len(rows)
            continue
        if not line.strip():
            continue
        row = cells(line)
        if rows and not row[0]:  # continuation of the previous row
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], row, strict=True)]
        else:
            rows.append(row)
    if not header_rows:  # no header: an empty one
        rows.insert(0, [" "] * len(spans))
        header_rows = 1
    md = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(spans)]
    md += ["| " + " | ".join(r) + " |" for r in rows[header_rows:]]
    return md


def rst_to_markdown(text: str, base: str | None = None) -> str:
    """Rewrite the reST habits of a docstring (see the module docstring) as Markdown.

    ``base`` is the dotted path that relative role targets live in (a module or class).
    """
    text = _ROLE.sub(lambda m: _role(m, base), text)
    src = text.splitlines()
    out: list[str] = []
    i = 0
    in_list = False  # inside a top-level bullet list: deeper blocks need 4-space indents
    loose = False  # the current item holds a blank line (a nested block)
    while i < len(src):
        line = src[i]
        stripped = line.strip()
        indent = len(line) - len(line.lstrip(" "))
        # "Card" / "----": a heading in reST, a paragraph title here
        if (
            stripped
            and i + 1 < len(src)
            and _UNDERLINE.match(src[i + 1].strip())
            and len(src[i + 1].strip()) >= len(stripped)
        ):
            out += [f"{' ' * indent}**{stripped}**", ""]
            i += 2
            continue
        # a simple table: from its first rule to the third
        if _TABLE_RULE.match(stripped):
            j, rules = i, 0
            while j < len(src) and rules < 3:
                if _TABLE_RULE.match(src[j].strip()):
                    rules += 1
                j += 1
            block = [s[indent:] if len(s) >= indent else s.strip() for s in src[i:j]]
            pad = " " * (indent + 2 if in_list and indent else indent)
            if out and out[-1].strip():
                out.append("")
            out += [pad + row for row in _table(block)]
            out.append("")
            i = j
            continue
        # >>> examples: a fenced pycon block
        if stripped.startswith(">>>"):
            block = []
            while i < len(src) and src[i].strip():  # the example runs to the next blank line
                block.append(src[i][indent:] if src[i].startswith(" " * indent) else src[i].strip())
                i += 1
            pad = " " * indent
            if out and out[-1].strip():
                out.append("")
            out += [pad + "```pycon", *(pad + b for b in block), pad + "```", ""]
            continue
        if _BULLET.match(line) and indent == 0:
            if in_list and loose and out and out[-1].strip():
                out.append("")  # the previous item held blocks: a blank line starts the next
            in_list, loose = True, False
        elif stripped and indent == 0:
            in_list = False
        elif in_list and not stripped:
            loose = True
        if in_list and indent and not _BULLET.match(line):
            line = " " * 2 + line  # 2-space continuation -> 4 spaces (Python-Markdown lists)
        if stripped.endswith("::") and not stripped.startswith(".."):
            line = line[:-1]  # "as follows::" -> "as follows:"; the indented block is code
            if stripped == "::":
                line = ""
        out.append(line)
        i += 1
    return "\n".join(out)


_SECTION = re.compile(r"^(?P<indent> *)(Args|Arguments|Parameters|Keyword Args|Other Parameters):$")


def split_grouped_params(text: str) -> str:
    """``a, b: text`` entries of a Google ``Args:`` section as one entry per name.

    alem documents related parameters together; griffe's parser wants one name per entry.
    The head may wrap: ``a, b,`` on one line and ``c: text`` on the next.
    """
    lines = text.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        out.append(lines[i])
        section = _SECTION.match(lines[i])
        i += 1
        if not section:
            continue
        base = len(section["indent"])
        item = None
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > base):
            line = lines[i]
            indent = len(line) - len(line.lstrip())
            if item is None and line.strip():
                item = indent
            head, j = line.strip(), i
            if line.strip() and indent == item and ":" not in head and head.endswith(","):
                while j + 1 < len(lines) and ":" not in head:  # the names wrap onto the next line
                    j += 1
                    head += " " + lines[j].strip()
            m = re.match(r"^(?P<names>\w+(?:, *\w+)+): *(?P<rest>.*)$", head) if indent == item else None
            if not m:
                out.append(line)
                i += 1
                continue
            i = j + 1
            body = []
            while i < len(lines) and lines[i].strip() and len(lines[i]) - len(lines[i].lstrip()) > item:
                body.append(lines[i])
                i += 1
            for name in m["names"].split(","):
                out.append(f"{' ' * item}{name.strip()}: {m['rest']}")
                out += body
    return "\n".join(out)


if griffe is not None:

    class RstToMarkdown(griffe.Extension):
        """Griffe extension: rewrite every docstring with :func:`rst_to_markdown`."""

        def on_instance(self, *, obj: Any, **kwargs: Any) -> None:
            doc = obj.docstring
            if doc is None or not doc.value:
                return
            base = obj.path if obj.is_module else obj.module.path
            new = rst_to_markdown(split_grouped_params(doc.value), base)
            if new != doc.value:
                doc.value = new
