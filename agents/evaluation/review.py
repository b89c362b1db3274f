"""A review of every decision of recorded games against the exact solvers.

:func:`review` scores each decision of game records (:mod:`agents.evaluation.gamerecord`) with the
values of :mod:`agents.evaluation.regret`, so a solitaire game's losses sum to its regret: the value
of the action taken, of the best legal action and the loss between them (up to
:data:`~agents.evaluation.regret.TIE`: a tie). Values are exact only for solitaire scorecard games
(expected points to come) and two-player Farkle (the mover's chance of winning); other setups raise
:class:`NoExactReference` instead of guessing. A decision that lost something gets the first kind
of mistake whose rule holds (:data:`SCORECARD_KINDS`, :data:`FARKLE_KINDS`; the rules are spelled
out in ``docs/guide/review.md``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from agents.evaluation.gamerecord import GameLog, RecordError, play_logged
from agents.evaluation.regret import (
    FARKLE_MISTAKES,
    TIE,
    decision_values,
    farkle_decision_values,
    farkle_mistake,
)
from agents.players.human import describe_action
from agents.registry import load
from dice_envs.encoding import decode, encode
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.rules import ConfigError, FarkleRules, RuleConfig, ScorecardRules, make_rules
from dice_envs.rules.scorecard import N_REROLL_ACTIONS, UPPER_FACES

__all__ = [
    "FARKLE_KINDS",
    "SCORECARD_KINDS",
    "NoExactReference",
    "Review",
    "ReviewRow",
    "agent_games",
    "format_review",
    "review",
]

SCORECARD_KINDS = (
    "re-rolled a made hand",
    "scored too soon",
    "kept the wrong dice",
    "joker wasted",
    "upper bonus given up",
    "wrong box",
)
FARKLE_KINDS = FARKLE_MISTAKES
#: Rows of the five worst decisions in a summary.
WORST = 5


class NoExactReference(ConfigError):
    """The games have no exact reference to review them by (see the module docstring)."""


@dataclass(frozen=True)
class ReviewRow:
    """One reviewed decision (``game``: index of the game in the record, ``decision``: within it)."""

    game: int
    decision: int
    seat: int
    turn: str
    dice: tuple[int, ...]
    choice: str
    best: str
    value: float
    best_value: float
    loss: float
    kind: str | None


@dataclass(frozen=True)
class Review:
    """The reviewed decisions of the games ``game_ids`` (indices in the record) and what their
    values are (``unit``)."""

    unit: str
    game_ids: tuple[int, ...]
    rows: tuple[ReviewRow, ...]

    @property
    def games(self) -> int:
        return len(self.game_ids)

    def per_game(self) -> list[float]:
        """The loss of each game reviewed (its reviewed decisions' losses summed)."""
        out = dict.fromkeys(self.game_ids, 0.0)
        for r in self.rows:
            out[r.game] += r.loss
        return list(out.values())

    def summary(self) -> dict[str, Any]:
        """Mean loss per decision and per game, the :data:`WORST` worst decisions and the loss per
        game of each kind of mistake."""
        losses = np.array([r.loss for r in self.rows])
        kinds = SCORECARD_KINDS if "points" in self.unit else FARKLE_KINDS
        worst = sorted(range(len(self.rows)), key=lambda i: (-losses[i], i))[:WORST]
        return {
            "decisions": len(self.rows),
            "games": self.games,
            "mean_per_decision": float(losses.mean()) if len(losses) else 0.0,
            "mean_per_game": float(losses.sum() / self.games),
            "wrong_decisions": int((losses > 0).sum()),
            "worst": [i for i in worst if losses[i] > 0],
            "by_kind": {k: sum(r.loss for r in self.rows if r.kind == k) / self.games for k in kinds},
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "unit": self.unit,
            "games": list(self.game_ids),
            "rows": [asdict(r) for r in self.rows],
            "summary": self.summary(),
        }


def check_reference(rules: RuleConfig, players: int) -> None:
    """Raise :class:`NoExactReference` unless the solvers value every decision of such games exactly."""
    solitaire_scorecard = isinstance(rules, ScorecardRules) and players == 1
    if solitaire_scorecard or (isinstance(rules, FarkleRules) and players == 2):
        return
    raise NoExactReference(
        f"no exact reference for {players}-player {rules.game}: the solvers are exact for solitaire "
        "scorecard games and two-player Farkle only, so this review does not guess"
    )


def review(logs: Sequence[GameLog], spec: str | None = None) -> Review:
    """Review every decision of ``logs`` (or those of the seats played by ``spec``)."""
    if not logs:
        raise ConfigError("no games to review")
    rules, players = logs[0].rules, logs[0].players
    if any(log.rules != rules or log.players != players for log in logs):
        raise ConfigError("a review takes games of one game, rules and number of players")
    check_reference(rules, players)
    if spec is not None and not any(spec in log.seats for log in logs):
        seen = sorted({s for log in logs for s in log.seats})
        raise ConfigError(f"no seat is played by {spec!r}; the seats: {', '.join(seen)}")
    values_of = _valuer(rules)
    rows: list[ReviewRow] = []
    game_ids = [gi for gi, log in enumerate(logs) if spec is None or spec in log.seats]
    for gi in game_ids:
        log = logs[gi]
        picked = [i for i, d in enumerate(log.decisions) if spec is None or log.seats[d.seat] == spec]
        if not picked:  # a game without decisions of its own (ended at once)
            continue
        games = [log.position(i) for i in picked]
        try:
            values = values_of(games)
        except (IndexError, ValueError, KeyError) as exc:
            raise RecordError(f"game {gi}: a state the solver cannot value: {exc}") from None
        for i, g, v in zip(picked, games, values, strict=True):
            rows.append(_row(gi, i, g, log.decisions[i].action, v))
    unit = "expected points to come" if isinstance(rules, ScorecardRules) else "chance of winning"
    return Review(unit, tuple(game_ids), tuple(rows))


def _valuer(rules: RuleConfig) -> Any:
    """``values_of(games) -> (n, actions)``: every action's exact value at each of ``games``."""
    if isinstance(rules, ScorecardRules):
        from agents.solver.scorecard import solve_scorecard

        sol = solve_scorecard(rules)
        return lambda games: np.stack(
            [decision_values(sol, decode(encode(g, 0), rules, 1), g.action_mask()) for g in games]
        )
    from agents.players.win_optimal import WinOptimalAgent

    judge = WinOptimalAgent(rules, 2)  # reads each decision's seat from its observation
    return lambda games: farkle_decision_values(
        judge,
        np.stack([encode(g, g.current_player) for g in games]),
        np.stack([g.action_mask() for g in games]),
    )


def _row(gi: int, i: int, g: ScorecardGame | FarkleGame, action: int, values: np.ndarray) -> ReviewRow:
    best = int(np.argmax(values))
    loss = float(values[best] - values[action])
    if loss <= TIE:
        loss, best = 0.0, action
    view = decode(encode(g, g.current_player), g.rules, g.num_players)
    if isinstance(g, FarkleGame):
        turn, kind = str(g.turns[g.current_player] + 1), FARKLE_KINDS[int(farkle_mistake(action, best))]
    else:
        turn, kind = f"{g.round + 1}.{g.throw}", _scorecard_kind(g, action, best)
    return ReviewRow(
        gi, i, g.current_player, turn, tuple(g.dice),
        describe_action(g.rules, view, action), describe_action(g.rules, view, best),
        float(values[action]), float(values[best]), loss, kind if loss > 0 else None,
    )  # fmt: skip


def _scorecard_kind(g: ScorecardGame, action: int, best: int) -> str:
    rolled, rolled_best = action < N_REROLL_ACTIONS, best < N_REROLL_ACTIONS
    if rolled or rolled_best:
        return SCORECARD_KINDS[0 if not rolled_best else 1 if not rolled else 2]
    if len(set(g.dice)) == 1:
        return SCORECARD_KINDS[3]
    # the upper bonus still reachable: before, after the box chosen, after the best box
    reachable = [_bonus_reachable(g, b) for b in (None, action - N_REROLL_ACTIONS, best - N_REROLL_ACTIONS)]
    given_up = not g.cards[g.current_player].upper_bonus_paid and reachable == [True, False, True]
    return SCORECARD_KINDS[4 if given_up else 5]


def _bonus_reachable(g: ScorecardGame, box: int | None) -> bool:
    """Whether the upper bonus can still be reached after entering the throw in ``box`` (``None``:
    before): the upper total plus five dice of each open upper box's face."""
    p = g.current_player
    total = g.upper_total(p)
    for b, name in enumerate(g.categories):
        if name in UPPER_FACES and g.cards[p].boxes[b] is None:
            total += g.box_points(b) if b == box else 5 * UPPER_FACES[name]
    return total >= g.rules.upper_bonus_threshold


def agent_games(
    spec: str, game: str | RuleConfig, games: int, seed: int = 0, opponent: str = "win-optimal"
) -> list[GameLog]:
    """Records of ``games`` games of the agent ``spec``, as :mod:`~agents.evaluation.regret` plays
    them: game ``i`` is ``new_game(rules, K, seed + i)`` with the agent in seat ``i % K`` (against
    ``opponent`` at two-player Farkle), every agent reset with ``seed + i``."""
    rules = make_rules(game)
    k = 2 if isinstance(rules, FarkleRules) else 1
    check_reference(rules, k)
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ConfigError(f"games must be a positive integer, got {games!r}")
    lineups = [[spec], [spec, opponent], [opponent, spec]]
    seated = {
        s: [load(x, game=rules, num_players=k, seed=seed) for x in lineups[s + k - 1]] for s in range(k)
    }
    return [play_logged(rules, seated[i % k], lineups[i % k + k - 1], seed + i) for i in range(games)]


def format_review(rv: Review) -> str:
    """The review as text: one row per decision, then the summary."""
    d = 2 if "points" in rv.unit else 4
    w = max([len(r.choice) for r in rv.rows] + [len(r.best) for r in rv.rows] + [6])
    cols = f"{'value':>9} {'best':>9} {'loss':>8}  kind"
    head = f"game seat  turn  {'dice':<12} {'choice':<{w}} {'best':<{w}} {cols}"
    lines = [f"values: {rv.unit}, exact", head]
    for r in rv.rows:
        dice, best = " ".join(map(str, r.dice)), r.best if r.loss else "="
        lines.append(
            f"{r.game:>4} {r.seat:>4} {r.turn:>5}  {dice:<12} {r.choice:<{w}} {best:<{w}} "
            f"{r.value:>9.{d}f} {r.best_value:>9.{d}f} {r.loss:>8.{d}f}  {r.kind or ''}"
        )
    s = rv.summary()
    lines += [
        "",
        f"{s['decisions']} decisions in {s['games']} game(s), {s['wrong_decisions']} lost something: "
        f"mean loss {s['mean_per_decision']:.{d + 2}f} per decision, {s['mean_per_game']:.{d}f} per game",
        f"the {WORST} worst decisions:",
    ]
    for r in (rv.rows[i] for i in s["worst"]):
        lines.append(
            f"  game {r.game} turn {r.turn}: {r.choice} instead of {r.best} (-{r.loss:.{d}f}, {r.kind})"
        )
    lines.append("loss per game by kind:")
    lines += [f"  {k:<22} {v:.{d}f}" for k, v in s["by_kind"].items()]
    return "\n".join(lines)
