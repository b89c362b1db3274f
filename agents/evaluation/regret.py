"""Exact references for benchmarks: regret against the optimum, and win-rate deficits.

* **Scorecard solitaire** (:func:`scorecard_regret`): every decision scored against the solver's
  value table (the best legal action's value minus the chosen one's). Summed over a game it is the
  expected points the agent's choices lost: far less noisy than mean scores, as the dice cancel.
* **Two-player Farkle** (:func:`farkle_win_deficit`): ``0.5`` minus the agent's win rate against
  ``win-optimal``, seats balanced (:func:`farkle_match` is the head-to-head behind it).
* **Two-player Farkle, per decision** (:func:`farkle_regret`): every decision scored against the
  tables of ``win-optimal`` (the chance of winning given away), split by kind of mistake.

>>> r = scorecard_regret("optimal", "spiffel", games=2, seed=0)
>>> r.mean == 0.0 and r.games == 2
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.evaluation.runner import dice_seed, run_games
from agents.evaluation.stats import Z95, mean_ci, win_shares
from agents.players.scorecard import plan_action_values
from agents.registry import load
from dice_envs.encoding import ScorecardView, decode, encode
from dice_envs.engine import new_game
from dice_envs.outcome import is_legal
from dice_envs.rules import ConfigError, FarkleRules, RuleConfig, ScorecardRules, make_rules
from dice_envs.tables import scorecard_tables

__all__ = [
    "FarkleRegretResult",
    "MatchResult",
    "RegretResult",
    "check_json_out",
    "decision_values",
    "exact_references",
    "exact_table",
    "farkle_decision_values",
    "farkle_match",
    "farkle_mistake",
    "farkle_regret",
    "farkle_win_deficit",
    "fitting_specs",
    "scorecard_regret",
    "seat_games",
    "write_json",
]

#: Value differences up to this are ties (the solver's agents break ties within it).
TIE = 1e-9


@dataclass(frozen=True)
class RegretResult:
    """Per-game regret of one agent: mean with a 95% interval (normal approximation)."""

    agent: str
    games: int
    mean: float
    ci95: tuple[float, float]
    per_game: tuple[float, ...] = field(repr=False)
    decisions: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"agent": self.agent, "games": self.games, "mean": self.mean, "ci95": list(self.ci95)}


def decision_values(solution: Any, view: ScorecardView, action_mask: np.ndarray) -> np.ndarray:
    """Expected final future points of every action of a scorecard decision (``-inf``: not legal),
    from the solver's plan (:meth:`~agents.solver.scorecard.ScorecardSolution.plan`)."""
    plan = solution.plan(*solution.state(view.boxes, view.upper_total, view.five_kind_bonuses))
    roll, throw = np.array([scorecard_tables().roll_index[view.dice]]), np.array([view.throw])
    return plan_action_values([plan], roll, throw, np.asarray(action_mask)[None] > 0)[0]


def scorecard_regret(
    agent: str | Agent,
    game: str | RuleConfig = "spiffel",
    games: int = 100,
    seed: int = 0,
    solution: Any = None,
) -> RegretResult:
    """Per-game regret of a solitaire scorecard agent against the exact optimum (see module doc).

    Game ``i`` uses dice seed ``seed + i`` and the agent is reset with that seed, so runs repeat.
    A decision losing at most :data:`TIE` points is a tie (no regret).
    """
    rules = make_rules(game)
    if not isinstance(rules, ScorecardRules):
        raise ConfigError(f"scorecard regret needs a scorecard game, got {rules.game!r}")
    if not isinstance(games, int) or games < 1:
        raise ConfigError(f"games must be a positive integer, got {games!r}")
    if solution is None:
        from agents.solver.scorecard import solve_scorecard

        solution = solve_scorecard(rules)
    player = load(agent, game=rules, num_players=1, seed=seed) if isinstance(agent, str) else agent
    name = _name(agent)
    per_game: list[float] = []
    decisions = 0
    for i in range(games):
        g = new_game(rules, num_players=1, seed=seed + i)
        if callable(getattr(player, "reset", None)):
            player.reset(seed=seed + i)
        total = 0.0
        while not g.done:
            obs = encode(g, 0)
            mask = g.action_mask()
            view = decode(obs, rules, 1)
            assert isinstance(view, ScorecardView)
            values = decision_values(solution, view, mask)
            a = int(player.act(obs, mask))
            if not is_legal(a, mask):
                raise ValueError(f"agent {name!r} chose illegal action {a}; legal: {np.flatnonzero(mask)}")
            loss = float(values.max() - values[a])
            total += loss if loss > TIE else 0.0
            decisions += 1
            g.apply(a)
        per_game.append(total)
    mean, ci = mean_ci(per_game)
    return RegretResult(str(name), games, mean, ci, tuple(per_game), decisions)


@dataclass(frozen=True)
class MatchResult:
    """Head-to-head of agent A against agent B: A's share of the wins (ties half) per A's seat."""

    a: str
    b: str
    games_per_seat: int
    share: tuple[float, float]  # A's win share with A in seat 0, in seat 1

    @property
    def win_rate(self) -> float:
        """A's win rate with seats balanced."""
        return (self.share[0] + self.share[1]) / 2

    @property
    def ci95(self) -> tuple[float, float]:
        """95% interval of :attr:`win_rate` (normal approximation, each seat's games independent)."""
        n = self.games_per_seat
        var = sum(p * (1 - p) for p in self.share) / (4 * n)
        h = Z95 * math.sqrt(var)
        return self.win_rate - h, self.win_rate + h

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "games_per_seat": self.games_per_seat,
            "share_by_seat": list(self.share),
            "win_rate": self.win_rate,
            "ci95": list(self.ci95),
        }


def _load_seated(spec: str | Agent, rules: FarkleRules, seat: int, seed: int) -> Agent:
    if not isinstance(spec, str):
        return spec
    if spec.strip().lower() in ("win-optimal", "win_optimal"):
        return load(spec, game=rules, num_players=2, seed=seed, seat=seat)  # the seat is known here
    return load(spec, game=rules, num_players=2, seed=seed)


def seat_games(
    learner: Agent,
    opponent: Agent,
    rules: FarkleRules,
    seat: int,
    games: int,
    seed: int,
    num_envs: int = 1000,
) -> np.ndarray:
    """Play ``games`` two-player games, ``learner`` in ``seat``, and return the learner's win share
    of each (1, 0.5 or 0): the game runner (:func:`agents.evaluation.run_games`, ``num_envs``
    games side by side; game ``g`` throws the dice of :func:`agents.evaluation.dice_seed` for
    ``(seed, g)``), the learner reset with ``seed`` first."""
    lineups = np.zeros((games, 2), dtype=np.int64)
    lineups[:, 1 - seat] = 1
    out = run_games(
        rules,
        [learner, opponent],
        lineups,
        [dice_seed(seed, g) for g in range(games)],
        agent_seeds=[seed, None],
        width=num_envs,
    )
    return win_shares(out.winners)[:, seat]


def farkle_match(
    a: str | Agent,
    b: str | Agent,
    rules: str | RuleConfig = "farkle",
    games: int = 2000,
    seed: int = 0,
    num_envs: int = 1000,
) -> MatchResult:
    """``games`` two-player games with A in seat 0 and ``games`` with A in seat 1 (seeds ``seed``
    and ``seed + 1``); ``win-optimal`` specs are told their seat."""
    r = make_rules(rules)
    if not isinstance(r, FarkleRules):
        raise ConfigError(f"a Farkle match needs farkle rules, got {r.game!r}")
    shares = []
    for seat in (0, 1):
        learner = _load_seated(a, r, seat, seed + 2 * seat)
        opponent = _load_seated(b, r, 1 - seat, seed + 2 * seat + 1)
        shares.append(float(seat_games(learner, opponent, r, seat, games, seed + seat, num_envs).mean()))
    return MatchResult(_name(a), _name(b), games, (shares[0], shares[1]))


def _name(agent: str | Agent) -> str:
    return agent if isinstance(agent, str) else str(getattr(agent, "spec", type(agent).__name__))


def farkle_win_deficit(
    agent: str | Agent, rules: str | RuleConfig = "farkle", games: int = 2000, seed: int = 0
) -> tuple[float, tuple[float, float], MatchResult]:
    """``0.5 - win rate`` of ``agent`` against ``win-optimal`` (seats balanced), with a 95% interval."""
    m = farkle_match(agent, "win-optimal", rules, games, seed)
    lo, hi = m.ci95
    return 0.5 - m.win_rate, (0.5 - hi, 0.5 - lo), m


# ------------------------------------------------------------------ report hooks
def exact_references(
    rules: RuleConfig, specs: Sequence[str], players: int, games: int, seed: int = 0
) -> dict[str, dict[str, Any]]:
    """Per agent spec: ``regret`` (scorecard solitaire) or ``win_deficit`` (two-player Farkle;
    ``win-optimal`` itself is 0 by definition and not played); empty for other setups."""
    out: dict[str, dict[str, Any]] = {}
    if isinstance(rules, ScorecardRules) and players == 1:
        for spec in specs:
            r = scorecard_regret(spec, rules, games=games, seed=seed)
            out[spec] = {"regret": r.mean, "regret_ci95": list(r.ci95), "regret_games": r.games}
    elif isinstance(rules, FarkleRules) and players == 2:
        for spec in specs:
            if spec.strip().lower() in ("win-optimal", "win_optimal"):
                out[spec] = {"win_deficit": 0.0, "win_deficit_ci95": [0.0, 0.0], "win_deficit_games": 0}
                continue
            d, ci, _ = farkle_win_deficit(spec, rules, games=games, seed=seed)
            out[spec] = {"win_deficit": d, "win_deficit_ci95": list(ci), "win_deficit_games": 2 * games}
    return out


def exact_table(refs: dict[str, dict[str, Any]]) -> list[str]:
    """Markdown rows of :func:`exact_references` (empty when there is nothing to show)."""
    if not refs:
        return []
    if "regret" in next(iter(refs.values())):
        lines = ["| agent | regret per game ± 95% CI (points lost to the optimum) |", "|---|---:|"]
        for spec, r in sorted(refs.items(), key=lambda kv: kv[1]["regret"]):
            lo, hi = r["regret_ci95"]
            lines.append(f"| `{spec}` | {r['regret']:.2f} ± {(hi - lo) / 2:.2f} |")
        return lines
    lines = ["| agent | win-rate deficit vs `win-optimal` [95% CI] |", "|---|---:|"]
    for spec, r in sorted(refs.items(), key=lambda kv: kv[1]["win_deficit"]):
        lo, hi = r["win_deficit_ci95"]
        lines.append(f"| `{spec}` | {r['win_deficit']:.1%} [{lo:.1%}, {hi:.1%}] |")
    return lines


def write_json(path: str | Path, data: Any, *, overwrite: bool = True) -> Path:
    """Write ``data`` as JSON atomically (:func:`dice_envs.io.atomic_write_text`)."""
    import json

    from dice_envs.io import atomic_write_text

    return atomic_write_text(path, json.dumps(data, indent=1) + "\n", overwrite=overwrite)


def check_json_out(path: Path, force: bool, flag: str = "--out") -> None:
    """Refuse (``ConfigError`` naming ``flag``), before any work, a path :func:`write_json` cannot
    write: a folder, an existing file without ``force``, a folder that cannot be made or written."""
    from dice_envs.io import check_out_dir

    if path.is_dir():
        raise ConfigError(f"{flag} {path} is a folder; give the .json file to write the figures to")
    if path.exists() and not force:
        raise ConfigError(f"{flag} {path} exists; pass --force to overwrite it")
    try:
        check_out_dir(path.parent, force=True)
    except OSError as exc:
        raise ConfigError(f"{flag} {path}: {exc}") from None


def fitting_specs(
    given: list[str] | None, defaults: list[str], rules: FarkleRules, flag: str
) -> tuple[list[str], list[str]]:
    """The agent specs a two-player Farkle command plays under ``rules`` (:func:`check_fit`):
    ``given`` ones must all fit (``ConfigError`` naming ``flag`` otherwise); with ``given`` None
    the ``defaults`` that fit, and those left out because they do not (a model of other rules)."""
    from agents.registry import check_fit

    specs, left_out = [], []
    for spec in defaults if given is None else given:
        try:
            check_fit(spec, rules, 2)
        except ConfigError as exc:
            if given is not None:
                raise ConfigError(f"{flag}: {exc}") from None
            left_out.append(spec)
            continue
        specs.append(spec)
    return specs, left_out


#: Kinds of Farkle mistakes (:func:`farkle_regret`), by the bank flags of the best and chosen action.
FARKLE_MISTAKES = ("banked too soon", "threw on too long", "kept the wrong dice")


def farkle_mistake(chosen: Any, best: Any) -> np.ndarray:
    """The index in :data:`FARKLE_MISTAKES` of each decision (scalars or arrays of actions): banked
    where the best action throws on, threw on where the best banks, else kept the wrong dice."""
    from dice_envs.rules.farkle import BANK_FLAG

    bank_chosen, bank_best = np.asarray(chosen) >= BANK_FLAG, np.asarray(best) >= BANK_FLAG
    return np.where(bank_chosen & ~bank_best, 0, np.where(~bank_chosen & bank_best, 1, 2))


@dataclass(frozen=True)
class FarkleRegretResult:
    """Chance of winning an agent's decisions gave away per game against optimal two-player play
    (``by_kind``: per :data:`FARKLE_MISTAKES`; ``wrong``: the share of decisions that lost any)."""

    agent: str
    opponent: str
    games: int
    mean: float
    ci95: tuple[float, float]
    by_kind: dict[str, float]
    wrong: float
    decisions: int
    per_game: tuple[float, ...] = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "opponent": self.opponent,
            "games": self.games,
            "mean": self.mean,
            "ci95": list(self.ci95),
            "by_kind": dict(self.by_kind),
            "wrong_decisions": self.wrong,
            "decisions": self.decisions,
        }


def farkle_regret(
    agent: str | Agent,
    opponent: str | Agent = "win-optimal",
    rules: str | RuleConfig = "farkle",
    games: int = 200,
    seed: int = 0,
) -> FarkleRegretResult:
    """Per-game regret of a two-player Farkle agent against the exact win-optimal tables.

    Game ``i`` throws the dice of seed ``seed + i`` with the agent in seat ``i % 2`` against
    ``opponent`` (both reset with that seed). A decision's loss is the best legal action's
    :meth:`~agents.players.win_optimal.WinOptimalAgent.action_values` minus the chosen one's.
    """
    from agents.players.win_optimal import WinOptimalAgent
    from dice_envs.encoding import encode as encode_obs

    r = make_rules(rules)
    if not isinstance(r, FarkleRules):
        raise ConfigError(f"Farkle regret needs farkle rules, got {r.game!r}")
    if not isinstance(games, int) or isinstance(games, bool) or games < 1:
        raise ConfigError(f"games must be a positive integer, got {games!r}")
    judge = WinOptimalAgent(r, 2)  # reads the seat of each decision from its observation
    players = [
        (_load_seated(agent, r, seat, seed), _load_seated(opponent, r, 1 - seat, seed)) for seat in (0, 1)
    ]
    per_game: list[float] = []
    kinds = np.zeros(len(FARKLE_MISTAKES))
    wrong = decisions = 0
    for i in range(games):
        seat = i % 2
        me, other = players[seat]
        for x in (me, other):
            if callable(getattr(x, "reset", None)):
                x.reset(seed=seed + i)
        g = new_game(r, num_players=2, seed=seed + i)
        obs_rows, mask_rows, chosen = [], [], []
        while not g.done:
            p = g.current_player
            obs, mask = encode_obs(g, p), g.action_mask()
            a = int((me if p == seat else other).act(obs, mask))
            if not is_legal(a, mask):
                who = _name(agent) if p == seat else _name(opponent)
                raise ValueError(f"agent {who!r} chose illegal action {a}; legal: {np.flatnonzero(mask)}")
            if p == seat:
                obs_rows.append(obs)
                mask_rows.append(mask)
                chosen.append(a)
            g.apply(a)
        if not chosen:
            per_game.append(0.0)
            continue
        values = farkle_decision_values(judge, np.stack(obs_rows), np.stack(mask_rows))
        picked = np.asarray(chosen)
        best = values.argmax(axis=1)
        loss = values.max(axis=1) - values[np.arange(len(picked)), picked]
        loss = np.where(loss > TIE, loss, 0.0)
        kinds += np.bincount(farkle_mistake(picked, best), weights=loss, minlength=len(FARKLE_MISTAKES))
        wrong += int((loss > 0).sum())
        decisions += len(picked)
        per_game.append(float(loss.sum()))
    mean, ci = mean_ci(per_game)
    by_kind = {k: float(v / games) for k, v in zip(FARKLE_MISTAKES, kinds, strict=True)}
    figures = (games, mean, ci, by_kind, wrong / max(decisions, 1), decisions, tuple(per_game))
    return FarkleRegretResult(_name(agent), _name(opponent), *figures)


def farkle_decision_values(judge: Any, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
    """``(B, 128)``: the chance of winning after every action of a batch of two-player decisions
    (``-inf``: not legal), from ``judge`` (a two-player ``WinOptimalAgent``), as
    :func:`farkle_regret` scores them.

    That is ``judge.action_values`` with a value for throwing on from a settled turn, where the
    tables bank without asking (seat 1 past the target or past the lead in the last round, which
    wins at once; seat 0 past ``target + cap``) and hold -1: banking the same selection instead is
    worth ``B``; throwing its ``n`` dice on farkles with chance ``p(n)``, else the mover banks at
    once (worth at least ``B``), so throwing on is worth ``B - p(n) (B - V)``, ``V`` the mover's
    chance after losing the turn (0 in the last round)."""
    from agents.solver.farkle_win import STEP, option_groups
    from dice_envs.encoding import decode_farkle_batch
    from dice_envs.engine import farkle_turn as turn
    from dice_envs.rules.farkle import BANK_FLAG

    obs, masks = np.asarray(observations), np.asarray(action_masks)
    values = judge.action_values(obs, masks)
    throws = values[:, :BANK_FLAG]
    settled = throws == -1.0
    if not settled.any():
        return values
    bv = decode_farkle_batch(obs, judge.rules, 2)
    sol = judge.solution
    other = bv.others_banked.max(axis=1)
    after = np.zeros(len(obs))
    for i in np.flatnonzero(settled.any(axis=1)):
        own, oth = int(bv.banked[i]), int(other[i])
        if bv.final_round[i] and oth > own:
            after[i] = 0.0  # seat 1's last turn lost
        elif bv.seat[i] == 1:
            after[i] = 1.0 - sol.value(0, min(oth, judge.rules.target - STEP), own)
        else:
            after[i] = 1.0 - sol.value(1, oth, min(own, judge.rules.target - STEP))
    tt = turn.farkle_turn_tables()
    left = tt.next_dice[turn.throw_of_dice(tt, bv.dice)]  # (B, 64) dice thrown after each selection
    bank, farkle_p = values[:, BANK_FLAG:], option_groups()[-1]
    with np.errstate(invalid="ignore"):  # -inf - -inf where banking that selection is not legal
        estimate = bank - farkle_p[left.clip(0, len(farkle_p) - 1)] * (bank - after[:, None])
    values[:, :BANK_FLAG] = np.where(settled, estimate, throws)
    return values
