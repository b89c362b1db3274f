"""Every shell block of the README and the docs runs in the suite.

The ```` ```bash ```` / ``console`` / ``sh`` / ``shell`` blocks of ``README.md`` and
``docs/**/*.md`` (the generated ``docs/games``, ``docs/_generated`` and ``docs/_build`` excepted)
are split into commands (``\\`` continuations joined, comments dropped, in ``console`` blocks only
the ``$ `` lines), and each command line is one test case, named ``file:line``:

* ``dice-envs ...``, ``python scripts/...`` and ``python -m ...`` run with :mod:`subprocess` in a
  fresh folder that links the checkout's ``configs/`` and ``scripts/``; a nonzero exit status fails
  the case with the command's stderr. A long job gets the overrides of :data:`BUDGET` (keyed by its
  subcommand) appended, so it ends in seconds; ``--help`` lines run as written. A command with
  ``--resume`` continues the run of its block's earlier commands: those run first in its folder,
  and the n-th command of that chain trains ``n x`` :data:`TRAIN_STEPS` steps, so every resume has
  steps to add. A figure with two or more decimals in a command's comment (``# 254.5877``) must be
  printed by the command.
* A server (``dice-envs serve``, ``python -m agents.web``) starts on a free port, must answer the
  URL of its comment (or ``/``) over HTTP, and is stopped.
* Not run, but checked: ``pip install`` (every extra exists in ``pyproject.toml``, every
  ``torch==X`` pin is the one pin of the docs and ``.ci/run`` and meets the extras' requirement),
  ``python -m pytest`` (``.ci/run`` runs the same line), commands for a Ray cluster (``ray ...``,
  ``--address``: every flag is one their ``--help`` lists), ``bash <script>`` (the script exists),
  ``git clone`` (the URL's shape).

Every fenced block must carry a language this file knows: the runnable ones above, ``yaml`` and
``json`` (parsed), those listed in :data:`NOT_RUN` and MyST directives (``{toctree}``); a block of
another language, or of none, fails :func:`test_every_block_has_a_known_language`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from agents.training.recipes import read_recipe

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GENERATED = {"_build", "_generated", "games"}
RUNNABLE = {"bash", "console", "sh", "shell"}
PARSED = {"yaml": yaml.safe_load, "yml": yaml.safe_load, "json": json.loads}
#: Languages of blocks that are shown, not run (python blocks: tests/test_docs.py runs them).
NOT_RUN = {"text", "python", "py", "python3"}
#: What a command's folder links from the checkout.
LINKED = ("configs", "scripts")
COMMAND_TIMEOUT_S = 240
SERVER_START_S = 60
#: Environment steps of a budgeted training run (times n in a --resume chain).
TRAIN_STEPS = 512
#: The budget overrides appended to a long command, keyed by its subcommand (``dice-envs X`` or
#: ``dice-envs benchmark X``) or script; each flag is the command's own (see its ``--help``).
BUDGET: dict[str, tuple[str, ...]] = {
    "train": (
        "--no-progress", "--device", "cpu",
        "--set", "n_envs=32", "--set", "n_steps=16", "--set", "batch_size=256",
        "--set", "eval_freq=512", "--set", "eval_episodes=8", "--set", "checkpoint_freq=512",
        "--set", "snapshot_freq=512", "--set", "final_eval_games=8",
    ),  # + --total-timesteps n * TRAIN_STEPS
    "train search": (  # a trainer: search recipe: a tiny network, few games (+ iterations 2n)
        "--no-progress", "--set", "games_per_iteration=16", "--set", "fit_steps=4", "--set", "eval_every=1",
        "--set", "eval_games=8", "--set", "final_eval_games=16", "--set", "hidden=[16]",
    ),
    "evaluate": ("--games", "4", "--workers", "1", "--no-exact"),
    "datasets": ("--episodes", "2", "--force"),
    "leaderboard": ("--only", "spiffel", "--games", "3", "--workers", "1", "--no-exact"),
    "benchmark engine": ("--seconds", "0.2"),
    "benchmark envs": ("--seconds", "0.2", "--sizes", "1", "64"),
    "benchmark training": (
        "--loop-envs", "64", "--loop-steps", "16", "--loop-batch", "256",
        "--loop-epochs", "1", "--loop-updates", "1",
    ),
    "scripts/train_rllib.py": (
        "--iterations", "1", "--env-runners", "0", "--batch", "256", "--minibatch", "128",
        "--epochs", "1", "--cpus", "1",
    ),
    "scripts/sweep.py": ("--num-samples", "1"),
    "serve": ("--port", "{port}"),
}  # fmt: skip
#: Scripts that are the command line's subcommands under another name.
SCRIPT_ALIASES = {
    "scripts/train.py": "train",
    "scripts/evaluate.py": "evaluate",
    "scripts/leaderboard.py": "leaderboard",
    "scripts/play.py": "play",
    "-m agents.web": "serve",
}
SERVERS = {"serve"}
#: Commands that take more than a few seconds even on their budget (exact solves, Ray start-up).
SLOW = {"solve", "scripts/train_rllib.py", "scripts/sweep.py"}
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<lang>[^\s`]*)")
LOCAL = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy for 127.0.0.1
FIGURE = re.compile(r"(?<![\w.])\d+\.\d{2,}(?![\w.])")


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str


@dataclass(frozen=True)
class Command:
    path: Path
    line: int  # where the command starts, 1-based
    text: str  # the command, continuations joined, comment dropped
    comment: str
    block: Block

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def doc_files() -> list[Path]:
    """README.md and the hand-written pages under docs/."""
    pages = (p for p in DOCS.rglob("*.md") if not GENERATED & set(p.relative_to(DOCS).parts))
    return [ROOT / "README.md", *sorted(pages)]


def blocks(path: Path, text: str | None = None) -> list[Block]:
    """The fenced blocks of a Markdown file (a fence closes on a bare fence at least as long)."""
    lines = (path.read_text(encoding="utf-8") if text is None else text).splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m.group("fence"), len(m.group("indent"))
        close = re.compile(rf"^\s*{re.escape(fence[0])}{{{len(fence)},}}\s*$")
        j = i + 1
        while j < len(lines) and not close.match(lines[j]):
            j += 1
        body = "\n".join(line[indent:] if line[:indent].isspace() else line for line in lines[i + 1 : j])
        found.append(Block(path, i + 1, m.group("lang").lower(), body + "\n"))
        i = j + 1
    return found


def split_comment(line: str) -> tuple[str, str]:
    """A shell line's command and its comment (an unquoted ``#`` at a word's start)."""
    quote = ""
    for k, ch in enumerate(line):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (k == 0 or line[k - 1].isspace()):
            return line[:k].rstrip(), line[k + 1 :].strip()
    return line.rstrip(), ""


def commands(block: Block) -> list[Command]:
    """The command lines of a shell block."""
    found: list[Command] = []
    pending: list[str] = []
    start = 0
    for k, raw in enumerate(block.text.splitlines()):
        line = raw.strip()
        if not pending:
            if block.lang == "console":
                if not line.startswith("$ "):
                    continue  # the output of the command above
                line = line[2:].strip()
            if not line or line.startswith("#"):
                continue
            start = block.line + 1 + k
        if line.endswith("\\"):
            pending.append(line[:-1].strip())
            continue
        text, comment = split_comment(" ".join([*pending, line]))
        pending = []
        found.append(Command(block.path, start, text, comment, block))
    assert not pending, f"{block.path}:{block.line}: the block ends inside a continued line"
    return found


def all_blocks() -> list[Block]:
    return [b for path in doc_files() for b in blocks(path)]


def all_commands() -> list[Command]:
    return [c for b in all_blocks() if b.lang in RUNNABLE for c in commands(b)]


def words(text: str) -> list[list[str]]:
    """A command line's simple commands, split at ``&&``; other shell operators are refused."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    parts: list[list[str]] = [[]]
    for token in lexer:
        if token == "&&":
            parts.append([])
        elif token and set(token) <= set("();<>|&"):
            raise AssertionError(f"shell syntax this test does not run: {token!r} in {text!r}")
        else:
            parts[-1].append(token)
    assert all(parts), f"an empty command in {text!r}"
    return parts


def key(argv: list[str]) -> str:
    """The subcommand (``train``, ``benchmark envs``) or script a command runs."""
    if argv[0] == "dice-envs":
        sub = [w for w in argv[1:3] if not w.startswith("-")]
        name = " ".join(sub[:2]) if sub[:1] == ["benchmark"] else " ".join(sub[:1])
        return name or "dice-envs"
    if argv[0] == "python":
        name = f"-m {argv[2]}" if argv[1] == "-m" else argv[1]
        return SCRIPT_ALIASES.get(name, name)
    return argv[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def executable(argv: list[str]) -> list[str]:
    """``argv`` with ``python`` and console scripts (``dice-envs``, ``ray``) this interpreter's."""
    if argv[0] == "python":
        return [sys.executable, *argv[1:]]
    script = Path(sys.executable).parent / argv[0]
    found = str(script) if script.exists() else shutil.which(argv[0])
    assert found, f"{argv[0]} is not installed (pip install -e '.[dev]')"
    return [found, *argv[1:]]


def budgeted(argv: list[str], chain: int = 1, port: int = 0) -> list[str]:
    """``argv`` with its budget overrides (none for ``--help``)."""
    if "--help" in argv or "-h" in argv:
        return argv
    name = key(argv)
    config = argv[argv.index("--config") + 1] if "--config" in argv else "quickstart"
    if name == "train" and read_recipe(config).get("trainer") == "search":  # counts iterations
        return [*argv, *BUDGET["train search"], "--set", f"iterations={2 * chain}"]
    extra = [w.format(port=port) for w in BUDGET.get(name, ())]
    if name == "train":
        extra += ["--total-timesteps", str(chain * TRAIN_STEPS)]
    return [*argv, *extra]


def environment() -> dict[str, str]:
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_XDIST_WORKER", None)
    return env


def run(argv: list[str], where: Path, what: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        executable(argv),
        cwd=where,
        env=environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=COMMAND_TIMEOUT_S,
    )
    assert proc.returncode == 0, (
        f"{what}: `{shlex.join(argv)}` exited with status {proc.returncode}:\n{proc.stderr[-4000:]}"
    )
    return proc


def serve(argv: list[str], where: Path, comment: str, what: str) -> None:
    """Start a server on a free port, fetch the URL of its comment (or /), stop it."""
    port = free_port()
    url = re.search(r"https?://[\w.\-]+:\d+(/\S*)?", comment)
    path = (url.group(1) if url else None) or "/"
    proc = subprocess.Popen(
        executable(budgeted(argv, port=port)),
        cwd=where,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            assert proc.poll() is None, (
                f"{what}: the server exited ({proc.returncode}):\n{proc.stderr.read()}"
            )
            try:
                with LOCAL.open(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
                    assert answer.status == 200, f"{what}: {path} answered {answer.status}"
                    assert answer.read(), f"{what}: {path} answered an empty page"
                    return
            except OSError:
                assert time.monotonic() < deadline, f"{what}: no answer on port {port} in {SERVER_START_S} s"
                time.sleep(0.3)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def check_flags(argv: list[str], prefix: int, where: Path, what: str) -> None:
    """Every ``--flag`` of ``argv`` is one that the ``--help`` of ``argv[:prefix]`` lists."""
    proc = run([*argv[:prefix], "--help"], where, what)
    listed = proc.stdout + proc.stderr
    for word in argv[prefix:]:
        flag = word.split("=", 1)[0]
        if flag.startswith("--") and len(flag) > 2:
            assert re.search(rf"(?<![\w-]){re.escape(flag)}(?![\w-])", listed), (
                f"{what}: `{shlex.join(argv[:prefix])}` has no option {flag}"
            )


def pyproject() -> dict:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def torch_pins() -> set[str]:
    """Every ``torch==X`` of the docs and of .ci/run."""
    texts = [p.read_text(encoding="utf-8") for p in [*doc_files(), ROOT / ".ci" / "run"]]
    return {m for text in texts for m in re.findall(r"torch==([\w.+]+)", text)}


def check_pip(argv: list[str], what: str) -> None:
    """A ``pip install`` of this package: its extras exist, its torch pin is the pin."""
    from packaging.requirements import Requirement
    from packaging.specifiers import SpecifierSet

    extras = pyproject()["project"]["optional-dependencies"]
    assert argv[1] == "install", f"{what}: only pip install is checked"
    for word in argv[2:]:
        if word in ("-e", "--editable", "-U", "--upgrade"):
            continue
        m = re.fullmatch(r"(?:\.|dice-envs)(?:\[(?P<extras>[\w,\-]+)\])?", word)
        if m:
            for extra in filter(None, (m.group("extras") or "").split(",")):
                assert extra in extras, f"{what}: no extra [{extra}] in pyproject.toml"
            continue
        req = Requirement(word)
        assert req.name == "torch", f"{what}: installs {word}, not this package or its torch"
        pins = torch_pins()
        assert len(pins) == 1, f"the docs and .ci/run pin different torch versions: {sorted(pins)}"
        (version,) = [s.version for s in req.specifier]
        assert {version} == pins, f"{what}: torch=={version}, elsewhere torch=={pins.pop()}"
        wanted = [Requirement(r) for rs in extras.values() for r in rs if Requirement(r).name == "torch"]
        assert wanted, "no extra of pyproject.toml requires torch"
        for r in wanted:
            assert version in SpecifierSet(str(r.specifier)), f"{what}: torch=={version} breaks {r}"


def check_unrun(argv: list[str], text: str, where: Path, what: str) -> bool:
    """Check a command that is not run; False when the command is one to run."""
    if argv[0] in ("pip", "pip3") or argv[:3] == ["python", "-m", "pip"]:
        check_pip(argv[2:] if argv[0] == "python" else argv, what)
    elif argv[:3] == ["python", "-m", "pytest"]:
        ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
        assert text in ci, f"{what}: .ci/run does not run `{text}` (the suite as the docs say)"
    elif argv[0] == "bash":
        assert (ROOT / argv[1]).is_file(), f"{what}: no file {argv[1]}"
    elif argv[:2] == ["git", "clone"]:
        assert re.fullmatch(r"(https://[\w.\-]+/|git@[\w.\-]+:)[\w.\-]+/[\w.\-]+?(\.git)?", argv[2]), what
    elif argv[0] == "ray":
        # a cluster: `ray start ...`, `ray job submit ... -- COMMAND`
        cut = argv.index("--") if "--" in argv else len(argv)
        check_flags(argv[:cut], 3 if argv[1] == "job" else 2, where, what)
        if cut < len(argv):
            inner = argv[cut + 1 :]
            check_flags(inner, 2, where, what)
    elif "--address" in argv:
        check_flags(argv, 2, where, what)  # needs a running Ray cluster
    else:
        return False
    return True


def execute(command: Command, where: Path, chain: int = 1) -> None:
    what = command.id
    text = command.text
    for argv in words(text):
        if check_unrun(argv, text, where, what):
            continue
        assert argv[0] in ("dice-envs", "python"), f"{what}: no rule to run or check `{argv[0]}`"
        if key(argv) in SERVERS and "--help" not in argv:
            serve(argv, where, command.comment, what)
            continue
        proc = run(budgeted(argv, chain=chain), where, what)
        printed = [float(x) for x in re.findall(r"-?\d+\.\d+", proc.stdout)]
        for figure in FIGURE.findall(command.comment):
            tol = 0.5 * 10.0 ** -len(figure.split(".")[1])
            assert any(abs(x - float(figure)) <= tol for x in printed), (
                f"{what}: the comment says {figure}; the command printed:\n{proc.stdout[-2000:]}"
            )


def case(command: Command) -> pytest.param:
    try:
        names = {key(argv) for argv in words(command.text)}
    except AssertionError:
        names = set()  # the case fails, naming the reason
    return pytest.param(command, id=command.id, marks=[pytest.mark.slow] if names & SLOW else [])


@pytest.mark.parametrize("command", [case(c) for c in all_commands()])
def test_doc_command(command: Command, tmp_path: Path) -> None:
    for name in LINKED:
        (tmp_path / name).symlink_to(ROOT / name)
    chain = [command]
    if "--resume" in command.text.split():
        earlier = [c for c in commands(command.block) if c.line < command.line]
        chain = [*earlier, command]
    for n, step in enumerate(chain, start=1):
        execute(step, tmp_path, chain=n)


def test_every_block_has_a_known_language() -> None:
    known = RUNNABLE | set(PARSED) | NOT_RUN
    unknown = [
        f"{b.path.relative_to(ROOT)}:{b.line} ```{b.lang}"
        for b in all_blocks()
        if b.lang not in known and not re.fullmatch(r"\{[\w-]+\}", b.lang)
    ]
    assert not unknown, "blocks of a language this suite neither runs nor allows:\n" + "\n".join(unknown)


def test_parsed_blocks() -> None:
    """The yaml and json blocks parse."""
    for b in all_blocks():
        if b.lang in PARSED:
            PARSED[b.lang](b.text)


def test_the_docs_have_commands_of_each_kind() -> None:
    found = {key(argv) for c in all_commands() for argv in words(c.text)}
    assert {"train", "evaluate", "serve", "pip", "solve"} <= found, sorted(found)
    assert len(torch_pins()) == 1, sorted(torch_pins())


def test_extractor() -> None:
    page = "\n".join(
        [
            "text",
            "```bash",
            "dice-envs train --config quickstart \\",
            "    --seed 1   # writes runs/quickstart",
            "# a comment line",
            "",
            "pip install -e '.[web]' && dice-envs serve  # then open http://127.0.0.1:8000/x",
            "```",
            "~~~~console",
            "$ dice-envs --help",
            "usage: ...",
            "~~~~",
            "```",
            "no language",
            "```",
        ]
    )
    path = ROOT / "README.md"
    found = [
        (c.line, c.text, c.comment) for b in blocks(path, page) if b.lang in RUNNABLE for c in commands(b)
    ]
    assert found == [
        (3, "dice-envs train --config quickstart --seed 1", "writes runs/quickstart"),
        (7, "pip install -e '.[web]' && dice-envs serve", "then open http://127.0.0.1:8000/x"),
        (10, "dice-envs --help", ""),
    ]
    assert [b.lang for b in blocks(path, page)] == ["bash", "console", ""]
    assert words(found[1][1]) == [["pip", "install", "-e", ".[web]"], ["dice-envs", "serve"]]
    assert key(["dice-envs", "benchmark", "envs", "--threads", "1"]) == "benchmark envs"
    assert key(["python", "scripts/train.py", "--config", "x"]) == "train"
    assert key(["python", "-m", "agents.web"]) == "serve"
    argv = budgeted(["dice-envs", "train", "--config", "quickstart-ppo"], chain=2)
    assert argv[-2:] == ["--total-timesteps", str(2 * TRAIN_STEPS)]
    argv = budgeted(["dice-envs", "train", "--config", "quickstart"], chain=2)  # a search recipe
    assert argv[-2:] == ["--set", "iterations=4"]
    assert budgeted(["dice-envs", "train", "--help"]) == ["dice-envs", "train", "--help"]
    with pytest.raises(AssertionError, match="shell syntax"):
        words("dice-envs --help | head")
    with pytest.raises(AssertionError, match="no extra"):
        check_pip(["pip", "install", "-e", ".[nonexistent]"], "test")
