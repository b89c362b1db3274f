"""Search over a learned value: the value network, the batched search players and their agents."""
