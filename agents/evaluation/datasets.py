"""Minari datasets of one policy's games, every decision valued exactly.

:func:`collect` plays ``episodes`` games of a policy (an :func:`agents.load` spec) in the game's
Gymnasium env through Minari's ``DataCollector`` and saves them as the Minari dataset
``dice_envs/<game>/<policy>-v0`` (:func:`dataset_id`) in Minari's local datasets folder
(``MINARI_DATASETS_PATH`` or ``~/.minari/datasets``). Episode ``i`` is reset with seed
``seed + i``, the policy too, so a dataset repeats; on the scorecard games the dice and the
policy's choices are those of :func:`~agents.evaluation.regret.scorecard_regret` with the same seed.

* **Scorecard solitaire** (Spiffel, Dice Poker, Yahtzee): the env's reward is the points scored,
  and an action's value is its expected final future points under optimal play from there on
  (:func:`~agents.evaluation.regret.decision_values`, the solver's table).
* **Two-player Farkle**: the data is seat 0's view of ``dice_envs/Farkle-v1`` with ``win-optimal``
  in seat 1 inside the env (``opponents=["win-optimal"], seat=0``, kept in the dataset's env spec,
  so ``recover_environment()`` builds the same env); the reward is +1 / -1 at the end (0 when the
  win is shared) and an action's value is the chance of winning after it, both seats playing to
  win from there on (:func:`~agents.evaluation.regret.farkle_decision_values`).

Each observation's info adds ``action_values`` (float64 over the action space: the value of every
legal action of its decision, ``-inf`` for an illegal one, all ``-inf`` at an episode's last
observation, which has no decision) and ``action_value`` (the value of the action the policy took
there; NaN at the last observation). So ``infos["action_values"][:-1]`` lines up with
``actions``, and the points (or chance of winning) a decision gave away is
``action_values.max() - action_value``.

Metadata: ``ref_max_score`` is the optimal policy's expected return (the solver's optimum;
``2 p - 1`` for Farkle, ``p`` win-optimal's chance of winning from seat 0), ``ref_min_score``
the mean return of ``random`` over :data:`REF_EPISODES` episodes (seeds ``seed + 10**6 + i``),
``algorithm_name`` the policy, ``code_permalink`` the git commit of the code (``-dirty`` when
files changed) or, in an installation, ``dice-envs <version>``.
"""

from __future__ import annotations

import shutil
import warnings
from typing import Any

import gymnasium as gym
import minari
import numpy as np
from minari.data_collector.callbacks import StepDataCallback
from minari.storage.datasets_root_dir import get_dataset_path

from agents.evaluation.regret import TIE, decision_values, farkle_decision_values
from agents.registry import load
from dice_envs import __version__, code_revision
from dice_envs.encoding import decode
from dice_envs.games import game_spec
from dice_envs.rules import ConfigError, FarkleRules, RuleConfig, ScorecardRules, make_rules

__all__ = ["FARKLE_OPPONENT", "REF_EPISODES", "collect", "dataset_id", "dataset_policies", "summarize"]

#: The seat-1 player inside the two-player Farkle env (the values assume optimal play by both).
FARKLE_OPPONENT = "win-optimal"
#: Episodes of ``random`` behind ``ref_min_score``.
REF_EPISODES = 100
_PLAYERS = {"spiffel": 1, "dice_poker": 1, "yahtzee": 1, "farkle": 2}


def dataset_policies(game: str) -> list[str]:
    """The policies a dataset of ``game`` may be made with (the shipped bots that exist)."""
    from agents.players.model import pretrained_names

    if game == "farkle":
        builtin, shipped = ["win-optimal", "max-expected", "heuristic", "random"], ["farkle"]
    else:
        builtin, shipped = (
            ["optimal", "heuristic", "greedy", "random"],
            [f"{game}-search", game, f"{game}-scratch"],
        )
    names = set(pretrained_names())
    return builtin[:1] + [f"pretrained:{n}" for n in shipped if n in names] + builtin[1:]


def dataset_id(game: str, policy: str) -> str:
    """``dice_envs/<game>/<policy>-v0`` (a ``:`` of the policy spec becomes ``-``)."""
    return f"dice_envs/{game}/{policy.replace(':', '-')}-v0"


def _check(game: str, policy: str, players: int | None) -> int:
    if game not in _PLAYERS:
        raise ConfigError(f"unknown game {game!r} for a dataset; allowed: {', '.join(_PLAYERS)}")
    allowed = dataset_policies(game)
    if policy not in allowed:
        raise ConfigError(
            f"policy {policy!r} is not offered for {game} datasets; allowed: {', '.join(allowed)}"
        )
    need = _PLAYERS[game]
    if players is not None and players != need:
        raise ConfigError(
            f"{game} datasets have {need} player{'s' * (need > 1)} (exact values), got {players}"
        )
    return need


class _Recorder(StepDataCallback):
    """Minari's step-data callback: the policy decides at each observation, and that
    observation's info gets the decision's ``action_values`` and ``action_value``."""

    def __init__(self, policy: Any, value_of: Any) -> None:
        self.policy, self.value_of = policy, value_of
        self.action: int | None = None

    def __call__(
        self,
        env: Any,
        obs: Any,
        info: dict[str, Any],
        action: Any = None,
        rew: Any = None,
        terminated: Any = None,
        truncated: Any = None,
    ) -> Any:
        data = super().__call__(env, obs, info, action, rew, terminated, truncated)
        mask = np.asarray(info["action_mask"])
        values, taken, self.action = np.full(mask.shape, -np.inf), np.nan, None
        if not (terminated or truncated) and mask.any():
            values = np.where(mask > 0, self.value_of(obs, mask), -np.inf)
            self.action = int(self.policy.act(obs, mask))
            taken = values[self.action]
        data["info"] = {**info, "action_values": values, "action_value": np.float64(taken)}
        return data


def _valuer(rules: RuleConfig) -> tuple[Any, float]:
    """The action values of one decision (``value_of(obs, mask)``) and the optimal expected return."""
    if isinstance(rules, ScorecardRules):
        from agents.solver.scorecard import solve_scorecard

        sol = solve_scorecard(rules)
        return (lambda obs, mask: decision_values(sol, decode(obs, rules, 1), mask)), sol.expected_score()
    from agents.players.win_optimal import WinOptimalAgent

    judge = WinOptimalAgent(rules, 2)
    best = 2 * judge.solution.win_probability() - 1

    def value_of(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return farkle_decision_values(judge, obs[None], mask[None])[0]

    return value_of, best


def _mean_return(env: gym.Env, agent: Any, episodes: int, seed: int) -> float:
    total = 0.0
    for i in range(episodes):
        obs, info = env.reset(seed=seed + i)
        done = False
        while not done:
            obs, r, term, trunc, info = env.step(int(agent.act(obs, info["action_mask"])))
            total += float(r)
            done = term or trunc
    return total / episodes


def collect(
    game: str,
    policy: str,
    episodes: int,
    seed: int = 0,
    players: int | None = None,
    rules: dict[str, Any] | None = None,
    force: bool = False,
) -> Any:
    """Play and save the dataset (module docstring); return the loaded ``MinariDataset``.

    ``ConfigError`` (before any game) for a game, policy or player count not offered, a bad
    ``episodes``, or an existing dataset without ``force`` (with it, the old one is replaced only
    once the new one is played).
    """
    num_players = _check(game, policy, players)
    if not isinstance(episodes, int) or isinstance(episodes, bool) or episodes < 1:
        raise ConfigError(f"episodes must be a positive integer, got {episodes!r}")
    ds_id = dataset_id(game, policy)
    if get_dataset_path(ds_id).exists() and not force:
        raise ConfigError(f"dataset {ds_id} exists in {get_dataset_path()}; pass --force to replace it")
    cfg = make_rules(game, **(rules or {}))
    kwargs = dict(rules or {})
    if isinstance(cfg, FarkleRules):
        kwargs |= {"opponents": [FARKLE_OPPONENT], "seat": 0}
    env_id = game_spec(game).env_id
    agent = load(policy, game=cfg, num_players=num_players, seed=seed)
    value_of, best = _valuer(cfg)
    recorder = _Recorder(agent, value_of)
    env = minari.DataCollector(
        gym.make(env_id, **kwargs), step_data_callback=lambda: recorder, record_infos=True
    )
    for i in range(episodes):
        if callable(getattr(agent, "reset", None)):
            agent.reset(seed=seed + i)
        env.reset(seed=seed + i)
        done = False
        while not done:
            _, _, term, trunc, _ = env.step(recorder.action)
            done = term or trunc
    ref_env = gym.make(env_id, **kwargs)
    random_mean = _mean_return(
        ref_env, load("random", game=cfg, num_players=num_players, seed=seed), REF_EPISODES, seed + 10**6
    )
    rev = code_revision()
    commit = f"{rev['git_commit']}{'-dirty' * bool(rev['git_dirty'])}" if "git_commit" in rev else None
    kind = "expected final future points" if num_players == 1 else "chance of winning"
    opponent = f", seat 0 against {FARKLE_OPPONENT}" if num_players == 2 else ""
    description = (
        f"{episodes} episodes of {policy} playing {game} ({env_id}{opponent}; rules {cfg.to_dict()}), "
        f"episode seeds {seed}..{seed + episodes - 1}. infos['action_values']: the exact {kind} of every "
        "action of the observation's decision (-inf: illegal); infos['action_value']: that of the "
        "action taken (NaN at the last observation)."
    )
    if force and get_dataset_path(ds_id).exists():
        shutil.rmtree(get_dataset_path(ds_id))
    with warnings.catch_warnings():  # minari's advice on optional fields (author_email, eval_env)
        warnings.simplefilter("ignore", UserWarning)
        env.create_dataset(
            dataset_id=ds_id,
            algorithm_name=policy,
            author="dice-envs developers",
            code_permalink=commit or f"dice-envs {__version__}",
            ref_min_score=random_mean,
            ref_max_score=float(best),
            description=description,
            requirements=[f"dice-envs=={__version__}"],
        )
    env.close()
    return minari.load_dataset(ds_id)


def summarize(ds: Any) -> dict[str, float]:
    """What a dataset shows, from its data alone: its size, the mean return and the loss per decision.

    ``loss`` is a decision's best value minus the value of the action taken (points, or chance of
    winning), 0 for a tie (at most :data:`~agents.evaluation.regret.TIE`); ``best_share`` the share
    of decisions with no loss; ``*_se`` are standard errors over episodes.
    """
    returns, losses, per_episode = [], [], []
    for ep in ds.iterate_episodes():
        n = len(ep.actions)
        raw = ep.infos["action_values"][:n].max(axis=1) - ep.infos["action_value"][:n]
        loss = np.where(raw > TIE, raw, 0.0)  # a tie is no loss, as scorecard_regret counts it
        returns.append(float(ep.rewards.sum()))
        losses.append(loss)
        per_episode.append(float(loss.sum()))
    every = np.concatenate(losses)
    k = len(returns)
    return {
        "episodes": k,
        "decisions": len(every),
        "mean_return": float(np.mean(returns)),
        "mean_return_se": float(np.std(returns, ddof=1) / np.sqrt(k)) if k > 1 else float("nan"),
        "loss_per_decision": float(every.mean()),
        "loss_per_episode": float(np.mean(per_episode)),
        "loss_per_episode_se": float(np.std(per_episode, ddof=1) / np.sqrt(k)) if k > 1 else float("nan"),
        "best_share": float(np.mean(every == 0.0)),
    }
