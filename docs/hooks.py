"""mkdocs hook: the parts of the site that are generated from the code at build time.

Pages hold markers (HTML comments, invisible if the hook is missing) that this hook
replaces in ``on_page_markdown``:

- ``<!-- alem:envs FAMILY -->``: every id of ``alem.registry(FAMILY)``, grouped by env
  class, with the class's docstring card, the spec, spaces and flags of ``alem.make(id)``,
  and for text-capable envs the rules and an ASCII frame of a fresh episode.
- ``<!-- alem:env-index -->``: one table of every registered id, linked to its section.
- ``<!-- alem:gallery [FAMILY] -->``: a grid of every id's GIF (of one family's), linked to its
  section; each id's section shows its GIF too. The GIFs are made by ``docs/gallery.py`` and kept
  under ``docs/envs/gallery/``; the build fails when an id has no current one.
- ``<!-- alem:families -->``: one row per family (its envs, id count, agents, text ids and the
  references they are checked against); ``<!-- alem:family-cards -->``: the same as the home
  page's cards. Nothing about the families is written by hand, so a new env shows up by itself.
- ``<!-- alem:notebooks -->``: ``notebooks/README.md`` (the analysis notebooks and the
  tutorials), each notebook linked on the repository.
- ``<!-- alem:learner-presets -->``: the presets of ``configs/algo/*.yaml`` and
  ``alem.algos.VARIANTS``.
- ``<!-- alem:learner-options [ppo|q] -->``: every field of ``alem.algos.LearnerConfig`` (or
  ``alem.algos.QConfig``) with its
  type, default, allowed values and source comment.
- ``<!-- alem:yaml-options PATH -->``: the keys of a config file under ``configs/``, with
  their values and comments.
- ``<!-- alem:benchmark-sections -->``: the pages of ``benchmarks/`` and their sections, linked
  on the repository.

The build fails (``PluginError``) when a registered family has no page, or a marker is
unknown; with ``--strict`` any warning (an env that cannot be built or rendered) fails it.
"""

from __future__ import annotations

import ast
import atexit
import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import io
import json
import logging
import os
import re
import shutil
import tempfile
import tokenize
import tomllib
from pathlib import Path
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")  # the pages need no accelerator

import yaml
from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority

log = logging.getLogger("mkdocs.hooks.alem")

_HERE = Path(__file__).resolve().parent
ROOT = _HERE.parent
_spec = importlib.util.spec_from_file_location("alem_docs_griffe_rst", _HERE / "griffe_rst.py")
_rst = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_rst)
rst_to_markdown = _rst.rst_to_markdown
_gspec = importlib.util.spec_from_file_location("alem_docs_gallery", _HERE / "gallery.py")
gallery = importlib.util.module_from_spec(_gspec)
_gspec.loader.exec_module(gallery)

_MARKER = re.compile(r"^<!-- alem:(?P<name>[a-z-]+)(?: (?P<arg>[^ ]+))? -->$", re.M)
_FAMILY_PAGES = {
    "games": "envs/games.md",
    "coordination": "envs/coordination.md",
    "pathfinding": "envs/pathfinding.md",
    "single_agent": "envs/single_agent.md",
}
_MAX_ACTION_NAMES = 12

_rendered_families: set[str] = set()
#: The gallery's manifest (docs/gallery.py), id -> entry, as read at the start of the build.
_gallery: dict[str, dict[str, Any]] = {}
# id -> (rules, frame). Tracing some resets takes seconds, so the views are also kept on disk
# next to JAX's compilation cache, keyed by a hash of every source file of the package: any
# change to the code renders them again.
_frames: dict[str, tuple[str, str] | None] = {}
_frames_file: Path | None = None
_frames_key = ""
_frames_dirty = False
_repo_url = "https://github.com/alem-sim/alem"


# --------------------------------------------------------------------------- mkdocs events
_source_tree: Path | None = None


def _package_tree() -> Path:
    """A temporary tree where ``alem/algos`` etc. exist, for griffe's static analysis.

    pyproject maps ``algos/``, ``envs/`` and ``configs/`` into the ``alem`` package
    (``package-dir``); griffe only finds subpackages inside the package folder, so the
    tree links ``alem/*`` and the mapped folders under one ``alem/``.
    """
    with open(ROOT / "pyproject.toml", "rb") as f:
        package_dir = tomllib.load(f)["tool"]["setuptools"].get("package-dir", {})
    tree = Path(tempfile.mkdtemp(prefix="alem-docs-src-"))
    pkg = tree / "alem"
    pkg.mkdir()
    for child in (ROOT / package_dir.get("alem", "alem")).iterdir():
        (pkg / child.name).symlink_to(child)
    for name, folder in package_dir.items():
        if name.startswith("alem."):
            link = pkg.joinpath(*name.split(".")[1:])
            if link.exists() or link.is_symlink():
                link.unlink()
            link.symlink_to(ROOT / folder, target_is_directory=True)
    return tree


def _remove_tree() -> None:
    global _source_tree
    if _source_tree is not None:
        shutil.rmtree(_source_tree, ignore_errors=True)  # removes the links, not their targets
        _source_tree = None


atexit.register(_remove_tree)


@event_priority(100)  # before mkdocstrings' on_config, which makes the handler
def on_config(config, **kwargs):
    global _repo_url, _source_tree
    _repo_url = (config.repo_url or _repo_url).rstrip("/")
    _remove_tree()
    _source_tree = _package_tree()
    handlers = config.plugins["mkdocstrings"].config.handlers  # read when the handler is made
    handlers.setdefault("python", {})["paths"] = [str(_source_tree)]
    import jax

    # Frames come from jitted resets; reuse the test suite's compilation cache.
    if not jax.config.jax_compilation_cache_dir:
        jax.config.update(
            "jax_compilation_cache_dir", os.environ.get("ALEM_JAX_CACHE", str(ROOT / ".jax_cache"))
        )
        jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)
    _load_frames(Path(jax.config.jax_compilation_cache_dir))
    return config


def _source_key() -> str:
    """A hash of the package's sources (every folder pyproject maps into ``alem``) and JAX's version."""
    import jax

    with open(ROOT / "pyproject.toml", "rb") as f:
        folders = sorted(
            set(tomllib.load(f)["tool"]["setuptools"].get("package-dir", {"alem": "alem"}).values())
        )
    digest = hashlib.sha256(f"jax {jax.__version__}".encode())
    for folder in folders:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".json", ".yaml") and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _load_frames(cache_dir: Path) -> None:
    global _frames_file, _frames_key, _frames_dirty
    _frames.clear()
    _frames_dirty = False
    _frames_key = _source_key()
    _frames_file = cache_dir / "alem-docs-text-views.json"
    try:
        stored = json.loads(_frames_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if stored.get("key") == _frames_key:
        _frames.update({k: tuple(v) for k, v in stored.get("views", {}).items()})


def _save_frames() -> None:
    if not _frames_dirty or _frames_file is None:
        return
    views = {k: list(v) for k, v in _frames.items() if v is not None}  # failures are retried
    try:
        _frames_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = _frames_file.with_name(f"{_frames_file.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"key": _frames_key, "views": views}), encoding="utf-8")
        os.replace(tmp, _frames_file)  # atomic: concurrent builds never read half a file
    except OSError as e:  # a read-only cache folder only costs time
        log.info("text views not cached: %s", e)


def on_pre_build(config, **kwargs):
    _rendered_families.clear()
    _gallery.clear()
    _gallery.update(gallery.load_manifest())  # read once per build, not once per picture


def on_page_markdown(markdown: str, page, config, files, **kwargs) -> str:
    def replace(match: re.Match) -> str:
        name, arg = match["name"], match["arg"]
        if name == "envs":
            if arg not in _FAMILY_PAGES or _FAMILY_PAGES[arg] != page.file.src_uri:
                raise PluginError(
                    f"{page.file.src_uri}: <!-- alem:envs {arg} --> belongs on {_FAMILY_PAGES.get(arg)}"
                )
            _rendered_families.add(arg)
            return family_markdown(arg)
        if name == "gallery":
            return gallery_markdown(page.file.src_uri, arg)
        if name == "notebooks":
            return notebooks_markdown()
        if name == "env-index":
            return env_index_markdown(page.file.src_uri)
        if name == "families":
            return families_markdown(page.file.src_uri)
        if name == "family-cards":
            return family_cards_markdown(page.file.src_uri)
        if name == "learner-presets":
            return learner_presets_markdown()
        if name == "learner-options":
            return learner_options_markdown(arg or "ppo")
        if name == "yaml-options":
            return yaml_options_markdown(arg)
        if name == "benchmark-sections":
            return benchmark_sections_markdown()
        raise PluginError(f"{page.file.src_uri}: unknown marker <!-- alem:{name} -->")

    return _MARKER.sub(replace, markdown)


def on_post_build(config, **kwargs):
    _remove_tree()
    _save_frames()
    import alem

    stale = gallery.problems()
    if stale:
        listed = "; ".join(f"{k}: {v}" for k, v in sorted(stale.items())[:8])
        raise PluginError(
            f"{len(stale)} ids have no current picture ({listed}); run `python docs/gallery.py`"
        )

    families = {spec.family for spec in alem.registry().values()}
    missing = sorted(families - _rendered_families)
    if missing:
        raise PluginError(
            f"registered env families without a page: {missing}; add docs/envs/<family>.md with "
            "'<!-- alem:envs <family> -->' to the nav and to _FAMILY_PAGES in docs/hooks.py"
        )


# --------------------------------------------------------------------------- environments
def anchor(env_id: str) -> str:
    """The section anchor of an id on its family page (``/`` is not kept)."""
    return env_id.replace("/", "-")


def _entry(spec) -> Any:
    if callable(spec.entry_point):
        return spec.entry_point
    module, attr = spec.entry_point.split(":")
    return getattr(importlib.import_module(module), attr)


def _google_args(doc: str) -> str:
    """A Google ``Args:`` section as a Markdown list (the hook renders docstrings itself)."""
    lines = doc.splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].strip() in ("Args:", "Arguments:", "Parameters:"):
            out += ["**Constructor arguments**", ""]
            i += 1
            while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
                line = lines[i].strip()
                m = re.match(r"^(?P<names>[\w, ]+):\s*(?P<text>.*)$", line)
                if m and len(lines[i]) - len(lines[i].lstrip()) <= 4:
                    names = ", ".join(f"`{n.strip()}`" for n in m["names"].split(","))
                    out.append(f"- {names}: {m['text']}")
                elif line:
                    out[-1] += " " + line
                i += 1
            out.append("")
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def _card(obj: Any, shown_modules: dict[str, str]) -> str:
    """The docstring card of an env class (with its module's card when it defers to it)."""
    doc = inspect.getdoc(obj) or ""
    module = inspect.getmodule(obj)
    mdoc = inspect.getdoc(module) or ""
    m = re.search(r"^(Args|Arguments|Parameters):$", doc, flags=re.M)
    head, args = (doc[: m.start()], doc[m.start() :]) if m else (doc, "")
    parts = [head.strip()]
    if "Card\n----" not in doc and "Card\n----" in mdoc:
        if module.__name__ in shown_modules:
            first = shown_modules[module.__name__]
            parts.append(
                f"The card of `{module.__name__}` is shown above, under [{first}](#{first.lower()})."
            )
        else:
            shown_modules[module.__name__] = obj.__name__
            parts.append(mdoc[mdoc.index("Card\n----") :])
    if args:  # constructor arguments after the card
        parts.append(_google_args(args))
    return rst_to_markdown("\n\n".join(parts), module.__name__)


def _code_block(text: str, indent: str = "    ") -> str:
    body = "\n".join(indent + line if line else "" for line in text.rstrip().splitlines())
    return f"{indent}```text\n{body}\n{indent}```"


def _text_views(env_id: str, env: Any) -> tuple[str, str] | None:
    """``rules_text()`` and ``render_text`` of a fresh episode (reset with key 0)."""
    global _frames_dirty
    if env_id in _frames:
        return _frames[env_id]
    import jax

    try:
        params = env.default_params
        state, _ = jax.jit(env.reset)(jax.random.key(0), params)
        views = (env.rules_text(params, 0), env.render_text(jax.device_get(state), None, params))
    except Exception as e:  # a docs build reports, the test suite catches the bug
        log.warning("%s: text views failed: %s: %s", env_id, type(e).__name__, e)
        views = None
    _frames[env_id] = views
    _frames_dirty = True
    return views


def _cell(text: str) -> str:
    """Text for a Markdown table cell."""
    return text.replace("|", "\\|").replace("\n", " ")


def _runs(names: list[str], values: list[str]) -> str:
    """``agent: value`` per agent, runs of agents with the same value merged."""
    runs: list[tuple[list[str], str]] = []
    for name, value in zip(names, values, strict=True):
        if runs and runs[-1][1] == value:
            runs[-1][0].append(name)
        else:
            runs.append(([name], value))
    if len(runs) == 1:
        return f"`{runs[0][1]}`"
    parts = []
    for group, value in runs:
        who = f"`{group[0]}`" if len(group) == 1 else f"`{group[0]}` .. `{group[-1]}`"
        parts.append(f"{who}: `{value}`")
    return "<br>".join(parts)


def _spaces(env: Any, which: str) -> str:
    """Per-agent spaces, runs of agents with the same space merged."""
    return _runs(list(env.agents), [repr(getattr(env, which)(i)) for i in range(env.num_agents)])


def _rendering(env: Any, spec: Any) -> str:
    from alem.core import MultiAgentEnv

    kinds = []
    if spec.text:
        kinds.append("text hooks (`render_text`, `rules_text`, `parse_action`, ...)")
    inner = env
    while isinstance(getattr(inner, "_env", None), MultiAgentEnv):  # through alem wrappers
        inner = inner._env
    if getattr(type(inner), "render_rgb", None) is not MultiAgentEnv.render_rgb:
        kinds.append("RGB frames (`render_rgb`, GIFs)")
    return "; ".join(kinds) or "none"


def _id_section(env_id: str, spec: Any, ctor: Any) -> str:
    import alem

    env = alem.make(env_id)
    call = ", ".join(f"{k}={v!r}" for k, v in spec.kwargs.items())
    agents = list(env.agents)
    shown = ", ".join(f"`{a}`" for a in agents[:8]) + (", ..." if len(agents) > 8 else "")
    flags = [
        f
        for f in ("turn_based", "zero_sum", "cooperative", "stochastic", "fixed_start")
        if getattr(env, f, False)
    ]
    if getattr(env, "continuous_actions", False):
        flags.append("continuous_actions")
    rows = [
        ("make", f'`alem.make("{env_id}")` = `{ctor.__name__}({call})`'),
        (
            "agents",
            f"{env.num_agents}: {shown}"
            + (f" (registry: {spec.num_agents})" if isinstance(spec.num_agents, str) else ""),
        ),
        ("observation", _spaces(env, "observation_space")),
        ("actions", _spaces(env, "action_space")),
        ("flags", ", ".join(f"`{f}`" for f in flags) or "none"),
        ("rendering", _rendering(env, spec)),
        ("reference", _cell(spec.reference) or "none (see the card)"),
    ]
    obs_dims = getattr(env, "obs_dims", None)
    if obs_dims is not None and len(set(obs_dims)) > 1:  # padded observations (agents of different kinds)
        sizes = _runs(list(env.agents), [str(d) for d in obs_dims])
        rows.insert(3, ("unpadded observation size (`env.obs_dims`)", sizes))
    if spec.requires:
        rows.append(("requires", ", ".join(f"`{r}`" for r in spec.requires.values())))
    if spec.text:
        names = list(env.action_names(0))
        more = f", ... ({len(names)} in all)" if len(names) > _MAX_ACTION_NAMES else ""
        rows.append(("action names", f"{', '.join(f'`{n}`' for n in names[:_MAX_ACTION_NAMES])}{more}"))
    # The picture above the description: the property tables need the column's whole width.
    lines = [
        f"### `{env_id}` {{ #{anchor(env_id)} }}",
        "",
        _picture(env_id, _FAMILY_PAGES[spec.family]),
        "",
        (spec.description[:1].upper() + spec.description[1:] + ".") if spec.description else "",
        "",
        "| property | value |",
        "|---|---|",
        *(f"| {k} | {v} |" for k, v in rows),
        "",
    ]
    if spec.text:
        views = _text_views(env_id, env)
        if views is not None:
            rules, frame = views
            lines += [
                '??? example "Text view of a fresh episode: `env.render_text(state)`"',
                "",
                _code_block(frame),
                "",
                '??? note "Rules an LLM player is given: `env.rules_text(params, 0)`"',
                "",
                _code_block(rules),
                "",
            ]
    return "\n".join(lines)


def _picture(env_id: str, page: str) -> str:
    """The gallery GIF of ``env_id`` as a Markdown image, its path relative to ``page``."""
    entry = _gallery.get(env_id)
    if entry is None:  # on_post_build fails the build and says how to make it
        return f"*No picture of `{env_id}` yet.*"
    src = os.path.relpath(gallery.GALLERY / entry["file"], ROOT / "docs" / Path(page).parent)
    return (
        f"![Random play in {env_id}]({src.replace(os.sep, '/')})"
        f'{{ .alem-shot loading=lazy width="{entry["width"]}" height="{entry["height"]}" }}'
    )


def gallery_markdown(src_uri: str, family: str | None = None) -> str:
    """A grid of every id's GIF (or one family's), each linked to its section."""
    import alem

    if family is not None and family not in _FAMILY_PAGES:
        raise PluginError(f"{src_uri}: <!-- alem:gallery {family} -->: no such family")
    here = Path(src_uri).parent
    families = [family] if family else list(_FAMILY_PAGES)
    out = []
    for fam in families:
        specs = list(alem.registry(fam).values())
        if not specs:
            continue
        page = _FAMILY_PAGES[fam]
        link = os.path.relpath(page, here).replace(os.sep, "/")
        if family is None:
            out += [f"### {_FAMILY_TITLES.get(fam, fam)} {{ #gallery-{fam} }}", ""]
        out += ['<div class="alem-gallery" markdown>', ""]
        for spec in specs:
            target = f"#{anchor(spec.id)}" if page == src_uri else f"{link}#{anchor(spec.id)}"
            out.append(f"[{_picture(spec.id, src_uri)}<span>`{spec.id}`</span>]({target})")
        out += ["", "</div>", ""]
    return "\n".join(out)


def family_markdown(family: str) -> str:
    import alem

    specs = list(alem.registry(family).values())
    if not specs:
        raise PluginError(f"no env is registered in family {family!r}")
    groups: dict[str, list[Any]] = {}
    for spec in specs:
        key = spec.entry_point if isinstance(spec.entry_point, str) else repr(spec.entry_point)
        groups.setdefault(key, []).append(spec)
    shown_modules: dict[str, str] = {}  # module -> the env class whose section shows its card
    out = [
        f"*{len(specs)} registered ids in this family; generated from the registry and the docstrings.*",
        "",
    ]
    for key, group in groups.items():
        ctor = _entry(group[0])
        path = key.replace(":", ".")
        ids = ", ".join(f"[`{s.id}`](#{anchor(s.id)})" for s in group)
        out += [
            f"## {ctor.__name__} {{ #{ctor.__name__.lower()} }}",
            "",
            f"`{path}`: {ids}",
            "",
            _card(ctor, shown_modules),
            "",
        ]
        out += [_id_section(s.id, s, ctor) for s in group]
    return "\n".join(out)


def env_index_markdown(src_uri: str) -> str:
    import alem

    here = Path(src_uri).parent
    by_family: dict[str, list[tuple[str, Any]]] = {}
    for env_id, spec in alem.registry().items():
        by_family.setdefault(spec.family, []).append((env_id, spec))
    out = []
    # One table per family, four columns: readable at 1280 px (docs/stylesheets/alem.css keeps
    # each id on one line).
    for family, items in by_family.items():
        page = _FAMILY_PAGES.get(family)
        link = os.path.relpath(page, here).replace(os.sep, "/") if page else None
        out += [
            f"### {_FAMILY_TITLES.get(family, family)} ({len(items)} ids)",
            "",
            "| id | agents | text | description (reference) |",
            "|---|---|---|---|",
        ]
        for env_id, spec in items:
            name = f"[`{env_id}`]({link}#{anchor(env_id)})" if link else f"`{env_id}`"
            ref = f" ({spec.reference})" if spec.reference else ""
            out.append(
                f"| {name} | {spec.num_agents} | {'yes' if spec.text else 'no'} | {_cell(spec.description + ref)} |"
            )
        out.append("")
    return "\n".join(out)


#: Family -> its title on the site.
_FAMILY_TITLES = {
    "games": "Games",
    "coordination": "Coordination worlds",
    "pathfinding": "Pathfinding",
    "single_agent": "Single-agent",
}
#: Env module names whose plain spelling (underscores to spaces) would read wrong.
_ENV_LABELS = {
    "mpe": "MPE",
    "lbf": "Level-Based Foraging",
    "rware": "RWARE",
    "smax": "SMAX",
    "liars_dice": "Liar's dice",
    "leduc_holdem": "Leduc hold'em",
    "matrix": "Matrix games",
}


def _env_label(spec: Any) -> str:
    """The env an id belongs to, by its module: ``alem.envs.games.kuhn_poker:KuhnPoker`` -> "Kuhn poker"."""
    entry = spec.entry_point if isinstance(spec.entry_point, str) else ""
    module, _, cls = entry.partition(":")
    parts = module.split(".")
    name = parts[3] if len(parts) > 3 and parts[:2] == ["alem", "envs"] else parts[-1]
    if name == "env":  # a family whose one env lives in <family>/env.py: the class names it
        name = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.removesuffix("Env")).lower() or spec.family
    return _ENV_LABELS.get(name, name.replace("_", " ").capitalize())


def _family_summary(family: str) -> tuple[list[Any], list[str], list[str]]:
    """(specs, env labels in registration order, reference packages) of a family."""
    import alem

    specs = list(alem.registry(family).values())
    labels = list(dict.fromkeys(_env_label(s) for s in specs))
    refs = sorted({s.reference.split()[0] for s in specs if s.reference})
    return specs, labels, refs


def families_markdown(src_uri: str) -> str:
    here = Path(src_uri).parent
    rows = [
        "| family | envs | ids | agents | text ids | checked against |",
        "|---|---|---|---|---|---|",
    ]
    for family, page in _FAMILY_PAGES.items():
        specs, labels, refs = _family_summary(family)
        if not specs:
            continue
        counts = sorted({s.num_agents for s in specs if isinstance(s.num_agents, int)})
        other = sorted({str(s.num_agents) for s in specs if not isinstance(s.num_agents, int)})
        span = ", ".join(
            ([str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"] if counts else []) + other
        )
        link = os.path.relpath(page, here).replace(os.sep, "/")
        rows.append(
            f"| [{family}]({link}) | {', '.join(labels)} | {len(specs)} | {span} | "
            f"{sum(bool(s.text) for s in specs)} | {', '.join(refs) or '-'} |"
        )
    return "\n".join(rows)


def family_cards_markdown(src_uri: str) -> str:
    here = Path(src_uri).parent
    out = []
    for family, page in _FAMILY_PAGES.items():
        specs, labels, refs = _family_summary(family)
        if not specs:
            continue
        link = os.path.relpath(page, here).replace(os.sep, "/")
        checked = f"; checked against {', '.join(refs)}" if refs else ""
        out.append(
            f"- **[{_FAMILY_TITLES.get(family, family)}]({link})**: {len(specs)} ids: {', '.join(labels)}{checked}."
        )
    return "\n".join(out)


# --------------------------------------------------------------------------- notebooks
_NOTEBOOK = re.compile(r"`((?:[\w-]+/)*[\w-]+\.ipynb)`")


def notebooks_markdown() -> str:
    """``notebooks/README.md`` without its title, each notebook named in it linked on the
    repository (the site does not carry the notebooks themselves)."""
    text = (ROOT / "notebooks" / "README.md").read_text(encoding="utf-8")
    body = re.sub(r"\A# [^\n]*\n+", "", text)
    missing = [m for m in _NOTEBOOK.findall(body) if not (ROOT / "notebooks" / m).is_file()]
    if missing:
        raise PluginError(f"notebooks/README.md names notebooks that do not exist: {missing}")
    return _NOTEBOOK.sub(lambda m: f"[`{m[1]}`]({_repo_url}/blob/main/notebooks/{m[1]})", body)


# --------------------------------------------------------------------------- learners
def learner_presets_markdown() -> str:
    from alem import configs
    from alem.algos import Q_VARIANTS, VARIANTS

    rows = [
        "| preset | what it is | settings on top of `LearnerConfig` (PPO) or `QConfig` (value-based) | defaults in its yaml |",
        "|---|---|---|---|",
    ]
    for path in sorted((Path(configs.__file__).parent / "algo").glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        first = next((line[1:].strip() for line in text.splitlines() if line.startswith("#")), "")
        values = yaml.safe_load(text) or {}
        values.pop("defaults", None)
        name = values.pop("name", path.stem)
        variant = VARIANTS.get(name, Q_VARIANTS.get(name))
        settings = (
            ", ".join(f"`{k}={v}`" for k, v in variant.items()) or "none (the defaults)"
            if variant is not None
            else "not a learner (no training)"
        )
        yaml_defaults = ", ".join(f"`{k}={v}`" for k, v in values.items())
        rows.append(f"| `algo={path.stem}` | {first} | {settings} | {yaml_defaults} |")
    return "\n".join(rows)


def _field_comments(cls: type) -> tuple[dict[str, str], dict[str, str]]:
    """Trailing comments of a dataclass's fields, and the section comment above each field."""
    source = inspect.getsource(cls)
    comments: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            comments[tok.start[0]] = tok.string.lstrip("#").strip()
    tree = ast.parse(source)
    body = tree.body[0].body
    lines = source.splitlines()
    trailing: dict[str, str] = {}
    section: dict[str, str] = {}
    current = ""
    for node in body:
        if not isinstance(node, ast.AnnAssign) or not isinstance(node.target, ast.Name):
            continue
        above = node.lineno - 1
        if above in comments and lines[above - 1].strip().startswith("#"):
            current = comments[above]
        section[node.target.id] = current
        trailing[node.target.id] = " ".join(
            comments[n] for n in range(node.lineno, node.end_lineno + 1) if n in comments
        )
    return trailing, section


def learner_options_markdown(core: str = "ppo") -> str:
    """The options table of the PPO core (``LearnerConfig``) or, for ``core="q"``, of the
    value-based one (``QConfig``)."""
    from alem.algos import config as config_module
    from alem.algos import qconfig as qconfig_module

    if core not in ("ppo", "q"):
        raise PluginError(f"<!-- alem:learner-options {core} -->: the core is 'ppo' or 'q'")
    module, cls = (
        (qconfig_module, qconfig_module.QConfig)
        if core == "q"
        else (config_module, config_module.LearnerConfig)
    )
    choices = getattr(module, "_CHOICES", {})
    trailing, section = _field_comments(cls)
    out: list[str] = []
    current = None
    for f in dataclasses.fields(cls):
        if section.get(f.name, "") != current:
            current = section.get(f.name, "")
            out += [
                "",
                f"**{current or 'preset'}**",
                "",
                "| option | type | default | notes |",
                "|---|---|---|---|",
            ]
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        notes = trailing.get(f.name, "") or ("set by `algo=<preset>`" if f.name == "name" else "")
        if f.name in choices:
            notes = "one of " + ", ".join(f"`{c}`" for c in choices[f.name]) + (f"; {notes}" if notes else "")
        ftype = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
        out.append(f"| `algo.{f.name}` | `{ftype}` | `{default!r}` | {notes} |")
    return "\n".join(out).strip()


# --------------------------------------------------------------------------- configs, benchmarks
_YAML_LINE = re.compile(
    r"^(?P<indent> *)(?P<key>[A-Za-z_][\w]*):(?: +(?P<value>[^#]*?))? *(?:#\s?(?P<comment>.*))?$"
)


def yaml_options_markdown(rel: str | None) -> str:
    from alem import configs

    if not rel:
        raise PluginError("<!-- alem:yaml-options PATH --> needs a path under configs/")
    path = Path(configs.__file__).parent / rel
    if not path.is_file():
        raise PluginError(f"<!-- alem:yaml-options {rel} -->: no such file in configs/")
    rows = ["| key | value | notes |", "|---|---|---|"]
    stack: list[tuple[int, str]] = []
    skip_indent: int | None = None
    for line in path.read_text(encoding="utf-8").splitlines():
        m = _YAML_LINE.match(line)
        if not m:  # comments, list items, blank lines
            continue
        indent = len(m["indent"])
        if skip_indent is not None:
            if indent > skip_indent:
                continue
            skip_indent = None
        while stack and stack[-1][0] >= indent:
            stack.pop()
        key = ".".join([k for _, k in stack] + [m["key"]])
        value = (m["value"] or "").strip()
        if m["key"] == "defaults" and not stack:
            skip_indent = indent
            continue
        if not value:  # a mapping: its keys follow
            stack.append((indent, m["key"]))
            if not m["comment"]:
                continue
        comment = (m["comment"] or "").replace("|", "\\|")
        rows.append(f"| `{key}` | `{value}` | {comment} |" if value else f"| `{key}` | | {comment} |")
    return "\n".join(rows)


def _github_slug(heading: str) -> str:
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


#: benchmarks/README.md (summary and index) and its pages, in the order the index lists them.
BENCHMARK_PAGES = (
    "README.md",
    "speed.md",
    "games.md",
    "pathfinding.md",
    "mpe.md",
    "overcooked.md",
    "smax.md",
    "training.md",
    "ratings.md",
)


def benchmark_sections_markdown() -> str:
    """Every page of benchmarks/ (its title) with its sections and subsections, linked on GitHub."""
    out = []
    for name in BENCHMARK_PAGES:
        path = ROOT / "benchmarks" / name
        if not path.is_file():
            raise PluginError(f"<!-- alem:benchmark-sections -->: benchmarks/{name} is missing")
        base = f"{_repo_url}/blob/main/benchmarks/{name}"
        seen: dict[str, int] = {}
        fence = False
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.lstrip().startswith("```"):
                fence = not fence
                continue
            m = re.match(r"^(#{1,3}) (.+)$", line)
            if fence or not m:
                continue
            if len(m[1]) == 1:
                out.append(f"- [{m[2]}]({base})")
                continue
            pad = "    " * (len(m[1]) - 1)
            slug = _github_slug(m[2])
            n = seen.get(slug, 0)  # GitHub numbers repeated headings: slug, slug-1, slug-2, ...
            seen[slug] = n + 1
            out.append(f"{pad}- [{m[2]}]({base}#{slug}{f'-{n}' if n else ''})")
    return "\n".join(out)
