"""cpp_engine: the C++ implementation of the splitk-parity code generator.

The engine is the shared library libcpp_engine (C API in
include/cpp_engine/*.h, sources in src/); this package is its Python binding
(cffi, ABI mode), with the API of docs/engine_api.md shared with
:mod:`python_engine`. ``cmake_prefix()`` gives the CMAKE_PREFIX_PATH entry for
C/C++ programs that embed the engine (``find_package(cpp_engine CONFIG)``).
"""
from ._binding import (ENGINE, FAMILIES, EngineError, Lowered, SpecRejected, aot_jobs_text, arch_table, cmake_prefix,
                       flavor_table, intrinsic_table, kernel_name, library_path, load_vector, lower,
                       lower_origins, resolve_flavor, source_digest, spec_fields, validate, version)

__all__ = ["ENGINE", "FAMILIES", "EngineError", "Lowered", "SpecRejected", "aot_jobs_text", "arch_table", "cmake_prefix",
           "flavor_table", "intrinsic_table", "kernel_name", "library_path", "load_vector", "lower", "lower_origins",
           "resolve_flavor", "source_digest", "spec_fields", "validate", "version"]
