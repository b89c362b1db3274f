"""``python -m agents.web``: start the game pad (see :func:`agents.web.main`)."""

from agents.web import main

raise SystemExit(main())
