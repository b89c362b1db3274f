"""The leaderboard page (agents.commands.leaderboard): ranked by the exact measures, bots found by
their cards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents.commands import leaderboard
from agents.commands import leaderboard_tables as tables
from agents.evaluation.regret import FARKLE_MISTAKES, FarkleRegretResult, RegretResult
from agents.models.card import make_card, read_card, write_card
from agents.players import model
from dice_envs.rules import make_rules


def _stats(mean: float, half: float = 10.0) -> dict:
    return {
        "mean_score": mean,
        "ci95": [mean - half, mean + half],
        "median": mean,
        "upper_bonus_rate": 0.5,
        "five_kind_rate": 0.25,
        "gap_to_optimum": 254.0 - mean,
    }


def _regret(agent: str, mean: float, half: float = 1.0, games: int = 100) -> RegretResult:
    return RegretResult(agent, games, mean, (mean - half, mean + half), (), 3700)


def _rows(lines: list[str]) -> list[list[str]]:
    """The cells of a markdown table's body rows."""
    body = [line for line in lines if line.startswith("| ") and not line.startswith("| rank")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in body]


# ----------------------------------------------------------------------------- scorecard games
#: Mean scores order these agents lucky > optimal > steady; the regrets order them optimal > steady > lucky.
SUMMARY = {
    "game": "spiffel",
    "games": 100,
    "optimum": 253.38,
    "agents": {"lucky": _stats(251.0), "optimal": _stats(249.0), "steady": _stats(247.0)},
}
REGRETS = {
    "lucky": _regret("lucky", 12.0),
    "optimal": _regret("optimal", 0.0, 0.0),
    "steady": _regret("steady", 4.0),
}


def test_the_scorecard_table_ranks_by_regret_not_by_mean_score() -> None:
    lines = tables.scorecard_table(SUMMARY, REGRETS)
    assert lines[0].split("|")[1:8] == [
        " rank ", " agent ", " regret per game ± 95% CI ", " mean score ± 95% CI ", " median ",
        " upper bonus ", " five of a kind ",
    ]  # fmt: skip
    rows = _rows(lines)
    assert [r[1] for r in rows] == ["`optimal`", "`steady`", "`lucky`"]  # regret order
    assert [r[0] for r in rows] == ["1", "2", "3"]
    assert rows[0][2] == "0.00 ± 0.00" and rows[2][2] == "12.00 ± 1.00"
    assert rows[2][3] == "251.0 ± 10.0" and rows[2][5:] == ["50.0%", "25.0%"]
    by_mean = _rows(tables.scorecard_table(SUMMARY))  # without regrets (--no-exact): by mean score
    assert [r[1] for r in by_mean] == ["`lucky`", "`optimal`", "`steady`"]


def test_equal_regrets_are_ordered_by_mean_score() -> None:
    tied = {**REGRETS, "lucky": _regret("lucky", 4.0)}
    assert [r[1] for r in _rows(tables.scorecard_table(SUMMARY, tied))] == [
        "`optimal`",
        "`lucky`",
        "`steady`",
    ]


def test_the_scorecard_section_is_one_table_naming_the_optimum_and_the_counts() -> None:
    text = "\n".join(tables.scorecard_section(SUMMARY, REGRETS))
    heading = text.splitlines()[0]
    assert heading.startswith("## spiffel — solitaire, ranked by regret") and "253.38" in heading
    assert "100 games per agent (3,700 decisions each) ± 95% CI" in text
    assert text.count("| rank |") == 1  # the regret is a column of the one table, not a table of its own
    assert "ranked by mean score" in tables.scorecard_section(SUMMARY)[0]


# ----------------------------------------------------------------------------- two-player Farkle
def _farkle(agent: str, mean: float) -> FarkleRegretResult:
    kinds = dict(zip(FARKLE_MISTAKES, (mean / 2, mean / 4, mean / 4), strict=True))
    return FarkleRegretResult(
        agent, "win-optimal", 50, mean, (mean - 0.01, mean + 0.01), kinds, 0.1, 2000, ()
    )


def test_the_farkle_table_ranks_by_chance_of_winning_lost_with_win_optimal_first() -> None:
    found = {
        "heuristic": _farkle("heuristic", 0.11),
        "pretrained:bot": _farkle("pretrained:bot", 0.012),
        "win-optimal": tables.reference_result(),
        "max-expected": _farkle("max-expected", 0.015),
    }
    lines = tables.farkle_regret_section(found)
    assert "ranked by chance of winning lost against `win-optimal`" in lines[0]
    assert "50 games per agent" in lines[2] and "± 95% CI" in lines[2]
    rows = _rows(lines)
    assert [r[1] for r in rows] == ["`win-optimal`", "`pretrained:bot`", "`max-expected`", "`heuristic`"]
    assert rows[0][2].startswith("0 ") and rows[3][2] == "11.00% ± 1.00%"
    assert rows[3][3:6] == ["5.50%", "2.75%", "2.75%"]  # the split by kind of mistake
    assert rows[3][-1] == "2,000"  # decisions


def _page(tmp_path: Path, monkeypatch, game: str, specs: list[str], *extra: str) -> str:
    """The page of a tiny leaderboard of ``game`` over ``specs`` only."""
    monkeypatch.setattr(leaderboard, "candidate_specs", lambda g: list(specs))
    out, runs = tmp_path / "lb.md", tmp_path / "runs"
    argv = ["--only", game, "--games", "3", "--regret-games", "2", "--workers", "1", "--quiet", *extra]
    assert leaderboard.main([*argv, "--out", str(out), "--runs", str(runs)]) == 0
    return out.read_text()


def test_the_page_puts_the_exact_farkle_table_before_the_round_robin(tmp_path: Path, monkeypatch) -> None:
    small = make_rules("farkle", target=400)  # win-optimal's tables of the default rules take minutes
    monkeypatch.setattr(
        leaderboard, "make_rules", lambda game: small if game == "farkle" else make_rules(game)
    )
    specs = ["random", "greedy", "win-optimal"]
    page = _page(tmp_path, monkeypatch, "farkle", specs, "--tournament-games", "1")
    exact = page.index("## farkle — 2 players, ranked by chance of winning lost against `win-optimal`")
    robin = page.index("## farkle — 2-player round robin (noisy head-to-head)")
    assert page.index("## farkle — solitaire, ranked by mean turns") < exact < robin
    saved = json.loads((tmp_path / "runs" / "farkle-2p" / "regret.json").read_text())
    assert set(saved) == {"random", "greedy", "win-optimal"} and saved["random"]["games"] == 2
    rows = _rows(page[exact:robin].splitlines())
    order = sorted(saved, key=lambda spec: saved[spec]["mean"])
    assert [r[1] for r in rows] == [f"`{spec}`" for spec in order] and order[0] == "win-optimal"
    for row in rows[1:]:
        mean = saved[row[1].strip("`")]["mean"]
        assert mean > 0.0 and float(row[2].split("%")[0]) == pytest.approx(100 * mean, abs=5e-3)


def test_the_page_ranks_a_scorecard_game_by_regret(tmp_path: Path, monkeypatch) -> None:
    page = _page(tmp_path, monkeypatch, "spiffel", ["random", "greedy", "optimal"])
    assert page.startswith("# Leaderboard\n\nGenerated by `dice-envs leaderboard --games 3 --regret-games 2 ")
    assert " cores of " in page  # the machine
    assert page.count("## spiffel") == 1 and page.count("| rank |") == 1
    rows = _rows(page.splitlines())
    assert [r[1] for r in rows] == ["`optimal`", "`greedy`", "`random`"]
    assert rows[0][2] == "0.00 ± 0.00"
    saved = json.loads((tmp_path / "runs" / "spiffel-solitaire" / "regret.json").read_text())
    assert saved["optimal"]["mean"] == pytest.approx(0.0, abs=1e-9) and saved["greedy"]["games"] == 2


def test_no_exact_ranks_by_mean_score(tmp_path: Path, monkeypatch) -> None:
    page = _page(tmp_path, monkeypatch, "spiffel", ["random", "greedy"], "--no-exact")
    assert "ranked by mean score" in page and "regret" not in page.split("\n## ")[1].split("\n")[0]
    assert "--no-exact" in page.splitlines()[2]


# ----------------------------------------------------------------------------- shipped bots
def _card(folder: Path, stem: str, game: str, suffix: str = ".onnx") -> None:
    write_card(folder / f"{stem}{suffix}", make_card(make_rules(game), 2 if game == "farkle" else 1))


def test_shipped_bots_are_found_by_their_cards(tmp_path: Path, monkeypatch) -> None:
    _card(tmp_path, "onnx-bot", "spiffel")  # a model of another file type: its card names the game
    (tmp_path / "onnx-bot.onnx").write_bytes(b"weights")
    _card(tmp_path, "zip-bot", "spiffel", ".zip")
    _card(tmp_path, "farkle-bot", "farkle")  # a card of another game
    _card(tmp_path, "measurements", "spiffel")  # a valid card by that name is still not a bot
    (tmp_path / "notes.json").write_text('{"a": 1}')  # not a card
    (tmp_path / "broken.json").write_text("{")
    (tmp_path / "spiffel-old.zip").write_bytes(b"no card")  # a model without a card is no bot
    monkeypatch.setattr(model, "PRETRAINED_DIR", tmp_path)
    assert leaderboard.shipped_bots("spiffel") == ["pretrained:onnx-bot", "pretrained:zip-bot"]
    assert leaderboard.shipped_bots("farkle") == ["pretrained:farkle-bot"]
    specs = leaderboard.candidate_specs("spiffel")
    assert specs[-2:] == ["pretrained:onnx-bot", "pretrained:zip-bot"] and "optimal" in specs
    assert not any(s.startswith("pretrained:") for s in leaderboard.candidate_specs("yahtzee"))
    assert leaderboard.shipped_bots("spiffel", tmp_path / "missing") == []


def test_every_shipped_model_is_a_candidate_of_its_game() -> None:
    cards = [p for p in model.PRETRAINED_DIR.glob("*.json") if p.name not in leaderboard.NOT_CARDS]
    assert cards
    for path in cards:
        assert f"pretrained:{path.stem}" in leaderboard.candidate_specs(read_card(path)["game"])
