"""Rooms of the game pad: seats, secret tokens, turns, the log, and the server's bounded set of rooms.

Plain Python (no web framework), so the ASGI app stays a thin layer. The engine's ``apply``
decides every move (:mod:`agents.web.protocol` turns the page's move into an action); the page's
view is :mod:`agents.web.views`', the bots' moves :mod:`agents.web.players`'.

>>> rooms = RoomManager(max_rooms=2)
>>> room, token = rooms.create({"game": "spiffel", "seats": [{"kind": "person"}], "seed": 3})
>>> room.start(token)
>>> room.view()["status"], room.view()["scorecard"]["throws_left"]
('playing', 2)
>>> room.move(token, {"type": "score", "box": "chance"})["scorecard"]["cards"][0]["total"] > 0
True
>>> room.move("forged", {"type": "score", "box": "ones"})
Traceback (most recent call last):
...
agents.web.protocol.PadError: this token holds no seat in room ...
"""

from __future__ import annotations

import math
import secrets
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.evaluation.gamerecord import Decision, GameLog, state_of
from agents.evaluation.runner import MAX_PLAYERS
from agents.solver.scorecard import forget_scorecard
from agents.web import players
from agents.web.protocol import PadError, clean_name, move_action, same_token
from agents.web.views import event_lines, farkle_view, game_over_line, scorecard_view
from dice_envs.engine import FarkleGame, ScorecardGame, new_game
from dice_envs.rules import GAMES, ConfigError, RuleConfig, ScorecardRules, make_rules
from dice_envs.rules.scorecard import N_REROLL_ACTIONS

__all__ = ["Room", "RoomManager", "Seat"]

CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
LOG_SIZE = 40


@dataclass
class Seat:
    """One seat: a person (with a secret token once taken) or an agent."""

    index: int
    kind: str  # "person" or "agent"
    name: str
    spec: str = ""
    token: str | None = None
    agent: Any = field(default=None, repr=False)

    @property
    def taken(self) -> bool:
        """A person seat is taken once someone joined it; agent seats always are."""
        return self.kind == "agent" or self.token is not None

    def public(self) -> dict[str, Any]:
        """What everyone may see of the seat (never its token)."""
        return {k: getattr(self, k) for k in ("index", "kind", "name", "spec", "taken")}


class Room:
    """One game: its seats, its engine state once started, and a log of what happened."""

    def __init__(self, code: str, rules: RuleConfig, seats: list[Seat], seed: int | None) -> None:
        self.code = code
        self.rules = rules
        self.seats = seats
        self.num_players = len(seats)
        self.seed = seed if seed is not None else secrets.randbits(63)
        self.opener_token = secrets.token_urlsafe(24)
        self.game: ScorecardGame | FarkleGame | None = None
        self.version = 0
        self.log: deque[dict[str, Any]] = deque(maxlen=LOG_SIZE)
        self._log_n = 0
        self.last_active = time.monotonic()
        self.held_faces: list[int] = []  # what the mover held at the last re-throw (shown on the pad)
        self._history_seen = 0
        self._final_announced = False
        self.connections = 0
        self.hint_table: Any = None  # the solved table the hints read, once asked (hints.hint_table)
        self.closed = False
        self.on_close: Callable[[Room], None] | None = None
        self.solving: Any = None  # the solve of its bots' tables while it runs (a Future; the app's)
        self.record: GameLog | None = None  # every decision, once started (the game record)
        self.review: dict[str, Any] | None = None  # the review once the game is over (views.review_view)

    # ------------------------------------------------------------------ seats
    @property
    def status(self) -> str:
        """``"waiting"`` (not started), ``"playing"`` or ``"over"``."""
        if self.game is None:
            return "waiting"
        return "over" if self.game.done else "playing"

    def seat_of(self, token: Any) -> Seat:
        """The person seat holding ``token`` (403 for any other token)."""
        for s in self.seats:
            if s.kind == "person" and same_token(token, s.token):
                return s
        raise PadError(403, f"this token holds no seat in room {self.code}")

    def join(self, name: Any = None) -> tuple[Seat, str]:
        """Take the first free person seat; ``(seat, token)``."""
        if self.game is not None:
            raise PadError(409, f"room {self.code} has started; no seat can be joined")
        free = [s for s in self.seats if s.kind == "person" and s.token is None]
        if not free:
            raise PadError(409, f"room {self.code} has no free seat")
        seat = free[0]
        seat.name = clean_name(name, seat.name)
        seat.token = secrets.token_urlsafe(24)
        self._changed(f"{seat.name} joined (seat {seat.index + 1})")
        return seat, seat.token

    def check_start(self, token: Any) -> None:
        """Refuse (403, 409) what :meth:`start` would refuse, changing nothing."""
        if not same_token(token, self.opener_token):
            raise PadError(403, f"only the opener of room {self.code} can start the game")
        if self.game is not None:
            raise PadError(409, f"room {self.code} has already started")
        waiting = [s.index + 1 for s in self.seats if not s.taken]
        if waiting:
            raise PadError(409, f"seats {waiting} are still free: wait until everyone joined")

    def start(self, token: Any) -> None:
        """The opener starts the game once every person seat is taken."""
        self.check_start(token)
        self.game = new_game(self.rules, self.num_players, seed=self.seed)
        specs = tuple(s.spec if s.kind == "agent" else "human" for s in self.seats)
        self.record = GameLog(self.rules, specs, self.seed)
        self._changed("the game starts")
        self._record()

    # ------------------------------------------------------------------ moves
    def move(self, token: Any, body: Mapping[str, Any]) -> dict[str, Any]:
        """A person's move: token checked, turn checked, action checked by the engine; new view."""
        seat = self.seat_of(token)
        g = self.game
        if g is None:
            raise PadError(409, f"room {self.code} has not started yet")
        if g.done:
            raise PadError(409, "the game is over; no move is possible")
        if g.current_player != seat.index:
            mover = self.seats[g.current_player]
            raise PadError(409, f"it is {mover.name}'s turn (seat {mover.index + 1}), not yours")
        self.apply(move_action(g, body))
        return self.view()

    def apply(self, action: int) -> None:
        """Apply an engine action for the player to move (``PadError`` 400 if the engine refuses)."""
        g = self.game
        assert g is not None and not g.done and self.record is not None
        mover = self.seats[g.current_player]
        before = state_of(g)
        held: list[int] | None = None
        if isinstance(g, ScorecardGame) and 0 < action < N_REROLL_ACTIONS:
            held = [f for i, f in enumerate(g.dice) if not action >> i & 1]
        try:
            g.apply(action)  # ValueError naming the legal actions; the state is then unchanged
        except ValueError as exc:
            raise PadError(400, f"illegal move: {exc}") from None
        self.record.decisions.append(Decision(mover.index, before, int(action)))
        self.held_faces = held or []
        if held is not None:
            faces = " ".join(map(str, held)) or "nothing"
            self._note(f"{mover.name} holds {faces}, re-throws {len(g.dice) - len(held)} dice", "roll")
        self._record()
        self._changed()

    def bot_action(self) -> int | None:
        """The action of the agent to move (``None`` when a person moves or the game is over)."""
        g = self.game
        if g is None or g.done or self.seats[g.current_player].kind != "agent":
            return None
        return players.bot_action(self.seats[g.current_player].agent, g)

    def close(self) -> None:
        """Let go of the solved tables once the game is over or the room dropped: its agents and
        hint table (then :attr:`on_close`, once)."""
        if self.closed:
            return
        self.closed = True
        self.hint_table = None
        for s in self.seats:
            s.agent = None
        if self.on_close is not None:
            self.on_close(self)

    # ------------------------------------------------------------------ log
    def _note(self, text: str, kind: str = "info") -> None:
        self._log_n += 1
        self.log.append({"n": self._log_n, "text": text, "kind": kind})

    def _changed(self, text: str | None = None) -> None:
        if text:
            self._note(text)
        self.version += 1
        self.last_active = time.monotonic()

    def _record(self) -> None:
        """Turn the engine's new history entries into log lines."""
        g = self.game
        assert g is not None
        names = [s.name for s in self.seats]
        new = g.history[self._history_seen :]
        self._history_seen = len(g.history)
        for text, kind in event_lines(g, new, names):
            self._note(text, kind)
        if isinstance(g, FarkleGame) and g.final_round_by is not None and not self._final_announced:
            self._final_announced = True
            who, banked = names[g.final_round_by], g.banked[g.final_round_by]
            self._note(f"FINAL ROUND: {who} reached {banked}; the round is played out", "final")
        if g.done:
            assert self.record is not None
            self.record.finish(g)
            self._note(game_over_line(g, names), "over")
            self.close()

    # ------------------------------------------------------------------ view
    def view(self) -> dict[str, Any]:
        """The public state of the room (no tokens), as the page draws it."""
        g = self.game
        out: dict[str, Any] = {
            "code": self.code,
            "game": self.rules.game,
            "rules": self.rules.to_dict(),
            "status": self.status,
            "version": self.version,
            "seats": [s.public() for s in self.seats],
            "current": None if g is None or g.done else g.current_player,
            "log": list(self.log),
        }
        if g is None:
            return out
        out["totals"] = g.totals()
        out["winners"] = g.winners() if g.done else None
        if isinstance(g, ScorecardGame):
            out["scorecard"] = scorecard_view(g, self.held_faces)
        else:
            out["farkle"] = farkle_view(g)
        return out


class RoomManager:
    """All rooms of a server, bounded: at most ``max_rooms``; idle rooms expire after ``idle_ttl`` s."""

    def __init__(
        self,
        max_rooms: int = 50,
        max_connections: int = 16,
        idle_ttl: float = 3600.0,
        models: Mapping[str, Path] | None = None,
    ) -> None:
        if max_rooms < 1 or max_connections < 1:
            raise ConfigError(
                f"max_rooms and max_connections must be >= 1, got {max_rooms}, {max_connections}"
            )
        if not (isinstance(idle_ttl, (int, float)) and math.isfinite(idle_ttl) and idle_ttl > 0):
            raise ConfigError(f"idle_ttl must be a positive finite number of seconds, got {idle_ttl!r}")
        self.max_rooms = max_rooms
        self.max_connections = max_connections
        self.idle_ttl = idle_ttl
        self.models: dict[str, Path] = dict(models or {})
        self.rooms: dict[str, Room] = {}
        self._lock = threading.Lock()  # create() may run in a worker thread

    def get(self, code: Any) -> Room:
        """The room of ``code`` (404 naming the code otherwise)."""
        key = code.strip().upper() if isinstance(code, str) else None
        room = self.rooms.get(key) if key else None
        if room is None:
            raise PadError(404, f"no room {code!r} (rooms end when the server stops or after an idle hour)")
        return room

    def expire(self) -> None:
        """Drop rooms idle for longer than ``idle_ttl`` seconds and without connections."""
        now = time.monotonic()
        for code in [
            c for c, r in self.rooms.items() if now - r.last_active > self.idle_ttl and not r.connections
        ]:
            self.rooms.pop(code).close()

    def hint_table(self, rules: RuleConfig) -> Any:
        """The hint table an open room of ``rules`` holds (``None`` when none does)."""
        tables = (r.hint_table for r in list(self.rooms.values()) if r.rules == rules)
        return next((t for t in tables if t is not None), None)

    def _closed(self, room: Room) -> None:
        """Free the solver's table of a closed room's rules when no open room has them."""
        if isinstance(room.rules, ScorecardRules) and not any(
            r.rules == room.rules and not r.closed for r in list(self.rooms.values())
        ):
            forget_scorecard(room.rules)

    def options(self) -> dict[str, Any]:
        """Games, their rule parameters with defaults, and the agent specs each accepts."""
        games = {}
        for name, cls in GAMES.items():
            agents = players.available_specs(cls(), self.models)
            games[name] = {"rules": cls().to_dict(), "agents": agents, "max_players": MAX_PLAYERS}
        return {"games": games, "max_rooms": self.max_rooms, "max_connections": self.max_connections}

    def create(self, body: Any) -> tuple[Room, str]:
        """A new room from a request body; ``(room, opener token)``.

        ``body``: ``{"game": name, "rules": {param: value}, "seats": [{"kind": "person", "name": ...}
        | {"kind": "agent", "spec": ...}], "name": the opener's name, "seed": optional int}``.
        The opener sits in the first person seat (when there is one); the token returned holds
        that seat and the right to start the game.
        """
        if not isinstance(body, dict):
            raise PadError(400, f"the request body must be a JSON object, got {type(body).__name__}")
        unknown = set(body) - {"game", "rules", "seats", "name", "seed"}
        if unknown:
            raise PadError(400, f"unknown fields {sorted(unknown)}; allowed: game, rules, seats, name, seed")
        with self._lock:
            self.expire()
            self._check_space()
        params = body.get("rules") or {}
        if not isinstance(params, dict):
            raise PadError(400, f"'rules' must be an object of rule parameters, got {params!r}")
        game = body.get("game", "spiffel")
        try:
            rules = make_rules(str(game), **params)
        except (ConfigError, TypeError) as exc:
            raise PadError(400, str(exc)) from None
        seats_in = body.get("seats")
        if not isinstance(seats_in, list) or not 1 <= len(seats_in) <= MAX_PLAYERS:
            raise PadError(400, f"'seats' must be a list of 1 to {MAX_PLAYERS} seats, got {seats_in!r}")
        seed = body.get("seed")
        if seed is not None and (
            isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63
        ):
            raise PadError(400, f"'seed' must be a non-negative integer below 2**63, got {seed!r}")
        seats: list[Seat] = []
        for i, s in enumerate(seats_in):
            if not isinstance(s, dict) or s.get("kind") not in ("person", "agent"):
                raise PadError(
                    400, f"seat {i + 1} must be {{'kind': 'person'}} or {{'kind': 'agent', 'spec': ...}}"
                )
            if s["kind"] == "person":
                seats.append(Seat(i, "person", clean_name(s.get("name"), f"Player {i + 1}")))
            else:
                try:
                    spec = players.check_spec(s.get("spec"), self.models)
                except ConfigError as exc:
                    raise PadError(400, f"seat {i + 1}: {exc}") from None
                seats.append(Seat(i, "agent", f"{spec} (bot)", spec=spec))
        code = self._new_code()
        room = Room(code, rules, seats, seed)
        room.on_close = self._closed
        for s in [s for s in seats if s.kind == "agent"]:
            try:
                s.agent = players.make_agent(s.spec, rules, len(seats), room.seed + 1 + s.index, self.models)
            except ConfigError as exc:
                raise PadError(400, f"seat {s.index + 1}: {exc}") from None
        room._note(f"room {code} opened for {rules.game}")
        if any(s.kind == "person" for s in seats):
            _seat, room.opener_token = room.join(body.get("name"))
        with self._lock:
            self._check_space()
            self.rooms[code] = room
        room._changed()
        return room, room.opener_token

    def _check_space(self) -> None:
        if len(self.rooms) >= self.max_rooms:
            raise PadError(503, f"the server holds its maximum of {self.max_rooms} rooms; try again later")

    def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            if code not in self.rooms:
                return code
