"""The subcommands of the ``dice-envs`` command line, one module each.

Every module has ``main(argv: list[str] | None = None) -> int`` (the exit status: 0 ok, 2 bad
input). :mod:`agents.commands.cli` dispatches to them (``dice-envs train|evaluate|play|solve|
leaderboard|benchmark``); the ``scripts/*.py`` files of a source checkout that share a name with a
subcommand are thin shims over them. :mod:`agents.commands.benchmark` is a package: its ``main``
dispatches to one module per benchmark (``dice-envs benchmark engine|envs|training|recipe``).
"""
