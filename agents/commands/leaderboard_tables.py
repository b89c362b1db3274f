"""The markdown sections of the leaderboard page (:mod:`agents.commands.leaderboard`).

Each section is a heading, a sentence saying what the table ranks by, what its ``±`` or ``[..]``
is (a 95% confidence interval) and how many games and decisions it counts, then the table; rank 1
is the best agent. The evaluation guide explains each table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.evaluation.exploitability import exploitability_table
from agents.evaluation.regret import FARKLE_MISTAKES, FarkleRegretResult, RegretResult

__all__ = [
    "REFERENCE",
    "exploitability_section",
    "farkle_regret_section",
    "farkle_regret_table",
    "farkle_solitaire_section",
    "field_regret_section",
    "reference_result",
    "scorecard_section",
    "scorecard_table",
    "tournament_section",
    "tournament_tables",
]

#: The two-player Farkle agent the exact tables describe (its loss is 0 by definition).
REFERENCE = "win-optimal"


def _f(x: float | None, nd: int = 1) -> str:
    return "–" if x is None else f"{x:.{nd}f}"


def _half(ci: tuple[float, float] | list[float]) -> float:
    return (ci[1] - ci[0]) / 2


def _count(values: list[int]) -> str:
    """``"3,700"`` or ``"2,977–3,728"``: the range of per-agent counts."""
    lo, hi = min(values), max(values)
    return f"{lo:,}" if lo == hi else f"{lo:,}–{hi:,}"


# ------------------------------------------------------------------------ scorecard games
def scorecard_table(summary: dict[str, Any], regrets: Mapping[str, RegretResult] | None = None) -> list[str]:
    """Markdown rows of a solitaire scorecard ``results.json`` dict: ranked by regret per game
    (ascending; equal regrets by higher mean score) when ``regrets`` (per agent spec) are given,
    else by mean score (with the gap to the exact optimum)."""
    stats = summary["agents"]
    if regrets:
        order = sorted(stats, key=lambda spec: (regrets[spec].mean, -stats[spec]["mean_score"]))
        lines = [
            "| rank | agent | regret per game ± 95% CI | mean score ± 95% CI | median | upper bonus "
            "| five of a kind |",
            "|---:|---|---:|---:|---:|---:|---:|",
        ]
    else:
        order = sorted(stats, key=lambda spec: -stats[spec]["mean_score"])
        lines = [
            "| rank | agent | mean score ± 95% CI | median | upper bonus | five of a kind | gap to optimum |",
            "|---:|---|---:|---:|---:|---:|---:|",
        ]
    for rank, spec in enumerate(order, 1):
        s = stats[spec]
        score = f"{s['mean_score']:.1f} ± {s['mean_score'] - s['ci95'][0]:.1f}"
        rates = f"{s['median']:.0f} | {s['upper_bonus_rate']:.1%} | {s['five_kind_rate']:.1%}"
        if regrets:
            r = regrets[spec]
            lines.append(f"| {rank} | `{spec}` | {r.mean:.2f} ± {_half(r.ci95):.2f} | {score} | {rates} |")
        else:
            lines.append(f"| {rank} | `{spec}` | {score} | {rates} | {_f(s['gap_to_optimum'], 2)} |")
    return lines


def scorecard_section(
    summary: dict[str, Any], regrets: Mapping[str, RegretResult] | None = None
) -> list[str]:
    """Heading, what the table ranks by and counts, and :func:`scorecard_table`."""
    game, games = summary["game"], summary["games"]
    optimum = summary.get("optimum")
    best = "" if optimum is None else f" of {optimum:.2f} points per game"
    score_note = (
        f"Mean score ± 95% CI, median and rates: a series of {games:,} games per agent, the same dice "
        "for every agent."
    )
    if regrets:
        first = next(iter(regrets.values()))
        decisions = _count([r.decisions for r in regrets.values()])
        text = [
            f"## {game} — solitaire, ranked by regret against the exact optimum{best}",
            "",
            "Regret per game: the points an agent's decisions lose against the solver's value table "
            "(each decision scored: the optimal value of the state minus that of the action taken), "
            f"summed over a game; mean over {first.games:,} games per agent ({decisions} decisions "
            f"each) ± 95% CI. {score_note}",
        ]
    else:
        text = [
            f"## {game} — solitaire, ranked by mean score" + (f" (exact optimum{best})" if best else ""),
            "",
            f"{score_note} No regret (`--no-exact`): close agents' order here is noise.",
        ]
    return [*text, "", *scorecard_table(summary, regrets), ""]


# ------------------------------------------------------------------------ two-player Farkle
def reference_result() -> FarkleRegretResult:
    """The row of :data:`REFERENCE`: no loss by definition (every choice it makes is the tables' best)."""
    kinds = dict.fromkeys(FARKLE_MISTAKES, 0.0)
    return FarkleRegretResult(REFERENCE, REFERENCE, 0, 0.0, (0.0, 0.0), kinds, 0.0, 0, ())


def farkle_regret_table(regrets: Mapping[str, FarkleRegretResult]) -> list[str]:
    """Markdown rows ranked by chance of winning lost per game (ascending), split by kind of mistake."""
    kinds = " | ".join(FARKLE_MISTAKES)
    lines = [
        f"| rank | agent | chance of winning lost per game ± 95% CI | {kinds} | wrong decisions "
        "| decisions scored |",
        "|---:|---|---:|" + "---:|" * (len(FARKLE_MISTAKES) + 2),
    ]
    order = sorted(regrets, key=lambda spec: (regrets[spec].mean, spec != REFERENCE))
    for rank, spec in enumerate(order, 1):
        r = regrets[spec]
        if r.games == 0:  # the reference, not played
            lines.append(f"| {rank} | `{spec}` | 0 (the reference) |" + " – |" * (len(FARKLE_MISTAKES) + 2))
            continue
        split = " | ".join(f"{r.by_kind[k]:.2%}" for k in FARKLE_MISTAKES)
        lines.append(
            f"| {rank} | `{spec}` | {r.mean:.2%} ± {_half(r.ci95):.2%} | {split} | {r.wrong:.1%} "
            f"| {r.decisions:,} |"
        )
    return lines


def farkle_regret_section(regrets: Mapping[str, FarkleRegretResult]) -> list[str]:
    """Heading, what the table ranks by and counts, and :func:`farkle_regret_table`."""
    played = [r for r in regrets.values() if r.games]
    games = _count([r.games for r in played]) if played else "0"
    return [
        f"## farkle — 2 players, ranked by chance of winning lost against `{REFERENCE}`",
        "",
        f"Each decision of an agent is scored against `{REFERENCE}`'s exact tables: the chance of "
        "winning after the best legal action minus that after the chosen one (both with optimal play "
        "from there on), summed over a game. Mean over "
        f"{games} games per agent against `{REFERENCE}` (the agent's seat alternating) ± 95% CI; the "
        "kinds of mistake split that mean; wrong decisions: the share of the agent's decisions that "
        f"lost anything. `{REFERENCE}` is the reference: 0 by definition, not played.",
        "",
        *farkle_regret_table(regrets),
        "",
    ]


def tournament_tables(summary: dict[str, Any]) -> list[str]:
    """Markdown: ratings per agent, then one row per pairing."""
    rows = sorted(summary["agents"].items(), key=lambda kv: -kv[1]["rating"])
    lines = [
        "| rank | agent | rating (Bradley-Terry, Elo scale) [95% CI] | win rate [95% CI] | mean score |",
        "|---:|---|---:|---:|---:|",
    ]
    for rank, (spec, s) in enumerate(rows, 1):
        lo, hi = s["win_rate_ci95"]
        rlo, rhi = s["rating_ci95"]
        lines.append(
            f"| {rank} | `{spec}` | {s['rating']:.0f} [{rlo:.0f}, {rhi:.0f}] | {s['win_rate']:.1%} "
            f"[{lo:.1%}, {hi:.1%}] | {s['mean_score']:.0f} |"
        )
    lines += ["", "| pairing | games | win rate of first [95% CI] | shared wins |", "|---|---:|---:|---:|"]
    for p in summary["pairings"]:
        a, b = p["agents"]
        lo, hi = p["ci95"][0]
        rate = f"{p['win_rate'][0]:.1%} [{lo:.1%}, {hi:.1%}]"
        lines.append(f"| `{a}` vs `{b}` | {p['games']} | {rate} | {p['shared_wins']} |")
    return lines


def tournament_section(summary: dict[str, Any], exact_above: bool) -> list[str]:
    """The 2-player round robin, labelled as noisy head-to-head: ratings, then every pairing."""
    n = summary["games"]
    where = " The table above ranks by the exact measure." if exact_above else ""
    return [
        f"## farkle — 2-player round robin (noisy head-to-head), {n} deals per pairing",
        "",
        f"Each deal is played in both seat orders ({2 * n} games per pairing). Ranked by Bradley-Terry "
        "rating (Elo scale, fitted to all games; 95% bootstrap CI); win rates over all of an agent's "
        f"games with Wilson 95% CIs. At {2 * n} games per pairing a win rate's interval spans several "
        f"percentage points: the order of close agents here is noise.{where}",
        "",
        *tournament_tables(summary),
        "",
    ]


# ------------------------------------------------------------------------ solitaire Farkle
def farkle_solitaire_section(summary: dict[str, Any]) -> list[str]:
    """Solitaire Farkle, ranked by mean turns (fewer is better; a game that misses the target
    within its turn limit counts the limit)."""
    n = summary["games"]
    rows = sorted(summary["agents"].items(), key=lambda kv: kv[1]["mean_turns"])
    lines = [
        f"## farkle — solitaire, ranked by mean turns to reach the target, {n:,} games per agent",
        "",
        "No exact measure for solitaire Farkle: ranked by mean turns over all games (a game that does "
        "not reach the target within the turn limit counts the limit); final score ± 95% CI over the "
        f"same {n:,} games per agent, the same dice for every agent.",
        "",
        "| rank | agent | mean turns (all games) | reached target | turns to target | final score ± 95% CI |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for rank, (spec, s) in enumerate(rows, 1):
        half = s["mean_score"] - s["ci95"][0]
        lines.append(
            f"| {rank} | `{spec}` | {s['mean_turns']:.1f} | {s['target_rate']:.1%} | "
            f"{_f(s['mean_turns_to_target'])} | {s['mean_score']:.0f} ± {half:.0f} |"
        )
    return [*lines, ""]


# ------------------------------------------------------------------------ N-player Farkle
def exploitability_section(
    found: Mapping[str, dict[str, Any]], skipped: Mapping[str, str], players: int, target: int
) -> list[str]:
    """The Farkle agents at ``players`` seats and ``target`` ranked by exploitability (rows of
    :func:`~agents.evaluation.exploitability.exploitability_table`), then the agents not measured
    and why."""
    lines = [
        f"## farkle — {players} players at target {target}, ranked by exploitability",
        "",
        "Exact, no games played: the agent sits in every seat but one and the remaining seat plays "
        "its exact best response (`agents.solver.farkle_field`, the multi-player guide), once per "
        "seat. Best response in seat s: that seat's chance of winning. NashConv: the sum of those "
        f"chances minus 1; exploitability: NashConv / {players}, what a best-responding seat gains "
        f"over its fair share of 1/{players} on average (0: no seat can exploit the agent). The "
        "solved game has no turn limit and banks once a seat reaches the target with the lead.",
        "",
        *(exploitability_table(dict(found)) or ["No agent could be measured."]),
    ]
    return [*lines, *_not_measured(skipped), ""]


def _not_measured(skipped: Mapping[str, str]) -> list[str]:
    """The agents a table left out, and why."""
    if not skipped:
        return []
    return ["", "Not measured:", "", *(f"- `{spec}`: {why}" for spec, why in skipped.items())]


def field_regret_section(
    found: Mapping[str, dict[str, Any]], skipped: Mapping[str, str], players: int, target: int
) -> list[str]:
    """The Farkle agents at ``players`` seats and ``target`` ranked by the chance of winning
    their decisions lose against the equilibrium (figures of
    :meth:`~agents.evaluation.field_regret.FieldRegretResult.to_dict`)."""
    order = sorted(found, key=lambda spec: found[spec]["mean"])
    rows = [
        f"| {rank} | `{spec}` | {r['mean']:.2%} ± {_half(r['ci95']):.2%} | {r['wrong_decisions']:.1%} "
        f"| {r['decisions']:,} | {r['unscored']:,} |"
        for rank, spec in enumerate(order, 1)
        for r in [found[spec]]
    ]
    games = _count([r["games"] for r in found.values()]) if found else "0"
    lines = [
        f"## farkle — {players} players at target {target}, ranked by chance of winning lost "
        f"against `{REFERENCE}`",
        "",
        f"{games} games per agent, its seat rotating, `{REFERENCE}` (the exact {players}-seat "
        "equilibrium, the multi-player guide) in every other seat. Each decision of the agent is "
        "scored by the equilibrium's tables for its seat: the chance of winning after the best legal "
        "action minus that after the chosen one, every seat playing the tables from then on. "
        "Throw-ons past the solved game's forced bank (the target with the lead) hold no value there: "
        "they are counted, not scored.",
        "",
        "| rank | agent | chance of winning lost per game ± 95% CI | wrong decisions | decisions scored "
        "| not scored |",
        "|---:|---|---:|---:|---:|---:|",
        *(rows or ["No agent could be measured."]),
    ]
    return [*lines, *_not_measured(skipped), ""]
