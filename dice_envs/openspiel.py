"""The games as OpenSpiel games, on the forward model (needs ``pip install 'dice-envs[openspiel]'``).

``import dice_envs.openspiel`` registers four Python games with :mod:`pyspiel`:
``dice_envs_spiffel``, ``dice_envs_dice_poker``, ``dice_envs_yahtzee`` and ``dice_envs_farkle``.
Each state wraps a :mod:`dice_envs.forward` state. The :doc:`OpenSpiel guide </guide/openspiel>` describes
their parameters (an optional limit such as ``max_turns`` takes :data:`NO_LIMIT` for ``None``),
chance outcomes (row ``i`` of :func:`~dice_envs.forward.throw_outcomes` is outcome ``i``),
actions, observations (:func:`dice_envs.encoding.encode`) and returns
(:func:`dice_envs.outcome.win_rewards` under ``reward="win"``).

>>> import pyspiel
>>> game = pyspiel.load_game("dice_envs_farkle", {"players": 2, "target": 2000})
>>> state = game.new_initial_state()
>>> state.is_chance_node(), len(state.chance_outcomes()), state.action_to_string(-1, 0)
(True, 462, 'throw 1-1-1-1-1-1')
>>> game.num_distinct_actions(), game.min_utility(), game.max_utility()
(128, -1.0, 1.0)
"""

from __future__ import annotations

import dataclasses
from functools import cache
from typing import Any

import numpy as np
import pyspiel

from .encoding import UNCAPPED, decode, encode, layout, max_grand_total
from .forward import FarkleState, ScorecardState, throw_outcomes
from .games import GAME_SPECS
from .options import MAX_PLAYERS, check_reward
from .outcome import LOSS_REWARD, WIN_REWARD, win_rewards
from .render import render_text
from .rules import GAMES, FarkleRules, RuleConfig, make_rules
from .rules.config import ConfigError, check_int

__all__ = [
    "DEFAULT_PLAYERS",
    "GAME_CLASSES",
    "GAME_NAMES",
    "NO_LIMIT",
    "AgentBot",
    "DiceGame",
    "DiceObserver",
    "DiceState",
    "rules_of",
]

#: The OpenSpiel name of each game, by our name.
GAME_NAMES: dict[str, str] = {game: f"dice_envs_{game}" for game in GAMES}
#: Seats of a game loaded without ``players`` (as the PettingZoo env).
DEFAULT_PLAYERS = 2
#: The value of an optional rule limit (``max_turns``, ``*_bonus_limit``) that means ``None``.
NO_LIMIT = -1
#: Decisions a Farkle turn is counted at in ``max_game_length``: at most six set-asides per round
#: of dice, ten rounds. A longer turn is legal but needs hot dice ten times in one turn.
FARKLE_DECISIONS_PER_TURN = 60
#: Turns per seat counted in ``max_game_length`` when Farkle's ``max_turns`` is ``None``.
FARKLE_UNCAPPED_TURNS = 10_000

_Utility = pyspiel.GameType.Utility


def _optional(field: dataclasses.Field) -> bool:
    """Whether a rule parameter may be ``None`` (an optional limit)."""
    return "None" in str(field.type)


def _parameters(game: str) -> dict[str, Any]:
    """The parameter specification of ``game``: seats, reward and the rules' defaults."""
    rules = GAMES[game]()
    params: dict[str, Any] = {"players": DEFAULT_PLAYERS, "reward": "auto"}
    for f in dataclasses.fields(rules):
        value = getattr(rules, f.name)
        params[f.name] = NO_LIMIT if value is None else value
    return params


def rules_of(game: str, params: dict[str, Any]) -> RuleConfig:
    """The rule configuration of ``game`` (our name) from OpenSpiel parameters (:data:`NO_LIMIT`
    read as ``None`` for an optional limit; the rules validate every value)."""
    fields = {f.name: f for f in dataclasses.fields(GAMES[game])}
    values = {}
    for name, value in params.items():
        if name in fields:
            values[name] = None if _optional(fields[name]) and value == NO_LIMIT else value
    return make_rules(game, **values)


def _game_type(game: str, utility: Any) -> pyspiel.GameType:
    return pyspiel.GameType(
        short_name=GAME_NAMES[game],
        long_name=f"dice-envs {game.replace('_', ' ').title()}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=pyspiel.GameType.Information.PERFECT_INFORMATION,
        utility=utility,
        reward_model=pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=MAX_PLAYERS,
        min_num_players=1,
        provides_information_state_string=False,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=True,
        parameter_specification=_parameters(game),
    )


@cache
def _chance_actions(k: int) -> tuple[tuple[int, float], ...]:
    """``(outcome index, probability)`` of a throw of ``k`` dice (none for ``k = 0``)."""
    return tuple(enumerate(throw_outcomes(k)[1].tolist())) if k else ()


@cache
def _throw_names(k: int) -> tuple[str, ...]:
    """``"throw 1-2-2-5-6"`` of each outcome of a throw of ``k`` dice (none for ``k = 0``)."""
    return tuple("throw " + "-".join(map(str, row)) for row in throw_outcomes(k)[0].tolist()) if k else ()


class DiceGame(pyspiel.Game):
    """One of our games as a :class:`pyspiel.Game` (a subclass per game sets :attr:`game`)."""

    #: Our name of the game (``"farkle"``, ...).
    game = ""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        """Build the game from OpenSpiel ``params`` (defaults: :func:`_parameters`)."""
        params = {**_parameters(self.game), **(params or {})}
        players = params["players"]
        check_int("players", players, 1, MAX_PLAYERS, what="game parameter")
        reward = params["reward"]
        if reward == "auto":
            reward = None
        self.rules = rules_of(self.game, params)
        self.reward = check_reward(reward, players)
        self.num_seats = int(players)
        family = FarkleState if isinstance(self.rules, FarkleRules) else ScorecardState
        self._opening = family.new(self.rules, self.num_seats)  # type: ignore[arg-type]
        if isinstance(self.rules, FarkleRules):
            turns = self.rules.max_turns or FARKLE_UNCAPPED_TURNS
            # a total past target + UNCAPPED needs a last turn of UNCAPPED points: a practical bound
            length, best = turns * FARKLE_DECISIONS_PER_TURN, self.rules.target + UNCAPPED
        else:
            length, best = self.rules.num_boxes * self.rules.num_throws, max_grand_total(self.rules)
        if self.reward == "win":
            utility, low, high, total = _Utility.ZERO_SUM, LOSS_REWARD, WIN_REWARD, 0.0
        else:
            utility, low, high, total = _Utility.GENERAL_SUM, 0.0, float(best), None
        info = pyspiel.GameInfo(
            num_distinct_actions=int(self.rules.n_actions),  # type: ignore[attr-defined]
            max_chance_outcomes=len(self._opening.chance_outcomes()),  # the opening throws every die
            num_players=self.num_seats,
            min_utility=low,
            max_utility=high,
            utility_sum=total,
            max_game_length=self.num_seats * length,
        )
        super().__init__(_game_type(self.game, utility), info, params)

    def new_initial_state(self) -> DiceState:
        """A new game: the opening throw is pending (a chance node)."""
        return DiceState(self, _Forward(self._opening.clone()))

    def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> DiceObserver:
        """The observer of the env observations (see :class:`DiceObserver`)."""
        if params:
            raise ValueError(f"observation parameters are not supported; got {params}")
        if iig_obs_type is not None and iig_obs_type.perfect_recall:
            raise ValueError("only observations (no perfect-recall information states) are provided")
        return DiceObserver(self.rules, self.num_seats)


class _Forward:
    """Holds the forward state; OpenSpiel clones a Python state by deep-copying its attributes,
    and :meth:`~dice_envs.forward.ForwardState.clone` is the fast copy."""

    __slots__ = ("state",)

    def __init__(self, state: ScorecardState | FarkleState) -> None:
        self.state = state

    def __deepcopy__(self, memo: dict[int, Any]) -> _Forward:
        return _Forward(self.state.clone())


class DiceState(pyspiel.State):
    """A state of a :class:`DiceGame`: a :mod:`dice_envs.forward` state (``forward``) stepped by
    OpenSpiel's actions."""

    def __init__(self, game: DiceGame, forward: _Forward) -> None:
        """Wrap ``forward`` (made by :meth:`DiceGame.new_initial_state`)."""
        super().__init__(game)
        self._held = forward
        self._reward = game.reward

    @property
    def forward(self) -> ScorecardState | FarkleState:
        """The forward state (to read; OpenSpiel's actions step it)."""
        return self._held.state

    def current_player(self) -> int:
        """The seat to decide, ``PlayerId.CHANCE`` or ``PlayerId.TERMINAL``."""
        s = self.forward
        if s.is_terminal():
            return int(pyspiel.PlayerId.TERMINAL)
        return int(pyspiel.PlayerId.CHANCE) if s.is_chance_node() else s.seat

    def _legal_actions(self, player: int) -> list[int]:
        return self.forward.legal_actions()

    def chance_outcomes(self) -> list[tuple[int, float]]:
        """``(outcome index, exact probability)`` of every distinct throw of the pending dice."""
        return list(_chance_actions(self.forward.dice_to_throw))

    def _apply_action(self, action: int) -> None:
        self.forward.apply_action(int(action))

    def _action_to_string(self, player: int, action: int) -> str:
        s = self.forward
        if player == pyspiel.PlayerId.CHANCE:
            names = _throw_names(s.dice_to_throw)
            return names[action] if 0 <= action < len(names) else f"outcome {action}"
        return s.game.describe_action(int(action))

    def is_terminal(self) -> bool:
        """The game is over."""
        return self.forward.is_terminal()

    def returns(self) -> list[float]:
        """0 until the game is over; then the final scores (``reward="score"``) or the win rewards."""
        s = self.forward
        if not s.is_terminal():
            return [0.0] * s.num_players
        totals = s.returns()
        return win_rewards(totals) if self._reward == "win" else totals

    def __str__(self) -> str:
        s = self.forward
        text = render_text(s.game, held=getattr(s, "kept", None) or None)
        return f"{text}\nto throw: {s.dice_to_throw} dice" if s.is_chance_node() else text


class DiceObserver:
    """OpenSpiel's observer of the env observations: ``tensor`` is :func:`dice_envs.encoding.encode`
    of the state from a seat, ``dict`` its fields by name (views into ``tensor``)."""

    def __init__(self, rules: RuleConfig, num_players: int) -> None:
        """An observer of ``rules``' game with ``num_players`` seats."""
        self.rules, self.num_players = rules, num_players
        lay = layout(rules, num_players)
        self.tensor = np.zeros(lay.size, dtype=np.float32)
        self.dict = {name: self.tensor[lay.slice(name)] for name in lay.names}

    def set_from(self, state: DiceState, player: int) -> None:
        """Fill ``tensor`` with ``state`` as ``player`` observes it."""
        self.tensor[:] = encode(state.forward.game, player)

    def string_from(self, state: DiceState, player: int) -> str:
        """The observation of ``player``, decoded (:func:`dice_envs.encoding.decode`)."""
        return repr(decode(encode(state.forward.game, player), self.rules, self.num_players))


class AgentBot(pyspiel.Bot):
    """A :class:`pyspiel.Bot` that plays one of our agents (anything with ``act(observation,
    action_mask)``, e.g. ``agents.load("heuristic", "farkle", num_players=2)``): it acts on the
    state's observation tensor and legal-action mask, as it would in the env."""

    def __init__(self, agent: Any) -> None:
        """Seat ``agent``."""
        pyspiel.Bot.__init__(self)
        if not callable(getattr(agent, "act", None)):
            raise ConfigError(f"an agent needs act(observation, action_mask), got {agent!r:.80}")
        self.agent = agent

    def restart_at(self, state: pyspiel.State) -> None:
        """Nothing to forget: the agent acts on each observation alone."""

    def step(self, state: pyspiel.State) -> int:
        """The agent's action at ``state`` (a decision node)."""
        p = state.current_player()
        obs = np.asarray(state.observation_tensor(p), dtype=np.float32)
        mask = np.asarray(state.legal_actions_mask(p), dtype=np.int8)
        return int(self.agent.act(obs, mask))


def _game_class(spec: Any) -> type[DiceGame]:
    """The OpenSpiel game class of one game of :data:`dice_envs.games.GAME_SPECS`."""
    doc = f"{spec.title} (``dice_envs_{spec.name}``)."
    return type(f"{spec.title}Game", (DiceGame,), {"game": spec.name, "__doc__": doc, "__module__": __name__})


#: The game classes by game name, one per game of :data:`dice_envs.games.GAME_SPECS`.
GAME_CLASSES: dict[str, type[DiceGame]] = {name: _game_class(spec) for name, spec in GAME_SPECS.items()}

for _cls in GAME_CLASSES.values():
    pyspiel.register_game(_game_type(_cls.game, _Utility.GENERAL_SUM), _cls)
