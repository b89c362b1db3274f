"""Sphinx extension: one page per game, written from the package itself at every build.

On ``builder-inited`` it writes ``docs/games/<game>.md`` for each game of
:data:`dice_envs.games.GAME_SPECS`, ``docs/games/index.md`` and a picture of each game to
``docs/_generated/<game>.png`` (build outputs). Every fact on a page is read from the code.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import io
import json
from pathlib import Path
from typing import Any

from keywords import option_docs  # docs/_ext, on the path of the build and of tests/test_docs.py

from dice_envs.io import atomic_write_bytes, atomic_write_text

#: The rule texts under docs/rule-texts/, by game (Yahtzee is a reference variant with none).
RULE_TEXTS = {
    "spiffel": "000_36ec8d1398221d1f.txt",
    "farkle": "001_7dfb3dba21fba936.txt",
    "dice_poker": "003_0d0ff47194229ec3.txt",
}
#: Players of the example observation table (shows the per-opponent fields).
TABLE_PLAYERS = 2
#: Seeded steps before the picture is taken.
PICTURE_STEPS = 4
#: The dated record of the optimal player's exact score distributions
#: (``scripts/score_distribution.py``), relative to the docs folder.
SCORE_RECORD = Path("benchmarks/2026-12-07-epyc-2core/score-distribution.json")
DOCS = Path(__file__).resolve().parents[1]


def _write(path: Path, text: str) -> None:
    """Write ``text`` unless the file already holds it (keeps incremental builds incremental)."""
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        atomic_write_text(path, text, overwrite=True)  # whole or not at all, should two builds run at once


def _section(doc: str | None, title: str) -> str:
    """The section of a docstring that starts with the line ``title`` (up to the next doctest)."""
    text = inspect.cleandoc(doc or "")
    start = text.find(title)
    if start < 0:
        return ""
    body = text[start + len(title) :]
    end = body.find("\n>>>")
    return (body if end < 0 else body[:end]).strip()


def _rst(text: str) -> str:
    """A MyST block that renders ``text`` (docstring reStructuredText) as reStructuredText."""
    return f"```{{eval-rst}}\n{text}\n```\n"


def _name(spec: Any) -> str:
    return spec.name.replace("_", " ").title()


def _cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _picture(spec: Any, out: Path) -> None:
    """Save the rgb_array render of ``spec``'s env after a few seeded legal steps."""
    import gymnasium as gym
    import numpy as np
    from matplotlib.image import imsave

    env = gym.make(spec.env_id, render_mode="rgb_array")
    try:
        _, info = env.reset(seed=0)
        rng = np.random.default_rng(0)
        for _ in range(PICTURE_STEPS):
            legal = np.flatnonzero(info["action_mask"])
            _, _, terminated, truncated, info = env.step(int(rng.choice(legal)))
            if terminated or truncated:
                break
        frame = env.render()
    finally:
        env.close()
    buf = io.BytesIO()
    imsave(buf, _trim(frame), format="png")
    atomic_write_bytes(out, buf.getvalue(), overwrite=True)


def _trim(frame: Any, margin: int = 12) -> Any:
    """``frame`` cut to what differs from its background (the top-left pixel), plus a margin."""
    import numpy as np

    ink = np.any(frame != frame[0, 0], axis=-1)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    if not len(rows):
        return frame
    top, bottom = max(rows[0] - margin, 0), min(rows[-1] + margin + 1, frame.shape[0])
    left, right = max(cols[0] - margin, 0), min(cols[-1] + margin + 1, frame.shape[1])
    return frame[top:bottom, left:right]


def _action_rows(spec: Any, rules: Any) -> list[list[Any]]:
    """Groups of action indices and what they do, described by the game's own engine."""
    from dice_envs.engine.farkle_game import BANK_FLAG
    from dice_envs.engine.scorecard_game import N_REROLL_ACTIONS

    if spec.name == "farkle":
        return [
            [f"0 – {BANK_FLAG - 1}", "set aside the dice of bit mask `a` (bit `i` = die `i` of the "
             "sorted throw), then throw the remaining dice (all six after hot dice)"],
            [f"{BANK_FLAG} – {2 * BANK_FLAG - 1}", f"set aside the dice of mask `a - {BANK_FLAG}`, "
             "then bank the turn total"],
        ]  # fmt: skip
    rows: list[list[Any]] = [
        ["0", "re-throw nothing (never legal)"],
        [f"1 – {N_REROLL_ACTIONS - 1}", "re-throw the dice of bit mask `a` (bit `i` = die `i` of the "
         "sorted throw), holding the others; legal while throws are left"],
    ]  # fmt: skip
    for i, box in enumerate(rules.categories):
        rows.append([N_REROLL_ACTIONS + i, f"score the throw in box `{box}`"])
    return rows


def _example_param(rules_class: type) -> str:
    first = next(f for f in dataclasses.fields(rules_class) if f.init)
    return f"{first.name}={getattr(rules_class(), first.name)!r}"


def _rule_rows(rules_class: type) -> list[list[Any]]:
    rows = []
    for f in dataclasses.fields(rules_class):
        if not f.init:
            continue
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        rows.append([f"`{f.name}`", f"`{default!r}`", f"`{f.type}`"])
    return rows


def _layout_rows(rules: Any) -> list[list[Any]]:
    from dice_envs.layouts import layout

    lay = layout(rules, TABLE_PLAYERS)
    return [[f"`{f.name}`", f"{f.start}:{f.start + f.size}", f"{f.scale:g}", f.doc] for f in lay.fields]


def score_record() -> dict[str, Any]:
    """The variants of :data:`SCORE_RECORD`, by name (``yahtzee:joker_rule=verhoeff`` for a variant)."""
    return json.loads((DOCS / SCORE_RECORD).read_text(encoding="utf-8"))["variants"]


def score_section(name: str, picture: str) -> str:
    """The section on the optimal player's exact score distribution, rendered from
    :data:`SCORE_RECORD` (empty for a game the record lacks)."""
    variants = score_record()
    entry = variants.get(name)
    if entry is None:
        return ""
    sampled = entry["sampled"]
    record = f"../{SCORE_RECORD.parent}/score-distribution"
    rows = [
        ["Mean", f"{entry['mean']:.4f} (the solver's optimum: {entry['solver_expected_score']:.4f})"],
        ["Standard deviation", f"{entry['std']:.4f}"],
        ["Median", entry["median"]],
        *[[f"Percentile {q}", v] for q, v in entry["percentiles"].items() if q != "50"],
    ]
    rows += [[f"P(score ≥ {x})", f"{p:.4f}"] for x, p in entry["at_least"].items()]
    others = [
        f"`{key.partition(':')[2]}`: mean {e['mean']:.4f}, standard deviation {e['std']:.4f}, "
        f"median {e['median']}"
        for key, e in variants.items()
        if key.startswith(f"{name}:")
    ]
    return "\n".join(
        [
            "## Scores under optimal play\n",
            "The exact distribution of the final score of the `optimal` agent in solitaire "
            "(`agents.solver.score_distribution`: the solver's recursion carried over "
            "probabilities), default rules:\n",
            f"```{{figure}} /_generated/{picture}\n:alt: score distribution of the optimal "
            f"{name} player\n:width: 560px\n\nP(final score) of the optimal player.\n```\n",
            _table(["Figure", "Value"], rows),
            f"{sampled['games']:,} played games of `optimal` (seed {sampled['seed']}) fit it: "
            f"mean {sampled['mean']:.2f}, chi-square {sampled['chi_square']:.1f} on "
            f"{sampled['dof']} degrees of freedom, p = {sampled['p_value']:.3f}.\n",
            *[f"With {line}.\n" for line in others],
            f"From the dated record {{doc}}`{record}`, which also compares them with published figures.\n",
        ]
    )


def _score_plot(name: str, out: Path) -> None:
    """Save the plot of ``name``'s score distribution (:func:`score_record`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    entry = score_record()[name]
    fig, ax = plt.subplots(figsize=(7, 3.2), dpi=100)
    try:
        ax.bar(entry["scores"], entry["probabilities"], width=1.0, color="#3b6ea5")
        ax.axvline(entry["mean"], color="#c0392b", lw=1, label=f"mean {entry['mean']:.1f}")
        ax.axvline(entry["median"], color="#27ae60", lw=1, ls="--", label=f"median {entry['median']}")
        ax.set_xlim(0, entry["percentiles"]["99"] * 1.15)
        ax.set_xlabel("final score")
        ax.set_ylabel("probability")
        ax.legend(frameon=False)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png")
    finally:
        plt.close(fig)
    atomic_write_bytes(out, buf.getvalue(), overwrite=True)


def game_page(spec: Any, picture: str) -> str:
    """The Markdown page of one game."""
    import gymnasium as gym

    from dice_envs import outcome
    from dice_envs.layouts import layout
    from dice_envs.options import MAX_PLAYERS, REWARD_MODES

    rules = spec.rules_class()
    rules_module = importlib.import_module(spec.rules_class.__module__)
    env_module = importlib.import_module(spec.env_class.partition(":")[0])
    env = gym.make(spec.env_id)
    try:
        n_actions = int(env.action_space.n)
        obs_shape = env.observation_space.shape
    finally:
        env.close()
    sizes = ", ".join(f"{n}: {layout(rules, n).size}" for n in (1, 2, 4))
    summary = _table(
        ["Property", "Value"],
        [
            ["Env id", f"`{spec.env_id}`"],
            ["Gymnasium class", f"`{spec.env_class.replace(':', '.')}`"],
            ["PettingZoo module", f"`{spec.aec_module}`"],
            ["Native vector env", f"`{spec.vector_class.replace(':', '.')}` (`gym.make_vec`)"],
            ["Players", f"1 – {MAX_PLAYERS} (solitaire by default)"],
            ["Action space", f"`Discrete({n_actions})`, with an action mask"],
            ["Observation shape", f"`{obs_shape}` in solitaire; by number of players: {sizes}"],
            ["Observation encoding", f"`{spec.encoding}`"],
            ["Rules class", f"`{spec.rules_class.__module__}.{spec.rules_class.__name__}`"],
        ],
    )
    rule_text = RULE_TEXTS.get(spec.name)
    rule_links = ["the settled rules in {doc}`../RULES`"]
    if rule_text:
        rule_links.insert(0, f"{{download}}`the original rule text <../rule-texts/{rule_text}>`")
    history = _section(env_module.__doc__, "Version history:")
    served = "\n".join(
        f"* `{spec.versioned_env_id(v)}`{' (served)' if v == spec.version else ' (retired)'}: "
        + ", then ".join(f"`{e}`" for e in encs)
        for v, encs in enumerate(spec.observations)
    )
    parts = [
        f"# {_name(spec)}\n",
        summary,
        f"```{{figure}} /_generated/{picture}\n:alt: {spec.env_id} rendered with "
        f'render_mode="rgb_array"\n:width: 420px\n\n`env.render()` with `render_mode="rgb_array"` '
        f"after {PICTURE_STEPS} seeded random legal steps.\n```\n",
        "```python\nimport gymnasium as gym\nimport dice_envs  # noqa: F401  (registers the envs)\n\n"
        f'env = gym.make("{spec.env_id}")\nobs, info = env.reset(seed=0)\n'
        'obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].argmax()))\n```\n',
        "## Rules in brief\n",
        _rst(inspect.cleandoc(rules_module.__doc__ or "").split("\n>>>")[0].strip()),
        f"Rule text: {' and '.join(rule_links)}.\n",
        "## Rule parameters\n",
        f"Fields of `{spec.rules_class.__name__}`; pass any of them to `gym.make` "
        f"(e.g. `gym.make({spec.env_id!r}, {_example_param(spec.rules_class)})`) or in a rules file.\n",
        _table(["Parameter", "Default", "Type"], _rule_rows(spec.rules_class)),
        "## Observation\n",
        f"`{spec.encoding}` with {TABLE_PLAYERS} players, from the learner's seat "
        "(`dice_envs.layouts.layout(rules, num_players)`). A field stores `value / scale`; "
        "`other<k>_…` fields describe the seat `k` places after the learner.\n",
        _table(["Field", "Slice", "Scale", "Meaning"], _layout_rows(rules)),
        "## Actions\n",
        f'`Discrete({n_actions})`; `info["action_mask"]` and `env.action_masks()` mark the legal ones.\n',
        _table(["Action", "Effect"], _action_rows(spec, rules)),
        "## The Gymnasium env\n",
        f"From the docstring of `{env_module.__name__}`:\n",
        _rst(
            inspect.cleandoc(env_module.__doc__ or "").split("Version history:")[0].split("\n>>>")[0].strip()
        ),
        "## Rewards\n",
        f"`reward=` one of {', '.join(f'`{m}`' for m in REWARD_MODES)} (every keyword: "
        "{ref}`gym-keywords`):\n",
        _rst(option_docs()["reward"]),
        "## Illegal actions, termination and truncation\n",
        _rst(_section(outcome.__doc__, "construction. The rule:")),
        score_section(spec.name, f"{spec.name}_scores.png"),
        "## Version history\n",
        f"Observation encodings each version served (`dice_envs.games.GAME_SPECS[{spec.name!r}]`):\n",
        served + "\n",
        (_rst(history) if history else ""),
    ]
    return "\n".join(parts)


def index_page(specs: list[Any]) -> str:
    rows = [
        [f"[{_name(s)}]({s.name}.md)", f"`{s.env_id}`", f"`{s.aec_module}`", f"`{s.encoding}`"] for s in specs
    ]
    return (
        "# Games\n\nEach page below is written by the docs build from `dice_envs.games.GAME_SPECS`, "
        "the rules classes, the observation layouts and the env docstrings.\n\n"
        + _table(["Game", "Gymnasium id", "PettingZoo module", "Encoding"], rows)
        + "\n```{toctree}\n:hidden:\n\n"
        + "\n".join(s.name for s in specs)
        + "\n```\n"
    )


def generate(app: Any) -> None:
    from dice_envs.games import GAME_SPECS

    src = Path(app.srcdir)
    games, generated = src / "games", src / "_generated"
    games.mkdir(exist_ok=True)
    generated.mkdir(exist_ok=True)
    specs = list(GAME_SPECS.values())
    for spec in specs:
        picture = f"{spec.name}.png"
        _picture(spec, generated / picture)
        if spec.name in score_record():
            _score_plot(spec.name, generated / f"{spec.name}_scores.png")
        _write(games / f"{spec.name}.md", game_page(spec, picture))
    _write(games / "index.md", index_page(specs))


def setup(app: Any) -> dict[str, Any]:
    app.connect("builder-inited", generate)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}
