"""Every figure of a shipped bot lives once, in its dated record, and the pages show it as recorded.

``agents/pretrained/measurements.json`` (``scripts/measure_bots.py --record``) holds each figure
with its games, seeds, date, machine, code revision and command; README and docs show the
figures only in blocks that ``scripts/measure_bots.py --render`` writes from it
(:mod:`agents.evaluation.bot_figures`), and no placeholder reaches a page.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from agents.evaluation import bot_figures
from agents.evaluation.bot_figures import RECORD, render_blocks, render_table
from dice_envs.rules import ConfigError

ROOT = Path(__file__).resolve().parents[1]
PLACEHOLDER = re.compile(r"MEASURE_|\bTODO\b|\bTBD\b|\bFIXME\b|example\.invalid")


def _measure_bots():
    """scripts/measure_bots.py as a module (its imports are light: no game is played)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import measure_bots
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    return measure_bots


def _records() -> dict:
    return json.loads(RECORD.read_text(encoding="utf-8"))


def _pages() -> list[Path]:
    docs = [p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts]
    return [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(docs)]


@pytest.mark.parametrize("page", _measure_bots().PAGES)
def test_each_page_shows_the_figures_as_the_record_renders_them(page: str) -> None:
    text = (ROOT / page).read_text(encoding="utf-8")
    assert "<!-- figures:" in text, f"{page} has no figures block"
    assert render_blocks(text, _records()) == text, (
        f"{page}: a figures block differs from the record; run python scripts/measure_bots.py --render"
    )


def test_no_page_carries_a_placeholder() -> None:
    found = [
        f"{page.relative_to(ROOT)}:{n}: {line.strip()}"
        for page in _pages()
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if PLACEHOLDER.search(line)
    ]
    assert not found, "placeholders:\n" + "\n".join(found)


def test_every_shipped_bot_has_one_dated_record_and_its_card_holds_the_same() -> None:
    records = _records()
    bots = sorted(p.stem for p in (RECORD.parent).iterdir() if p.suffix in (".zip", ".npz"))
    assert sorted(n for n in records if ":" not in n) == bots
    for name, entry in records.items():
        for key in ("date", "machine", "revision", "command", "games", "seed"):
            assert key in entry, f"{name} lacks {key}"
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", entry["date"]), name
        assert entry["machine"]["cores"] >= 1 and entry["machine"]["cpu"], name
        assert re.fullmatch(r"[0-9a-f]{40}", entry["revision"]), f"{name}: {entry['revision']}"
        assert entry["command"].startswith("python scripts/measure_bots.py "), name
        assert not re.search(r"(^|\s)/|~", entry["command"]), f"{name}: a machine path in {entry['command']}"
        if ":" not in name:
            card = json.loads((RECORD.parent / f"{name}.json").read_text(encoding="utf-8"))
            assert card["evaluation"]["measured"] == entry, f"{name}: its card and the record differ"


def test_solitaire_records_lead_with_points_lost_at_one_game_count_beside_optimal_on_the_same_dice() -> None:
    records = _records()
    solitaire = {n: e for n, e in records.items() if e["num_players"] == 1 and e["game"] != "farkle"}
    assert {e["regret"]["games"] for e in solitaire.values()} == {1000}  # exact: game counts
    assert len({(e["games"], str(e["seed"])) for e in solitaire.values()}) == 1
    for name, e in solitaire.items():
        reference = records[f"{e['game']}:optimal"]
        assert e["optimal_mean_score"] == reference["mean_score"], (
            name
        )  # exact: the same games, recorded once
        lo, hi = e["regret"]["ci95"]
        assert lo <= e["regret"]["mean"] <= hi, name
    for game in {e["game"] for e in solitaire.values()}:
        assert records[f"{game}:optimal"]["regret"]["mean"] == 0.0  # exact: optimal ties its own values


def test_a_retyped_figure_is_rendered_back_and_an_unknown_block_refused() -> None:
    records = _records()
    table = render_table("solitaire", records)
    page = f"intro\n<!-- figures:solitaire -->\n\n{table.replace('±', '+-', 1)}\n<!-- /figures -->\nend\n"
    assert (
        render_blocks(page, records)
        == f"intro\n<!-- figures:solitaire -->\n\n{table}\n<!-- /figures -->\nend\n"
    )
    with pytest.raises(ConfigError, match="unknown figures block 'bogus'; blocks: headline"):
        render_blocks("<!-- figures:bogus -->\n<!-- /figures -->", records)


def test_a_multiplayer_bot_under_other_rules_is_shown_with_them() -> None:
    """A bot measured under rules other than its game's defaults names them in the table, its
    record the same as what measure_bots.py records for them."""
    from dice_envs.rules import make_rules

    assert _measure_bots().rule_changes(make_rules("farkle", target=300)) == {"target": 300}
    assert _measure_bots().rule_changes(make_rules("farkle")) == {}
    table = render_table("multiplayer", _records())
    for name, e in _records().items():
        if e["num_players"] > 1:
            rules = "".join(f", {k.replace('_', ' ')} {v:,}" for k, v in e.get("rules", {}).items())
            label = f"{bot_figures.GAME_NAMES[e['game']]}, {e['num_players']} players{rules}"
            assert f"| `{name}` | {label} |" in table, name
    assert "| `farkle-search-3p` | Farkle, 3 players, target 300 |" in table


def test_the_headline_shows_optimal_best_bot_ppo_and_heuristic_per_solitaire_game() -> None:
    table = render_table("headline", _records())
    for game, best, ppo in [
        ("Spiffel", "spiffel-search", "spiffel-scratch"),
        ("Yahtzee", "yahtzee-search", "yahtzee-scratch"),
        ("Dice Poker", "dice_poker-search", "dice_poker-scratch"),
    ]:
        assert f"| {game} | `optimal` (exact optimum " in table
        assert f"`{best}` (best learned bot)" in table and f"`{ppo}` (PPO from scratch)" in table
    assert table.count("`heuristic`") == 3


def test_the_leaderboard_ranks_every_solitaire_agent_of_the_record_by_points_lost() -> None:
    records = _records()
    rows = [
        line.split(" | ")
        for line in render_table("ranking", records).splitlines()
        if re.match(r"\| \d", line)
    ]
    solitaire = [e for e in records.values() if e["num_players"] == 1]
    assert len(rows) == len(solitaire)
    for game in {e["game"] for e in solitaire}:
        ranked = [r for r in rows if r[2] == bot_figures.GAME_NAMES[game]]
        assert [r[0] for r in ranked] == [f"| {i}" for i in range(1, len(ranked) + 1)]
        assert ranked[0][1] == "`optimal`" and any(r[1] == "`heuristic`" for r in ranked)
        lost = [float(r[3].split()[0]) for r in ranked]
        assert lost == sorted(lost)


def test_the_win_optimal_farkle_figures_of_the_evaluation_guide_are_those_of_their_record() -> None:
    record = json.loads((ROOT / "docs/benchmarks/2026-12-06-epyc-2core/farkle-win.json").read_text())
    page = (ROOT / "docs/guide/evaluation.md").read_text(encoding="utf-8")
    head = record["fairest_head_start"]
    assert f"| P(seat 0 wins) under optimal play | **{record['p_seat0']:.8f}** |" in page
    assert f"**{head['points']}** points → P(seat 0 wins) = {head['p_seat0']:.4f}" in page
    solve = f"**{record['solve_wall_s']:.0f} s wall** ({record['solve_cpu_s']:.0f} s CPU)"
    assert f"{record['sweeps']} sweeps, {solve}" in page
    for match in record["matches"]:
        if match["b"].startswith("pretrained:"):  # a shipped bot's share lives in its own record
            assert f"`{match['b']}`" not in page
            continue
        lo, hi = match["ci95"]
        cell = f"| **{100 * match['win_rate']:.1f}%** [{100 * lo:.1f}%, {100 * hi:.1f}%] |"
        row = next((line for line in page.splitlines() if line.startswith(f"| `{match['b']}`")), "")
        assert cell in row, f"win-optimal against {match['b']}: {row!r}"


def test_the_ray_figures_of_the_ray_guide_are_those_of_their_record() -> None:
    record = json.loads((ROOT / "docs/benchmarks/2026-12-06-epyc-2core/ray.json").read_text())
    page = " ".join((ROOT / "docs/guide/ray.md").read_text(encoding="utf-8").split())
    one, two = record["rllib"]
    assert f"`ray.init` took **{record['ray_init_s']:.1f} s**" in page
    assert (
        f"**{one['steps_per_s']:,.0f} env steps/s with 1 env runner and {two['steps_per_s']:,.0f} with 2**"
        in page
    )
    assert f"random legal actions ran at {record['raw_env_steps_per_s']:,.0f} steps/s" in page
    builds = sorted(round(r["build_s"]) for r in record["rllib"])
    assert f"building a PPO algorithm {builds[0]}-{builds[-1]} s" in page


def test_the_quick_start_table_of_the_readme_is_the_one_its_dated_record_printed() -> None:
    def table(text: str) -> str:
        start = text.index("spiffel solitaire, 2000 games per agent")
        return text[start : text.index("```", start)]

    record = (ROOT / "docs/benchmarks/2026-12-06-epyc-2core/README.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert table(readme) == table(record)
    assert "configs/train/quickstart.yaml" in record and "docs/benchmarks/2026-12-06-epyc-2core" in readme
