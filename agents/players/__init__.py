"""Players: the built-in agents of every game, a person at the terminal, and the
agent that lets a trained model play.
"""
