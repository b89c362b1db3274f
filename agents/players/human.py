"""A person at the terminal as an agent (``agents.load("human", game=...)``).

The person reads the dice and types a command; a wrong command is explained and asked again.
End of input (Ctrl-D) or ``quit`` raises :class:`HumanQuit`, which ``scripts/play.py`` turns into
a clean exit.

The commands are :data:`SCORECARD_HELP` and :data:`FARKLE_HELP` (``?`` prints them). Bare digits
are refused in a scorecard game (faces to hold, or a box number?); in Farkle they are the dice to
set aside.

>>> import io
>>> from dice_envs.rules import make_rules
>>> from dice_envs.engine import new_game
>>> from dice_envs.encoding import encode
>>> game = new_game(make_rules("spiffel"), seed=0)
>>> game.dice
(2, 2, 4, 4, 6)
>>> out = io.StringIO()
>>> human = HumanAgent(make_rules("spiffel"), input=io.StringIO("k 9\\nk 4 4\\n"), output=out)
>>> game.describe_action(human.act(encode(game, 0), game.action_mask()))
're-throw dice [0, 1, 4] (hold [4, 4])'
>>> "faces are digits 1-6" in out.getvalue()  # the wrong hold was explained
True
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import TextIO

import numpy as np

from agents.base import Agent, BaseAgent, check_mask
from agents.players.actions import hold_to_reroll_mask, select_mask
from dice_envs.encoding import FarkleView, ScorecardView, decode
from dice_envs.rules import FarkleRules, RuleConfig, ScorecardRules
from dice_envs.rules.farkle import BANK_FLAG
from dice_envs.rules.scorecard import N_REROLL_ACTIONS
from dice_envs.tables import farkle_tables, score_tables, scorecard_tables

__all__ = ["HumanAgent", "HumanQuit", "describe_action", "isatty"]

SCORECARD_HELP = """commands:
  k 6 6 5  (or k665)   hold these faces, re-throw the others (k alone: re-throw all)
  r 1 2    (or r12)    re-throw these faces
  s fives  (or fives, or s 5 for the 5th box)   enter the throw in a box
  (bare digits such as 5 are refused: type k 5 to hold, s 5 to score)
  ?  this help    q  quit"""
FARKLE_HELP = """commands:
  1 5      (or a 15)   set these faces aside and throw the remaining dice
  b 1 5                set these faces aside and bank
  b                    set aside the best-scoring dice and bank
  ?  this help    q  quit"""


class HumanQuit(Exception):
    """The person ended the game (end of input or ``quit``)."""


class _InputError(ValueError):
    pass


def isatty(stream: TextIO | None) -> bool:
    """Whether ``stream`` is a terminal (False for a closed, missing or replaced stream)."""
    try:
        return stream is not None and bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _split_short_forms(words: list[str]) -> list[str]:
    """``k665`` -> ``k 665``, ``r12`` -> ``r 12``, ``a15`` / ``b15`` -> ``a 15`` / ``b 15``."""
    if words and len(words[0]) > 1 and words[0][0] in "krab" and words[0][1:].isdigit():
        return [words[0][0], words[0][1:], *words[1:]]
    return words


def _digits(text: str) -> bool:
    """Whether ``text`` is ASCII digits only (``"²"`` passes ``str.isdigit`` but not ``int``)."""
    return text.isascii() and text.isdigit()


def _faces(args: list[str]) -> list[int]:
    text = "".join(args)
    if not text.isdigit() or any(c not in "123456" for c in text):
        raise _InputError(f"faces are digits 1-6 (like 665 or 6 6 5), got {' '.join(args)!r}")
    return [int(c) for c in text]


def describe_action(rules: RuleConfig, view: ScorecardView | FarkleView, action: int) -> str:
    """Words for ``action`` in the state ``view`` (e.g. "hold [6, 6], re-throw [1, 2, 3]")."""
    a = int(action)
    if isinstance(view, FarkleView):
        mask, bank = a % BANK_FLAG, a >= BANK_FLAG
        chosen = [view.dice[i] for i in range(len(view.dice)) if mask >> i & 1]
        ft = farkle_tables()
        pts = int(ft.points[len(view.dice)][ft.roll_index[view.dice], mask])
        return f"set aside {chosen} ({pts} points) and {'bank' if bank else 'throw on'}"
    assert isinstance(rules, ScorecardRules)
    if a >= N_REROLL_ACTIONS:
        b = a - N_REROLL_ACTIONS
        tab = score_tables(type(rules))
        r = scorecard_tables().roll_index[view.dice]
        pts = int((tab.joker if view.joker else tab.normal)[r, b])
        return f"score {rules.categories[b]} ({pts} points)"
    held = [f for i, f in enumerate(view.dice) if not a >> i & 1]
    thrown = [f for i, f in enumerate(view.dice) if a >> i & 1]
    return f"hold {held}, re-throw {thrown}"


class HumanAgent(BaseAgent):
    """Asks a person for every move (see the module docstring for the commands)."""

    spec = "human"

    def __init__(
        self,
        rules: RuleConfig,
        num_players: int = 1,
        seed: int | None = None,
        input: TextIO | None = None,
        output: TextIO | None = None,
        hint: Agent | None = None,
        name: str = "you",
    ) -> None:
        super().__init__(seed)
        self.rules, self.num_players = rules, num_players
        self.input = input if input is not None else sys.stdin
        self.output = output if output is not None else sys.stdout
        self.hint = hint
        self.name = name

    def say(self, text: str) -> None:
        print(text, file=self.output, flush=True)

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        check_mask(action_mask)
        view = decode(observation, self.rules, self.num_players)
        mask = np.asarray(action_mask)
        self._prompt(view)
        if self.hint is not None:
            self.say(f"  hint: {describe_action(self.rules, view, self.hint.act(observation, action_mask))}")
        while True:
            self.output.write(f"{self.name}> ")
            self.output.flush()
            line = self.input.readline()
            if not line:
                self.say("")
                raise HumanQuit("end of input")
            if not isatty(self.input):
                self.say(line.rstrip("\n"))  # echo piped input so transcripts read well
            words = _split_short_forms(line.strip().lower().replace(",", " ").split())
            if not words:
                self.say("  type a command; ? shows them")
                continue
            if words[0] in ("q", "quit", "exit"):
                raise HumanQuit("quit")
            if words[0] in ("?", "h", "help"):
                self.say(FARKLE_HELP if isinstance(view, FarkleView) else SCORECARD_HELP)
                continue
            try:
                if isinstance(view, FarkleView):
                    return self._farkle(view, words, mask)
                return self._scorecard(view, words, mask)
            except _InputError as exc:
                self.say(f"  {exc}")

    # ------------------------------------------------------------------ prompts
    def _prompt(self, view: ScorecardView | FarkleView) -> None:
        if isinstance(view, FarkleView):
            self.say(f"  dice {list(view.dice)}, turn total {view.turn_total}, banked {view.banked}")
            return
        assert isinstance(self.rules, ScorecardRules)
        r = self.rules
        extra = " (five of a kind: bonus!)" if view.bonus_due else ""
        extra += " (joker)" if view.joker else ""
        self.say(f"  throw {view.throw} of {r.num_throws}: dice {list(view.dice)}{extra}")  # type: ignore[attr-defined]
        if view.throw == 1:
            if view.upper_bonus_paid:
                self.say(f"  upper section: {view.upper_total} (bonus {r.upper_bonus} earned)")
            else:
                need = max(0, r.upper_bonus_threshold - view.upper_total)
                self.say(
                    f"  upper section: {view.upper_total} of {r.upper_bonus_threshold} for the bonus of "
                    f"{r.upper_bonus} ({need} to go)"
                )
        self.say("  would score: " + self.open_box_scores(view))

    def open_box_scores(self, view: ScorecardView) -> str:
        """What the current dice would score in each open box, e.g. ``"ones 2, twos 4, ..."``."""
        assert isinstance(self.rules, ScorecardRules)
        tab = score_tables(type(self.rules))
        row = (tab.joker if view.joker else tab.normal)[scorecard_tables().roll_index[view.dice]]
        cats = self.rules.categories
        return ", ".join(f"{cats[b]} {int(row[b])}" for b in range(len(cats)) if view.boxes[b] is None)

    # ------------------------------------------------------------------ scorecard
    def _box(self, text: str) -> int:
        cats = self.rules.categories  # type: ignore[attr-defined]
        key = text.strip().replace(" ", "_").replace("-", "_")
        if _digits(key) and len(key) <= 3 and 1 <= int(key) <= len(cats):
            return int(key) - 1
        if key in cats:
            return cats.index(key)
        hits = [i for i, c in enumerate(cats) if c.startswith(key)] if key else []
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            raise _InputError(f"{text!r} could be: {', '.join(cats[i] for i in hits)}; type more of the name")
        raise _InputError(f"no box {text!r}; boxes: {', '.join(cats)} (or their numbers 1-{len(cats)})")

    def _ambiguous(self, words: list[str], can_throw: bool) -> str:
        """Why bare digits do nothing in a scorecard game: faces to hold, or a box number to score."""
        text = " ".join(words)
        cats = self.rules.categories  # type: ignore[attr-defined]
        digits = "".join(words)
        ways = []
        if can_throw and all(c in "123456" for c in digits):
            held = f"the {cats[int(digits) - 1]}" if len(digits) == 1 else "those faces"  # boxes 1-6: faces
            ways.append(f"`k {text}` to hold {held} (`r {text}` re-throws them)")
        box = int(digits) if len(words) == 1 and len(digits) <= 3 else 0
        if 1 <= box <= len(cats):
            ways.append(f"`s {digits}` / `s {cats[box - 1]}` to score")
        if not ways:
            return f"{text!r} is neither dice to hold nor a box number (1-{len(cats)}); ? shows the commands"
        return f"{text!r} is {'ambiguous' if len(ways) > 1 else 'not a command'}: type " + ", or ".join(ways)

    def _scorecard(self, view: ScorecardView, words: list[str], mask: np.ndarray) -> int:
        cmd, args = words[0], words[1:]
        cats = self.rules.categories  # type: ignore[attr-defined]
        if cmd in ("k", "keep", "hold", "r", "re", "reroll", "roll", "t", "throw"):
            if not mask[:N_REROLL_ACTIONS].any():
                raise _InputError("no throws left: enter the dice in a box (s BOX)")
            faces = _faces(args) if args else []
            try:
                if cmd in ("k", "keep", "hold"):
                    a = hold_to_reroll_mask(view.dice, faces)
                else:
                    a = select_mask(view.dice, faces if args else view.dice)
            except ValueError as exc:
                raise _InputError(str(exc)) from None
            if a == 0:
                raise _InputError("that re-throws nothing; to keep all five dice, score a box (s BOX)")
            return a
        if cmd in ("s", "score"):
            if not args:
                raise _InputError(f"which box? e.g. s {cats[0]}")
            b = self._box(" ".join(args))
        elif all(_digits(w) for w in words):
            raise _InputError(self._ambiguous(words, bool(mask[:N_REROLL_ACTIONS].any())))
        else:
            b = self._box(" ".join(words))
        a = N_REROLL_ACTIONS + b
        if not mask[a]:
            if view.boxes[b] is not None:
                raise _InputError(f"{cats[b]} is already filled ({view.boxes[b]} points)")
            legal = [cats[int(x) - N_REROLL_ACTIONS] for x in np.flatnonzero(mask) if x >= N_REROLL_ACTIONS]
            raise _InputError(f"the joker rule sends this throw to: {', '.join(legal)}")
        return a

    # ------------------------------------------------------------------ farkle
    def _farkle(self, view: FarkleView, words: list[str], mask: np.ndarray) -> int:
        cmd, args = words[0], words[1:]
        bank = cmd in ("b", "bank")
        if cmd.isdigit():
            args = words
        elif not bank and cmd not in ("a", "aside", "set", "k", "keep", "t", "throw"):
            raise _InputError(f"unknown command {cmd!r}; ? shows the commands")
        assert isinstance(self.rules, FarkleRules)
        ft = farkle_tables()
        row = ft.points[len(view.dice)][ft.roll_index[view.dice]]
        if bank and not args:
            banks = [int(x) for x in np.flatnonzero(mask) if x >= BANK_FLAG]
            if not banks:
                raise _InputError(
                    f"banking needs a turn total over {self.rules.bank_minimum}; the best you can add "
                    f"now makes {view.turn_total + int(row.max())}"
                )
            return max(banks, key=lambda x: (row[x - BANK_FLAG], -x))
        if not args:
            raise _InputError("which dice? e.g. 1 5 sets aside a 1 and a 5")
        try:
            m = select_mask(view.dice, _faces(args))
        except ValueError as exc:
            raise _InputError(str(exc)) from None
        pts = int(row[m])
        if pts <= 0:
            faces = sorted(Counter(_faces(args)).elements())
            raise _InputError(f"{faces} does not score: every die set aside must be part of a combination")
        a = m + (BANK_FLAG if bank else 0)
        if not mask[a]:
            total = view.turn_total + pts
            raise _InputError(
                f"banking needs a turn total over {self.rules.bank_minimum}; this makes {total}"
            )
        return a
