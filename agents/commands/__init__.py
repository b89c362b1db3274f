"""Command-line programs, one module each with ``main(argv) -> int``.

They back ``dice-envs <name>`` and the thin ``scripts/<name>.py`` shims.
"""
