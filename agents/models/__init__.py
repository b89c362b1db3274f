"""Trained models: the model card, safe model files, network heads and activations, and seat
views of a model at a table of another size.
"""
