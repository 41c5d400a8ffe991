"""Families that combine kernels and policy: the text families and the resolvers (DESIGN section 1)."""
