"""The hyper-parameters of the search learner (:mod:`agents.training.search.learner`) in one dataclass.

A recipe is a YAML mapping with ``trainer: search`` (``configs/train/*-search*.yaml``; Farkle,
any number of seats, for the win: ``configs/train/farkle-search.yaml``);
``dice-envs train --config <recipe>`` reads it here. Unknown keys, wrong types and values out of
range are refused naming the key and what is allowed (:class:`agents.training.config.RunConfig`).

>>> cfg = SearchConfig.from_dict({"name": "demo", "game": "yahtzee", "iterations": 3})
>>> cfg.trainer, cfg.games_per_iteration, cfg.hidden
('search', 512, [256, 256])
>>> SearchConfig.from_dict({"iteration": 3})
Traceback (most recent call last):
...
dice_envs.rules.config.ConfigError: unknown search config key 'iteration' (did you mean 'iterations'?); ...
"""

# ruff: noqa: RUF009  (knob returns dataclasses.field(...), which ruff cannot see through)
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from agents.training.config import RunConfig, knob
from dice_envs.rules import GAMES, ConfigError, FarkleRules, RuleConfig, ScorecardRules, make_rules

if TYPE_CHECKING:
    from agents.players.search.value import ValueNet

__all__ = ["SearchConfig"]

#: Training games of iteration ``i`` use dice seeds ``seed * SEED_STRIDE + i * games_per_iteration``.
SEED_STRIDE = 10**7


@dataclass
class SearchConfig(RunConfig):
    """All hyper-parameters of a search-learner run (every field documented)."""

    KIND: ClassVar[str] = "search"
    RESUMABLE = (
        "iterations",
        "progress_bar",
        "eval_every",
        "final_eval_games",
        "final_eval_opponents",
        "checkpoint_every",
    )

    name: str = knob("search", "run name; the default output folder is runs/<name>")
    trainer: str = knob("search", "search (this learner)")
    seed: int = knob(0, "seeds the value network and the dice of every game", within=(0, 10**6))
    iterations: int = knob(300, "play-and-fit iterations", within=(1, 10**6))
    games_per_iteration: int = knob(
        512, "games played per iteration (their turn starts are the data)", within=(1, 1 << 16)
    )
    buffer_iterations: int = knob(
        10, "the targets of this many latest iterations are fitted", within=(1, 1000)
    )
    fit_steps: int = knob(200, "Adam steps per iteration", within=(0, 10**6))
    batch_size: int = knob(512, "states per Adam step", within=(1, 1 << 20))
    learning_rate: float = knob(1e-3, "Adam step size at the start", within="(0, 1]")
    lr_final: float = knob(1e-4, "Adam step size at the end (linear in iterations)", within="[0, 1]")
    hidden: list = knob([256, 256], "hidden layers of the value network (ReLU)")
    eval_every: int = knob(
        10,
        "evaluate every this many iterations and after the last (0 = only after the last)",
        within=(0, 10**6),
    )
    eval_games: int = knob(
        1000, "games per evaluation (dice seeds never used for training)", within=(1, 10**6)
    )
    eval_opponent: str = knob(
        "optimal", "reward win: the opponent of the evaluation games (an agent spec; seats balanced)"
    )
    points_model: str = knob(
        "",
        "reward win: a solitaire value model (pretrained:<name> or its .npz; e.g. pretrained:spiffel-search) "
        "whose expected points to come of both cards the win network reads; empty: it reads the cards alone",
    )
    leaf: str = knob(
        "network",
        "reward win (scorecard games): network (a win network fitted by self-play) or normal (no win "
        "network: a normal approximation of the final difference over points_model's expected points "
        "to come, its spread measured on iterations x games_per_iteration solitaire games of the "
        "points search)",
    )
    td_lambda: float = knob(
        0.0,
        "reward win (scorecard games): each turn start's target is the λ-return of the searched win "
        "chances along its game (0: the searched chance itself)",
        within="[0, 1]",
    )
    final_eval_games: int = knob(10_000, "games of the evaluation written on the card", within=(0, 10**7))
    final_eval_opponents: list = knob(
        [],
        "solitaire: built-in agents (e.g. heuristic, optimal) played on the final evaluation's dice "
        "beside the trained agent, in a table; empty = the trained agent alone",
    )
    checkpoint_every: int = knob(
        25,
        "save a checkpoint every this many iterations and after the last (0 = only after the last, "
        "which --resume continues, e.g. with more iterations)",
        within=(0, 10**6),
    )

    def rule_config(self) -> ScorecardRules | FarkleRules:
        """The rules of the game trained."""
        rules: RuleConfig = make_rules(self.game, **self.rules)
        assert isinstance(rules, ScorecardRules | FarkleRules)
        return rules

    def spec_lists(self) -> dict[str, list[str]]:
        """``eval_opponent`` (a win run's) and ``final_eval_opponents``."""
        win = [self.eval_opponent] if self.reward == "win" else []
        return {"eval_opponent": win, "final_eval_opponents": self.final_eval_opponents}

    def points_net(self) -> ValueNet | None:
        """The points network of ``points_model`` (None without one), checked: a solitaire value
        model of this game and rules; ``ConfigError`` naming the key otherwise."""
        if not self.points_model:
            return None
        from agents.players.model import resolve_model_path
        from agents.players.search.agent import load_value_model
        from agents.players.search.value import FEATURES

        where = f"config 'points_model' ({self.points_model})"
        if self.reward != "win" or self.game == "farkle":
            raise ConfigError(f"{where} is for two-player scorecard runs (reward win)")
        try:
            net, card = load_value_model(resolve_model_path(self.points_model), self.rule_config(), 1)
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
        if card["value"]["features"] != FEATURES:
            raise ConfigError(
                f"{where}: not a points model (its card's features are {card['value']['features']!r})"
            )
        return net

    def seed_of(self, iteration: int) -> int:
        """The dice seed of iteration ``iteration``'s first training game."""
        return self.seed * SEED_STRIDE + iteration * self.games_per_iteration

    def validate(self) -> None:
        """Raise :class:`ConfigError` naming the first bad value and what is allowed."""
        if self.game not in GAMES:
            raise ConfigError(
                f"config 'game': the search learner trains {', '.join(GAMES)}, got {self.game!r}"
            )
        if self.trainer != "search":
            raise ConfigError(f"config 'trainer' must be 'search' here, got {self.trainer!r}")
        if self.game == "farkle" and (self.reward != "win" or not 2 <= self.num_players <= 8):
            raise ConfigError(
                "the search learner trains Farkle for the win (reward win) with 2 to 8 players; "
                f"got num_players {self.num_players!r}, reward {self.reward!r}"
            )
        if self.game != "farkle" and (self.num_players, self.reward) not in ((1, "score"), (2, "win")):
            raise ConfigError(
                "the search learner trains solitaire play for points (num_players 1, reward score) "
                "or two-player play for the win (num_players 2, reward win); "
                f"got num_players {self.num_players!r}, reward {self.reward!r}"
            )
        if not isinstance(self.eval_opponent, str) or not self.eval_opponent:
            raise ConfigError(f"config 'eval_opponent' must be an agent spec, got {self.eval_opponent!r}")
        self._check_knobs()
        self._check_layers("hidden", 4096)
        self._check_agent_specs()
        if self.points_model:
            self.points_net()  # read and checked before any work
        if self.leaf not in ("network", "normal"):
            raise ConfigError(f"config 'leaf' must be 'network' or 'normal', got {self.leaf!r}")
        if self.leaf == "normal" and (self.reward != "win" or self.game == "farkle" or not self.points_model):
            raise ConfigError(
                "config 'leaf: normal' is for two-player scorecard runs (reward win) with a points_model"
            )
        if self.td_lambda and (self.reward != "win" or self.game == "farkle"):
            raise ConfigError(
                f"config 'td_lambda' is for two-player scorecard runs (reward win), got {self.td_lambda!r}"
            )
        if self.reward == "win":
            for key in ("eval_games", "final_eval_games"):
                if getattr(self, key) % self.num_players:
                    raise ConfigError(
                        f"config {key!r} must be a multiple of num_players {self.num_players} for reward "
                        f"win (each deal is played from every seat), got {getattr(self, key)!r}"
                    )

    def _check_agent_specs(self) -> None:
        """The agents of the evaluations, resolved before any work: ``final_eval_opponents``
        (solitaire only) and a win run's ``eval_opponent``, which must play two-player ``game``."""
        from agents.registry import check_fit

        specs = self.final_eval_opponents
        self._check_spec_lists(["final_eval_opponents"])
        if specs and self.reward != "score":
            raise ConfigError(
                "config 'final_eval_opponents' is for solitaire runs (reward score); the win learner "
                f"evaluates against eval_opponent. Got {specs!r}"
            )
        resolved = self.agent_specs  # an unknown spec is refused naming its key
        if self.reward == "win":
            try:
                check_fit(resolved[self.eval_opponent], self.rule_config(), self.num_players)
            except ConfigError as exc:
                raise ConfigError(f"config 'eval_opponent': {exc}") from None
