"""Evaluation of a trained model (or any agent) in the Gymnasium envs, batched over games.

Games are played in lockstep over a batch of envs so a neural policy answers a whole batch with
one forward pass. Solitaire: the mean final score. Several players: the learner's seat cycles
over every seat (balanced), and wins / draws / losses count the final scores of ``info``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import gymnasium as gym
import numpy as np

from dice_envs.rules import RuleConfig

from ..learned import ModelAgent
from .config import GYM_IDS
from .envs import _import_envs, action_mask_of

__all__ = ["GameStats", "ModelAgent", "format_table", "play_games"]


@dataclass
class GameStats:
    """What a batch of games showed, from the evaluated agent's seat."""

    agent: str
    opponent: str
    games: int
    mean_score: float
    std_score: float
    wins: int
    draws: int
    losses: int

    @property
    def win_rate(self) -> float:
        """Games won outright / games."""
        return self.wins / self.games if self.games else math.nan

    @property
    def stderr(self) -> float:
        """Standard error of the mean score."""
        return self.std_score / math.sqrt(self.games) if self.games > 1 else math.nan

    def to_dict(self) -> dict[str, Any]:
        """JSON-friendly summary (no win counts in solitaire)."""
        d = {**asdict(self), "stderr": self.stderr}
        if self.opponent == "solitaire":
            for key in ("wins", "draws", "losses"):
                del d[key]
        else:
            d["win_rate"] = self.win_rate
        return d


def play_games(
    agent: Any,
    rules: RuleConfig,
    games: int,
    opponents: Sequence[Any] = (),
    seed: int = 0,
    batch: int = 64,
    agent_name: str | None = None,
    native: bool | None = None,
) -> GameStats:
    """Play ``games`` games of ``agent`` (seat cycling over all seats) against ``opponents``.

    ``native``: use the native vector env (``None``: when importable; ``False``: scalar
    Gymnasium envs stepped in lockstep).
    """
    _import_envs()
    num_players = 1 + len(opponents)
    if native is not False:
        try:
            from dice_envs.vector.sb3 import SB3VecEnv
        except ImportError:
            if native:
                raise
        else:
            return _play_native(SB3VecEnv, agent, rules, games, list(opponents), seed, batch, agent_name)
    gym_id = GYM_IDS[rules.game]
    width = min(batch, games)
    envs = [
        gym.make(
            gym_id,
            **rules.to_dict(),
            opponents=list(opponents),
            seat=i % num_players,
            reward="win" if num_players > 1 else "score",
        )
        for i in range(width)
    ]
    seats = [i % num_players for i in range(width)]
    obs, masks, active = [], [], []
    started = 0
    for i, env in enumerate(envs):
        o, info = env.reset(seed=seed + i)
        obs.append(o)
        masks.append(action_mask_of(env, info))
        active.append(True)
        started += 1
    scores: list[float] = []
    wdl = [0, 0, 0]  # wins, draws, losses
    while any(active):
        idx = [i for i in range(width) if active[i]]
        acts = _act(agent, np.stack([obs[i] for i in idx]), np.stack([masks[i] for i in idx]))
        for i, a in zip(idx, acts, strict=True):
            o, _, terminated, truncated, info = envs[i].step(int(a))
            if terminated or truncated:
                final = list(info["final_scores"])
                seat = int(info.get("seat", seats[i]))
                scores.append(float(final[seat]))
                if num_players > 1:
                    wdl[_outcome(final, seat)] += 1
                if started < games:
                    o, info = envs[i].reset(seed=seed + started)
                    started += 1
                else:
                    active[i] = False
                    continue
            obs[i] = o
            masks[i] = action_mask_of(envs[i], info)
    for env in envs:
        env.close()
    return _stats(agent, agent_name, opponents, scores, (wdl[0], wdl[1], wdl[2]))


def _play_native(
    vec_cls: Any,
    agent: Any,
    rules: RuleConfig,
    games: int,
    opponents: list[Any],
    seed: int,
    batch: int,
    agent_name: str | None,
) -> GameStats:
    """:func:`play_games` on the native vector env: each slot plays a fixed number of games
    (no bias towards short games), one env per learner seat for balanced seats."""
    num_players = 1 + len(opponents)
    scores: list[float] = []
    wdl = [0, 0, 0]  # wins, draws, losses
    for seat in range(num_players):
        n_seat = games // num_players + (1 if seat < games % num_players else 0)
        if n_seat == 0:
            continue
        width = min(batch, n_seat)
        quota = np.full(width, n_seat // width)
        quota[: n_seat % width] += 1
        venv = vec_cls(
            rules.game,
            num_envs=width,
            **rules.to_dict(),
            opponents=opponents,
            seat=seat,
            reward="win" if num_players > 1 else "score",
        )
        venv.seed(seed + 1_000_003 * seat)
        obs = venv.reset()
        done_count = np.zeros(width, dtype=np.int64)
        while (done_count < quota).any():
            acts = _act(agent, obs, venv.action_masks())
            obs, _, dones, infos = venv.step(acts)
            for i in np.flatnonzero(dones):
                if done_count[i] >= quota[i]:
                    continue
                done_count[i] += 1
                final = list(infos[i]["final_scores"])
                scores.append(float(final[seat]))
                if num_players > 1:
                    wdl[_outcome(final, seat)] += 1
        venv.close()
    return _stats(agent, agent_name, opponents, scores, (wdl[0], wdl[1], wdl[2]))


def _outcome(final: Sequence[float], seat: int) -> int:
    """0 for a sole win of ``seat``, 1 for a shared win, 2 for a loss."""
    best = max(final)
    if final[seat] < best:
        return 2
    return 1 if list(final).count(best) > 1 else 0


def _stats(
    agent: Any,
    agent_name: str | None,
    opponents: Sequence[Any],
    scores: list[float],
    wdl: tuple[int, int, int],
) -> GameStats:
    """The row of one agent against one set of opponents (``wdl``: wins, draws, losses)."""
    arr = np.asarray(scores, dtype=np.float64)
    opp = "solitaire" if not opponents else ",".join(str(getattr(o, "spec", o)) for o in opponents)
    return GameStats(
        agent=agent_name or str(getattr(agent, "spec", type(agent).__name__)),
        opponent=opp,
        games=len(scores),
        mean_score=float(arr.mean()),
        std_score=float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
        wins=wdl[0],
        draws=wdl[1],
        losses=wdl[2],
    )


def _act(agent: Any, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
    if hasattr(agent, "act_batch"):
        return np.asarray(agent.act_batch(observations, masks))
    return np.array([agent.act(o, m) for o, m in zip(observations, masks, strict=True)])


def format_table(rows: Sequence[GameStats]) -> str:
    """A plain-text table of evaluation rows."""
    multi = any(r.opponent != "solitaire" for r in rows)
    head = f"{'agent':<14} {'opponent':<14} {'games':>6} {'mean score':>11} {'± s.e.':>7}"
    head += f" {'win rate':>9} {'draws':>6}" if multi else ""
    lines = [head, "-" * len(head)]
    for r in rows:
        line = f"{r.agent:<14} {r.opponent:<14} {r.games:>6} {r.mean_score:>11.1f} {r.stderr:>7.1f}"
        if multi:
            line += f" {r.win_rate:>9.3f} {r.draws:>6}"
        lines.append(line)
    return "\n".join(lines)
