"""Games of a trained model (or any agent) against opponents, for training's tables, played through
the one game runner (:func:`agents.evaluation.run_games`): seat-balanced, every game in lockstep on
the batched engine. :func:`solitaire_rows` plays every agent of a solitaire table on the same dice,
so :func:`format_table` can add each one's points behind ``optimal``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from agents.evaluation.runner import balanced_lineups, derive_seeds, dice_seed, run_games
from agents.evaluation.stats import wins_draws_losses
from agents.registry import AgentSpec, load
from dice_envs.rules import ConfigError, RuleConfig

__all__ = ["GameStats", "evaluate_policy", "format_table", "load_or_skip", "play_games", "solitaire_rows"]


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
    #: the agent's score in each game, in game order (solitaire tables pair rows by it)
    scores: np.ndarray | None = field(default=None, repr=False, compare=False)

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
        del d["scores"]
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
) -> GameStats:
    """Play ``games`` games of ``agent`` against ``opponents`` (agents, resolved specs or specs for
    :func:`agents.load`, one per other seat, reseeded from ``seed``; ``agent`` is used as it is).
    Game ``g`` is deal ``g // K`` in seat rotation ``g mod K``; ``batch`` games side by side."""
    k = 1 + len(opponents)
    _, opp_seeds = derive_seeds(seed, 0, 0, k)
    seated = [
        o.build(k, s) if isinstance(o, AgentSpec) else load(o, game=rules, num_players=k, seed=s)
        for o, s in zip(opponents, opp_seeds[1:], strict=True)
    ]
    lineups = balanced_lineups(k, games)
    deal_seeds = [dice_seed(seed, d) for d in range(-(-games // k))]
    out = run_games(
        rules,
        [agent, *seated],
        lineups,
        [deal_seeds[g // k] for g in range(games)],
        agent_seeds=[None, *opp_seeds[1:]],
        width=batch,
    )
    seat = np.argmax(lineups == 0, axis=1)
    scores = out.scores[np.arange(games), seat].astype(np.float64)
    wins, draws, losses = wins_draws_losses(out.winners, seat) if k > 1 else (0, 0, 0)
    opponent = ",".join(str(getattr(o, "spec", o)) for o in opponents) or "solitaire"
    return GameStats(
        agent=agent_name or str(getattr(agent, "spec", type(agent).__name__)),
        opponent=opponent,
        games=len(scores),
        mean_score=float(scores.mean()),
        std_score=float(scores.std(ddof=1)) if scores.size > 1 else 0.0,
        wins=wins,
        draws=draws,
        losses=losses,
        scores=scores,
    )


def evaluate_policy(policy: Any, cfg: Any, seed: int) -> tuple[float, float]:
    """The native trainer's periodic evaluation: the mean (and s.e.) of the deterministic
    ``policy`` over ``cfg.eval_episodes`` games, side by side; the final score in solitaire, the
    win rate (draws half) against ``cfg.eval_opponents()`` otherwise."""
    from agents.players.model import ModelAgent

    opponents = [cfg.agent_specs[s] for s in cfg.eval_opponents()]
    n = cfg.eval_episodes
    agent = ModelAgent(policy, deterministic=True, name="learner")
    stats = play_games(agent, cfg.rule_config(), n, opponents=opponents, seed=seed, batch=n)
    if not opponents:
        return stats.mean_score, stats.stderr
    rate = (stats.wins + 0.5 * stats.draws) / max(stats.games, 1)
    return rate, float(np.sqrt(rate * (1 - rate) / max(stats.games, 1)))


def load_or_skip(spec: AgentSpec, num_players: int, seed: int) -> Any:
    """The agent of ``spec`` for a table row, or ``None`` (with a note on stderr) when it does not
    play its rules with ``num_players`` seats."""
    try:
        return spec.build(num_players, seed)
    except (ConfigError, NotImplementedError) as exc:
        print(f"(skipping {spec.spec!r} in the evaluation table: {exc})", file=sys.stderr)
        return None


def solitaire_rows(
    trained: Any, rules: RuleConfig, games: int, seed: int, specs: Sequence[AgentSpec], batch: int = 64
) -> list[GameStats]:
    """Rows of a solitaire table: ``trained`` (named ``trained``), then the agent of each of
    ``specs`` that plays ``rules``, every one over the same ``games`` dice seeds of ``seed``."""
    rows = [play_games(trained, rules, games, seed=seed, batch=batch, agent_name="trained")]
    for spec in specs:
        agent = load_or_skip(spec, 1, seed)
        if agent is not None:
            rows.append(play_games(agent, rules, games, seed=seed, batch=batch, agent_name=spec.spec))
    return rows


def format_table(rows: Sequence[GameStats]) -> str:
    """A plain-text table of evaluation rows; a solitaire table with an ``optimal`` row played on
    the same dice adds the column ``behind optimal``: the mean, over the games, of ``optimal``'s
    score minus the row's (with its standard error)."""
    multi = any(r.opponent != "solitaire" for r in rows)
    best = next((r.scores for r in rows if r.agent == "optimal" and not multi), None)
    paired = best is not None and all(r.scores is not None and len(r.scores) == len(best) for r in rows)
    head = f"{'agent':<14} {'opponent':<14} {'games':>6} {'mean score':>11} {'± s.e.':>7}"
    head += f" {'win rate':>9} {'draws':>6}" if multi else ""
    head += f" {'behind optimal':>15} {'± s.e.':>7}" if paired else ""
    lines = [head, "-" * len(head)]
    for r in rows:
        line = f"{r.agent:<14} {r.opponent:<14} {r.games:>6} {r.mean_score:>11.1f} {r.stderr:>7.1f}"
        if multi:
            line += f" {r.win_rate:>9.3f} {r.draws:>6}"
        if paired:
            gap = best - r.scores  # type: ignore[operator]
            se = gap.std(ddof=1) / math.sqrt(len(gap)) if len(gap) > 1 else math.nan
            line += f" {gap.mean():>15.1f} {se:>7.1f}"
        lines.append(line)
    return "\n".join(lines)
