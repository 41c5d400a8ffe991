"""Config families of the gate: one module per kernel family (see parity.config).

Every module in this package other than ``__init__`` (and private ``_*``
modules) is discovered automatically.
"""
