"""Built-in agents: every agent plays every ruleset; specs; determinism; strategy checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import agents
from agents.base import Agent
from agents.players.actions import hold_to_reroll_mask, select_mask
from agents.registry import known_specs
from agents.solver.scorecard import turn_solver
from dice_envs.encoding import encode
from dice_envs.engine import FarkleGame, new_game
from dice_envs.rules import ConfigError, make_rules

SCORECARD_GAMES = ["spiffel", "dice_poker", "yahtzee"]
SCORECARD_SPECS = ["random", "greedy", "heuristic", "optimal"]
FARKLE_SPECS = ["random", "greedy", "heuristic", "max-expected", "threshold:1000"]
# The 15-box optimal agent needs the Dice Poker table (a minute to solve); it is exercised in
# tests/test_solver.py, which shares the session cache.
CHEAP = [(g, s) for g in SCORECARD_GAMES for s in SCORECARD_SPECS if (g, s) != ("dice_poker", "optimal")]


def play(game, seats: list[Agent], seed: int):
    """Play one game through the rules engine; the engine rejects any illegal action."""
    n = len(seats)
    for i, s in enumerate(seats):
        if hasattr(s, "reset"):
            s.reset(seed * 100 + i)
    g = new_game(game, num_players=n, seed=seed)
    steps = 0
    while not g.done:
        p = g.current_player
        g.apply(seats[p].act(encode(g, p), g.action_mask()))
        steps += 1
    return g, steps


@pytest.mark.parametrize(("game", "spec"), CHEAP)
def test_scorecard_agent_plays_full_game(game: str, spec: str) -> None:
    rules = make_rules(game)
    for n in (1, 3):
        seats = [agents.load(spec, game=rules, num_players=n, seed=i) for i in range(n)]
        g, _ = play(rules, seats, seed=5)
        assert g.done
        assert all(v is not None for card in g.cards for v in card.boxes)


@pytest.mark.parametrize("spec", FARKLE_SPECS)
def test_farkle_agent_plays_full_game(spec: str) -> None:
    rules = make_rules("farkle", target=3000)
    for n in (1, 2):
        seats = [agents.load(spec, game=rules, num_players=n, seed=i) for i in range(n)]
        g, _ = play(rules, seats, seed=3)
        assert g.done
        assert g.truncated or max(g.totals()) >= 3000


def test_agents_play_rule_variants() -> None:
    variants = [
        make_rules("spiffel", spiffel_bonus_limit=None, upper_bonus_threshold=50),
        make_rules("dice_poker", joker=False, poker_bonus_limit=2),
        make_rules("yahtzee", num_throws=2),
        make_rules("farkle", bank_minimum=0, bankruptcy=False, target=2000),
    ]
    for rules in variants:
        for spec in ("random", "greedy", "heuristic"):
            g, _ = play(rules, [agents.load(spec, game=rules, num_players=2, seed=s) for s in range(2)], 1)
            assert g.done


def test_unknown_spec_lists_known_specs() -> None:
    with pytest.raises(ConfigError) as err:
        agents.load("alphago", game="spiffel")
    msg = str(err.value)
    assert "'alphago'" in msg and all(s in msg for s in ("random", "greedy", "heuristic", "optimal"))
    with pytest.raises(ConfigError, match=r"not available for farkle.*max-expected"):
        agents.load("optimal", game="farkle")
    with pytest.raises(ConfigError, match="not available for spiffel"):
        agents.load("threshold:500", game="spiffel")
    with pytest.raises(ConfigError, match="integer"):
        agents.load("threshold:lots", game="farkle")
    with pytest.raises(ConfigError, match="unknown game"):
        agents.load("random", game="chess")
    assert "max-expected" in known_specs("farkle") and "optimal" in known_specs("yahtzee")


@pytest.mark.parametrize(
    ("game", "spec"), [("spiffel", "random"), ("farkle", "random"), ("spiffel", "greedy")]
)
def test_same_seed_same_game(game: str, spec: str) -> None:
    rules = make_rules(game, **({"target": 2000} if game == "farkle" else {}))

    def run(seed: int) -> list:
        seats = [agents.load(spec, game=rules, num_players=2, seed=seed + i) for i in range(2)]
        g, _ = play(rules, seats, seed=seed)
        return [g.totals(), [type(e).__name__ for e in g.history], len(g.history)]

    assert run(11) == run(11)


def test_random_agent_reset_reseeds() -> None:
    a = agents.load("random", game="spiffel", seed=1)
    mask = np.ones(45, dtype=np.int8)
    first = [a.act(np.zeros(1), mask) for _ in range(20)]
    a.reset(1)
    assert [a.act(np.zeros(1), mask) for _ in range(20)] == first


@pytest.mark.parametrize(
    ("game", "spec"), [("yahtzee", "optimal"), ("dice_poker", "heuristic"), ("farkle", "max-expected")]
)
def test_act_batch_equals_act(game: str, spec: str) -> None:
    rules = make_rules(game)
    agent = agents.load(spec, game=rules, seed=0)
    obs, masks = [], []
    for seed in range(12):
        g = new_game(rules, seed=seed)
        obs.append(encode(g, 0))
        masks.append(g.action_mask())
    batch = agent.act_batch(np.array(obs), np.array(masks))
    assert batch.tolist() == [agent.act(o, m) for o, m in zip(obs, masks, strict=True)]


def test_strength_order_on_spiffel() -> None:
    """random < greedy < heuristic < optimal in mean score (300 solitaire games, same dice seeds)."""
    rules = make_rules("spiffel")
    means = {}
    for spec in SCORECARD_SPECS:
        agent = agents.load(spec, game=rules, seed=0)
        means[spec] = np.mean([play(rules, [agent], seed=s)[0].total(0) for s in range(300)])
    assert means["random"] + 80 < means["greedy"] < means["heuristic"] < means["optimal"], means
    assert means["optimal"] > 240, means


def test_farkle_heuristic_beats_random_and_greedy() -> None:
    rules = make_rules("farkle")
    for rival in ("random", "greedy"):
        wins = 0.0
        for s in range(60):
            seats = [
                agents.load("heuristic", game=rules, num_players=2),
                agents.load(rival, game=rules, num_players=2),
            ]
            if s % 2:  # alternate who starts
                seats.reverse()
            g, _ = play(rules, seats, seed=s)
            me = 1 if s % 2 else 0
            wins += (me in g.winners()) / len(g.winners())
        assert wins / 60 > 0.6, (rival, wins)


# ------------------------------------------------------------------------- crafted Farkle states
def _farkle(opening, banked=(0, 0), final_round_by=None, **rules):
    g = FarkleGame(make_rules("farkle", **rules), num_players=len(banked), seed=0, opening=opening)
    g.banked[:] = list(banked)
    g.final_round_by = final_round_by
    return g


def _act(spec: str, g: FarkleGame) -> tuple[list[int], bool]:
    agent = agents.load(spec, game=g.rules, num_players=g.num_players)
    a = agent.act(encode(g, g.current_player), g.action_mask())
    mask, bank = a % 64, a >= 64
    return [g.dice[i] for i in range(6) if mask >> i & 1], bank


def test_threshold_agent_banks_at_its_threshold() -> None:
    g = _farkle((1, 1, 1, 5, 2, 3), banked=(0,))
    assert _act("threshold:1000", g) == ([1, 1, 1, 5], True)
    chosen, bank = _act("threshold:2000", g)
    assert not bank and 1 in chosen
    assert _act("threshold:0", _farkle((1, 2, 3, 4, 6, 6), banked=(0,))) == (
        [1],
        False,
    )  # 100 <= 350: cannot bank


def test_heuristic_farkle_plays_the_final_round() -> None:
    # An opponent has reached the target: 9000 + 1050 does not beat 10500, so it throws on...
    assert not _act("heuristic", _farkle((1, 1, 1, 5, 2, 3), banked=(9000, 10500), final_round_by=1))[1]
    # ... while 9500 + 1050 does, so it banks.
    assert _act("heuristic", _farkle((1, 1, 1, 5, 2, 3), banked=(9500, 10500), final_round_by=1))[1]
    # Reaching the target banks at once.
    assert _act("heuristic", _farkle((1, 1, 1, 5, 2, 3), banked=(9000, 0)))[1]


def test_max_expected_agent_on_crafted_throws() -> None:
    # Three pairs (1500) with hot dice: six fresh dice are worth more than banking 1500.
    chosen, bank = _act("max-expected", _farkle((2, 2, 3, 3, 4, 4), banked=(0,)))
    assert chosen == [2, 2, 3, 3, 4, 4] and not bank
    # A single 5 from six dice: keep the 5 alone and throw five dice (banking is not allowed).
    assert _act("max-expected", _farkle((2, 2, 3, 4, 5, 6), banked=(0,))) == ([5], False)


# ------------------------------------------------------------------------- dice helpers
def test_canonical_masks_are_legal() -> None:
    g = new_game(make_rules("spiffel"), seed=4)
    legal = set(g.legal_actions())
    for hold in ([], [g.dice[0]], list(g.dice[:4])):
        assert hold_to_reroll_mask(g.dice, hold) in legal
    with pytest.raises(ValueError, match="do not hold"):
        select_mask((1, 2, 3, 4, 5), [6])


def test_load_refuses_options_an_agent_does_not_take() -> None:
    with pytest.raises(ConfigError, match=r"takes no option 'upper_bonus_threshold'.*make_rules"):
        agents.load("heuristic", game="spiffel", upper_bonus_threshold=60)
    with pytest.raises(ConfigError, match="agent 'random' takes no option 'foo'"):
        agents.load("random", game="farkle", foo=1)
    tuned = agents.load("heuristic", game=make_rules("spiffel", upper_bonus_threshold=60))
    assert tuned.rules.upper_bonus_threshold == 60  # rule parameters travel with the rules


@pytest.mark.parametrize("spec", ["greedy", "heuristic", "max-expected", "threshold:600"])
@pytest.mark.parametrize("players", [1, 2, 3])
def test_vectorized_farkle_agents_choose_as_act(spec: str, players: int) -> None:
    """The array-written act_batch of every Farkle agent makes act's choice in every row, over
    states of real games (races, final rounds and hot dice included: small target)."""
    rules = make_rules("farkle", target=2500, max_turns=30)
    agent = agents.load(spec, game=rules, num_players=players, seed=0)
    obs, masks = [], []
    for seed in range(25):
        g = new_game(rules, players, seed=seed)
        rng = np.random.default_rng(seed)
        while not g.done:
            obs.append(encode(g, g.current_player))
            masks.append(g.action_mask())
            legal = g.legal_actions()
            banks = [a for a in legal if a >= 64]
            pool = banks if banks and rng.random() < 0.6 else legal  # bank often: races happen
            g.apply(pool[int(rng.integers(len(pool)))])
    assert len(obs) > 300
    if players > 1:
        assert any(o[47] == 1 for o in obs)  # final rounds were played
    batch = agent.act_batch(np.array(obs), np.array(masks))
    assert batch.tolist() == [agent.act(o, m) for o, m in zip(obs, masks, strict=True)]


@pytest.mark.parametrize(
    ("game", "spec"),
    [(g, s) for g, s in CHEAP if s != "random"],
)
def test_vectorized_scorecard_agents_choose_as_act(game: str, spec: str) -> None:
    """The greedy agent's table-driven act_batch, and the planning agents' (heuristic, optimal),
    which read the observations as arrays and plan the batch's turns together, equal act in every
    row, jokers included (five-of-a-kinds are injected often so bonus and joker states occur)."""
    rules = make_rules(game)
    agent = agents.load(spec, game=rules, num_players=2, seed=0)
    obs, masks = [], []
    for seed in range(15):
        g = new_game(rules, 2, seed=seed)
        rng = np.random.default_rng(seed)
        while not g.done:
            obs.append(encode(g, g.current_player))
            masks.append(g.action_mask())
            if rng.random() < 0.25:
                g.dice_source.inject(*[int(rng.integers(1, 7))] * 5)
            legal = g.legal_actions()
            g.apply(legal[int(rng.integers(len(legal)))])
    joker_col = 36 + rules.num_throws + 2 * len(rules.categories) + 5
    assert any(o[joker_col] == 1 for o in obs)  # joker states were met
    batch = agent.act_batch(np.array(obs), np.array(masks))
    alone = agents.load(spec, game=rules, num_players=2, seed=0)  # plans of its own, one turn at a time
    assert batch.tolist() == [alone.act(o, m) for o, m in zip(obs, masks, strict=True)]


@pytest.mark.parametrize(
    ("game", "spec"),
    [(g, s) for g, s in CHEAP if s in ("heuristic", "optimal")],
)
def test_planning_agents_plan_a_card_alike_alone_or_in_a_batch(game: str, spec: str) -> None:
    """act_batch plans the turns it has not seen together (in chunks): each card's plan (box
    values, keep values, value) is bit for bit the plan of that card alone, whatever its neighbours."""
    rules = make_rules(game)
    solver = turn_solver(rules)
    rng = np.random.default_rng(1)

    def fresh() -> Any:  # an agent with an empty plan cache, planning 7 cards at a time
        agent = agents.load(spec, game=rules, seed=0)
        cache = agent._plan_cache if spec == "heuristic" else agent.solution._plans
        cache.chunk = 7
        if spec == "optimal":  # a solution of its own over the same value table
            agent.solution = type(agent.solution)(rules, agent.solution.values)
        return agent

    values = fresh().solution.values if spec == "optimal" else None
    cards: list[tuple[int, int, int]] = []
    while len(cards) < 40:  # the optimum's table solves only the cards that can occur
        card = (
            int(rng.integers((1 << solver.k) - 1)),
            int(rng.integers(solver.T + 1)),
            int(rng.integers(solver.Z)),
        )
        if values is None or np.isfinite(values[card]):
            cards.append(card)
    cards += cards[:3]  # a card twice in one batch
    batch = fresh()._plans(cards)
    assert batch[40] is batch[0] and len({id(p) for p in batch}) == 40
    for card, plan in zip(cards, batch, strict=True):
        (alone,) = fresh()._plans([card])
        # exact: on one machine a card's plan must not depend on its neighbours in the batch
        assert np.array_equal(plan.box_values, alone.box_values), card
        assert plan.value == alone.value and np.isfinite(plan.value), card
        assert len(plan.keep_values) == rules.num_throws - 1
        for kv, kv_alone in zip(plan.keep_values, alone.keep_values, strict=True):
            assert np.array_equal(kv, kv_alone), card


def test_heuristic_act_batch_refuses_rows_without_dice() -> None:
    rules = make_rules("spiffel")
    agent = agents.load("heuristic", game=rules, seed=0)
    g = new_game(rules, seed=0)
    obs, mask = encode(g, 0), g.action_mask()
    blank = obs.copy()
    blank[:30] = 0.0  # the dice one-hots
    with pytest.raises(ValueError, match="shows no dice"):
        agent.act_batch(np.array([obs, blank]), np.array([mask, mask]))
    with pytest.raises(ValueError, match="do not fit spiffel"):
        agent.act_batch(obs[None, :-1], mask[None])
