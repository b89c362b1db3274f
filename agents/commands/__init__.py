"""The subcommands of the ``dice-envs`` command line, one module each.

Every module has ``main(argv: list[str] | None = None) -> int`` (the exit status: 0 ok, 2 bad
input). :mod:`agents.cli` dispatches to them; the ``scripts/*.py`` files of a source checkout are
thin shims over them. ``train`` and ``benchmark`` live in :mod:`agents.commands.train` and
:mod:`agents.commands.benchmark` (its training loops in :mod:`agents.commands.bench_training`, a
helper module without ``main``).
"""
