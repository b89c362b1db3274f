"""Native Gymnasium ``VectorEnv``s: ``num_envs`` games of one ruleset in a batched engine.

The batched twins of the scalar envs (``gym.make_vec(id, num_envs=N)``): the same keywords,
validated by :class:`dice_envs.options.EnvOptions`, and the same observations, masks, rewards
and illegal-action rule (:mod:`dice_envs.outcome`), with ``num_envs`` and ``autoreset_mode``
besides. What a reader of the scalar envs would not guess:

* opponents play batched: one ``act_batch(observations, masks)`` call per opponent and decision
  round over the games waiting on it; an opponent that plays differently per game defines
  ``start_episodes(games)`` (called as episodes begin) and receives ``act_batch(..., games=)``;
* ``autoreset_mode="next_step"`` (default: the action after a finished episode is ignored and
  that game reset) or ``"same_step"`` (reset at once; the last observation and info in
  ``info["final_obs"]`` / ``info["final_info"]``, as ``SyncVectorEnv`` puts them);
* ``reset(seed=s)`` seeds one generator that the dice, seats and opponents derive from.
* a row of ``info["action_mask"]`` is all zeros while its episode is over; an episode's end adds
  ``final_scores`` and ``winners`` ``(N, P)`` to the infos (with their ``_key`` masks).

>>> env = SpiffelVectorEnv(num_envs=4)
>>> obs, info = env.reset(seed=0)
>>> obs.shape, info["action_mask"].shape, int(env.single_action_space.n)
((4, 86), (4, 45), 45)
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..checks import as_actions, check_seed, first_illegal, reset_needed
from ..encoding import ENCODING_VERSION, encoding_id, family, observation_bounds, observation_size
from ..engine import Engine, make_engine
from ..engine.dice import RandomDice
from ..opponents import batch_actions, resolve_opponents
from ..options import EnvOptions, check_render_mode, options_of
from ..outcome import illegal_action_error, legal, step_outcome
from ..rules import ConfigError, RuleConfig
from ..rules.config import check_int

__all__ = [
    "DicePokerVectorEnv",
    "DiceVectorEnv",
    "FarkleVectorEnv",
    "SpiffelVectorEnv",
    "YahtzeeVectorEnv",
]

_MAX_REDEALS = 1000


def _autoreset_mode(mode: AutoresetMode | str) -> AutoresetMode:
    if isinstance(mode, AutoresetMode):
        if mode == AutoresetMode.DISABLED:
            raise ConfigError("autoreset_mode DISABLED is not supported; use next_step or same_step")
        return mode
    key = str(mode).lower().replace("-", "_")
    table = {"next_step": AutoresetMode.NEXT_STEP, "same_step": AutoresetMode.SAME_STEP}
    if key not in table:
        raise ConfigError(f"unknown autoreset_mode {mode!r}; allowed: next_step, same_step")
    return table[key]


class DiceVectorEnv(VectorEnv):
    """A native vector env of one game (subclasses set :attr:`game_name`); see the module doc."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi"],
        "autoreset_mode": AutoresetMode.NEXT_STEP,
    }
    game_name: ClassVar[str] = ""

    def __init__(
        self, num_envs: int = 1, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, **kwargs: Any
    ) -> None:
        check_int("num_envs", num_envs, 1, 1 << 24, what="")  # not a rule parameter: its own message
        self.autoreset_mode = _autoreset_mode(autoreset_mode)
        #: The validated options (the scalar env's, :class:`dice_envs.options.EnvOptions`).
        self.options: EnvOptions = options_of(self.game_name, kwargs, "vector")
        opts = self.options
        self.render_mode = check_render_mode(opts.render_mode, self.metadata["render_modes"])
        self.rules: RuleConfig = opts.rules
        self._opponent_specs = list(opts.opponents)
        self.metadata = {**type(self).metadata, "autoreset_mode": self.autoreset_mode}
        self.num_envs = int(num_envs)
        self.num_players = p = opts.num_players
        self.fixed_seat = 0 if p == 1 else opts.seat
        self.reward_mode = opts.reward
        self.illegal_action = opts.illegal_action
        self.illegal_reward = opts.illegal_reward
        self.encoding = encoding_id(self.rules)
        self.encoding_version = ENCODING_VERSION[family(self.rules)]

        n_obs = observation_size(self.rules, p)
        n_act = int(self.rules.n_actions)  # type: ignore[attr-defined]
        low, high = observation_bounds(self.rules, p)
        self.single_observation_space = spaces.Box(low, high, (n_obs,), np.float32)
        self.single_action_space = spaces.Discrete(n_act)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.n_actions = n_act

        #: The dice stream of the engine: the env's own, re-seeded by ``reset(seed=)``.
        self._dice = RandomDice(0)
        self.engine: Engine = make_engine(self.rules, self.num_envs, p, dice=self._dice)
        # Resolved now (agent objects kept, specs built by the registry), so a bad spec is refused
        # at construction, as gym.make refuses it, and not at the first reset().
        self._opponents: list[Any] = resolve_opponents(self._opponent_specs, self.rules, p)
        self._seat_rng = np.random.default_rng(0)
        n = self.num_envs
        self.seat = np.full(n, 0 if self.fixed_seat is None else self.fixed_seat, dtype=np.int64)
        self._carry = np.zeros(n)
        self._over = np.ones(n, dtype=bool)  # episode over, game waits for its reset
        self._mask = np.zeros((n, n_act), dtype=bool)
        self._obs = np.zeros((n, n_obs), dtype=np.float32)
        self._all = np.arange(n)
        self._ones = np.ones(n, dtype=bool)
        self._started = False

    # ------------------------------------------------------------------ opponents
    @property
    def opponents(self) -> list[Any]:
        """The opponent agents, one per other seat (resolved at construction)."""
        return self._opponents

    def _play_opponents(self, g: np.ndarray, acc: np.ndarray) -> None:
        """Opponents move in games ``g`` until the learner must decide or the game is over."""
        eng = self.engine
        while g.size:
            g = g[~eng.done[g] & (eng.current[g] != self.seat[g])]
            if not g.size:
                return
            cur = eng.current[g]
            who = cur - (cur > self.seat[g])  # opponents take the other seats in seat order
            for j in np.unique(who):
                sub = g[who == j]
                masks = eng.action_masks(sub)
                acts = batch_actions(
                    self.opponents[int(j)], eng.observe(eng.current[sub], sub), masks.view(np.int8), sub
                )
                bad = first_illegal(acts, masks)
                if bad >= 0:
                    raise ValueError(
                        f"opponent {self.opponents[int(j)]!r} chose illegal action {int(acts[bad])} in game "
                        f"{int(sub[bad])}; legal actions: {np.flatnonzero(masks[bad]).tolist()}"
                    )
                r = eng.step(acts, sub)
                if self.reward_mode == "score":
                    acc[sub] += r[np.arange(sub.size), self.seat[sub]]

    # ------------------------------------------------------------------ reset
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Reset every game; ``seed`` seeds the dice, the seats and the opponents."""
        super().reset(seed=check_seed(seed))
        if seed is not None or not self._started:
            seeds = self.np_random.integers(0, 2**63 - 1, size=2 + len(self._opponent_specs))
            self._dice.reseed(int(seeds[0]))
            self._seat_rng = np.random.default_rng(int(seeds[1]))
            for agent, s in zip(self.opponents, seeds[2:], strict=True):
                if callable(getattr(agent, "reset", None)):
                    agent.reset(seed=int(s))
        self._started = True
        self._reset_games(self._all)
        self._obs = self.engine.observe(self._viewer())
        self._mask = self.engine.action_masks()
        return self._obs.copy(), self._infos()

    def _reset_games(self, g: np.ndarray) -> None:
        eng = self.engine
        self._over[g] = False
        for _ in range(_MAX_REDEALS):
            eng.reset(g)
            if self.fixed_seat is None:
                self.seat[g] = self._seat_rng.integers(self.num_players, size=g.size)
            self._carry[g] = 0.0
            if self.num_players > 1:
                for agent in self.opponents:
                    if callable(getattr(agent, "start_episodes", None)):
                        agent.start_episodes(g)
                self._play_opponents(g, self._carry)
            g = g[eng.done[g]]  # over before the learner's first decision: deal again
            if not g.size:
                return
        raise RuntimeError(f"the learner never got a decision in {_MAX_REDEALS} games")  # pragma: no cover

    def _viewer(self) -> int | np.ndarray:
        """The learner's seat: one int when fixed (the engines' fast path), else per game."""
        return self.fixed_seat if self.fixed_seat is not None else self.seat

    # ------------------------------------------------------------------ step
    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Step every game (see the module docstring for autoreset and illegal actions)."""
        if not self._started:
            raise RuntimeError(reset_needed("step"))
        eng = self.engine
        a = as_actions(actions, self.num_envs)  # TypeError / ValueError by name; nothing moves
        n = self.num_envs
        rewards = np.zeros(n)
        resetting = self._over.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP else None
        playing = ~self._over if resetting is not None else self._ones
        ok = legal(a, self._mask)
        illegal = playing & ~ok
        if illegal.any() and self.illegal_action == "raise":
            bad = int(np.argmax(illegal))
            raise illegal_action_error(
                int(a[bad]), self._mask[bad], f" in game {bad} for seat {int(self.seat[bad])}"
            )
        go = playing & ok
        all_go = bool(go.all())
        g = self._all if all_go else np.flatnonzero(go)
        rewards[g] = self._carry[g]
        self._carry[g] = 0.0
        r = eng.step(a if all_go else a[g], g)
        if self.reward_mode == "score":
            if self.num_players == 1:
                rewards[g] += r[:, 0]
            else:
                rewards[g] += r[np.arange(g.size), self.seat[g]]
        if self.num_players > 1:
            self._play_opponents(g, rewards)
        terminations = np.zeros(n, dtype=bool)
        truncations = np.zeros(n, dtype=bool)
        ended = (eng.done & go) | illegal
        if ended.any():
            e = np.flatnonzero(ended)
            seat = self.seat[e]
            end = step_outcome(
                self.num_players,
                over=eng.done[e],
                cut=eng.truncated[e],
                illegal=illegal[e],
                totals=eng.totals[e],
                actor=seat,
                reward=self.reward_mode,
                illegal_reward=self.illegal_reward,
            )
            mine = end.rewards[np.arange(e.size), seat]
            rewards[e] = np.where(end.penalized, mine, rewards[e] + mine)
            terminations[e], truncations[e] = end.terminated, end.truncated
        self._over |= ended

        if resetting is not None and resetting.any():
            self._reset_games(np.flatnonzero(resetting))
        obs = eng.observe(self._viewer())
        if illegal.any():
            obs[illegal] = self._obs[illegal]
        mask = eng.action_masks()
        mask[self._over] = False
        self._obs, self._mask = obs, mask
        infos = self._infos(ended)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and ended.any():
            e = np.flatnonzero(ended)
            final_obs = np.full(n, None, dtype=object)
            for i in e:
                final_obs[i] = obs[i].copy()
            final_info = {k: v.copy() for k, v in infos.items() if isinstance(v, np.ndarray)}
            self._reset_games(e)
            self._obs[e] = eng.observe(self.seat[e], e)
            self._mask[e] = eng.action_masks(e)
            infos = self._infos()
            infos["final_obs"], infos["_final_obs"] = final_obs, ended.copy()
            infos["final_info"], infos["_final_info"] = final_info, ended.copy()
        return self._obs.copy(), rewards, terminations, truncations, infos

    def _infos(self, ended: np.ndarray | None = None) -> dict[str, Any]:
        info: dict[str, Any] = {
            "action_mask": self._mask.astype(np.int8),
            "_action_mask": self._ones.copy(),
            "seat": self.seat.copy(),
            "_seat": self._ones.copy(),
        }
        if ended is not None and ended.any():
            totals = np.asarray(self.engine.totals, dtype=np.int64)
            info["final_scores"] = np.where(ended[:, None], totals, 0)
            info["_final_scores"] = ended.copy()
            info["winners"] = ended[:, None] & (totals == totals.max(axis=1, keepdims=True))
            info["_winners"] = ended.copy()
            illegal = ended & ~self.engine.done
            if illegal.any():
                info["illegal_action"] = illegal
                info["_illegal_action"] = illegal.copy()
        return info

    # ------------------------------------------------------------------ extras
    def action_masks(self) -> np.ndarray:
        """The learner's int8 action masks, ``(num_envs, n_actions)`` (sb3-contrib convention)."""
        if not self._started:
            raise RuntimeError(reset_needed("action_masks"))
        return self._mask.astype(np.int8)

    def render(self) -> tuple[str, ...] | None:
        """``"ansi"``: the score card / table of every game (:func:`dice_envs.render.render_text`)."""
        if self.render_mode is None:
            return None
        if not self._started:  # the engine holds no games yet
            return (reset_needed("render", self.rules.game),) * self.num_envs
        from ..render import render_text

        return tuple(render_text(self.engine.to_game(i)) for i in range(self.num_envs))

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_envs={self.num_envs}, opponents={self._opponent_specs!r}, "
            f"seat={self.fixed_seat}, reward={self.reward_mode!r}, "
            f"autoreset_mode={self.autoreset_mode.value})"
        )


class SpiffelVectorEnv(DiceVectorEnv):
    """Spiffel, ``num_envs`` games at once (see :mod:`dice_envs.vector.env`)."""

    game_name = "spiffel"


class DicePokerVectorEnv(DiceVectorEnv):
    """Dice Poker, ``num_envs`` games at once (see :mod:`dice_envs.vector.env`)."""

    game_name = "dice_poker"


class YahtzeeVectorEnv(DiceVectorEnv):
    """Yahtzee, ``num_envs`` games at once (see :mod:`dice_envs.vector.env`)."""

    game_name = "yahtzee"


class FarkleVectorEnv(DiceVectorEnv):
    """Farkle, ``num_envs`` games at once (see :mod:`dice_envs.vector.env`)."""

    game_name = "farkle"
