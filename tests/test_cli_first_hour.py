"""A new user's first hour with ``dice-envs``: the commands run as their help and the README show.

* ``evaluate`` needs no ``--out``: it writes a new ``runs/eval-<game>`` (``-2``, ``-3``, ... after
  that, picked by the helper ``train`` uses) and prints the folder;
* its table says what ``--games`` counted and how many games were played in all;
* every ``±`` the command line prints says what it is (95% CI or s.e.);
* ``solve`` takes rule parameters as ``--rules KEY=VALUE`` only; ``--joker false`` is answered
  with its ``--rules`` form;
* every subcommand's help names ``dice-envs COMMAND`` in its usage line and examples.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

import dice_envs.io
from agents.commands import cli, evaluate, leaderboard_tables, solve
from agents.evaluation import evaluate as run_evaluation
from agents.evaluation.regret import FARKLE_MISTAKES, FarkleRegretResult, RegretResult, exact_table
from agents.training import score_table

ROOT = Path(__file__).resolve().parents[1]
QUICK = ["--workers", "1", "--no-plots", "--no-optimum", "--no-exact"]
LABELS = ("95% CI", "s.e.")


def _unlabelled(text: str) -> list[str]:
    """Lines of ``text`` with a ``±`` that nothing labels: in a markdown table the column's header
    must say what it is, anywhere else the line itself."""
    bad, header = [], None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            if "±" in line and not any(label in line for label in LABELS):
                bad.append(line)
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
        elif "±" in line:
            for cell, head in zip(cells, header, strict=False):
                if "±" in cell and not any(label in head for label in LABELS):
                    bad.append(line)
    return bad


# ----------------------------------------------------------------------------- evaluate --out
def test_evaluate_without_out_writes_a_new_runs_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    argv = ["evaluate", "--game", "spiffel", "--agents", "greedy", "heuristic", "--games", "3", *QUICK]
    assert cli.main(argv) == 0
    first = capsys.readouterr()
    assert (
        "runs/eval-spiffel" in first.err and "wrote results.json, games.csv in runs/eval-spiffel" in first.out
    )
    results = tmp_path / "runs" / "eval-spiffel" / "results.json"
    before = results.read_bytes()
    assert cli.main([*argv, "--quiet"]) == 0  # a second run: a new folder, the first one untouched
    second = capsys.readouterr()
    assert "runs/eval-spiffel-2" in second.err and second.out == ""
    assert (tmp_path / "runs" / "eval-spiffel-2" / "results.json").is_file()
    assert results.read_bytes() == before


def test_evaluate_and_train_pick_their_default_folder_with_one_helper(tmp_path: Path) -> None:
    train = importlib.import_module("agents.training.train")  # the module, not the function
    assert train.fresh_folder is dice_envs.io.fresh_folder is evaluate.fresh_folder
    base = tmp_path / "eval-farkle"
    assert dice_envs.io.fresh_folder(base) == base
    base.mkdir()
    assert dice_envs.io.fresh_folder(base) == base  # an empty folder holds no run
    (base / "results.json").write_text("{}")
    assert dice_envs.io.fresh_folder(base) == tmp_path / "eval-farkle-2"
    assert not (tmp_path / "eval-farkle-2").exists()  # picked, not made


def test_evaluate_help_has_no_required_out(capsys) -> None:
    with pytest.raises(SystemExit):
        evaluate.main(["--help"])
    text = capsys.readouterr().out
    assert "--out OUT]" in text and "runs/eval-<game>" in text


# ----------------------------------------------------------------------------- what was counted
def test_the_table_says_what_games_counted() -> None:
    solo = run_evaluation("spiffel", ["greedy", "heuristic"], games=3, workers=1, optimum=False)
    head = evaluate.format_table(solo.summary()).splitlines()[0]
    assert "3 games per agent (6 in all)" in head and "6 games," not in head
    tables = run_evaluation("farkle", ["random", "greedy", "heuristic"], games=2, workers=1, optimum=False)
    head = evaluate.format_table(tables.summary()).splitlines()[0]
    assert (
        "2 deals per pairing, each played in both seat orders "
        "(4 games per pairing, 3 pairings, 12 games in all)" in head
    )
    assert len(tables.records) == 12


# ----------------------------------------------------------------------------- every ± labelled
def test_every_plus_minus_of_evaluate_says_what_it_is(tmp_path: Path, capsys) -> None:
    out = tmp_path / "e"
    argv = ["--game", "spiffel", "--agents", "greedy", "heuristic", "--games", "4", "--workers", "1"]
    assert evaluate.main([*argv, "--no-plots", "--out", str(out)]) == 0  # with the regret table
    text = capsys.readouterr().out
    assert "±" in text and "regret per game ± 95% CI" in text
    assert _unlabelled(text) == []
    farkle = run_evaluation("farkle", ["random", "greedy"], games=2, workers=1, optimum=False)
    assert _unlabelled(evaluate.format_table(farkle.summary())) == []
    assert "rating" in evaluate.format_table(farkle.summary())
    assert "95% CI" in evaluate.format_table(farkle.summary()).splitlines()[-1]  # the pairings' rates


def test_every_plus_minus_of_the_other_tables_says_what_it_is() -> None:
    solo = run_evaluation("spiffel", ["greedy", "random"], games=3, workers=1, optimum=False).summary()
    assert _unlabelled("\n".join(leaderboard_tables.scorecard_section(solo))) == []
    regrets = {spec: RegretResult(spec, 3, 9.0, (8.0, 10.0), (), 100) for spec in ("greedy", "random")}
    assert _unlabelled("\n".join(leaderboard_tables.scorecard_section(solo, regrets))) == []
    kinds = dict.fromkeys(FARKLE_MISTAKES, 0.01)
    farkle = {
        "heuristic": FarkleRegretResult("heuristic", "win-optimal", 4, 0.1, (0.0, 0.2), kinds, 0.1, 90, ())
    }
    assert _unlabelled("\n".join(leaderboard_tables.farkle_regret_section(farkle))) == []
    robin = run_evaluation("farkle", ["random", "greedy"], games=2, players=2, workers=1).summary()
    assert _unlabelled("\n".join(leaderboard_tables.tournament_section(robin, True))) == []
    alone = run_evaluation("farkle", ["random", "greedy"], games=2, players=1, workers=1).summary()
    assert _unlabelled("\n".join(leaderboard_tables.farkle_solitaire_section(alone))) == []
    refs = {"greedy": {"regret": 60.0, "regret_ci95": [58.0, 62.0], "regret_games": 3}}
    assert _unlabelled("\n".join(exact_table(refs))) == []
    row = score_table.GameStats("model", "solitaire", 10, 200.0, 30.0, 0, 0, 0)
    table = score_table.format_table([row])
    assert "± s.e." in table and _unlabelled(table) == []


def test_measure_bots_labels_its_standard_error(monkeypatch, capsys) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import measure_bots
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    fake = {
        "num_players": 1,
        "games": 4,
        "mean_score": 200.0,
        "stderr": 1.5,
        "ci95": [197.1, 202.9],
        "seconds": 0.0,
    }
    monkeypatch.setattr(measure_bots, "measure", lambda *args, **kwargs: dict(fake))
    assert measure_bots.main(["--bots", "spiffel", "--games", "4"]) == 0
    text = capsys.readouterr().out
    assert "± 1.50 s.e." in text and _unlabelled(text) == []


# ----------------------------------------------------------------------------- solve: one style
@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["yahtzee", "--yahtzee_bonus", "0", "--joker", "false"], "use --rules yahtzee_bonus=0 joker=false"),
        (
            ["yahtzee", "--rules", "joker=false", "--joker-rule=verhoeff"],
            "use --rules joker=false joker_rule=verhoeff",
        ),
        (["farkle", "--target", "5000"], "use --rules target=5000"),
    ],
)
def test_solve_answers_the_old_style_with_the_rules_form(argv: list[str], hint: str, capsys) -> None:
    with pytest.raises(SystemExit) as exc:
        solve.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage: dice-envs solve" in err and hint in err and "Traceback" not in err
    assert cli.main(["solve", *argv]) == 2  # ``dice-envs solve ...``: exit status 2, nothing solved
    assert hint in capsys.readouterr().err


def test_solve_refuses_an_unknown_flag_without_a_rules_hint(capsys) -> None:
    with pytest.raises(SystemExit):
        solve.main(["yahtzee", "--nocache"])
    err = capsys.readouterr().err
    assert "unrecognized arguments: --nocache" in err and "use --rules" not in err


def test_solve_help_shows_one_style(capsys) -> None:
    with pytest.raises(SystemExit):
        solve.main(["--help"])
    text = capsys.readouterr().out
    examples = [line.strip() for line in text.splitlines() if line.strip().startswith("dice-envs solve ")]
    assert len(examples) >= 3 and any("--rules joker_rule=verhoeff" in line for line in examples)
    words = {word.rstrip(":,.") for line in examples for word in line.split("#")[0].split()}
    flags = {word for word in words if word.startswith("--")}
    assert flags - {"--list"} == {"--rules"}  # rule parameters only as --rules; --list takes none
    assert "--param" not in text and "--joker " not in text and "--yahtzee_bonus" not in text


def test_readme_solve_lines_use_the_rules_form() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    lines = [ln for p in pages for ln in p.read_text().splitlines() if ln.startswith("dice-envs solve ")]
    assert len(lines) >= 3
    for line in lines:
        flags = {w for w in line.split("#")[0].split() if w.startswith("--")}
        assert flags <= {"--rules", "--no-cache", "--list", "--help"}, line


def test_readme_help_lines_run(capsys) -> None:
    """Every ``dice-envs COMMAND --help`` line of the README's bash blocks prints its help."""
    text = (ROOT / "README.md").read_text()
    bash = "".join(re.findall(r"```bash\n(.*?)```", text, re.S))
    lines = [ln.strip() for ln in bash.splitlines()]
    names = [ln.split()[1] for ln in lines if re.fullmatch(r"dice-envs [a-z]+ --help", ln)]
    assert names
    for name in names:
        with pytest.raises(SystemExit) as exc:
            cli.resolve(name)(["--help"])
        assert exc.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: dice-envs {name}")


# ----------------------------------------------------------------------------- every help
HELP_COMMANDS = [
    "train",
    "evaluate",
    "play",
    "review",
    "solve",
    "datasets",
    "leaderboard",
    "benchmark",
    "serve",
]


@pytest.mark.parametrize("name", HELP_COMMANDS)
def test_every_help_names_dice_envs_in_usage_and_examples(name: str, capsys) -> None:
    main = cli.resolve(name)  # the module's own main: its prog, not the one cli.main sets
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith(f"usage: dice-envs {name}"), text[:80]
    assert "examples:" in text
    assert f"dice-envs {name} " in text.split("examples:", 1)[1]
    assert "python scripts/" not in text and "scripts/" not in text
    assert "Examples::" not in text and "``" not in text
    assert "matmul" not in text  # benchmark's retired matrix-product bound is not offered
    if "--rules" in text:  # one spelling of rule parameters everywhere
        assert "--rules KEY=VALUE" in text or "--rules [KEY=VALUE ...]" in text
        assert "K=V" not in text.replace("KEY=VALUE", "")
