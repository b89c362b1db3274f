"""``dice-envs``: one command line for every job (also ``python -m dice_envs``).

Each subcommand is a module with ``main(argv) -> int`` (see :data:`COMMANDS`), imported only when
it runs, so ``dice-envs --help`` is fast and needs none of the optional extras. ``dice-envs
COMMAND --help`` shows the options of one command.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable

__all__ = ["COMMANDS", "CommandUnavailable", "add_rules_option", "error", "main", "resolve", "usage"]

#: subcommand -> (``module:function``, one line of help). Modules are imported lazily.
COMMANDS: dict[str, tuple[str, str]] = {
    "train": ("agents.commands.train:main", "train an agent (PPO, sb3-contrib or search) from a recipe"),
    "evaluate": ("agents.commands.evaluate:main", "solitaire series or seat-balanced round robin, rated"),
    "play": ("agents.commands.play:main", "play a game in the terminal against any agents"),
    "review": ("agents.commands.review:main", "every decision of recorded games against the exact solvers"),
    "solve": ("agents.commands.solve:main", "exact solvers: optimal solitaire value of a game"),
    "datasets": ("agents.commands.datasets:main", "a Minari dataset of a policy's games, each action valued"),
    "leaderboard": ("agents.commands.leaderboard:main", "every agent on every game, as markdown"),
    "benchmark": ("agents.commands.benchmark:main", "throughput of the rules engines, envs and training"),
    "serve": ("agents.web:main", "the web game pad (needs the [web] extra)"),
}

#: What to install when a command's module is missing.
_EXTRA_HINT = {
    "datasets": "dice-envs[datasets]",
    "serve": "dice-envs[web]",
    "train": "dice-envs[train]",
    "benchmark": "dice-envs[train]",
}


def _version() -> str:
    try:
        import dice_envs

        return str(dice_envs.__version__)
    except Exception:  # pragma: no cover - a broken installation still gets a help text
        return "unknown"


def usage() -> str:
    """The top-level help text."""
    width = max(len(n) for n in COMMANDS)
    rows = "\n".join(f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items())
    return (
        "usage: dice-envs [--version] [--help] COMMAND [ARGS ...]\n\n"
        "dice-envs: RL environments, exact solvers and agents for Spiffel, Dice Poker, Yahtzee and "
        "Farkle.\n\n"
        f"commands:\n{rows}\n\n"
        "options:\n  -h, --help  show this help and exit\n  --version   print the version and exit\n\n"
        "Run 'dice-envs COMMAND --help' for the options of one command."
    )


def add_rules_option(parser: argparse.ArgumentParser, example: str) -> None:
    """The ``--rules KEY=VALUE ...`` option every command takes (read by ``parse_rule_overrides``)."""
    parser.add_argument(
        "--rules", nargs="*", default=[], metavar="KEY=VALUE", help=f"rule parameters, e.g. --rules {example}"
    )


def error(message: object, status: int = 2) -> int:
    """Print ``error: message`` on stderr (how every command reports bad input); return ``status``."""
    print(f"error: {message}", file=sys.stderr)
    return status


class CommandUnavailable(RuntimeError):
    """A subcommand whose module (or one of its dependencies) is not installed."""


def resolve(name: str) -> Callable[[list[str]], int]:
    """The ``main`` of subcommand ``name``; :class:`CommandUnavailable` with a clear message if absent."""
    target, _ = COMMANDS[name]
    module_name, func = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if not (module_name == missing or module_name.startswith(missing + ".")):
            # The command exists but one of its dependencies is not installed.
            hint = _EXTRA_HINT.get(name, "dice-envs[train]")
            raise CommandUnavailable(
                f"dice-envs {name}: needs {missing!r}, which is not installed (pip install '{hint}')"
            ) from exc
        hint = _EXTRA_HINT.get(name)
        extra = f" (pip install '{hint}')" if hint else ""
        raise CommandUnavailable(f"dice-envs {name}: this installation has no {module_name}{extra}") from None
    return getattr(module, func)


def main(argv: list[str] | None = None) -> int:
    """Dispatch ``argv`` (default ``sys.argv[1:]``) to a subcommand; return its exit status."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        if len(args) >= 2 and args[0] == "help" and args[1] in COMMANDS:
            args = [args[1], "--help"]
        else:
            print(usage())
            return 0 if args else 2
    if args[0] == "--version":
        print(f"dice-envs {_version()}")
        return 0
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"dice-envs: unknown command {name!r}; commands: {', '.join(COMMANDS)}", file=sys.stderr)
        return 2
    try:
        fn = resolve(name)
    except CommandUnavailable as exc:
        print(exc, file=sys.stderr)
        return 2
    saved = sys.argv[0]
    sys.argv[0] = f"dice-envs {name}"  # argparse's prog: usage lines read "dice-envs NAME ..."
    try:
        status = fn(rest)
    except SystemExit as exc:  # argparse's --help (0) and usage errors (2)
        code = exc.code
        return code if isinstance(code, int) else (0 if code is None else 1)
    finally:
        sys.argv[0] = saved
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
