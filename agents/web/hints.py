"""The hint button: the exact solver's choice and what every alternative costs.

Scorecard games: each legal move valued by the expected final grand total under optimal solitaire
play from then on (the ``optimal`` agent's table). Farkle: by the points it expects to bank this
turn (the ``max-expected`` agent's table, the same for every target, so no hint starts a solve
whose cost grows with the target). :func:`hint_table` gets the table (a first solve runs on the
pad's solve queue and the room keeps it); :func:`hint` reads the advice from it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.players.farkle import MaxExpectedAgent
from agents.solver.farkle import FarkleSolution, solve_farkle
from agents.solver.scorecard import ScorecardSolution, solve_scorecard
from agents.web.players import COMPUTE_LOCK
from agents.web.views import BOX_LABELS
from dice_envs.encoding import decode, encode
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.rules.farkle import BANK_FLAG
from dice_envs.rules.scorecard import N_REROLL_ACTIONS
from dice_envs.tables import scorecard_tables

__all__ = ["hint", "hint_table"]

#: Alternatives listed besides the best one.
MAX_OPTIONS = 8


def hint_table(game: ScorecardGame | FarkleGame) -> ScorecardSolution | FarkleSolution:
    """The solved table the hints of ``game``'s rules read (solved or loaded on first use)."""
    if isinstance(game, FarkleGame):
        return solve_farkle(game.rules.bank_minimum)
    return solve_scorecard(game.rules)


def hint(
    game: ScorecardGame | FarkleGame, table: ScorecardSolution | FarkleSolution | None = None
) -> dict[str, Any]:
    """The best move for the player to move and the cost of the alternatives (best first), read
    from ``table`` (:func:`hint_table` of the game when not given)."""
    if game.done:
        raise ValueError("the game is over; there is nothing to hint")
    table = hint_table(game) if table is None else table
    with COMPUTE_LOCK:
        if isinstance(game, FarkleGame):
            assert isinstance(table, FarkleSolution)
            return _farkle_hint(game, table)
        assert isinstance(table, ScorecardSolution)
        return _scorecard_hint(game, table)


def _finish(options: list[dict[str, Any]], unit: str, note: str) -> dict[str, Any]:
    options.sort(key=lambda o: (-o["value"], o["order"]))
    best = options[0]["value"]
    for o in options:
        o["cost"] = round(best - o["value"], 2)
        o["value"] = round(o["value"], 2)
        del o["order"]
    shown = options[: MAX_OPTIONS + 1]
    for kind in sorted({o["type"] for o in options} - {o["type"] for o in shown}):  # best of each kind too
        shown.append(next(o for o in options if o["type"] == kind))
    return {"best": options[0], "options": shown, "unit": unit, "note": note}


def _scorecard_hint(g: ScorecardGame, sol: ScorecardSolution) -> dict[str, Any]:
    p = g.current_player
    card = g.cards[p]
    plan = sol.plan(*sol.state(tuple(card.boxes), g.upper_total(p), card.five_kind_bonuses))
    t = scorecard_tables()
    r = t.roll_index[g.dice]
    total = g.total(p)
    options: list[dict[str, Any]] = []
    for a in g.legal_actions():
        if a >= N_REROLL_ACTIONS:
            b = a - N_REROLL_ACTIONS
            name = g.categories[b]
            pts = g.box_points(b)
            label = f"{'XXX in' if pts == 0 else f'{pts} in'} {BOX_LABELS.get(name, name)}"
            value = float(plan.box_values[b, r])
            options.append(
                {
                    "action": a,
                    "type": "score",
                    "box": name,
                    "label": label,
                    "value": total + value,
                    "order": 0,
                }
            )
        elif g.throw - 1 < len(plan.keep_values):
            held = [f for i, f in enumerate(g.dice) if not a >> i & 1]
            hold_pos = [i for i in range(5) if not a >> i & 1]
            value = float(plan.keep_values[g.throw - 1][t.reroll_keep[r, a]])
            label = f"hold {' '.join(map(str, held))}, roll again" if held else "roll all five again"
            options.append(
                {
                    "action": a,
                    "type": "roll",
                    "hold": hold_pos,
                    "label": label,
                    "value": total + value,
                    "order": 1,
                }
            )
    return _finish(
        options,
        "expected Grand Total",
        "exact solitaire optimum",
    )


def _farkle_hint(g: FarkleGame, sol: FarkleSolution) -> dict[str, Any]:
    agent = MaxExpectedAgent(g.rules, num_players=g.num_players, solution=sol)
    view = decode(encode(g, g.current_player), g.rules, g.num_players)
    legal = np.array(g.legal_actions())
    options: list[dict[str, Any]] = []
    for a, pts, left, bank in agent.options(view, legal):  # type: ignore[arg-type]
        mask = a % BANK_FLAG
        take = [i for i in range(len(g.dice)) if mask >> i & 1]
        faces = " ".join(str(g.dice[i]) for i in take)
        value = agent.solution.option_value(g.turn_total + pts, left, bank)
        label = (
            f"set aside {faces} and bank {g.turn_total + pts}"
            if bank
            else f"set aside {faces} ({pts}), roll {left} dice"
        )
        options.append(
            {
                "action": a,
                "type": "bank" if bank else "roll",
                "take": take,
                "label": label,
                "value": float(value),
                "order": 0 if bank else 1,
            }
        )
    return _finish(
        options,
        "expected points banked this turn",
        "max-expected turn solver",
    )
