"""Game records: every decision of played games, as a JSON-lines file (format version 1).

A header line, then per game a ``game`` line (rules, seat specs, dice seed and stream), one
``decision`` line per decision (the seat to move, the state before it as :func:`state_of` gives
it, the action) and a ``result`` line; ``docs/guide/review.md`` describes every field. A record is
untrusted input: :func:`read_records` checks the header, every field and that every action is legal
in its state, and raises :class:`RecordError` naming the line and what is allowed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import Agent
from agents.evaluation.runner import MAX_PLAYERS, SeededDice
from dice_envs.encoding import encode
from dice_envs.engine import FarkleGame, ScorecardGame, make_engine, new_game
from dice_envs.io import atomic_write_text
from dice_envs.outcome import is_legal
from dice_envs.rules import GAMES, ConfigError, FarkleRules, RuleConfig, make_rules

__all__ = [
    "DICE_STREAMS",
    "RECORD_FORMAT",
    "RECORD_VERSION",
    "Decision",
    "GameLog",
    "RecordError",
    "evaluation_logs",
    "game_at",
    "parse_records",
    "play_logged",
    "read_records",
    "record_text",
    "state_of",
    "write_records",
]

RECORD_FORMAT = "dice-envs game record"
RECORD_VERSION = 1
#: The dice streams a record's ``seed`` may refer to (see the module docstring).
DICE_STREAMS = ("new_game", "runner")


class RecordError(ConfigError):
    """A record file that is not a valid game record (the message names the line and the field)."""


@dataclass(frozen=True)
class Decision:
    """One decision: the seat to move, the state before it (``game.row()`` as JSON data) and the action."""

    seat: int
    state: dict[str, Any]
    action: int


@dataclass
class GameLog:
    """One recorded game: rules, seat specs, dice seed and stream, decisions, final scores."""

    rules: RuleConfig
    seats: tuple[str, ...]
    seed: int | None
    dice: str = "new_game"
    decisions: list[Decision] = field(default_factory=list)
    scores: tuple[int, ...] | None = None

    @property
    def players(self) -> int:
        return len(self.seats)

    def add(self, game: ScorecardGame | FarkleGame, action: int) -> None:
        """Note ``action`` taken by the player to move in ``game`` (call before applying it)."""
        self.decisions.append(Decision(game.current_player, state_of(game), int(action)))

    def finish(self, game: ScorecardGame | FarkleGame) -> None:
        """Note the final scores of the finished ``game``."""
        self.scores = tuple(int(t) for t in game.totals())

    def position(self, i: int) -> ScorecardGame | FarkleGame:
        """The game at decision ``i`` (before its action)."""
        return game_at(self.rules, self.players, self.decisions[i].state)


def state_of(game: ScorecardGame | FarkleGame) -> dict[str, Any]:
    """The full state of ``game`` as JSON data (its ``row()``, arrays as lists)."""
    return {k: np.asarray(v).tolist() for k, v in game.row().items()}


def game_at(rules: RuleConfig, players: int, state: Any) -> ScorecardGame | FarkleGame:
    """The game whose state is ``state`` (:func:`state_of`); :class:`RecordError` when its fields
    are not those of the game or not integers of the right shape, or the engine refuses them."""
    template = state_of(new_game(rules, players, seed=0))
    if not isinstance(state, dict) or set(state) != set(template):
        got = sorted(state) if isinstance(state, dict) else type(state).__name__
        raise RecordError(f"a {rules.game} state has the fields {sorted(template)}, got {got}")
    for name, want in template.items():
        value = np.asarray(state[name], dtype=object)
        ok = value.shape == np.shape(want) and all(
            type(v) is type(w)
            for v, w in zip(value.ravel(), np.asarray(want, dtype=object).ravel(), strict=True)
        )
        if not ok:
            raise RecordError(f"state field {name!r} must look like {want!r}, got {state[name]!r}")
    if not 0 <= state["current"] < players:
        raise RecordError(f"state field 'current' must be a seat 0 to {players - 1}, got {state['current']}")
    cls = FarkleGame if isinstance(rules, FarkleRules) else ScorecardGame
    try:
        game = cls.from_row(rules, players, state)  # type: ignore[arg-type]
        same = state_of(game) == state  # nothing was cut to the engine's integer types
        if not game.done:
            encode(game, game.current_player)
    except (IndexError, ValueError, TypeError, OverflowError) as exc:
        raise RecordError(f"the engine refuses the state {state!r}: {exc}") from None
    if not same:
        raise RecordError(f"the state {state!r} is outside the engine's range")
    return game


def play_logged(rules: RuleConfig, seat_agents: Sequence[Agent], specs: Sequence[str], seed: int) -> GameLog:
    """Play one game of ``new_game(rules, len(seat_agents), seed)`` and return its record; the
    agents are ``reset(seed)`` first (as :func:`~agents.evaluation.regret.scorecard_regret` does)."""
    game = new_game(rules, len(seat_agents), seed=seed)
    for agent in seat_agents:
        if callable(getattr(agent, "reset", None)):
            agent.reset(seed=seed)
    log = GameLog(rules, tuple(specs), seed)
    while not game.done:
        p = game.current_player
        mask = game.action_mask()
        a = int(seat_agents[p].act(encode(game, p), mask))
        if not is_legal(a, mask):
            raise ValueError(f"agent {specs[p]!r} chose illegal action {a}; legal: {np.flatnonzero(mask)}")
        log.add(game, a)
        game.apply(a)
    log.finish(game)
    return log


# ---------------------------------------------------------------------------- writing and reading
def record_text(logs: Sequence[GameLog]) -> str:
    """The record file of ``logs`` (see the module docstring)."""
    lines = [{"format": RECORD_FORMAT, "version": RECORD_VERSION}]
    for log in logs:
        lines.append(
            {"type": "game", "game": log.rules.game, "rules": log.rules.to_dict(),
             "seats": list(log.seats), "seed": log.seed, "dice": log.dice}
        )  # fmt: skip
        lines += [
            {"type": "decision", "seat": d.seat, "state": d.state, "action": d.action} for d in log.decisions
        ]
        lines.append({"type": "result", "scores": None if log.scores is None else list(log.scores)})
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)


def write_records(path: str | Path, logs: Sequence[GameLog], overwrite: bool = False) -> Path:
    """Write the record file of ``logs`` atomically (an existing file only with ``overwrite``)."""
    return atomic_write_text(path, record_text(logs), overwrite=overwrite)


def read_records(path: str | Path) -> list[GameLog]:
    """The games of a record file (:class:`RecordError` naming the file, line and field when invalid)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"cannot read the game record {p}: {exc}") from None
    return parse_records(text, str(p))


def _field(obj: dict[str, Any], name: str, kind: type, where: str) -> Any:
    """``obj[name]`` if it is a ``kind`` (``True`` and ``False`` are not integers here)."""
    value = obj.get(name)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise RecordError(f"{where}: field {name!r} must be {kind.__name__}, got {value!r}")
    return value


def parse_records(text: str, source: str = "record") -> list[GameLog]:
    """The games of the record file ``text`` (``source`` names it in errors)."""
    lines = [(n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not lines:
        raise RecordError(
            f"{source} is empty; a game record starts with {{'format': '{RECORD_FORMAT}', ...}}"
        )
    objs = []
    for n, line in lines:
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RecordError(f"{source} line {n}: not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise RecordError(f"{source} line {n}: a line must be a JSON object, got {type(obj).__name__}")
        objs.append((n, obj))
    n, head = objs[0]
    if head.get("format") != RECORD_FORMAT:
        raise RecordError(
            f"{source} line {n}: not a game record (the first line must name format {RECORD_FORMAT!r})"
        )
    if head.get("version") != RECORD_VERSION:
        raise RecordError(
            f"{source} line {n}: record version {head.get('version')!r} is not supported; "
            f"this dice-envs reads version {RECORD_VERSION}"
        )
    logs: list[GameLog] = []
    for n, obj in objs[1:]:
        where = f"{source} line {n}"
        kind = obj.get("type")
        if kind == "game":
            logs.append(_game_line(obj, where))
            continue
        if kind not in ("decision", "result"):
            raise RecordError(f"{where}: unknown line type {kind!r}; allowed: game, decision, result")
        if not logs or logs[-1].scores is not None:
            raise RecordError(f"{where}: a {kind} line must follow a game line (and come before its result)")
        log = logs[-1]
        if kind == "result":
            scores = _field(obj, "scores", list, where)
            if len(scores) != log.players or any(
                isinstance(s, bool) or not isinstance(s, int) for s in scores
            ):
                raise RecordError(f"{where}: 'scores' must be {log.players} integers, got {scores!r}")
            log.scores = tuple(scores)
            continue
        seat, action = _field(obj, "seat", int, where), _field(obj, "action", int, where)
        try:
            game = game_at(log.rules, log.players, obj.get("state"))
        except RecordError as exc:
            raise RecordError(f"{where}: {exc}") from None
        if game.done or seat != game.current_player:
            mover = "nobody (the game is over)" if game.done else f"seat {game.current_player}"
            raise RecordError(f"{where}: 'seat' is {seat}, but in its state {mover} is to move")
        mask = game.action_mask()
        if not is_legal(action, mask):
            raise RecordError(
                f"{where}: action {action} is not legal there; legal: {np.flatnonzero(mask).tolist()}"
            )
        log.decisions.append(Decision(seat, obj["state"], action))
    if not logs:
        raise RecordError(f"{source}: the record holds no game")
    unfinished = [i for i, log in enumerate(logs) if log.scores is None]
    if unfinished:
        raise RecordError(f"{source}: game {unfinished[0]} has no result line (the file is cut short?)")
    return logs


def _game_line(obj: dict[str, Any], where: str) -> GameLog:
    name = _field(obj, "game", str, where)
    if name not in GAMES:
        raise RecordError(f"{where}: unknown game {name!r}; allowed: {', '.join(GAMES)}")
    params = _field(obj, "rules", dict, where)
    try:
        rules = make_rules(name, **params)
    except (ConfigError, TypeError) as exc:
        raise RecordError(f"{where}: bad rules: {exc}") from None
    seats = _field(obj, "seats", list, where)
    if not 1 <= len(seats) <= MAX_PLAYERS or not all(isinstance(s, str) and s for s in seats):
        raise RecordError(f"{where}: 'seats' must be 1 to {MAX_PLAYERS} agent specs (strings), got {seats!r}")
    seed = obj.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise RecordError(f"{where}: 'seed' must be an integer or null, got {seed!r}")
    dice = obj.get("dice")
    if dice not in DICE_STREAMS:
        raise RecordError(f"{where}: 'dice' must be one of {', '.join(DICE_STREAMS)}, got {dice!r}")
    return GameLog(rules, tuple(seats), seed, dice)


# ---------------------------------------------------------------------------- dice-envs evaluate
class _Taped:
    """Acts as ``inner`` does and notes each action by game id (``slot · K + seat``)."""

    def __init__(self, inner: Agent, tape: dict[int, list[int]]) -> None:
        self.inner, self.tape = inner, tape

    def reset(self, seed: int | None = None) -> None:
        if callable(getattr(self.inner, "reset", None)):
            self.inner.reset(seed)

    def start_episodes(self, ids: np.ndarray) -> None:  # makes the runner pass game ids
        if callable(getattr(self.inner, "start_episodes", None)):
            self.inner.start_episodes(ids)

    def act_batch(self, obs: np.ndarray, masks: np.ndarray, games: np.ndarray) -> np.ndarray:
        from dice_envs.opponents import batch_actions

        acts = batch_actions(self.inner, obs, masks, games)
        for g, a in zip(np.asarray(games).tolist(), acts.tolist(), strict=True):
            self.tape.setdefault(g, []).append(a)
        return acts


def evaluation_logs(result: Any) -> list[GameLog]:
    """The records of every game of an :class:`~agents.evaluation.EvaluationResult`: each task is
    played again (:func:`~agents.evaluation.tournament.replay`, the same games) with its agents'
    actions noted, then each game is stepped through on its dice to note the states. Raises
    ``RuntimeError`` if a game played again ends otherwise than the evaluated one."""
    from agents.evaluation.tournament import DEALS_PER_TASK, replay

    k = result.players
    tasks: dict[tuple[int, int], list[Any]] = {}
    for rec in result.records:
        tasks.setdefault((rec.pairing, rec.deal // DEALS_PER_TASK), []).append(rec)
    logs: list[GameLog] = []
    for recs in tasks.values():
        tape: dict[int, list[int]] = {}

        def loader(spec: str, tape: dict[int, list[int]] = tape, **kw: Any) -> Agent:
            return _Taped(result.loader(spec, **kw), tape)  # type: ignore[return-value]

        replay(replace(result, loader=loader), recs[0])
        for slot, rec in enumerate(sorted(recs, key=lambda r: (r.deal, r.rotation))):
            queues = [list(tape.get(slot * k + s, [])) for s in range(k)]
            log = _step_through(result.rules, k, rec.seed, queues, rec.seats)
            if log.scores != tuple(rec.scores):
                raise RuntimeError(
                    f"game {rec.deal} of {rec.seats} played again ends otherwise; not recorded"
                )
            logs.append(log)
    return logs


def _step_through(
    rules: RuleConfig, k: int, seed: int, queues: list[list[int]], seats: Sequence[str]
) -> GameLog:
    """The record of the game with dice seed ``seed`` on the runner's dice, seat ``s`` taking the
    actions ``queues[s]`` in turn."""
    dice, slot = SeededDice(1), np.zeros(1, dtype=np.int64)
    eng = make_engine(rules, 1, k, dice=dice)
    dice.start(slot, [seed])
    eng.reset(slot)
    log = GameLog(rules, tuple(seats), int(seed), "runner")
    while not eng.done[0]:
        game = eng.to_game(0)
        queue = queues[game.current_player]
        if not queue:
            raise RuntimeError(f"game of seed {seed}: seat {game.current_player} has no action noted")
        log.add(game, queue.pop(0))
        eng.step(np.array([log.decisions[-1].action]), slot)
    log.finish(eng.to_game(0))
    return log
