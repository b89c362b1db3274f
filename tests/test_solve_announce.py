"""A solve that fills the solver cache says what it computes, where it cached it and how big it is;
``dice-envs solve --list`` shows the cache."""

from __future__ import annotations

import io
import re
import time
from collections import OrderedDict

import numpy as np
import pytest

from agents.commands.cli import main as cli
from agents.solver import farkle_win, win_probability
from agents.solver.cache import cache_key, cached_array


@pytest.fixture
def empty_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("DICE_ENVS_CACHE", str(cache))
    monkeypatch.setattr(farkle_win, "_SOLUTIONS", OrderedDict())  # no in-memory shortcut
    return cache


def test_a_first_solve_announces_and_says_where_it_cached(empty_cache, capsys):
    p = win_probability("farkle", target=500)
    err = capsys.readouterr().err
    assert "dice-envs: solving the farkle-win tables of farkle (target=500): first use" in err
    (table,) = empty_cache.glob("farkle-win-farkle-*.npy")
    size = table.stat().st_size / 1e3
    assert re.search(rf"solved in \d+\.\d s; cached {re.escape(str(table))} \({size:.1f} kB\)", err), err
    farkle_win._SOLUTIONS.clear()
    assert win_probability("farkle", target=500) == p  # exact: the same table, loaded
    assert capsys.readouterr().err == ""  # a load from the cache is quiet

    assert cli(["solve", "--list"]) == 0
    out = capsys.readouterr().out
    assert f"solver cache {empty_cache}: 1 table(s)" in out
    (row,) = [line for line in out.splitlines() if line.startswith(table.name)]
    assert row.split()[1:4] == ["farkle", "target=500", f"{size:.1f}"]
    assert re.search(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}$", row)


def test_list_of_an_empty_cache_and_solve_without_a_game(empty_cache, capsys):
    assert cli(["solve", "--list"]) == 0
    assert capsys.readouterr().out.strip() == f"solver cache {empty_cache}: 0 table(s), 0.0 MB"
    assert cli(["solve"]) == 2
    assert "give the GAME to solve" in capsys.readouterr().err


def test_an_unwritable_cache_says_the_table_is_not_kept(tmp_path, monkeypatch, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("DICE_ENVS_CACHE", str(blocker / "cache"))
    key = cache_key("scorecard-values", "yahtzee", {"joker": False})
    array, loaded = cached_array(key, lambda: np.zeros(3), {"game": "yahtzee", "rules": {"joker": False}})
    assert not loaded and array.shape == (3,)
    err = capsys.readouterr().err
    assert "solving the scorecard-values tables of yahtzee (joker=False)" in err and "not cached" in err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_a_line_shows_the_time_spent_and_the_solver_note(empty_cache, monkeypatch):
    pytest.importorskip("tqdm")
    from agents.solver.cache import progress_note

    term = _Terminal()
    monkeypatch.setattr("sys.stderr", term)

    def compute() -> np.ndarray:
        progress_note("sweep 1, largest change 1e-3")
        time.sleep(1.6)
        return np.ones(2)

    cached_array(cache_key("farkle-win", "farkle", {"t": 1}), compute, {"target": 1000})
    text = term.getvalue()
    assert "solving the farkle-win tables of farkle (target=1000)" in text
    assert re.search(r"dice-envs: solving farkle-win: 00:0[1-9], sweep 1, largest change 1e-3", text), text
    assert re.match(r"dice-envs: solved in \d+\.\d s; cached ", text.rstrip().splitlines()[-1])
