"""``search:<model>``: exact expectimax to the end of each turn over a learned value of turn starts.

A scorecard turn is a small chance tree (three throws, holds in between, then a box); past the
turn lies the rest of the game, whose worth the value model estimates for each state a turn can
end in. :class:`SearchAgent` plays each turn by the solver's own turn search (the widget of
:class:`agents.solver.scorecard.TurnSolver`) with :class:`~agents.players.search.value.LearnedValues` in
place of the solved table: the dice are searched exactly, the future is judged by the model. With
the exact table the same agent would be ``optimal``; with a random network it plays each turn for
its own points. The Farkle ``planner:<model>`` (:mod:`agents.players.planner`) is the same agent
for Farkle: the turn searched exactly over a model's judgement of turn starts, and
``search:<model>`` of a Farkle model builds it.

A value model is a pair of files: ``<stem>.npz`` (the network's weights, plain arrays, read with
``allow_pickle=False``) and its model card ``<stem>.json`` (:mod:`agents.models.card`; algorithm
``search-value``, the feature set, the hidden widths and the weights' SHA-256, checked on load).
Models are made by the search learner (:mod:`agents.training.search.learner`). A model of the chance to
win a two-player game (card ``reward: win``, :mod:`agents.training.search.learner`) is played by
:class:`~agents.players.search.win_agent.WinSearchAgent`.

>>> import agents
>>> bot = agents.load("pretrained:spiffel-search")          # doctest: +SKIP
>>> bot = agents.load("search:pretrained:spiffel-search")   # the same agent  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from agents.models.card import fit_card, read_card
from agents.players.scorecard import PlanningAgent
from agents.players.search.value import FEATURES, LearnedValues, ValueNet, feature_size
from agents.players.search.win import WIN_FEATURES, WIN_POINTS_FEATURES, read_points_net, win_feature_size
from agents.players.search.win_agent import WinSearchAgent
from agents.players.search.win_normal import WIN_NORMAL_FEATURES, read_spread
from agents.solver.plans import State, TurnPlan
from agents.solver.scorecard import turn_solver
from dice_envs.rules import ConfigError, FarkleRules, ScorecardRules

__all__ = ["ALGORITHM", "SearchAgent", "is_value_card", "load_value_model"]

#: The ``algorithm`` of a value model's card.
ALGORITHM = "search-value"


def is_value_card(card: dict[str, Any]) -> bool:
    """Whether a model card describes a value model (played by :class:`SearchAgent`)."""
    return card.get("algorithm") == ALGORITHM


def load_value_model(
    path: str | Path, rules: ScorecardRules | FarkleRules | None = None, num_players: int = 1
) -> tuple[Any, dict[str, Any]]:
    """The network and card of the value model ``path`` (its ``.npz``), checked: the card is a
    value model's, its feature set is known, the weights' SHA-256 is the card's and (with
    ``rules``) the card fits those rules and seats (:func:`agents.models.card.fit_card`; Farkle:
    :func:`~agents.players.search.farkle.load_farkle_value`). ``ConfigError`` says what failed.
    The network is None for a normal-approximation win model (it has none: :meth:`SearchAgent.from_file`
    reads its points network and spread)."""
    if isinstance(rules, FarkleRules):
        from agents.players.search.farkle import load_farkle_value

        return load_farkle_value(path, rules, num_players)
    path = Path(path)
    card = read_card(path)
    if not is_value_card(card):
        raise ConfigError(f"{path}: not a value model (its card's algorithm is {card.get('algorithm')!r})")
    value = card.get("value") or {}
    known = (FEATURES, WIN_FEATURES, WIN_POINTS_FEATURES, WIN_NORMAL_FEATURES)
    if value.get("features") not in known:
        raise ConfigError(
            f"{path}: the card's feature set {value.get('features')!r} is not one this version "
            f"reads ({', '.join(map(repr, known))})"
        )
    inputs = None
    if rules is not None:
        fit_card(card, rules, num_players)
    if value["features"] == WIN_NORMAL_FEATURES:  # no win network: points and spread (from_file)
        return None, card
    if rules is not None:
        solver = turn_solver(rules)
        features = value["features"]
        inputs = (
            feature_size(solver)
            if features == FEATURES
            else win_feature_size(solver, features != WIN_FEATURES)
        )
    return ValueNet.load(path, card, inputs), card


class SearchAgent(PlanningAgent):
    """Plays each scorecard turn by exact search over a value network of turn starts.

    ``model``: the value model's path or ``pretrained:<name>`` (for the spec); ``net``: the
    network itself (then nothing is read; the learner plays this way). Deterministic: the same
    state gets the same action.
    """

    spec = "search"

    def __init__(
        self,
        rules: ScorecardRules,
        num_players: int = 1,
        seed: int | None = None,
        net: ValueNet | None = None,
        model: str = "",
    ) -> None:
        if not isinstance(rules, ScorecardRules):
            raise ConfigError(f"search over a value model plays the scorecard games, got {rules.game!r}")
        if net is None:
            raise ConfigError(
                "SearchAgent needs a value network (net=) or a model file (SearchAgent.from_file)"
            )
        super().__init__(rules, num_players, seed)
        self.values = LearnedValues(net, self._solver)
        self.spec = f"search:{model}" if model else "search"

    @classmethod
    def from_file(
        cls,
        model: str,
        path: str | Path,
        rules: ScorecardRules | FarkleRules,
        num_players: int = 1,
        seed: int | None = None,
    ) -> Any:
        """The agent of the value model at ``path`` (checked by :func:`load_value_model`): a
        :class:`~agents.players.search.win_agent.WinSearchAgent` for a win model (``reward: win``),
        a :class:`~agents.players.search.farkle.FarkleSearchAgent` for a Farkle one."""
        if isinstance(rules, FarkleRules):
            from agents.players.search.farkle import FarkleSearchAgent

            return FarkleSearchAgent.from_file(model, path, rules, num_players, seed)
        net, card = load_value_model(path, rules, num_players)
        agent: SearchAgent | WinSearchAgent
        if card.get("reward") == "win":
            points = spread = None
            if card["value"]["features"] in (WIN_POINTS_FEATURES, WIN_NORMAL_FEATURES):
                points = read_points_net(path, card, turn_solver(rules))
            if card["value"]["features"] == WIN_NORMAL_FEATURES:
                spread = read_spread(path, card, turn_solver(rules))
            agent = WinSearchAgent(
                rules, num_players, seed, net=net, model=model, points=points, spread=spread
            )
        else:
            agent = cls(rules, num_players, seed, net=net, model=model)
        agent.card = card
        return agent

    def _turn_plans(self, cards: list[State]) -> list[TurnPlan]:
        c = self._solver
        return c.turn_plans(c.box_values_of(self.values, np.array(cards, dtype=np.int64).reshape(-1, 3)))
