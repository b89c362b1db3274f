"""``trainer: search``: the search learner of a value network (points or the win), its config and products."""
