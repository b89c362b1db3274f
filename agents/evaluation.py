"""Evaluation and tournaments: solitaire statistics, seat-balanced round robins, ratings, plots.

Games are played through the rules engine directly (:func:`dice_envs.rules.new_game`,
:func:`dice_envs.encoding.encode` and ``agent.act(obs, game.action_mask())``), no environment in
between, across a process pool.

Two modes, chosen by the number of seats ``players``:

* **solitaire** (``players=1``, the default for the scorecard games): every agent plays ``games``
  games alone; per agent the mean score with a 95% confidence interval, median, standard
  deviation, and for scorecard games the upper-bonus rate, the five-of-a-kind rate (five-kind box
  holds 50) and the gap to the exact optimum (``agents.solver.expected_score``) when a solver
  exists; for Farkle the rate of reaching the target, the mean turns to the target and the
  final score.
* **tables** (``players=K >= 2``, the default for Farkle): every combination of ``K`` agents
  (a *pairing*) plays ``games`` deals, each deal once in every cyclic seat rotation, so each agent
  sits in each seat equally often and meets the same dice seed in every seat. Win rates (shared
  wins count fractionally) with Wilson 95% intervals per pairing, and a Bradley-Terry rating per
  agent (Elo scale, maximum likelihood over all games at once, so the order games were played in
  does not matter; 95% bootstrap intervals with a fixed seed), see :func:`rate_agents`.

Seeds: a deal's dice seed depends only on ``(seed, deal index)`` — every pairing and every agent
meets the same deals (common random numbers) — and each agent's seed on ``(seed, pairing, deal,
agent slot)``, both drawn with :class:`numpy.random.SeedSequence`. Agents are built once per
worker and reseeded with ``reset(seed)`` before every game, and the results are aggregated in a
fixed order, so a run is identical for a seed whatever the number of workers.

>>> res = evaluate("spiffel", ["random"], games=3, seed=1, workers=1, optimum=False)
>>> summary = res.summary()
>>> summary["agents"]["random"]["games"], summary["pairings"]
(3, [])
>>> res == evaluate("spiffel", ["random"], games=3, seed=1, workers=2, optimum=False)
True
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dice_envs.encoding import encode
from dice_envs.io import atomic_open, atomic_write_bytes, atomic_write_text, check_out_dir
from dice_envs.rules import (
    GAMES,
    ConfigError,
    FarkleGame,
    FarkleRules,
    RuleConfig,
    ScorecardGame,
    ScorecardRules,
    make_rules,
    new_game,
    rules_class,
)

from .base import Agent
from .registry import check_spec, load

__all__ = [
    "RESULTS_SCHEMA",
    "EvaluationResult",
    "GameRecord",
    "default_players",
    "derive_seeds",
    "evaluate",
    "mean_ci",
    "parse_rule_overrides",
    "play_game",
    "rate_agents",
    "replay",
    "rotations",
    "schedule",
    "wilson_interval",
    "write_outputs",
]

MAX_PLAYERS = 8
Z95 = 1.959963984540054


# ---------------------------------------------------------------------------- small helpers
def default_players(game: str | RuleConfig) -> int:
    """Seats per game when none are given: 2 for Farkle, 1 (solitaire) for the scorecard games.

    >>> default_players("farkle"), default_players("spiffel")
    (2, 1)
    """
    rules = make_rules(game)
    return 2 if isinstance(rules, FarkleRules) else 1


def parse_rule_overrides(items: Sequence[str] | None) -> dict[str, Any]:
    """Parse ``key=value`` strings (values read as YAML scalars; ``none`` means ``None``).

    >>> parse_rule_overrides(["target=5000", "bankruptcy=false", "max_turns=none"])
    {'target': 5000, 'bankruptcy': False, 'max_turns': None}
    """
    import yaml

    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = str(item).partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"rule override {item!r} is not of the form key=value")
        raw = raw.strip()
        out[key.strip()] = None if raw.lower() in ("none", "null", "~") else yaml.safe_load(raw)
    return out


def mean_ci(values: Sequence[float], z: float = Z95) -> tuple[float, tuple[float, float]]:
    """Mean and normal-approximation confidence interval ``mean ± z·s/√n``.

    >>> m, (lo, hi) = mean_ci([1, 2, 3])
    >>> m, round(lo, 3), round(hi, 3)
    (2.0, 0.868, 3.132)
    """
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        raise ValueError("mean_ci of no values")
    m = float(x.mean())
    half = z * float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else 0.0
    return m, (m - half, m + half)


def wilson_interval(wins: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a win rate ``wins / n`` (``wins`` may be fractional).

    >>> lo, hi = wilson_interval(80, 100)
    >>> round(lo, 3), round(hi, 3)
    (0.711, 0.867)
    """
    if n <= 0:
        raise ValueError(f"wilson_interval needs n >= 1, got {n}")
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / denom
    lo, hi = max(0.0, centre - half), min(1.0, centre + half)
    return min(lo, p), max(hi, p)  # exact at p = 0 or 1 despite rounding


def schedule(agents: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """The pairings of a run: each agent alone (solitaire) or every ``players``-combination.

    >>> schedule(["a", "b", "c"], 2)
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    """
    if players == 1:
        return [(a,) for a in agents]
    return list(itertools.combinations(agents, players))


def rotations(pairing: Sequence[str]) -> list[tuple[str, ...]]:
    """Every cyclic seat rotation of a pairing (each agent in each seat once).

    >>> rotations(("a", "b", "c"))
    [('a', 'b', 'c'), ('b', 'c', 'a'), ('c', 'a', 'b')]
    """
    k = len(pairing)
    return [tuple(pairing[(r + s) % k] for s in range(k)) for r in range(k)]


def _seed_int(ss: np.random.SeedSequence) -> int:
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))  # fits a signed int64


def derive_seeds(seed: int, pairing: int, deal: int, n_agents: int) -> tuple[int, tuple[int, ...]]:
    """``(dice_seed, agent_seeds)`` of one deal of one pairing.

    The dice seed depends on ``(seed, deal)`` only, so every pairing meets the same deals; the
    agent seeds (one per agent slot of the pairing, whatever seat it takes) on ``(seed, pairing,
    deal, slot)``.

    >>> derive_seeds(0, 0, 5, 2)[0] == derive_seeds(0, 3, 5, 2)[0]
    True
    """
    dice = _seed_int(np.random.SeedSequence(seed, spawn_key=(0, deal)))
    agent_seeds = tuple(
        _seed_int(np.random.SeedSequence(seed, spawn_key=(1, pairing, deal, slot)))
        for slot in range(n_agents)
    )
    return dice, agent_seeds


# ---------------------------------------------------------------------------- playing
@dataclass(frozen=True)
class GameRecord:
    """The outcome of one game (seat-indexed tuples)."""

    pairing: int
    deal: int
    rotation: int
    seed: int
    seats: tuple[str, ...]
    agent_seeds: tuple[int, ...]
    scores: tuple[int, ...]
    winners: tuple[int, ...]
    turns: tuple[int, ...]
    truncated: bool
    upper_bonus: tuple[bool, ...] = ()
    five_kind: tuple[bool, ...] = ()
    reached_target: tuple[bool, ...] = ()

    def win_shares(self) -> tuple[float, ...]:
        """Each seat's share of the win (1 / number of winners for a winner, else 0)."""
        share = 1.0 / len(self.winners)
        return tuple(share if s in self.winners else 0.0 for s in range(len(self.seats)))


def play_game(rules: RuleConfig, seat_agents: Sequence[Agent], seed: int) -> ScorecardGame | FarkleGame:
    """Play one game to its end; ``seat_agents[s]`` acts for seat ``s``. Returns the final state.

    Raises ``ValueError`` naming the agent and seat when an agent picks an illegal action.
    """
    game = new_game(rules, num_players=len(seat_agents), seed=seed)
    while not game.done:
        p = game.current_player
        mask = game.action_mask()
        action = seat_agents[p].act(encode(game, p), mask)
        try:
            game.apply(action)
        except ValueError as exc:
            raise ValueError(f"agent {seat_agents[p]!r} in seat {p}: {exc}") from exc
    return game


def _record(
    game: ScorecardGame | FarkleGame,
    pairing: int,
    deal: int,
    rotation: int,
    seed: int,
    seats: tuple[str, ...],
    agent_seeds: tuple[int, ...],
) -> GameRecord:
    n = game.num_players
    if isinstance(game, FarkleGame):
        return GameRecord(
            pairing, deal, rotation, seed, seats, agent_seeds,
            scores=tuple(game.totals()),
            winners=tuple(game.winners()),
            turns=tuple(game.turns),
            truncated=bool(game.truncated),
            reached_target=tuple(b >= game.rules.target for b in game.banked),
        )  # fmt: skip
    five = game.categories.index(game.rules.five_kind_box)
    return GameRecord(
        pairing, deal, rotation, seed, seats, agent_seeds,
        scores=tuple(game.totals()),
        winners=tuple(game.winners()),
        turns=(game.round,) * n,
        truncated=False,
        upper_bonus=tuple(bool(c.upper_bonus_paid) for c in game.cards),
        five_kind=tuple(c.boxes[five] == 50 for c in game.cards),
    )  # fmt: skip


#: Builds an agent: ``loader(spec, game=rules, num_players=K, seed=s)`` (default :func:`agents.load`).
Loader = Callable[..., Agent]

# Agents built in this process, by (loader, spec, rules, seats); reseeded before every game.
_AGENTS: dict[tuple[Loader, str, RuleConfig, int], Agent] = {}


def _agent(spec: str, rules: RuleConfig, players: int, seed: int, loader: Loader = load) -> Agent:
    key = (loader, spec, rules, players)
    agent = _AGENTS.get(key)
    if agent is None:
        agent = loader(spec, game=rules, num_players=players, seed=seed)
        _AGENTS[key] = agent
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset(seed)
        return agent
    return loader(spec, game=rules, num_players=players, seed=seed)  # no reset(): a fresh one per game


@dataclass(frozen=True)
class _Task:
    rules: RuleConfig
    players: int
    seed: int
    items: tuple[tuple[int, tuple[str, ...], int], ...]  # (pairing index, pairing, deal)
    loader: Loader = load


def _run_task(task: _Task) -> list[GameRecord]:
    out = []
    for pairing_index, pairing, deal in task.items:
        dice_seed, agent_seeds = derive_seeds(task.seed, pairing_index, deal, len(pairing))
        slot_seed = dict(zip(pairing, agent_seeds, strict=True))
        for r, seats in enumerate(rotations(pairing)):
            seat_agents = [
                _agent(spec, task.rules, task.players, slot_seed[spec], task.loader) for spec in seats
            ]
            game = play_game(task.rules, seat_agents, dice_seed)
            out.append(
                _record(game, pairing_index, deal, r, dice_seed, seats, tuple(slot_seed[s] for s in seats))
            )
    return out


def _init_worker() -> None:
    torch = sys.modules.get("torch")
    if torch is not None:  # pragma: no cover - only with torch-based agents
        torch.set_num_threads(1)


# ---------------------------------------------------------------------------- ratings
#: Elo-scale points per unit of the Bradley-Terry log-strength (400 / ln 10: 400 points = 10:1 odds).
ELO_SCALE = 400.0 / math.log(10.0)
#: Mean rating of the agents of a run (ratings are relative; only differences mean something).
ELO_MEAN = 1500.0
#: Bootstrap resamples for the rating intervals, and their fixed seed.
BOOTSTRAP_SAMPLES = 200
BOOTSTRAP_SEED = 20260101
#: Virtual drawn game between every two agents that met (a weak prior: finite ratings for an
#: agent that won or lost every game; symmetric, so it changes no order of a balanced schedule).
PRIOR_DRAWS = 1.0


def _canonical(records: Sequence[GameRecord]) -> list[GameRecord]:
    """The games in an order that depends on their content only (ratings never see play order)."""
    return sorted(records, key=lambda r: (r.seats, r.deal, r.rotation, r.seed, r.scores, r.winners))


def _pair_outcomes(records: Sequence[GameRecord], index: Mapping[str, int]) -> np.ndarray:
    """``C[g, i, j]``: how much agent ``i`` beat agent ``j`` in game ``g`` (1 win, 0.5 tie, 0 loss).

    A seat places by (shares the win, score): winners beat every other seat, two winners tie,
    among the others the higher score beats the lower. With two seats this is the win itself.
    """
    n = len(index)
    out = np.zeros((len(records), n, n))
    for g, rec in enumerate(records):
        key = [(s in rec.winners, rec.scores[s]) for s in range(len(rec.seats))]
        for a, sa in enumerate(rec.seats):
            for b, sb in enumerate(rec.seats):
                if a == b or sa == sb:
                    continue
                i, j = index[sa], index[sb]
                out[g, i, j] += 1.0 if key[a] > key[b] else 0.5 if key[a] == key[b] else 0.0
    return out


def bradley_terry(wins: np.ndarray, prior_draws: float = PRIOR_DRAWS, tol: float = 1e-10) -> np.ndarray:
    """Maximum-likelihood Bradley-Terry log-strengths (mean 0) from ``wins[i, j]``.

    ``wins[i, j]``: (fractional) wins of ``i`` over ``j``. Solved by the MM iteration of Hunter
    (2004), ``p_i = W_i / sum_j N_ij / (p_i + p_j)``, with ``prior_draws`` virtual drawn games
    between every two agents that met. Agents that never met anyone get 0.

    >>> r = bradley_terry(np.array([[0.0, 30.0], [10.0, 0.0]]), prior_draws=0.0)
    >>> round(float(r[0] - r[1]), 4) == round(math.log(3.0), 4)
    True
    """
    w = np.asarray(wins, dtype=np.float64)
    games = w + w.T
    met = games > 0
    w = w + 0.5 * prior_draws * met
    games = w + w.T
    total = w.sum(axis=1)
    p = np.ones(len(w))
    active = total > 0
    for _ in range(10000):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(active, total / np.where(denom > 0, denom, 1.0), 1.0)
        new /= np.exp(np.log(new[active]).mean()) if active.any() else 1.0
        if np.max(np.abs(np.log(new) - np.log(p))) < tol:
            p = new
            break
        p = new
    r = np.log(p)
    return r - r.mean()


def rate_agents(
    records: Sequence[GameRecord],
    agents: Sequence[str],
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> dict[str, dict[str, Any]]:
    """Bradley-Terry (Elo-scale) ratings fitted to all games at once, with bootstrap intervals.

    The fit uses every pairwise result of every game (:func:`_pair_outcomes`), so it does not
    depend on the order the games were played or listed in; the bootstrap resamples games
    (``samples`` times, fixed ``seed``) from the games in a canonical order, so its interval does
    not either. Returns ``{spec: {"rating", "ci95": [lo, hi], "sd"}}`` on the Elo scale (400
    points = 10:1 odds; the agents' mean is :data:`ELO_MEAN`). In a balanced round robin (every
    pairing the same number of games, as :func:`evaluate` plays), the order of the ratings is
    the order of the agents' total wins.
    """
    index = {a: i for i, a in enumerate(agents)}
    recs = [r for r in _canonical(records) if len(r.seats) >= 2]
    if not recs:
        return {a: {"rating": ELO_MEAN, "ci95": [ELO_MEAN, ELO_MEAN], "sd": 0.0} for a in agents}
    outcomes = _pair_outcomes(recs, index)
    point = bradley_terry(outcomes.sum(axis=0))
    rng = np.random.default_rng(seed)
    boot = np.empty((samples, len(agents)))
    for b in range(samples):
        counts = rng.multinomial(len(recs), np.full(len(recs), 1.0 / len(recs)))
        boot[b] = bradley_terry(np.tensordot(counts, outcomes, axes=1))
    elo = ELO_MEAN + ELO_SCALE * point
    belo = ELO_MEAN + ELO_SCALE * boot
    lo, hi = np.percentile(belo, [2.5, 97.5], axis=0) if samples else (elo, elo)
    sd = belo.std(axis=0, ddof=1) if samples > 1 else np.zeros(len(agents))
    return {
        a: {"rating": float(elo[i]), "ci95": [float(lo[i]), float(hi[i])], "sd": float(sd[i])}
        for a, i in index.items()
    }


# ---------------------------------------------------------------------------- the run
@dataclass
class EvaluationResult:
    """Every game of a run plus what is needed to summarise it (compare with ``==``)."""

    game: str
    players: int
    games: int
    seed: int
    rules: RuleConfig
    agents: list[str]
    records: list[GameRecord]
    optimum: float | None = None
    pairings: list[tuple[str, ...]] = field(default_factory=list)
    loader: Loader = field(default=load, compare=False, repr=False)

    @property
    def solitaire(self) -> bool:
        """True for one-seat runs."""
        return self.players == 1

    def _agent_stats(self, spec: str, ratings: Mapping[str, Mapping[str, float]] | None) -> dict[str, Any]:
        scores: list[int] = []
        wins = 0.0
        bonus: list[bool] = []
        five: list[bool] = []
        reached: list[bool] = []
        turns: list[int] = []
        turns_to_target: list[int] = []
        truncated = 0
        for rec in self.records:
            for s, seat_spec in enumerate(rec.seats):
                if seat_spec != spec:
                    continue
                scores.append(rec.scores[s])
                wins += rec.win_shares()[s]
                turns.append(rec.turns[s])
                truncated += rec.truncated
                if rec.upper_bonus:
                    bonus.append(rec.upper_bonus[s])
                    five.append(rec.five_kind[s])
                if rec.reached_target:
                    reached.append(rec.reached_target[s])
                    if rec.reached_target[s]:
                        turns_to_target.append(rec.turns[s])
        n = len(scores)
        mean, ci = mean_ci(scores)
        x = np.asarray(scores, dtype=np.float64)
        stats: dict[str, Any] = {
            "games": n,
            "mean_score": mean,
            "ci95": [ci[0], ci[1]],
            "median": float(np.median(x)),
            "std": float(x.std(ddof=1)) if n > 1 else 0.0,
            "min": int(x.min()),
            "max": int(x.max()),
            "win_rate": None,
            "win_rate_ci95": None,
            "rating": None,
            "rating_ci95": None,
            "rating_sd": None,
        }
        if isinstance(self.rules, ScorecardRules):
            stats["upper_bonus_rate"] = float(np.mean(bonus))
            stats["five_kind_rate"] = float(np.mean(five))
            stats["gap_to_optimum"] = None if self.optimum is None else float(self.optimum - mean)
        else:
            stats["target_rate"] = float(np.mean(reached))
            stats["mean_turns"] = float(np.mean(turns))
            stats["mean_turns_to_target"] = float(np.mean(turns_to_target)) if turns_to_target else None
            stats["truncated_rate"] = truncated / n
        if not self.solitaire:
            lo, hi = wilson_interval(wins, n)
            stats["wins"] = wins
            stats["win_rate"] = wins / n
            stats["win_rate_ci95"] = [lo, hi]
            if ratings is not None:
                stats["rating"] = ratings[spec]["rating"]
                stats["rating_ci95"] = ratings[spec]["ci95"]
                stats["rating_sd"] = ratings[spec]["sd"]
        return stats

    def _pairing_stats(self, index: int, pairing: tuple[str, ...]) -> dict[str, Any]:
        recs = [r for r in self.records if r.pairing == index]
        k = len(pairing)
        wins = [0.0] * k
        scores: list[list[int]] = [[] for _ in range(k)]
        seat_games = [[0] * k for _ in range(k)]
        shared = 0
        for rec in recs:
            shares = rec.win_shares()
            shared += len(rec.winners) > 1
            for s, spec in enumerate(rec.seats):
                i = pairing.index(spec)
                wins[i] += shares[s]
                scores[i].append(rec.scores[s])
                seat_games[i][s] += 1
        n = len(recs)
        return {
            "agents": list(pairing),
            "games": n,
            "deals": self.games,
            "wins": wins,
            "win_rate": [w / n for w in wins],
            "ci95": [list(wilson_interval(w, n)) for w in wins],
            "mean_score": [float(np.mean(s)) for s in scores],
            "shared_wins": shared,
            "seat_games": seat_games,
        }

    def win_matrix(self) -> np.ndarray:
        """``M[i, j]``: win rate of agent ``i`` over the games where agent ``j`` sat too (NaN: none)."""
        idx = {a: i for i, a in enumerate(self.agents)}
        n = len(self.agents)
        wins = np.zeros((n, n))
        games = np.zeros((n, n))
        for rec in self.records:
            shares = rec.win_shares()
            for s, a in enumerate(rec.seats):
                for b in rec.seats:
                    if a != b:
                        wins[idx[a], idx[b]] += shares[s]
                        games[idx[a], idx[b]] += 1
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(games > 0, wins / np.maximum(games, 1), np.nan)

    def summary(self) -> dict[str, Any]:
        """The ``results.json`` content (see :data:`RESULTS_SCHEMA`)."""
        ratings = None if self.solitaire else rate_agents(self.records, self.agents)
        return {
            "game": self.game,
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "optimum": self.optimum,
            "total_games": len(self.records),
            "agents": {a: self._agent_stats(a, ratings) for a in self.agents},
            "pairings": [self._pairing_stats(i, p) for i, p in enumerate(self.pairings)]
            if not self.solitaire
            else [],
        }


def _optimum(rules: RuleConfig) -> float | None:
    """Exact solitaire optimum from ``agents.solver`` for scorecard games, else ``None``."""
    if not isinstance(rules, ScorecardRules):
        return None
    try:
        from . import solver  # type: ignore[attr-defined]
    except ImportError:
        return None
    expected = getattr(solver, "expected_score", None)
    if expected is None:
        return None
    try:
        return float(expected(rules.game, **rules.to_dict()))
    except (ConfigError, NotImplementedError):
        return None


def evaluate(
    game: str | RuleConfig,
    agents: Sequence[str],
    games: int,
    players: int | None = None,
    seed: int = 0,
    rules: Mapping[str, Any] | None = None,
    workers: int | None = None,
    progress: bool = False,
    optimum: bool = True,
    on_progress: Callable[[int], None] | None = None,
    loader: Loader = load,
    backend: str = "local",
    address: str | None = None,
) -> EvaluationResult:
    """Play a solitaire series (``players=1``) or a seat-balanced tournament and return it.

    ``games``: games per agent (solitaire) or deals per pairing (tables; each deal is played in
    every seat rotation, so a pairing of ``K`` plays ``K·games`` games). ``rules``: rule
    parameter overrides. ``workers``: processes (default ``os.cpu_count()``; 1 runs inline).
    ``optimum``: look up the exact solitaire optimum (scorecard games) for the gap column.
    ``loader``: builds agents from specs (default :func:`agents.load`; a module-level function,
    so worker processes can use it). ``on_progress(n)`` is called as ``n`` more games finish.
    ``backend``: ``"local"`` (this machine's process pool) or ``"ray"`` (the same tasks on Ray,
    :mod:`agents.ray_eval`; ``address`` names an existing cluster): equal results either way.
    Raises :class:`~dice_envs.rules.ConfigError` naming the bad game, agent spec, seat count or
    rule parameter.
    """
    if backend not in ("local", "ray"):
        raise ConfigError(f"backend must be 'local' or 'ray', got {backend!r}")
    base = make_rules(game) if isinstance(game, RuleConfig) else rules_class(game)()
    rule_cfg = base.replace(**dict(rules)) if rules else base
    name = rule_cfg.game
    specs = [str(a) for a in agents]
    if not specs:
        raise ConfigError("no agents given; give at least one agent spec (e.g. random)")
    if loader is load:
        for spec in specs:  # a typo is answered with the known specs, before any count check
            check_spec(spec, rule_cfg)
    dupes = sorted({a for a in specs if specs.count(a) > 1})
    if dupes:
        raise ConfigError(f"agent specs must be distinct, repeated: {', '.join(dupes)}")
    k = default_players(rule_cfg) if players is None else players
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_PLAYERS:
        raise ConfigError(f"players must be an integer in [1, {MAX_PLAYERS}], got {players!r}")
    if k > 1 and len(specs) < k:
        raise ConfigError(f"{k}-player tables need at least {k} distinct agents, got {len(specs)}: {specs}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ConfigError(f"games must be a positive integer, got {games!r}")
    n_workers = (os.cpu_count() or 1) if workers is None else int(workers)
    if n_workers < 1:
        raise ConfigError(f"workers must be at least 1, got {workers!r}")
    for spec in specs:  # validate every spec up front (and warm the cache a forked pool inherits)
        _agent(spec, rule_cfg, k, 0, loader)

    pairings = schedule(specs, k)
    items = [(i, p, d) for i, p in enumerate(pairings) for d in range(games)]
    total = len(items) * (k if k > 1 else 1)
    chunk = max(1, math.ceil(len(items) / (n_workers * 8))) if n_workers > 1 else max(1, len(items) // 50)
    tasks = [
        _Task(rule_cfg, k, int(seed), tuple(items[i : i + chunk]), loader)
        for i in range(0, len(items), chunk)
    ]

    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=total, desc=f"{name} {k}p", unit="game", dynamic_ncols=True)

    def done(n: int) -> None:
        if bar is not None:
            bar.update(n)
        if on_progress is not None:
            on_progress(n)

    results: dict[int, list[GameRecord]] = {}
    try:
        if backend == "ray":
            from .ray_eval import run_tasks

            for i, recs in run_tasks(tasks, address=address, workers=workers):
                results[i] = recs
                done(len(recs))
        elif n_workers == 1 or len(tasks) == 1:
            for i, task in enumerate(tasks):
                results[i] = _run_task(task)
                done(len(results[i]))
        else:
            import multiprocessing as mp

            ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
            with ProcessPoolExecutor(max_workers=n_workers, mp_context=ctx, initializer=_init_worker) as ex:
                futures = {ex.submit(_run_task, t): i for i, t in enumerate(tasks)}
                for fut in as_completed(futures):
                    results[futures[fut]] = fut.result()
                    done(len(results[futures[fut]]))
    finally:
        if bar is not None:
            bar.close()
    records = [r for i in range(len(tasks)) for r in results[i]]
    records.sort(key=lambda r: (r.pairing, r.deal, r.rotation))
    return EvaluationResult(
        game=name,
        players=k,
        games=games,
        seed=int(seed),
        rules=rule_cfg,
        agents=specs,
        records=records,
        optimum=_optimum(rule_cfg) if optimum and k == 1 else None,
        pairings=pairings,
        loader=loader,
    )


def replay(result: EvaluationResult, record: GameRecord) -> ScorecardGame | FarkleGame:
    """Play a recorded game again from its seeds (fresh agents); the final state must match."""
    seat_agents = [
        result.loader(spec, game=result.rules, num_players=result.players, seed=s)
        for spec, s in zip(record.seats, record.agent_seeds, strict=True)
    ]
    for agent, s in zip(seat_agents, record.agent_seeds, strict=True):
        reset = getattr(agent, "reset", None)
        if callable(reset):
            reset(s)
    return play_game(result.rules, seat_agents, record.seed)


# ---------------------------------------------------------------------------- outputs
_NUM = {"type": "number"}
_NUM_OR_NULL = {"type": ["number", "null"]}
_PAIR = {"type": "array", "items": _NUM, "minItems": 2, "maxItems": 2}

#: JSON schema of ``results.json``.
RESULTS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["game", "players", "games", "seed", "rules", "optimum", "total_games", "agents", "pairings"],
    "properties": {
        "game": {"enum": list(GAMES)},
        "players": {"type": "integer", "minimum": 1, "maximum": MAX_PLAYERS},
        "games": {"type": "integer", "minimum": 1},
        "seed": {"type": "integer"},
        "rules": {"type": "object"},
        "optimum": _NUM_OR_NULL,
        "total_games": {"type": "integer", "minimum": 1},
        "agents": {
            "type": "object",
            "minProperties": 1,
            "additionalProperties": {
                "type": "object",
                "required": ["games", "mean_score", "ci95", "median", "std", "win_rate", "rating"],
                "properties": {
                    "games": {"type": "integer", "minimum": 1},
                    "mean_score": _NUM,
                    "ci95": _PAIR,
                    "median": _NUM,
                    "std": {"type": "number", "minimum": 0},
                    "win_rate": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                    "win_rate_ci95": {"oneOf": [_PAIR, {"type": "null"}]},
                    "rating": _NUM_OR_NULL,
                    "rating_ci95": {"oneOf": [_PAIR, {"type": "null"}]},
                    "rating_sd": _NUM_OR_NULL,
                    "upper_bonus_rate": {"type": "number", "minimum": 0, "maximum": 1},
                    "five_kind_rate": {"type": "number", "minimum": 0, "maximum": 1},
                    "gap_to_optimum": _NUM_OR_NULL,
                    "target_rate": {"type": "number", "minimum": 0, "maximum": 1},
                    "mean_turns": _NUM,
                    "mean_turns_to_target": _NUM_OR_NULL,
                },
            },
        },
        "pairings": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["agents", "games", "wins", "win_rate", "ci95"],
                "properties": {
                    "agents": {"type": "array", "items": {"type": "string"}, "minItems": 2},
                    "games": {"type": "integer", "minimum": 1},
                    "wins": {"type": "array", "items": _NUM},
                    "win_rate": {"type": "array", "items": {"type": "number", "minimum": 0, "maximum": 1}},
                    "ci95": {"type": "array", "items": _PAIR},
                    "seat_games": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
                },
            },
        },
    },
}


#: The files :func:`write_outputs` may write into its folder.
OUTPUT_FILES = ("results.json", "games.csv", "scores.png", "win_matrix.png", "exact.json")


def write_outputs(
    result: EvaluationResult, out_dir: str | Path, plots: bool = True, overwrite: bool = False
) -> dict[str, Path]:
    """Write ``results.json``, ``games.csv`` and (``plots``) ``scores.png`` / ``win_matrix.png``.

    ``games.csv`` has one row per game: pairing, game (deal) index, rotation, seat order, the dice
    seed, each seat's agent, score, turns and agent seed, the winners and the truncation flag —
    enough to replay any game (:func:`replay`).

    Returns the paths written, by kind. The win-rate matrix is drawn for multi-player runs only.
    Every file is written atomically (:mod:`dice_envs.io`); an existing one is a
    :class:`FileExistsError` unless ``overwrite`` (checked for all files before any is written).
    """
    out = Path(out_dir)
    if not overwrite:
        check_out_dir(out, force=False, files=OUTPUT_FILES)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    summary = result.summary()
    paths["results"] = out / "results.json"
    atomic_write_text(paths["results"], json.dumps(summary, indent=2) + "\n", overwrite=overwrite)

    paths["games"] = out / "games.csv"
    k = result.players
    with atomic_open(paths["games"], "w", overwrite=overwrite, newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        head = ["pairing", "game", "rotation", "seat_order", "seed"]
        for s in range(k):
            head += [f"seat{s}_agent", f"seat{s}_score", f"seat{s}_turns", f"seat{s}_agent_seed"]
        w.writerow([*head, "winners", "truncated"])
        for rec in result.records:
            row: list[Any] = [rec.pairing, rec.deal, rec.rotation, "|".join(rec.seats), rec.seed]
            for s in range(k):
                row += [rec.seats[s], rec.scores[s], rec.turns[s], rec.agent_seeds[s]]
            w.writerow([*row, "|".join(rec.seats[s] for s in rec.winners), int(rec.truncated)])

    if plots:
        paths["scores"] = _plot_scores(result, out / "scores.png", overwrite)
        if not result.solitaire:
            paths["win_matrix"] = _plot_win_matrix(result, out / "win_matrix.png", overwrite)
    return paths


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save_figure(fig: Any, path: Path, overwrite: bool) -> Path:
    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format="png")
    return atomic_write_bytes(path, buf.getvalue(), overwrite=overwrite)


def _plot_scores(result: EvaluationResult, path: Path, overwrite: bool = False) -> Path:
    plt = _pyplot()
    per_agent = {a: [rec.scores[s] for rec in result.records for s, b in enumerate(rec.seats) if b == a]
                 for a in result.agents}  # fmt: skip
    lo = min(min(v) for v in per_agent.values())
    hi = max(max(v) for v in per_agent.values())
    bins = np.linspace(lo, hi + 1, 41) if hi > lo else 10
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for a, v in per_agent.items():
        line = ax.hist(v, bins=bins, histtype="step", linewidth=1.6, label=f"{a} (mean {np.mean(v):.1f})")
        ax.axvline(float(np.mean(v)), color=line[2][0].get_edgecolor(), linestyle="--", linewidth=1)
    if result.optimum is not None:
        ax.axvline(result.optimum, color="black", linewidth=1, label=f"optimum {result.optimum:.1f}")
    mode = "solitaire" if result.solitaire else f"{result.players}-player"
    n_games = len(next(iter(per_agent.values())))
    ax.set_title(f"{result.game} {mode}: score distribution ({n_games} games per agent)")
    ax.set_xlabel("final score")
    ax.set_ylabel("games")
    ax.legend(fontsize=8)
    fig.tight_layout()
    _save_figure(fig, path, overwrite)
    plt.close(fig)
    return path


def _plot_win_matrix(result: EvaluationResult, path: Path, overwrite: bool = False) -> Path:
    plt = _pyplot()
    m = result.win_matrix()
    n = len(result.agents)
    fig, ax = plt.subplots(figsize=(1.2 * n + 3, 1.0 * n + 2))
    im = ax.imshow(m, vmin=0, vmax=1, cmap="RdYlGn")
    for i in range(n):
        for j in range(n):
            if not np.isnan(m[i, j]):
                ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=9)
    ax.set_xticks(range(n), result.agents, rotation=30, ha="right")
    ax.set_yticks(range(n), result.agents)
    ax.set_xlabel("opponent")
    ax.set_ylabel("agent")
    ax.set_title(f"{result.game} {result.players}-player win rate (row vs column)")
    fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    _save_figure(fig, path, overwrite)
    plt.close(fig)
    return path
