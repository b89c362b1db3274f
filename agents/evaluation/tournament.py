"""Tournaments: solitaire series and seat-balanced round robins, played by the game runner.

:func:`evaluate` splits a run into tasks — one pairing, up to :data:`DEALS_PER_TASK` deals, each
deal in every cyclic seat rotation — and plays each task as one :func:`~.play.run_games` batch,
inline, on a process pool or on Ray (:mod:`agents.evaluation.pool`). The tasks do not depend on the
number of workers and the results are put back in a fixed order, so a run is identical for a
seed whatever the workers or the backend.

Seeds: a deal's dice seed depends only on ``(seed, deal)`` — every pairing and every agent meets
the same deals (common random numbers) — and each agent's seed on ``(seed, pairing, first deal
of the task, agent slot)``, both from :func:`~.play.derive_seeds`. Agents are built once per
process and reseeded with ``reset(seed)`` before every task.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.base import Agent
from agents.evaluation.ratings import rate_agents
from agents.evaluation.records import GameRecord, agent_stats, game_record, pairing_stats, win_matrix
from agents.evaluation.runner import MAX_PLAYERS, derive_seeds, dice_seed, rotations, run_games, schedule
from agents.registry import check_spec, load
from dice_envs.checks import check_seed_arg
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.rules import ConfigError, FarkleRules, RuleConfig, ScorecardRules, make_rules, rules_class
from dice_envs.rules.config import yaml_value

__all__ = [
    "DEALS_PER_TASK",
    "EvaluationResult",
    "default_players",
    "evaluate",
    "parse_rule_overrides",
    "replay",
]

#: Deals of one pairing played as one batch (one task of the pool).
DEALS_PER_TASK = 128


def default_players(game: str | RuleConfig) -> int:
    """Seats per game when none are given: 2 for Farkle, 1 (solitaire) for the scorecard games.

    >>> default_players("farkle"), default_players("spiffel")
    (2, 1)
    """
    return 2 if isinstance(make_rules(game), FarkleRules) else 1


def parse_rule_overrides(items: Sequence[str] | None) -> dict[str, Any]:
    """Parse ``key=value`` strings (values read as YAML as config files are, :func:`yaml_value`;
    ``none`` means ``None``).

    >>> parse_rule_overrides(["target=5000", "bankruptcy=false", "max_turns=none"])
    {'target': 5000, 'bankruptcy': False, 'max_turns': None}
    """
    import yaml

    out: dict[str, Any] = {}
    for item in items or ():
        key, sep, raw = str(item).partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"rule override {item!r} is not of the form key=value, e.g. target=5000")
        raw = raw.strip()
        try:
            out[key.strip()] = None if raw.lower() in ("none", "null", "~") else yaml_value(raw)
        except yaml.YAMLError:
            raise ConfigError(f"rule override {item!r}: the value is not valid YAML") from None
    return out


# ---------------------------------------------------------------------------- tasks
#: Builds an agent: ``loader(spec, game=rules, num_players=K, seed=s)`` (default :func:`agents.load`).
Loader = Callable[..., Agent]

# Agents built in this process, by (loader, spec, rules, seats); reseeded before every task.
_AGENTS: dict[tuple[Loader, str, RuleConfig, int], Agent] = {}


def _agent(
    spec: str, rules: RuleConfig, players: int, seed: int, loader: Loader = load, fresh: bool = False
) -> Agent:
    key = (loader, spec, rules, players)
    agent = None if fresh else _AGENTS.get(key)
    if agent is None:
        agent = loader(spec, game=rules, num_players=players, seed=seed)
        if not fresh:
            _AGENTS[key] = agent
    reset = getattr(agent, "reset", None)
    if callable(reset):
        reset(seed)
        return agent
    return loader(spec, game=rules, num_players=players, seed=seed)  # no reset(): a fresh one per task


@dataclass(frozen=True)
class _Task:
    rules: RuleConfig
    players: int
    seed: int
    pairing_index: int
    pairing: tuple[str, ...]
    deals: tuple[int, int]  # [start, stop)
    loader: Loader = load


def _play_task(
    task: _Task, fresh: bool = False
) -> tuple[list[tuple[int, int, int, tuple[str, ...]]], Any, tuple[int, ...]]:
    """Play a task: its game keys ``(deal, rotation, dice seed, seats)``, the runner's outcomes
    (with final states) and the agent seeds by pairing slot."""
    start, stop = task.deals
    _, agent_seeds = derive_seeds(task.seed, task.pairing_index, start, len(task.pairing))
    agents = [
        _agent(spec, task.rules, task.players, s, task.loader, fresh)
        for spec, s in zip(task.pairing, agent_seeds, strict=True)
    ]
    keys, lineups = [], []
    for deal in range(start, stop):
        seed = dice_seed(task.seed, deal)
        for r, seats in enumerate(rotations(task.pairing)):
            keys.append((deal, r, seed, seats))
            lineups.append([task.pairing.index(spec) for spec in seats])
    out = run_games(task.rules, agents, lineups, [key[2] for key in keys], keep_states=True)
    return keys, out, agent_seeds


def _run_task(task: _Task) -> list[GameRecord]:
    keys, out, agent_seeds = _play_task(task)
    slot_seed = dict(zip(task.pairing, agent_seeds, strict=True))
    return [
        game_record(state, task.pairing_index, deal, r, seed, seats, tuple(slot_seed[s] for s in seats))
        for (deal, r, seed, seats), state in zip(keys, out.states, strict=True)
    ]


def _init_worker() -> None:
    """Set up a worker before it plays (the pool's initializer; on Ray before each task): one torch
    thread per worker, as the workers already share the cores."""
    torch = sys.modules.get("torch")
    if torch is not None:  # pragma: no cover - only with torch-based agents
        torch.set_num_threads(1)


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

    def win_matrix(self) -> np.ndarray:
        """``M[i, j]``: win rate of agent ``i`` over the games where agent ``j`` sat too (NaN: none)."""
        return win_matrix(self.records, self.agents)

    def summary(self) -> dict[str, Any]:
        """The ``results.json`` content (see :data:`~.report.RESULTS_SCHEMA`)."""
        ratings = None if self.solitaire else rate_agents(self.records, self.agents)
        pairings = [
            pairing_stats([r for r in self.records if r.pairing == i], p, self.games)
            for i, p in enumerate(self.pairings)
        ]
        return {
            "game": self.game,
            "players": self.players,
            "games": self.games,
            "seed": self.seed,
            "rules": self.rules.to_dict(),
            "optimum": self.optimum,
            "total_games": len(self.records),
            "agents": {
                a: agent_stats(self.records, a, self.rules, self.optimum, ratings) for a in self.agents
            },
            "pairings": [] if self.solitaire else pairings,
        }


def _optimum(rules: RuleConfig) -> float | None:
    """Exact solitaire optimum from ``agents.solver`` for scorecard games, else ``None``."""
    if not isinstance(rules, ScorecardRules):
        return None
    try:
        from agents.solver import expected_score
    except ImportError:
        return None
    try:
        return float(expected_score(rules.game, **rules.to_dict()))
    except (ConfigError, NotImplementedError):
        return None


def _check(
    game: str | RuleConfig,
    agents: Sequence[str],
    games: int,
    players: int | None,
    rules: Mapping[str, Any] | None,
    workers: int | None,
    loader: Loader,
) -> tuple[RuleConfig, list[str], int, int]:
    """The validated ``(rules, specs, players, workers)`` of :func:`evaluate` (``ConfigError`` naming
    the bad value otherwise)."""
    base = make_rules(game) if isinstance(game, RuleConfig) else rules_class(game)()
    rule_cfg = base.replace(**dict(rules)) if rules else base
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
    return rule_cfg, specs, k, n_workers


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
    :mod:`agents.evaluation.pool`; ``address`` names an existing cluster): equal results either way.
    Raises :class:`~dice_envs.rules.ConfigError` naming the bad game, agent spec, seat count, seed
    or rule parameter.
    """
    if backend not in ("local", "ray"):
        raise ConfigError(f"backend must be 'local' or 'ray', got {backend!r}")
    seed = check_seed_arg(seed, none=False)
    rule_cfg, specs, k, n_workers = _check(game, agents, games, players, rules, workers, loader)
    for spec in specs:  # validate every spec up front (and warm the cache a forked pool inherits)
        _agent(spec, rule_cfg, k, 0, loader)
    pairings = schedule(specs, k)
    tasks = [
        _Task(rule_cfg, k, int(seed), i, p, (d, min(d + DEALS_PER_TASK, games)), loader)
        for i, p in enumerate(pairings)
        for d in range(0, games, DEALS_PER_TASK)
    ]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(
            total=len(pairings) * games * k, desc=f"{rule_cfg.game} {k}p", unit="game", dynamic_ncols=True
        )

    results: dict[int, list[GameRecord]] = {}

    def done(i: int, recs: list[GameRecord]) -> None:
        results[i] = recs
        if bar is not None:
            bar.update(len(recs))
        if on_progress is not None:
            on_progress(len(recs))

    try:
        if backend == "ray":
            from agents.evaluation.pool import run_tasks

            runs = run_tasks(tasks, _run_task, init=_init_worker, address=address, workers=workers)
            for i, recs in runs:
                done(i, recs)
        elif n_workers == 1 or len(tasks) == 1:
            for i, task in enumerate(tasks):
                done(i, _run_task(task))
        else:
            import multiprocessing as mp

            ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
            with ProcessPoolExecutor(
                max_workers=min(n_workers, len(tasks)), mp_context=ctx, initializer=_init_worker
            ) as ex:
                futures = {ex.submit(_run_task, t): i for i, t in enumerate(tasks)}
                for fut in as_completed(futures):
                    done(futures[fut], fut.result())
    finally:
        if bar is not None:
            bar.close()
    records = [r for i in range(len(tasks)) for r in results[i]]
    records.sort(key=lambda r: (r.pairing, r.deal, r.rotation))
    return EvaluationResult(
        game=rule_cfg.game,
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
    """Play a recorded game again (its task, with fresh agents) and return its final state."""
    start = record.deal - record.deal % DEALS_PER_TASK
    task = _Task(
        result.rules, result.players, result.seed, record.pairing, result.pairings[record.pairing],
        (start, min(start + DEALS_PER_TASK, result.games)), result.loader,
    )  # fmt: skip
    keys, out, _ = _play_task(task, fresh=True)
    return out.states[keys.index((record.deal, record.rotation, record.seed, record.seats))]
