"""python_engine: the Python implementation of the splitk-parity code generator.

See docs/engine_api.md for the API shared with :mod:`cpp_engine`.
"""
from .api import (ENGINE, FAMILIES, Lowered, aot_jobs_text, arch_table, flavor_table, intrinsic_table, kernel_name,
                  load_vector, lower, lower_origins, resolve_flavor, spec_fields, validate)
from .spec.fields import SpecRejected

__all__ = ["ENGINE", "FAMILIES", "Lowered", "SpecRejected", "aot_jobs_text", "arch_table", "flavor_table",
           "intrinsic_table", "kernel_name", "load_vector", "lower", "lower_origins", "resolve_flavor",
           "spec_fields", "validate"]
