"""cffi ABI-mode declarations of the C API (include/cpp_engine/*.h) and the
loaded library. Kept by hand in step with the headers; a test compiles every
header as C99 and the binding tests call every entry declared here."""
from __future__ import annotations

import cffi

CDEF = """
typedef enum cpe_status { CPE_OK = 0, CPE_REJECTED = 1, CPE_INTERNAL_ERROR = 2 } cpe_status;
typedef struct cpe_output { char *kernel; char *text; } cpe_output;
void cpe_output_free(cpe_output *out);
void cpe_free(char *s);
const char *cpe_version(void);
char *cpe_flavor_table_text(void);
char *cpe_arch_table_text(void);
cpe_status cpe_intrinsic_table_text(const char *flavor, char **out, char *reason, size_t reason_len);
cpe_status cpe_resolve_flavor(const char *flavor, char *canonical, size_t canonical_len,
                              char *reason, size_t reason_len);

/* ir_core.h */
typedef struct cpe_ir_core_spec { const char *kernel; int64_t threads; int64_t cluster; } cpe_ir_core_spec;
cpe_ir_core_spec cpe_ir_core_spec_default(void);
cpe_status cpe_ir_core_validate(const cpe_ir_core_spec *spec, const char *arch, const char *flavor,
                                char *reason, size_t reason_len);
cpe_status cpe_ir_core_lower(const cpe_ir_core_spec *spec, const char *arch, const char *flavor,
                             cpe_output *out, char *reason, size_t reason_len);

/* conv_fwd_split_k_reduce.h */
typedef struct cpe_reduce_spec { const char *dtype; int64_t vector; int64_t threads; int64_t degree; } cpe_reduce_spec;
cpe_reduce_spec cpe_reduce_spec_default(void);
cpe_status cpe_reduce_validate(const cpe_reduce_spec *spec, const char *arch, const char *flavor,
                               char *reason, size_t reason_len);
cpe_status cpe_reduce_lower(const cpe_reduce_spec *spec, const char *arch, const char *flavor,
                            cpe_output *out, char *reason, size_t reason_len);
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _load():
    try:
        from . import _libpath
    except ImportError as exc:  # pragma: no cover - only without a build
        raise ImportError("cpp_engine is not built: cpp_engine/_libpath.py is missing; "
                          "install the project with `pip install -e .`") from exc
    return ffi.dlopen(_libpath.LIBRARY), _libpath


lib, libpath = _load()
