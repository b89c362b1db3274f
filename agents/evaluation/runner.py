"""The game runner: every game this project plays for a figure is played by :func:`run_games`.

:func:`run_games` plays ``G`` games in lockstep on the batched engine: at every step each agent
decides all the games where it is to move with one ``act_batch`` call, and one engine step moves
every game; a finished game's slot starts the next game. ``lineups[g, s]`` says which agent sits in
seat ``s`` of game ``g`` (:func:`balanced_lineups` builds seat-balanced ones).

Dice: game ``g`` throws the dice of :class:`SeededDice` for ``dice_seeds[g]`` — its ``k``-th die
depends on that seed and ``k`` only, never on the batch, so two games with the same seed (one deal
played in every seat order, or by every agent) meet the same dice (common random numbers). The
agents are reseeded once before the run; with the same inputs a run repeats exactly.

>>> from agents import load
>>> from dice_envs.rules import make_rules
>>> rules = make_rules("farkle", target=2000)
>>> seats = [load(s, game=rules, num_players=2) for s in ("heuristic", "threshold:400")]
>>> lineups, seeds = balanced_lineups(2, 6), [7, 7, 8, 8, 9, 9]  # three deals, both seat orders
>>> out = run_games(rules, seats, lineups, seeds)
>>> out.scores.shape, bool(out.winners.any(axis=1).all())
((6, 2), True)
>>> np.array_equal(out.scores, run_games(rules, seats, lineups, seeds, width=2).scores)
True

Agents that draw random numbers share one generator over the batch, so their games depend on the
``width`` too (and repeat exactly for the same ``agent_seeds`` and ``width``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import Agent
from dice_envs.checks import first_illegal
from dice_envs.engine import FarkleGame, ScorecardGame
from dice_envs.opponents import batch_actions
from dice_envs.rules import ConfigError, RuleConfig
from dice_envs.vector import make_engine

__all__ = [
    "MAX_PLAYERS",
    "Outcomes",
    "SeededDice",
    "balanced_lineups",
    "batch_actions",
    "derive_seeds",
    "dice_seed",
    "play_game",
    "rotations",
    "run_games",
    "schedule",
]

#: Seats per game at most (the engines' limit).
MAX_PLAYERS = 8
#: Games played side by side by default (slots of the batched engine).
DEFAULT_WIDTH = 1024

_U = np.uint64
_GOLDEN = _U(0x9E3779B97F4A7C15)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser on a ``uint64`` array (wrapping arithmetic)."""
    x = (x ^ (x >> _U(30))) * _U(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> _U(27))) * _U(0x94D049BB133111EB)
    return x ^ (x >> _U(31))


class SeededDice:
    """A dice stream (:class:`dice_envs.vector.DiceStream`) with one seed per engine slot.

    Die ``k`` (counted from 0 since :meth:`start`) of the game in slot ``i`` shows face
    ``1 + mix(mix(seed_i) + k·φ) mod 6`` (SplitMix64), so a game's dice depend on its seed only.

    >>> d = SeededDice(2)
    >>> d.start(np.array([0, 1]), [5, 5])
    >>> a = d.codes(np.array([0, 1]), 5)
    >>> bool(a[0] == a[1])
    True
    """

    def __init__(self, slots: int) -> None:
        self.key = np.zeros(slots, dtype=np.uint64)
        self.pos = np.zeros(slots, dtype=np.uint64)

    def start(self, slots: np.ndarray, seeds: Sequence[int] | np.ndarray) -> None:
        """Slots ``slots`` begin new games with dice seeds ``seeds``."""
        s = np.asarray(seeds, dtype=np.int64).astype(np.uint64)
        self.key[slots] = _mix(s)
        self.pos[slots] = 0

    def codes(self, games: np.ndarray, counts: np.ndarray | int) -> np.ndarray:
        """Face codes (see :mod:`dice_envs.engine.dice`) of ``counts`` dice for each slot of ``games``."""
        games = np.asarray(games, dtype=np.int64)
        counts = np.broadcast_to(np.asarray(counts, dtype=np.int64), games.shape)
        k = self.pos[games][:, None] + np.arange(6, dtype=np.uint64)
        faces = (_mix(self.key[games][:, None] + k * _GOLDEN) % _U(6)).astype(np.int64)
        used = np.arange(6) < counts[:, None]
        self.pos[games] += counts.astype(np.uint64)
        return (faces * 6 ** np.arange(6, dtype=np.int64) * used).sum(axis=1)


# ---------------------------------------------------------------------------- lineups and seeds
def schedule(agents: Sequence[str], players: int) -> list[tuple[str, ...]]:
    """The pairings of a run: each agent alone (solitaire) or every ``players``-combination.

    >>> schedule(["a", "b", "c"], 2)
    [('a', 'b'), ('a', 'c'), ('b', 'c')]
    """
    if players == 1:
        return [(a,) for a in agents]
    return list(itertools.combinations(agents, players))


def rotations(pairing: Sequence[Any]) -> list[tuple[Any, ...]]:
    """Every cyclic seat rotation of a pairing (each agent in each seat once).

    >>> rotations(("a", "b", "c"))
    [('a', 'b', 'c'), ('b', 'c', 'a'), ('c', 'a', 'b')]
    """
    k = len(pairing)
    return [tuple(pairing[(r + s) % k] for s in range(k)) for r in range(k)]


def balanced_lineups(players: int, games: int) -> np.ndarray:
    """``(games, players)`` agent indices: game ``g`` seats rotation ``g mod players`` of
    ``0..players-1`` (:func:`rotations`), so each agent sits in each seat equally often.

    >>> balanced_lineups(2, 3).tolist()
    [[0, 1], [1, 0], [0, 1]]
    """
    rot = np.array(rotations(range(players)), dtype=np.int64)
    return rot[np.arange(games) % players]


def _seed_int(ss: np.random.SeedSequence) -> int:
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))  # fits a signed int64


def dice_seed(seed: int, deal: int) -> int:
    """The dice seed of deal ``deal`` of a run seeded ``seed`` (:class:`numpy.random.SeedSequence`).

    >>> dice_seed(0, 1) != dice_seed(0, 2) != dice_seed(1, 1)
    True
    """
    return _seed_int(np.random.SeedSequence(seed, spawn_key=(0, deal)))


def derive_seeds(seed: int, pairing: int, deal: int, n_agents: int) -> tuple[int, tuple[int, ...]]:
    """``(dice_seed, agent_seeds)`` of deal ``deal`` of pairing ``pairing``.

    The dice seed depends on ``(seed, deal)`` only (:func:`dice_seed`), so every pairing meets the
    same deals; the agent seeds (one per agent slot of the pairing, whatever seat it takes) on
    ``(seed, pairing, deal, slot)``.

    >>> derive_seeds(0, 0, 5, 2)[0] == derive_seeds(0, 3, 5, 2)[0]
    True
    """
    agent_seeds = tuple(
        _seed_int(np.random.SeedSequence(seed, spawn_key=(1, pairing, deal, slot)))
        for slot in range(n_agents)
    )
    return dice_seed(seed, deal), agent_seeds


# ---------------------------------------------------------------------------- the runner
@dataclass(frozen=True)
class Outcomes:
    """What :func:`run_games` returns, one row per game (columns: seats)."""

    scores: np.ndarray  # (G, K) int64 final scores
    winners: np.ndarray  # (G, K) bool: the seats with the best score (ties share the win)
    truncated: np.ndarray  # (G,) bool: stopped at a turn limit
    states: tuple[ScorecardGame | FarkleGame, ...] = ()  # final states, with keep_states

    def __len__(self) -> int:
        return int(self.scores.shape[0])


def run_games(
    rules: RuleConfig,
    agents: Sequence[Agent],
    lineups: np.ndarray | Sequence[Sequence[int]],
    dice_seeds: Sequence[int] | np.ndarray,
    agent_seeds: Sequence[int | None] | None = None,
    width: int = DEFAULT_WIDTH,
    keep_states: bool = False,
) -> Outcomes:
    """Play ``len(lineups)`` games; ``agents[lineups[g][s]]`` acts for seat ``s`` of game ``g``.

    ``dice_seeds[g]``: game ``g``'s dice (:class:`SeededDice`). ``agent_seeds[i]``: agent ``i`` is
    ``reset(seed)`` before the run (``None``: left as it is). ``width``: games side by side.
    ``keep_states``: also return every game's final state (a scalar game, see ``to_game`` of
    the engines). One agent object may sit in several seats; agents that track games
    (``start_episodes``) see game ids ``slot · K + seat``. Raises ``ValueError`` naming the
    agent and seat when an agent picks an illegal action, ``ConfigError`` for bad input.
    """
    table = np.asarray(lineups, dtype=np.int64)
    seeds = np.asarray(dice_seeds, dtype=np.int64).reshape(-1)
    if table.ndim != 2 or table.shape[0] != seeds.shape[0] or table.shape[0] == 0:
        raise ConfigError(
            f"lineups must be (games, seats) with one dice seed per game, got {table.shape} and {seeds.shape}"
        )
    if table.min() < 0 or table.max() >= len(agents):
        raise ConfigError(f"lineups index agents 0..{len(agents) - 1}, got {table.min()}..{table.max()}")
    if isinstance(width, bool) or not isinstance(width, (int, np.integer)) or width < 1:
        raise ConfigError(f"width must be a positive integer, got {width!r}")
    for agent, s in zip(agents, agent_seeds or (), strict=False):
        if s is not None and callable(getattr(agent, "reset", None)):
            agent.reset(int(s))
    n_games, k = table.shape
    n_slots = min(int(width), n_games)
    dice = SeededDice(n_slots)
    eng = make_engine(rules, n_slots, k, dice=dice)
    trackers = [i for i, a in enumerate(agents) if callable(getattr(a, "start_episodes", None))]
    scores = np.zeros((n_games, k), dtype=np.int64)
    truncated = np.zeros(n_games, dtype=bool)
    states: list[Any] = [None] * n_games if keep_states else []
    slot_game = np.full(n_slots, -1, dtype=np.int64)
    seat_ids = np.arange(k, dtype=np.int64)
    next_game = 0

    def start(slots: np.ndarray) -> int:
        games = np.arange(next_game, next_game + slots.size)
        slot_game[slots] = games
        dice.start(slots, seeds[games])
        eng.reset(slots)
        for i in trackers:  # a fresh game for every seat this agent holds
            ids = (slots[:, None] * k + seat_ids[None, :])[table[games] == i]
            agents[i].start_episodes(ids)
        return next_game + slots.size

    next_game = start(np.arange(n_slots))
    while True:
        live = np.flatnonzero(slot_game >= 0)
        ended = live[eng.done[live]]
        if ended.size:  # record finished games, start the next ones in their slots
            games = slot_game[ended]
            scores[games] = eng.totals[ended]
            truncated[games] = eng.truncated[ended]
            if keep_states:
                for slot, g in zip(ended.tolist(), games.tolist(), strict=True):
                    states[g] = eng.to_game(slot)
            slot_game[ended] = -1
            fresh = ended[: n_games - next_game]
            if fresh.size:
                next_game = start(fresh)
            continue
        if not live.size:
            break
        cur = eng.current[live]
        who = table[slot_game[live], cur]
        masks = eng.action_masks(live)
        obs = eng.observe(cur, live)
        acts = np.empty(live.size, dtype=np.int64)
        for i in np.unique(who).tolist():
            rows = np.flatnonzero(who == i)
            ids = live[rows] * k + cur[rows]
            acts[rows] = batch_actions(agents[i], obs[rows], masks[rows].view(np.int8), ids)
        bad = first_illegal(acts, masks)
        if bad >= 0:
            raise ValueError(
                f"agent {agents[int(who[bad])]!r} in seat {int(cur[bad])}: illegal action {int(acts[bad])}; "
                f"legal actions: {np.flatnonzero(masks[bad]).tolist()}"
            )
        eng.step(acts, live)
    winners = scores == scores.max(axis=1, keepdims=True)
    return Outcomes(scores, winners, truncated, tuple(states))


def play_game(
    rules: RuleConfig,
    seat_agents: Sequence[Agent],
    seed: int,
    agent_seeds: Sequence[int | None] | None = None,
) -> ScorecardGame | FarkleGame:
    """Play one game (:func:`run_games` with one game); ``seat_agents[s]`` acts for seat ``s``.

    ``seed``: the dice seed. Returns the final state (a scalar game without history).
    """
    lineup = [list(range(len(seat_agents)))]
    return run_games(rules, seat_agents, lineup, [seed], agent_seeds, keep_states=True).states[0]
