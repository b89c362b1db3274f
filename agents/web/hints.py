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

from agents.evaluation.regret import decision_values
from agents.players.farkle import MaxExpectedAgent
from agents.solver.farkle import FarkleSolution, solve_farkle
from agents.solver.scorecard import ScorecardSolution, solve_scorecard
from agents.web.players import COMPUTE_LOCK
from agents.web.views import BOX_LABELS
from dice_envs.encoding import ScorecardView, decode, encode
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.rules.farkle import BANK_FLAG
from dice_envs.rules.scorecard import N_REROLL_ACTIONS

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
    options.sort(key=lambda o: (-o["value"], o["type"] == "roll"))  # ties: scoring or banking first
    best = options[0]["value"]
    for o in options:
        o["cost"] = round(best - o["value"], 2)
        o["value"] = round(o["value"], 2)
    shown = options[: MAX_OPTIONS + 1]
    for kind in sorted({o["type"] for o in options} - {o["type"] for o in shown}):  # best of each kind too
        shown.append(next(o for o in options if o["type"] == kind))
    return {"best": options[0], "options": shown, "unit": unit, "note": note}


def _scorecard_hint(g: ScorecardGame, sol: ScorecardSolution) -> dict[str, Any]:
    view = decode(encode(g, g.current_player), g.rules, g.num_players)
    assert isinstance(view, ScorecardView)
    values = g.total(g.current_player) + decision_values(sol, view, g.action_mask())  # Grand Totals
    options: list[dict[str, Any]] = []
    for a in np.flatnonzero(np.isfinite(values)).tolist():
        value = float(values[a])
        if a >= N_REROLL_ACTIONS:
            name = g.categories[a - N_REROLL_ACTIONS]
            label = f"{g.box_points(a - N_REROLL_ACTIONS) or 'XXX'} in {BOX_LABELS.get(name, name)}"
            options.append({"action": a, "type": "score", "box": name, "label": label, "value": value})
        else:
            hold = [i for i in range(len(g.dice)) if not a >> i & 1]
            held = " ".join(str(g.dice[i]) for i in hold)
            label = f"hold {held}, roll again" if hold else "roll all five again"
            options.append({"action": a, "type": "roll", "hold": hold, "label": label, "value": value})
    return _finish(options, "expected Grand Total", "exact solitaire optimum")


def _farkle_hint(g: FarkleGame, sol: FarkleSolution) -> dict[str, Any]:
    agent = MaxExpectedAgent(g.rules, num_players=g.num_players, solution=sol)
    view = decode(encode(g, g.current_player), g.rules, g.num_players)
    options: list[dict[str, Any]] = []
    for a, pts, left, bank in agent.options(view, np.array(g.legal_actions())):  # type: ignore[arg-type]
        mask = a % BANK_FLAG
        take = [i for i in range(len(g.dice)) if mask >> i & 1]
        faces = " ".join(str(g.dice[i]) for i in take)
        if bank:
            kind, label = "bank", f"set aside {faces} and bank {g.turn_total + pts}"
        else:
            kind, label = "roll", f"set aside {faces} ({pts}), roll {left} dice"
        value = float(agent.solution.option_value(g.turn_total + pts, left, bank))
        options.append({"action": a, "type": kind, "take": take, "label": label, "value": value})
    return _finish(options, "expected points banked this turn", "max-expected turn solver")
