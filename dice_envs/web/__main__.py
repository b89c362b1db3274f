"""``python -m dice_envs.web``: start the game pad (see :func:`dice_envs.web.main`)."""

from . import main

raise SystemExit(main())
