"""What the game pad shows: the public view of a game and the log lines of what happened.

Everything is read from the rules engine (open boxes, what each would score, which Farkle
selections score, the history as log lines by :func:`event_lines`); nothing here changes a game.

>>> from dice_envs.engine import new_game
>>> g = new_game("spiffel", 1, seed=3)
>>> v = scorecard_view(g, held_faces=[])
>>> v["throws_left"], v["rounds"], v["categories"][0]
(2, 13, {'name': 'ones', 'label': '1s', 'upper': True})
>>> g.dice
(1, 2, 2, 2, 5)
>>> _ = g.apply(g.box_action("chance"))
>>> event_lines(g, g.history, ["Ada"])
[('Ada: 12 in Chance', 'score')]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agents.evaluation.gamerecord import GameLog
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.render import set_aside_this_turn
from dice_envs.rules.farkle import BANK_FLAG, FarkleEvent
from dice_envs.rules.scorecard import N_REROLL_ACTIONS, UPPER_FACES

__all__ = ["BOX_LABELS", "event_lines", "farkle_view", "game_over_line", "review_view", "scorecard_view"]

#: Labels of the boxes on the pad (the rule texts' names).
BOX_LABELS: dict[str, str] = {
    "ones": "1s",
    "twos": "2s",
    "threes": "3s",
    "fours": "4s",
    "fives": "5s",
    "sixes": "6s",
    "pair": "Pair",
    "two_pairs": "Two pairs",
    "three_of_a_kind": "Three of a kind",
    "four_of_a_kind": "Four of a kind",
    "full_house": "Fullhouse",
    "small_straight": "Small Straight",
    "large_straight": "Large Straight",
    "spiffel": "Spiffel",
    "poker": "Poker",
    "yahtzee": "Yahtzee",
    "chance": "Chance",
}


def scorecard_view(g: ScorecardGame, held_faces: Sequence[int]) -> dict[str, Any]:
    """The scorecard part of a room's view (``held_faces``: what the mover held at the last re-throw)."""
    r = g.rules
    legal = set(g.legal_actions())
    five = r.five_kind_box
    cards = [
        {
            "boxes": list(g.cards[p].boxes),
            "upper_total": g.upper_total(p),
            "upper_bonus": g.upper_bonus(p),
            "lower_total": g.lower_total(p),
            "five_kind_bonuses": g.cards[p].five_kind_bonuses,
            "five_kind_bonus_points": g.five_kind_bonus_points(p),
            "total": g.total(p),
        }
        for p in range(g.num_players)
    ]
    now = None
    if not g.done:
        bonus_due, joker = g.joker_status()
        now = {
            "points": [
                g.box_points(b) if g.cards[g.current_player].boxes[b] is None else None
                for b in range(len(g.categories))
            ],
            "legal": [N_REROLL_ACTIONS + b in legal for b in range(len(g.categories))],
            "bonus_due": bonus_due,
            "joker": joker,
        }
    return {
        "categories": [
            {"name": b, "label": BOX_LABELS.get(b, b), "upper": b in UPPER_FACES} for b in g.categories
        ],
        "dice": list(g.dice),
        "held_faces": list(held_faces),
        "throw": g.throw,
        "num_throws": r.num_throws,  # type: ignore[attr-defined]
        "throws_left": g.throws_left if not g.done else 0,
        "can_roll": any(a < N_REROLL_ACTIONS for a in legal),
        "round": min(g.round + 1, r.num_boxes),
        "rounds": r.num_boxes,
        "upper_bonus_threshold": r.upper_bonus_threshold,
        "upper_bonus": r.upper_bonus,
        "five_kind_box": five,
        "five_kind_label": BOX_LABELS.get(five, five),
        "five_kind_bonus": r.five_kind_bonus,
        "now": now,
        "cards": cards,
    }


def farkle_view(g: FarkleGame) -> dict[str, Any]:
    """The Farkle part of a room's view: dice, every scoring selection, this turn's set-aside dice."""
    legal = set(g.legal_actions())  # none once the game is over
    selections = [  # every scoring selection: set aside, then throw on (and bank, where allowed)
        {
            "faces": [g.dice[i] for i in range(len(g.dice)) if mask >> i & 1],
            "points": g.selection_points(mask),
            "bank": mask + BANK_FLAG in legal,
        }
        for mask in sorted(a for a in legal if a < BANK_FLAG)
    ]
    r = g.rules
    return {
        "dice": list(g.dice),
        "turn_total": g.turn_total,
        "first_throw": g.first_throw,
        "selections": selections,
        "set_aside": [list(d) for d in set_aside_this_turn(g)],
        "banked": list(g.banked),
        "turns": list(g.turns),
        "final_round_by": g.final_round_by,
        "target": r.target,
        "bank_minimum": r.bank_minimum,
        "bankruptcy": r.bankruptcy,
        "truncated": g.truncated,
    }


def event_lines(
    g: ScorecardGame | FarkleGame, events: Sequence[Any], names: Sequence[str]
) -> list[tuple[str, str]]:
    """``(text, kind)`` log lines for the engine history ``events`` of ``g`` (players as ``names``).

    The final-round and game-over lines are the room's to add (it announces each once).
    """
    if isinstance(g, ScorecardGame):
        lines = []
        for ev in events:
            label = BOX_LABELS.get(ev.box, ev.box)
            text = f"{names[ev.player]}: " + (f"{ev.points} in {label}" if ev.points else f"XXX in {label}")
            if ev.upper_bonus:
                text += f", upper bonus +{ev.upper_bonus}"
            if ev.five_kind_bonus:
                text += f", {BOX_LABELS[g.rules.five_kind_box]} bonus +{ev.five_kind_bonus}"
            lines.append((text, "score"))
        return lines
    return [line for ev in events if (line := _farkle_line(ev, names)) is not None]


def _farkle_line(ev: FarkleEvent, names: Sequence[str]) -> tuple[str, str] | None:
    who = names[ev.player]
    dice = " ".join(map(str, ev.dice))
    if ev.kind == "set_aside":
        return f"{who} sets aside {dice} ({ev.points})", "take"
    if ev.kind == "bank":
        return f"{who} banks {ev.points}", "bank"
    if ev.kind == "farkle":
        lost = f", loses the turn total {-ev.points}" if ev.points else ""
        return f"FARKLE! {who} throws {dice}: nothing scores{lost}", "farkle"
    if ev.kind == "bankrupt":
        return f"BANKRUPT! {who}'s first throw scores nothing: {-ev.points} banked points lost", "bankrupt"
    return None


def game_over_line(g: ScorecardGame | FarkleGame, names: Sequence[str]) -> str:
    """The log line of a finished game: every Grand Total and the winners."""
    wins = ", ".join(names[w] for w in g.winners())
    extra = " (turn limit reached)" if getattr(g, "truncated", False) else ""
    totals = ", ".join(f"{n} {t}" for n, t in zip(names, g.totals(), strict=True))
    return f"Game over{extra}. Grand Total: {totals}. Winner: {wins}"


def review_view(log: GameLog) -> dict[str, Any]:
    """The review of a finished game (:func:`agents.evaluation.review.review`) with each row's
    position as the pad draws it (``view``), or ``{"exact": False, "note": why}`` where no exact
    reference exists."""
    from agents.evaluation.review import NoExactReference, review

    try:
        out: dict[str, Any] = {"exact": True, **review([log]).to_dict()}
    except NoExactReference as exc:
        return {"exact": False, "note": str(exc)}
    for row in out["rows"]:
        g = log.position(row["decision"])
        row["view"] = farkle_view(g) if isinstance(g, FarkleGame) else scorecard_view(g, [])
    return out
