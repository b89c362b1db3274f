"""Sphinx extension: the table of every ``gym.make`` keyword, written from the code at every build.

``.. gym-keywords::`` (in an ``eval-rst`` block) renders one row per field of
:class:`dice_envs.options.EnvOptions`: its name, the type and default of
:meth:`EnvOptions.__init__ <dice_envs.options.EnvOptions>`, its meaning (the class docstring's
``Attributes:`` entry) and the constructors that take it (:data:`dice_envs.options.OPTION_KEYS`);
then the rows of ``options=`` and of the rule parameters. Nothing in the table is typed twice.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from typing import Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

#: How the table names each constructor of :data:`dice_envs.options.OPTION_KEYS`.
FACES = {"gymnasium": "``gym.make``", "vector": "``gym.make_vec``", "pettingzoo": "PettingZoo ``env()``"}


def option_docs() -> dict[str, str]:
    """The ``Attributes:`` entries of :class:`~dice_envs.options.EnvOptions`, by name, one line each."""
    from dice_envs.options import EnvOptions

    text = inspect.cleandoc(EnvOptions.__doc__ or "").split("Attributes:", 1)[1]
    docs: dict[str, str] = {}
    for m in re.finditer(r"^    (\w+): (.*?)(?=^    \w+: |\Z)", text, re.S | re.M):
        docs[m.group(1)] = " ".join(m.group(2).split())
    return docs


def keyword_rows() -> list[list[str]]:
    """The rows of the table: keyword, type, default, meaning, taken by."""
    from dice_envs.options import OPTION_KEYS, EnvOptions

    docs = option_docs()
    params = inspect.signature(EnvOptions.__init__).parameters
    rows = []
    for field in dataclasses.fields(EnvOptions):
        param = params[field.name]
        default = "the game's" if param.default is inspect.Parameter.empty else f"``{param.default!r}``"
        faces = ", ".join(label for face, label in FACES.items() if field.name in OPTION_KEYS[face])
        rows.append([f"``{field.name}``", f"``{param.annotation}``", default, docs[field.name], faces])
    rows.append(
        [
            "``options``",
            "``EnvOptions``",
            "``None``",
            "all of the above as one :class:`~dice_envs.options.EnvOptions`, given alone",
            ", ".join(FACES.values()),
        ]
    )
    rows.append(
        [
            "rule parameters",
            "per game",
            "RULES.md's",
            "each field of the game's rules class, e.g. ``upper_bonus_threshold=64``: the table "
            '"Rule parameters" of each game\'s page (:doc:`/games/index`)',
            ", ".join(FACES.values()),
        ]
    )
    return rows


def keyword_table() -> str:
    """The reStructuredText list-table of :func:`keyword_rows`."""
    lines = [".. list-table::", "   :header-rows: 1", "   :widths: 14 14 10 47 15", ""]
    for row in [["keyword", "type", "default", "meaning", "taken by"], *keyword_rows()]:
        lines += [f"   {'*' if i == 0 else ' '} - {cell}" for i, cell in enumerate(row)]
    return "\n".join(lines) + "\n"


class GymKeywords(SphinxDirective):
    """``.. gym-keywords::``: the table of :func:`keyword_table`."""

    def run(self) -> list[nodes.Node]:
        node = nodes.container()
        self.state.nested_parse(StringList(keyword_table().splitlines(), "gym-keywords"), 0, node)
        return node.children


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("gym-keywords", GymKeywords)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
