"""Spec fields, normalisation and rejection: the bottom layer of the engine (DESIGN section 1)."""
