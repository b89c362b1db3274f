"""The one game flow of every environment: a PettingZoo AEC env over a rules engine.

:class:`DiceAECEnv` holds the game logic only (the ``raw_env`` of PettingZoo's classic envs);
:func:`make_env` wraps it with PettingZoo's standard wrappers. The Gymnasium envs are this
class seen from one seat (:class:`dice_envs.wrappers.SingleAgentEnv`), so the flow exists once.

The environments guide tabulates what the envs show (agents, observations, masks, infos,
rewards). Agents ``player_0 .. player_{N-1}`` sit in seat order and keep the turn for every
decision of theirs; ``infos`` hold numbers and arrays only, the same keys from ``reset`` on (see
:meth:`DiceAECEnv._info`). Under ``reward="score"`` a Farkle bankruptcy caused on another seat's
step is the bankrupt seat's negative reward on that step. The end of a game is
:mod:`dice_envs.outcome`'s rule.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
from gymnasium import logger, spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from ..checks import as_action, check_seed, reset_needed
from ..encoding import ENCODING_VERSION, encode, encoding_id, family, observation_bounds, observation_size
from ..engine import new_game
from ..engine.scorecard_game import ScorecardGame
from ..options import RENDER_MODES, EnvOptions, options_of
from ..outcome import is_legal, step_outcome, win_rewards
from ..render import render_text
from ..render_rgb import frame_size, render_rgb
from ..rules import RuleConfig
from ..rules.scorecard import N_REROLL_ACTIONS

# win_rewards is dice_envs.outcome's, still importable from here and from dice_envs.multiagent.
__all__ = ["DiceAECEnv", "IllegalActions", "make_env", "win_rewards"]


class DiceAECEnv(AECEnv):
    """PettingZoo AEC env of one dice game (game logic only, no wrappers).

    Subclasses set :attr:`game_name`. Keywords (:mod:`dice_envs.options`): ``num_players``
    (1 to 8, default 2), ``reward``, ``render_mode``, ``rules`` (a configuration) and rule
    parameters; or ``options=`` an :class:`~dice_envs.options.EnvOptions` alone. An illegal
    action raises ``ValueError`` naming the legal ones and leaves the state unchanged (the
    wrapped :func:`make_env` ends the game with a penalty instead).
    """

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "name": "dice_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }
    #: Game name (a key of :data:`dice_envs.rules.GAMES`).
    game_name: ClassVar[str] = ""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        #: The validated options this env was built from.
        self.options: EnvOptions = options_of(self.game_name, kwargs, "raw_env")
        self.rules: RuleConfig = self.options.rules
        self.num_players = self.options.num_players
        self.reward_mode = self.options.reward
        self.render_mode = self.options.render_mode
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self._seat = {a: i for i, a in enumerate(self.possible_agents)}
        n_obs = observation_size(self.rules, self.num_players)
        n_act = int(self.rules.n_actions)  # type: ignore[attr-defined]
        low, high = observation_bounds(self.rules, self.num_players)
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(low, high, (n_obs,), np.float32),
                    "action_mask": spaces.Box(0, 1, (n_act,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(n_act) for a in self.possible_agents}
        #: The observation encoding's id, e.g. ``"scorecard-v1"`` (not in the infos: no strings there).
        self.encoding = encoding_id(self.rules)
        self._encoding_version = ENCODING_VERSION[family(self.rules)]
        self.metadata = {**type(self).metadata, "encoding": self.encoding}
        self._rng = np.random.default_rng()
        self.game: Any = None
        self.held: tuple[int, ...] | None = None

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ API
    def seat(self, agent: str) -> int:
        """Seat index of ``agent``."""
        return self._seat[agent]

    def _info(self) -> dict[str, Any]:
        """Every agent's info while the game runs (the keys and shapes never change)."""
        n = self.num_players
        return {
            "encoding_version": self._encoding_version,
            "game_over": False,
            "final_scores": np.zeros(n, dtype=np.int64),
            "winners": np.zeros(n, dtype=bool),
            "truncated": False,
        }

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        seed = check_seed(seed)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.game = new_game(self.rules, self.num_players, rng=self._rng)
        self.held = None
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: self._info() for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.current_player]
        if self.game.done:  # only with degenerate rules (e.g. every opening throw a farkle)
            self._finish()
        if self.render_mode == "human":
            self.render()

    def _need_game(self, method: str) -> None:
        """``RuntimeError`` naming ``method`` unless ``reset()`` has dealt a game."""
        if self.game is None:
            raise RuntimeError(reset_needed(method, self.metadata["name"]))

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        self._need_game("observe")
        g = self.game
        seat = self._seat[agent]
        if not g.done and g.current_player == seat:
            mask = g.action_mask()
        else:
            mask = np.zeros(self.action_spaces[agent].n, dtype=np.int8)
        return {"observation": encode(g, seat), "action_mask": mask}

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        """The int8 action mask of ``agent`` (default: the agent to move)."""
        self._need_game("action_mask")
        return self.observe(agent if agent is not None else self.agent_selection)["action_mask"]

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        self._need_game("last")
        return super().last(observe)

    def step(self, action: Any) -> None:
        self._need_game("step")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        a = as_action(action)  # TypeError / ValueError for a non-integer; state unchanged
        g = self.game
        held = None
        if isinstance(g, ScorecardGame) and 0 < a < N_REROLL_ACTIONS:
            held = tuple(f for i, f in enumerate(g.dice) if not a >> i & 1)
        gained = g.apply(a)  # ValueError naming the legal actions; state unchanged
        self.held = held
        self._cumulative_rewards[agent] = 0.0
        self._clear_rewards()
        if self.reward_mode == "score":
            for i, pts in enumerate(gained):
                self.rewards[self.possible_agents[i]] = float(pts)
        if g.done:
            self._finish()
        else:
            self.agent_selection = self.possible_agents[g.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _finish(self) -> None:
        g = self.game
        totals = [int(t) for t in g.totals()]
        truncated = bool(getattr(g, "truncated", False))
        end = step_outcome(self.num_players, over=True, cut=truncated, totals=totals, reward=self.reward_mode)
        for i, r in enumerate(end.rewards.tolist()):
            self.rewards[self.possible_agents[i]] += r
        self.terminations = dict.fromkeys(self.agents, bool(end.terminated))
        self.truncations = dict.fromkeys(self.agents, bool(end.truncated))
        won = np.zeros(self.num_players, dtype=bool)
        won[list(g.winners())] = True
        for a in self.agents:
            self.infos[a] = {
                **self._info(),
                "game_over": True,
                "final_scores": np.asarray(totals, dtype=np.int64),
                "winners": won.copy(),
                "truncated": truncated,
            }

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            logger.warn("You are calling render method without specifying any render mode.")
            return None
        if self.render_mode == "rgb_array":  # (H, W, 3) uint8: dice + card / table
            if self.game is None:
                return np.full((*frame_size(), 3), 250, dtype=np.uint8)
            return render_rgb(self.game, held=self.held)
        if self.game is None:
            text = reset_needed("render", self.metadata["name"])
        else:
            text = render_text(self.game, held=self.held)
        if self.render_mode == "human":
            print(text + "\n")
            return None
        return text

    def close(self) -> None:
        pass

    def __str__(self) -> str:
        return self.metadata["name"]


def make_env(raw_cls: type[DiceAECEnv], **kwargs: Any) -> AECEnv:
    """``raw_cls`` built from ``kwargs`` (or ``options=``), wrapped as PettingZoo's classic envs are.

    ``kwargs`` are the raw env's plus ``illegal_reward`` (default ``-1.0``), the offender's reward
    when an illegal action ends the game (:class:`IllegalActions`); order is enforced
    (``OrderEnforcingWrapper``).
    """
    options = options_of(raw_cls.game_name, kwargs, "pettingzoo")
    env: AECEnv = raw_cls(options=options)
    env = IllegalActions(env, illegal_reward=options.illegal_reward)
    env = wrappers.OrderEnforcingWrapper(env)
    return env


class IllegalActions(wrappers.BaseWrapper):
    """Checks each action before the game sees it; an illegal one ends the game with a penalty.

    A non-integer action raises ``TypeError`` / ``ValueError`` (:func:`dice_envs.checks.as_action`).
    An integer that is not a legal move, outside the action space too, ends the game by
    :mod:`dice_envs.outcome`'s rule and logs a warning (PettingZoo's ``TerminateIllegalWrapper``
    cannot take an out-of-range action, and its bounds check vanishes under ``python -O``).
    """

    def __init__(self, env: AECEnv, illegal_reward: float) -> None:
        super().__init__(env)
        self._illegal_reward = float(illegal_reward)

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            super().step(action)  # the raw env's dead step (it refuses anything but None)
            return
        a = as_action(action)  # TypeError / ValueError for a non-integer (None too); nothing changes
        raw = self.env.unwrapped
        if is_legal(a, raw.action_mask(agent)):
            super().step(a)
            return
        EnvLogger.warn_on_illegal_move()
        end = step_outcome(
            raw.num_players, illegal=True, actor=raw.seat(agent), illegal_reward=self._illegal_reward
        )
        raw._cumulative_rewards[agent] = 0.0
        raw.terminations = dict.fromkeys(raw.agents, bool(end.terminated))
        raw.truncations = dict.fromkeys(raw.agents, bool(end.truncated))
        raw.rewards = {other: float(end.rewards[raw.seat(other)]) for other in raw.agents}
        raw._accumulate_rewards()
        raw._deads_step_first()
