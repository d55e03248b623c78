"""hier_config's ``get_hconfig`` for the CLI platforms, with its per-line substitutions done once per line.

hier_config (3.x) runs every one of a dialect's ``per_line_sub`` rules as a separate ``re.sub`` on every line it
loads (15 for EOS, 7 for NX-OS), and builds a new driver (its whole rule table) for every ``get_hconfig(Platform)``:
a fifth of an EOS switch's diff (issue 42). ``parse`` gives the same tree for a fraction of that:

- one driver per dialect and process, read only (hier_config never changes a driver's rules while it loads or
  remediates), plus a copy of it whose ``per_line_sub`` is empty, which loads the text and stays the tree's driver;
- before loading, every line is normalised as hier_config does (indent, then single spaces) and tested once
  against all the rules as one alternation; a line no rule matches is handed over unchanged (hier_config's own
  normalising gives what it always gave), a line a rule matches gets exactly hier_config's substitutions here and
  is dropped when they empty it (hier_config skips an emptied line without any other effect).

Anything this cannot prove equal falls back to ``hier_config.get_hconfig`` with the dialect's own driver: a dialect
with full-text substitutions, indent adjustments, post-load callbacks or its own preprocessor, a rule the
alternation cannot hold, a banner line (hier_config joins a banner's lines before substituting), or a substituted
line that hier_config would normalise further. ``tests/unit/drivers/test_hconfig_load.py`` compares both ways on
the lab's configurations and on random ones.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from hier_config import HConfig, Platform, get_hconfig, get_hconfig_driver
from hier_config.platforms.driver_base import HConfigDriverBase

__all__ = ["parse"]


@dataclass(frozen=True)
class _Loader:
    driver: HConfigDriverBase  # the dialect's own rules: the tree's driver, for remediation and views
    loading: HConfigDriverBase | None  # the same rules less per_line_sub (None: no fast path for this dialect)
    any_rule: re.Pattern[str] | None  # every per_line_sub search as one alternation (None: no rules)
    subs: tuple[tuple[str, str], ...]  # (search, replace), hier_config's order


@functools.cache
def _loader(dialect: Platform) -> _Loader:
    driver = get_hconfig_driver(dialect)
    rules = driver.rules
    plain = (
        not rules.full_text_sub
        and not rules.indent_adjust
        and not rules.post_load_callbacks
        and type(driver).config_preprocessor is HConfigDriverBase.config_preprocessor
    )
    subs = tuple((rule.search, rule.replace) for rule in rules.per_line_sub)
    any_rule: re.Pattern[str] | None = None
    if plain and subs:
        try:
            any_rule = re.compile("|".join(f"(?:{search})" for search, _ in subs))
        except re.error:
            plain = False
    loading: HConfigDriverBase | None = None
    if plain:
        loading = type(driver)()
        loading.rules = rules.model_copy(update={"per_line_sub": []})
    return _Loader(driver, loading, any_rule, subs)


def _normal(line: str) -> str:
    """A line as hier_config normalises it before substituting: its indent as spaces, words single-spaced."""
    stripped = line.lstrip()
    return " " * (len(line) - len(stripped)) + " ".join(stripped.split())


def _substituted(loader: _Loader, lines: list[str]) -> list[str] | None:
    """``lines`` with hier_config's per-line substitutions already done (None: not provably the same tree)."""
    any_rule = loader.any_rule
    out: list[str] = []
    for line in lines:
        if line.startswith("banner "):
            return None
        if any_rule is None:
            out.append(line)
            continue
        normal = _normal(line)
        if any_rule.search(normal) is None:
            out.append(line)
            continue
        for search, replace in loader.subs:
            normal = re.sub(search, replace, normal)
        normal = normal.rstrip()
        if not normal:
            continue
        if normal.startswith("banner ") or normal.splitlines() != [normal] or _normal(normal).rstrip() != normal:
            return None
        out.append(normal)
    return out


def parse(dialect: Platform, text: str) -> HConfig:
    """``hier_config.get_hconfig(dialect, text)``: the same tree. Its driver is one per dialect and process; on the
    fast path the copy without ``per_line_sub``, which hier_config reads only while it loads text (remediation,
    ``future`` and the views never load text through a tree's driver)."""
    loader = _loader(dialect)
    if loader.loading is not None:
        lines = _substituted(loader, text.splitlines())
        if lines is not None:
            return get_hconfig(loader.loading, "\n".join(lines))
    return get_hconfig(loader.driver, text)
