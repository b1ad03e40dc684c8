"""The root of errors whose message is written for the user: front ends show it as it is."""


class DocentError(Exception):
    """An expected failure (bad input, a missing model, a refused setting), said plainly."""
