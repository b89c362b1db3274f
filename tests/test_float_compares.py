"""No test or doctest compares a float from a product or a reduction bit for bit.

Such a float (solver values, expected scores, probabilities, regret, ratings) takes its last bits
from the BLAS kernel and SIMD width of the CPU it runs on (``tests/floats.py``), so ``==`` on it
passes here and fails on another machine. This module scans the suite's source:

* tests: an ``==`` / ``!=`` or an ``array_equal`` / ``assert_array_equal`` / ``assert_equal``
  whose operands name one of :data:`FLOAT_SOURCES` must either use ``assert_close`` /
  ``pytest.approx`` / ``np.isclose`` instead, or carry a ``# exact: <reason>`` comment on one of
  its lines saying why the bits are the contract there (the same computation twice on one
  machine, or a value exact by construction);
* doctests (source modules, scripts, tests, README, docs): an example that prints a float from a reduction
  (a :data:`FLOAT_SOURCES` name, ``.sum(``, ``.mean(``, ``@``) rounds it in the example.
"""

from __future__ import annotations

import ast
import doctest
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: Names of the public values and functions whose results are floats from products or
#: reductions: the exact solvers (scorecard, Farkle turn, Farkle win), regret, ratings and the
#: statistics of evaluation. A new such API adds its name here.
FLOAT_SOURCES = frozenset(
    {
        # scorecard solver
        "expected_score",
        "known_optimum",
        "KNOWN_OPTIMA",
        "solve_scorecard",
        "box_values",
        "box_values_one",
        "box_values_of",
        "keep_values",
        "turn_plans",
        # Farkle turn and win solvers, planner
        "expected_turn_points",
        "continue_value",
        "option_value",
        "win_probability",
        "start_value",
        "turn_tables",
        "many_turn_tables",
        "option_values",
        # regret and references
        "regret",
        "scorecard_regret",
        "farkle_regret",
        "decision_values",
        "win_deficit",
        "farkle_win_deficit",
        "per_game",
        # ratings and statistics
        "rating",
        "ratings",
        "rate_agents",
        "bradley_terry",
        "mean_score",
        "std",
        "ci95",
        "keep_outcomes",
    }
)

COMPARE_CALLS = {"array_equal", "assert_array_equal", "assert_equal"}
EXACT = re.compile(r"#\s*exact:\s*\S")


#: Calls and attributes whose result is an integer, a type or a flag whatever floats they read.
NOT_FLOAT = {"len", "type", "isinstance", "hasattr", "callable", "isfinite", "isnan", "isinf"}
NOT_FLOAT_ATTRS = {"shape", "dtype", "ndim", "size"}


def _names(node: ast.AST) -> set[str]:
    """Identifiers an expression reads as floats: names, attributes and string keys (``row["regret"]``),
    leaving out what only counts, types or flags them (``len(...)``, ``.shape``, ``np.isfinite(...)``)."""
    if isinstance(node, ast.Call):
        func = node.func
        if (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) in NOT_FLOAT:
            return set()
    if isinstance(node, ast.Attribute) and node.attr in NOT_FLOAT_ATTRS:
        return set()
    found: set[str] = set()
    if isinstance(node, ast.Name):
        found.add(node.id)
    elif isinstance(node, ast.Attribute):
        found.add(node.attr)
    elif isinstance(node, ast.Constant) and isinstance(node.value, str):
        found.add(node.value)
    for child in ast.iter_child_nodes(node):
        found |= _names(child)
    return found


def _is_approx(node: ast.AST) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")) == "approx"


def _comparisons(tree: ast.AST) -> list[tuple[int, int, list[ast.AST]]]:
    """(first line, last line, operands) of every equality comparison in ``tree``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
            operands = [node.left, *node.comparators]
            if any(_is_approx(op) for op in operands):
                continue  # x == pytest.approx(y): a tolerance is stated
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name not in COMPARE_CALLS:
                continue
            operands = list(node.args[:2])
        else:
            continue
        found.append((node.lineno, node.end_lineno or node.lineno, operands))
    return found


def unmarked_float_equalities(source: str) -> list[int]:
    """Lines of ``source`` with an equality on a :data:`FLOAT_SOURCES` value and no ``# exact:``."""
    tree = ast.parse(source)
    lines = source.splitlines()
    statements = [n for n in ast.walk(tree) if isinstance(n, ast.stmt)]
    bad = []
    for first, last, operands in _comparisons(tree):
        if not any(_names(op) & FLOAT_SOURCES for op in operands):
            continue
        # the marker may stand on any line of the innermost statement holding the comparison
        stmt = min(
            (s for s in statements if s.lineno <= first and (s.end_lineno or s.lineno) >= last),
            key=lambda s: (s.end_lineno or s.lineno) - s.lineno,
        )
        span = lines[stmt.lineno - 1 : stmt.end_lineno or stmt.lineno]
        if stmt.lineno > 1 and lines[stmt.lineno - 2].lstrip().startswith("#"):
            span.append(lines[stmt.lineno - 2])  # a comment line just above the statement
        if not any(EXACT.search(line) for line in span):
            bad.append(first)
    return bad


def test_the_scanner_finds_a_float_equality_and_accepts_the_marker() -> None:
    flagged = "sol = solve_scorecard(rules)\nassert sol.expected_score() == 254.5877287344957\n"
    assert unmarked_float_equalities(flagged) == [2]
    assert unmarked_float_equalities("assert np.array_equal(a.box_values, b.box_values)\n") == [1]
    assert unmarked_float_equalities('assert row["regret"] == 0.0\n') == [1]
    marked = "assert a.box_values.tobytes() == b.box_values.tobytes()  # exact: one machine, twice\n"
    assert unmarked_float_equalities(marked) == []
    above = "# exact: one machine, twice\nassert np.array_equal(a.box_values, b.box_values)\n"
    assert unmarked_float_equalities(above) == []
    assert unmarked_float_equalities("assert_close(sol.expected_score(), 254.58772873449573)\n") == []
    assert unmarked_float_equalities("assert sol.expected_score() == pytest.approx(254.5877)\n") == []
    assert unmarked_float_equalities("assert len(plan.keep_values) == 2\n") == []  # a count
    assert unmarked_float_equalities("assert np.isfinite(plan.value) == (mask == 1)\n") == []


def _test_files() -> list[Path]:
    return [p for p in sorted((ROOT / "tests").glob("*.py")) if p.name != Path(__file__).name]


@pytest.mark.parametrize("path", _test_files(), ids=lambda p: p.name)
def test_no_unmarked_float_equality_in_tests(path: Path) -> None:
    bad = unmarked_float_equalities(path.read_text())
    assert not bad, (
        f"{path.name} lines {bad}: a float from a product or a reduction compared with == "
        "(use tests/floats.assert_close, or say why the bits are the contract with '# exact: ...')"
    )


REDUCTION = re.compile(r"\.sum\(|\.mean\(|\.dot\(| @ |" + "|".join(sorted(FLOAT_SOURCES)))
FLOAT_LITERAL = re.compile(r"(?<![\w.])-?\d+\.\d+(?:e[-+]?\d+)?")


def unrounded_float_doctests(text: str) -> list[str]:
    """Doctest examples in ``text`` that print a float from a reduction without rounding it."""
    bad = []
    for example in doctest.DocTestParser().get_examples(text):
        rounded = re.search(r"\bround\(|:\.\d+[fge]|isclose|allclose|assert_close", example.source)
        if REDUCTION.search(example.source) and FLOAT_LITERAL.search(example.want) and not rounded:
            bad.append(example.source.strip())
    return bad


def test_the_doctest_scan_finds_an_unrounded_sum() -> None:
    assert unrounded_float_doctests(">>> float(t.roll_prob.sum())\n1.0\n")
    assert not unrounded_float_doctests(">>> round(float(t.roll_prob.sum()), 12)\n1.0\n")
    assert not unrounded_float_doctests(">>> int(t.roll_prob.sum() * 7776)\n7776\n")


def _documented_files() -> list[Path]:
    files = [
        p for top in ("dice_envs", "agents", "scripts", "tests") for p in sorted((ROOT / top).rglob("*.py"))
    ]
    return [*files, ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_no_doctest_prints_an_unrounded_reduction() -> None:
    bad = {
        str(p.relative_to(ROOT)): got
        for p in _documented_files()
        if (got := unrounded_float_doctests(p.read_text()))
    }
    assert not bad, f"doctests print floats from reductions unrounded (round them): {bad}"
