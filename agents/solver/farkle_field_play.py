"""How the turns of a fixed Farkle agent end, exactly: its decisions read batched over every
decision of every turn it can face (the half of :mod:`agents.solver.farkle_field`'s solves that
reads the agents of a field).

:class:`FieldPlay` is the part of that module's model that reads agents. It reads from the model
``rules``, ``N`` (seats), ``X`` (the target in steps), ``R`` (the range of totals), ``pad``,
``policies`` (per seat the agent, or None) and ``tops``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from agents.solver.farkle_win import STEP
from dice_envs.engine import farkle_turn as turn

__all__ = ["FieldPlay"]


class FieldPlay:
    """Reads the turns of the fixed agents of a field (see the module docstring)."""

    rules: Any
    N: int
    X: int
    R: int
    pad: int
    policies: list[Any]
    _dists: dict[int, dict[tuple[int, ...], tuple[np.ndarray, ...]]]

    def tops(self, totals: np.ndarray, m: int) -> np.ndarray:  # pragma: no cover - the model's
        raise NotImplementedError

    def field_dist(
        self, m: int, totals: np.ndarray, rows: int, final: bool = False
    ) -> tuple[np.ndarray, ...]:
        """:meth:`field_turns` of seat ``m``'s agent at ``totals`` ``(n, N)`` (steps), ``rows``
        wide (at least each position's forced bank plus a selection); ``final``: the positions
        are final-round ones (the seats before ``m`` have had their last turn).

        Where the agent's play reads less than every total (:attr:`agents.base.BaseAgent.totals_read`),
        its turns end alike wherever what it reads is alike (the forced bank reads the own and the
        highest other total too), so they are read once per such key in a solve and kept:
        ``"own-and-highest"`` keys on those two totals; ``"finished-top"``, in the final round, on
        the totals of the seats still to play, the highest finished total and how many finished
        seats hold it."""
        read = getattr(self.policies[m], "totals_read", "all")
        if read == "own-and-highest":
            keys = np.stack([totals[:, m], np.delete(totals, m, axis=1).max(axis=1)], axis=1)
        elif read == "finished-top" and final and m > 0:
            top = totals[:, :m].max(axis=1)
            keys = np.column_stack([top, (totals[:, :m] == top[:, None]).sum(axis=1), totals[:, m:]])
        else:
            return self.field_turns(m, totals, self.tops(totals, m), rows)
        uniq, inv = np.unique(keys, axis=0, return_inverse=True)
        memo = self._dists.setdefault(m, {})
        names = [tuple(k) for k in uniq.tolist()]
        todo = np.array([i for i, k in enumerate(names) if k not in memo], dtype=np.int64)
        if todo.size:
            rep = np.zeros((todo.size, self.N), dtype=np.int64)  # one position per key
            k = uniq[todo]
            if read == "own-and-highest":
                rep[:, m], rep[:, (m + 1) % self.N] = k[:, 0], k[:, 1]
            else:  # the top in the first finished seats, the others at 0 (below it or equal to it)
                rep[:, :m] = np.where(np.arange(m) < k[:, 1:2], k[:, :1], 0)
                rep[:, m:] = k[:, 2:]
            tops = self.tops(rep, m)
            pb, pf, pbust = self.field_turns(m, rep, tops, int(tops.max()) + self.pad + 1)
            memo.update((names[i], (pb[j], pf[j], pbust[j])) for j, i in enumerate(todo.tolist()))
        pb = np.zeros((len(uniq), rows))
        for j, k in enumerate(names):
            b = memo[k][0]
            if b[rows:].any():
                raise AssertionError(f"a turn of seat {m} banks past the {rows} rows asked for")
            pb[j, : min(len(b), rows)] = b[:rows]
        inv = inv.reshape(-1)
        pf = np.array([memo[k][1] for k in names])
        pbust = np.array([memo[k][2] for k in names])
        return pb[inv], pf[inv], pbust[inv]

    def field_turns(self, m: int, totals: np.ndarray, tops: np.ndarray, rows: int) -> tuple[np.ndarray, ...]:
        """How the turns of seat ``m``'s agent end, exactly: ``(P(bank t), P(farkle),
        P(farkle on the first throw))`` per position, its decisions read batched."""
        from dice_envs.forward import farkle_throws

        n = len(totals)
        tt = turn.farkle_turn_tables()
        pbank, pf, pbust = np.zeros((n, rows)), np.zeros(n), np.zeros(n)
        mass = np.zeros((n, rows, 7))
        mass[:, 0, 6] = 1.0
        for t in range(rows):
            for k in range(1, 7):
                at = np.flatnonzero(mass[:, t, k])
                if not at.size:
                    continue
                p = mass[at, t, k]
                throws, probs = farkle_throws(k)
                bust = turn.is_farkle(tt, throws)
                lost = p * probs[bust].sum()
                (pbust if t == 0 else pf)[at] += lost
                scoring, sp = throws[~bust], probs[~bust]
                size = max(1, 65536 // scoring.size)  # decisions read per call: 65,536 at most
                for rows_i in np.array_split(at, range(size, at.size, size)):
                    r = np.repeat(rows_i, scoring.size)
                    th = np.tile(scoring, rows_i.size)
                    pp = np.repeat(mass[rows_i, t, k], scoring.size) * np.tile(sp, rows_i.size)
                    i, actions, w = self.decide(m, totals[r], t, th)
                    r, th, pp = r[i], th[i], pp[i] * w
                    mask, bank = turn.split_action(actions)
                    t2, left = turn.set_aside(tt, th, t * STEP, mask)
                    t2 = t2 // STEP
                    bank = bank | (t2 >= tops[r])
                    np.add.at(pbank, (r[bank], t2[bank]), pp[bank])
                    on = ~bank
                    np.add.at(mass, (r[on], t2[on], left[on]), pp[on])
        return pbank, pf, pbust

    def decide(
        self, m: int, totals: np.ndarray, t: int, throws: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What seat ``m``'s agent does at these decisions, as ``(decision, action, probability)``
        rows: one per decision for an agent that decides (``act_batch``), one per action it may
        take for an agent that mixes (``action_probabilities(observations, masks)``, e.g.
        ``random``: read as its mixed strategy, not as one draw of it). Legality is checked."""
        from dice_envs.engine.farkle import FarkleEngine
        from dice_envs.opponents import batch_actions

        n = len(totals)
        eng = FarkleEngine(self.rules, n, self.N, seed=0)
        eng.banked[:] = totals * STEP
        eng.turns[:], eng.current[:], eng.turn_total[:], eng.roll[:] = 0, m, t * STEP, throws
        eng.first_throw[:], eng.done[:], eng.to_throw[:] = t == 0, False, 0
        eng.final_round_by[:] = np.where((totals >= self.X).any(axis=1), 0, -1)
        masks = eng.action_masks()
        agent = self.policies[m]
        if callable(getattr(agent, "action_probabilities", None)):
            probs = np.asarray(agent.action_probabilities(eng.observe(m), masks), dtype=np.float64)
            i, actions = np.nonzero(probs)
            p = probs[i, actions]
            if not masks[i, actions].all() or not np.allclose(np.bincount(i, p, n), 1.0) or (p < 0).any():
                raise ValueError(
                    f"the agent of seat {m} gave chances to illegal actions, or not summing to 1"
                )
            return i, actions, p
        actions = batch_actions(agent, eng.observe(m), masks)
        if not masks[np.arange(n), actions].all():
            raise ValueError(f"the agent of seat {m} chose an illegal action in a solved position")
        return np.arange(n), actions, np.ones(n)
