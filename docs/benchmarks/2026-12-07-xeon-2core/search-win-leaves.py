"""How the leaf of the two-player Spiffel win search judges the searching player's own card.

The win search (agents.players.search.win.WinSearch) values each entry of the mover's turn by the
other player's chance at its next turn start. This check replaces that chance by a normal
approximation of the final difference, read from the solitaire points network of
``pretrained:spiffel-search`` (learned from scratch, no solver values): the other's projected lead
``p = d + e_other - e_mover`` (``e``: expected points to come) over a spread ``sd`` per number of
open boxes, measured by solitaire self-play of the points search. ``--scale`` stretches the
spread: a large scale makes the leaf nearly linear in ``p``, i.e. a points search. ``--own-z``
says whether the mover's own card is read with its five-of-a-kind state or, as the first win
feature set read it, with that state unknown (weighed half 0, half 50). Every variant plays
``--games`` seat-balanced games against ``optimal`` on the same deals. ``--exact`` runs only the
normal leaf, over the exact solitaire values (the solver's table, a reference: what the leaf
gives with a perfect projection) instead of the points network.

    python docs/benchmarks/2026-12-07-xeon-2core/search-win-leaves.py --out search-win-leaves.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from scipy.special import ndtr

import agents
from agents.players.model import resolve_model_path
from agents.players.search.agent import load_value_model
from agents.players.search.play import engine_states, play_turns
from agents.players.search.value import LearnedValues
from agents.players.search.win import WinSearch, card_points, random_win_net
from agents.players.search.win_agent import WinSearchAgent
from agents.solver.cache import single_thread_blas
from agents.solver.scorecard import NEG, solve_scorecard, turn_solver
from agents.training.search.learner import match
from dice_envs.engine.scorecard import ScorecardEngine
from dice_envs.io import atomic_write_text
from dice_envs.rules import make_rules
from dice_envs.version import code_revision


class ExactValues:
    """The solver's value table read as the search reads a points network (``values[mask, u, z]``)."""

    def __init__(self, table: np.ndarray, solver) -> None:
        self.table, self.solver = table, solver

    def __getitem__(self, index):
        return self.table[index]


def spreads(solver, values, games: int, seed: int) -> np.ndarray:
    """The spread of final score minus projected score, by open boxes (solitaire self-play)."""
    engine = ScorecardEngine(solver.rules, games, seed=seed)
    g, starts = np.arange(games), []
    for _ in range(solver.k):
        s = engine_states(solver, engine, g)
        starts.append(engine.totals[:, 0] + card_points(values, s))
        play_turns(engine, solver.turn_plans(solver.box_values_of(values, s)), g)
    final = engine.totals[:, 0].astype(float)
    sd = np.zeros(solver.k + 1)
    for k, proj in enumerate(starts):
        sd[solver.k - k] = np.std(final - proj)
    return sd


class NormalLeafSearch(WinSearch):
    """The win search with the other's chance read as ``Phi((p + 1/2) / (scale * sd))``."""

    def __init__(self, solver, values, sd, scale: float, own_z: bool) -> None:
        super().__init__(solver, random_win_net(solver, hidden=(4,), seed=0))
        self.values, self.sd, self.scale, self.own_z = values, sd, scale, own_z

    def box_values(self, own, other, d):
        own, other = np.asarray(own).reshape(-1, 3), np.asarray(other).reshape(-1, 2)
        pts, nxt = self.entries(own)
        out = np.full(pts.shape, NEG)
        legal = nxt >= 0
        j = np.nonzero(legal)[0]
        m, u, z = np.unravel_index(nxt[legal], self.shape)
        diff = np.asarray(d, dtype=float)[j] + pts[legal]
        vals = np.where(diff > 0, 1.0, np.where(diff == 0, 0.5, 0.0))
        live = ~((m == self.full) & (other[j, 0] == self.full))
        card = np.column_stack([m, u, z if self.own_z else np.full(len(z), -1)])[live]
        vals[live] = 1.0 - self.normal(other[j[live]], card, -diff[live])
        out[legal] = vals
        return out

    def normal(self, other, card, lead):
        e_other = card_points(self.values, np.column_stack([other, np.full(len(other), -1)]))
        p = lead + e_other - card_points(self.values, card)
        open_ = [
            self.solver.k - ((c[:, None] >> np.arange(32)) & 1).sum(axis=1) for c in (other[:, 0], card[:, 0])
        ]
        sd = self.scale * np.sqrt(self.sd[open_[0]] ** 2 + self.sd[open_[1]] ** 2) + 1e-9
        return ndtr((p + 0.5) / sd)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--exact", action="store_true", help="the normal leaf over the exact values only")
    args = ap.parse_args()
    rules = make_rules("spiffel")
    solver = turn_solver(rules)
    if args.exact:
        values = ExactValues(solve_scorecard(rules).values, solver)
    else:
        net, _ = load_value_model(resolve_model_path("pretrained:spiffel-search"), rules, 1)
        values = LearnedValues(net, solver)
    sd = spreads(solver, values, 4096, seed=123456)
    opponent = agents.load("optimal", game=rules, num_players=2)
    rows = []
    variants = ((1.0, True),) if args.exact else ((20.0, False), (20.0, True), (1.0, True))
    for scale, own_z in variants:
        bot = WinSearchAgent(rules, 2, net=random_win_net(solver, hidden=(4,), seed=0))
        bot.search = NormalLeafSearch(solver, values, sd, scale, own_z)
        t = time.perf_counter()
        with single_thread_blas():
            rate, se = match(bot, opponent, rules, args.games, args.seed)
        rows.append(
            {
                "scale": scale,
                "own_z": own_z,
                "win_rate": rate,
                "stderr": se,
                "seconds": round(time.perf_counter() - t, 1),
            }
        )
        print(rows[-1], flush=True)
    record = {
        "values": "exact solitaire table" if args.exact else "pretrained:spiffel-search points network",
        "date": time.strftime("%Y-%m-%d"),
        "revision": code_revision(),
        "games": args.games,
        "seed": args.seed,
        "opponent": "optimal",
        "sd_by_open_boxes": sd.round(2).tolist(),
        "rows": rows,
    }
    atomic_write_text(args.out, json.dumps(record, indent=1) + "\n")


if __name__ == "__main__":
    main()
