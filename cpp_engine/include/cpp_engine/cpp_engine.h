/* cpp_engine.h -- C API of the splitk-parity C++ engine: shared status and
 * output types, version, and the target tables.
 *
 * Plain C99. Every string the engine returns is malloc'd by the engine and
 * freed by the caller with cpe_free() / cpe_output_free(). Every entry point
 * catches all C++ exceptions: a spec, arch or flavor the engine will not lower
 * gives CPE_REJECTED with the reason (the same text as the Python engine, but
 * for a NULL arch or flavor, below);
 * anything else gives CPE_INTERNAL_ERROR with a description in `reason`.
 *
 * Reason buffers: `reason` (may be NULL) receives a NUL-terminated message,
 * truncated to `reason_len` bytes including the NUL (truncation may split a
 * UTF-8 sequence). Untouched on CPE_OK. The whole reason is kept for the
 * calling thread until its next call that takes a reason buffer:
 * cpe_last_reason() returns the bytes it needs (NUL included) and copies it,
 * so a caller sizes the buffer in one call and never runs the engine twice:
 *
 *     char small[256];
 *     if (cpe_ir_core_validate(&spec, arch, flavor, small, sizeof small) != CPE_OK) {
 *         size_t need = cpe_last_reason(NULL, 0);        // bytes, NUL included
 *         char *whole = need > sizeof small ? malloc(need) : small;
 *         if (whole != small) cpe_last_reason(whole, need);
 *     }
 *
 * Strings: every string a call takes (a spec struct's `const char *` members,
 * arch, flavor) is at most CPE_MAX_STRING_BYTES bytes; the engine reads no
 * byte past CPE_MAX_STRING_BYTES + 1, and a longer string is CPE_REJECTED
 * ("spec field 'dtype' must be at most 4096 bytes of UTF-8 text", "arch must
 * be ...") before any other check of it. A string must then be printable
 * UTF-8: no invalid or overlong sequence, no surrogate, no C0/C1 control
 * character (U+0000-U+001F, U+007F-U+009F) and no Unicode line or paragraph
 * separator (U+2028, U+2029), else CPE_REJECTED with "... must be printable
 * UTF-8 text (no control characters, line or paragraph separators, NUL or
 * lone surrogates)". The same limits and texts as the Python engine.
 *
 * Per-family entry points live in one header per family (ir_core.h, ...).
 * A NULL arch or flavor string is CPE_REJECTED and named NULL ("flavor NULL
 * is not one of llvm20, ...", "arch NULL is not one of gfx1250, ..."); the
 * Python binding passes Python's None as the text "None", the Python engine's
 * reading, so Python callers read "arch 'None' ..." from both engines.
 * Flavor and arch are always explicit arguments; nothing reads the environment
 * or depends on the C locale.
 *
 * Threads: every entry point is thread-safe, and concurrent calls give the
 * bytes serial calls give. The mutable state calls share is, exactly: the IR
 * type interning tables (src/ir/types.cpp: derived types are created once
 * and never changed or freed; one mutex guards lookup and insertion) and the
 * AOT job-hash cache of each flavor (src/policy/aot.cpp has_job: filled once
 * under a mutex, read-only after). Neither changes any output. The
 * engine's tables (flavors, arches, intrinsics, families) are built once on
 * first use (C++11 thread-safe static initialization) and only read after.
 * The last reason (above) and origin recording (below) are per thread
 * (thread_local), never shared. The caller's
 * floating-point environment is saved and restored around each call.
 */
#ifndef CPP_ENGINE_CPP_ENGINE_H
#define CPP_ENGINE_CPP_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#if defined(CPP_ENGINE_STATIC)
/* the static archive (a -DBUILD_SHARED_LIBS=OFF build; its CMake target and .pc
 * define CPP_ENGINE_STATIC for their users): nothing to import or export */
#  define CPE_API
#elif defined(_WIN32)
#  if defined(CPP_ENGINE_BUILDING)
#    define CPE_API __declspec(dllexport)
#  else
#    define CPE_API __declspec(dllimport)
#  endif
#elif defined(__GNUC__)
#  define CPE_API __attribute__((visibility("default")))
#else
#  define CPE_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Outcome of a call: CPE_OK; CPE_REJECTED (a normal outcome: the spec, arch
 * or flavor is not accepted, reason says why); CPE_INTERNAL_ERROR (an engine
 * bug or out-of-memory, reason describes it). */
typedef enum cpe_status { CPE_OK = 0, CPE_REJECTED = 1, CPE_INTERNAL_ERROR = 2 } cpe_status;

/* Limits of the C API: CPE_MAX_STRING_BYTES, the longest string (bytes,
 * without the NUL) any call takes (spec string members, arch, flavor); the
 * same as the Python engine's MAX_STRING_BYTES (python_engine/spec/fields.py). */
typedef enum cpe_limits { CPE_MAX_STRING_BYTES = 4096 } cpe_limits;

/* The whole reason of the calling thread's most recent call that takes a
 * reason buffer: copies it NUL-terminated into `buf` (truncated to `len`
 * bytes, NUL included; nothing when buf is NULL or len is 0) and returns the
 * bytes the whole reason needs, NUL included (1, an empty reason, after
 * CPE_OK). Thread-local: another thread's calls never change it. */
CPE_API size_t cpe_last_reason(char *buf, size_t len);

/* A lowered kernel: `kernel` is the kernel symbol name, `text` the whole LLVM
 * IR module (DESIGN §2: `\n` line ends, trailing newline). Both malloc'd by
 * the engine; release with cpe_output_free(). */
typedef struct cpe_output { char *kernel; char *text; } cpe_output;

/* Frees both strings of `out` and sets them NULL; NULL-safe (out or fields). */
CPE_API void cpe_output_free(cpe_output *out);

/* Frees a string returned by a *_text() call (or cpe_intrinsic_table_text); NULL-safe. */
CPE_API void cpe_free(char *s);

/* Engine version ("MAJOR.MINOR.PATCH", the package version); static storage. */
CPE_API const char *cpe_version(void);

/* The sha256 digest (64 lowercase hex digits, static storage) of the C++
 * sources this library was built from: every file under cpp_engine/src and
 * cpp_engine/include plus CMakeLists.txt, as "<sha256>  <relative path>\n"
 * lines sorted by path, hashed (cpp_engine/cmake/source_digest.cmake). The
 * gate compares it with the sources on disk to report a stale editable build
 * (parity/base/stale.py, docs/cpp_engine.md). */
CPE_API const char *cpe_source_digest(void);

/* The family registry (include/cpp_engine/families.def, src/families/registry.cpp):
 * cpe_family_count() families, index 0 .. count-1 in the engine's family order
 * (the order of the Python engine's FAMILIES). */
CPE_API size_t cpe_family_count(void);

/* Name of family `index` ("ir_core", ...), static storage; NULL when index >= cpe_family_count(). */
CPE_API const char *cpe_family_name(size_t index);

/* C prefix of family `index` ("cpe_reduce" for conv_fwd_split_k_reduce): its
 * spec struct is <prefix>_spec, its entry points <prefix>_spec_default,
 * <prefix>_validate and <prefix>_lower (include/cpp_engine/<name>.h). Static
 * storage; NULL when index >= cpe_family_count(). */
CPE_API const char *cpe_family_prefix(size_t index);

/* Spec fields of family `index` in spec order (the order of its C struct's
 * members), as "name:kind" joined by ',' where kind is one letter: i (int64_t),
 * s (const char *; NULL is the JSON null), b (bool), f (double). Static storage;
 * NULL when index >= cpe_family_count(). */
CPE_API const char *cpe_family_fields(size_t index);

/* The flavor table (DESIGN §3), one line per row in table order, aliases
 * included: name\tcanonical\tdatalayout\tcapture_attr\trsrc_num_records_bits\tclusters(0/1)\n.
 * Sources: LLVM AMDGPUTargetMachine.cpp (datalayout), LangRef "captures"
 * (capture attribute), IntrinsicsAMDGPU.td (make.buffer.rsrc); see
 * src/targets/flavors.h. Returns malloc'd text (free with cpe_free), or NULL
 * on out-of-memory. */
CPE_API char *cpe_flavor_table_text(void);

/* The arch table, one line per arch in table order:
 * name\twave_size\tlds_bytes\tmatrix\twmma\tclusters(0/1)\tcus\trsrc_flags\trsrc_layout\trsrc_word3\trsrc_fields\troofline\n
 * where wave_size is
 * lanes, lds_bytes is LDS bytes per workgroup, matrix is `wmma` or `mfma`,
 * wmma lists the WMMA shapes `M,N,K,dtype` joined by `;` (empty for none), and
 * cus is the compute units per device (gfx1250's is an assumption), and
 * rsrc_flags is make.buffer.rsrc's flags operand (decimal), rsrc_layout the
 * buffer resource layout (gfx9, gfx11, gfx1250), rsrc_word3 the descriptor
 * word 3 LLVM 22.1 compiles for a stride-0 resource (decimal) and rsrc_fields
 * the layout's fields `name,low_bit,width` joined by `;` (gfx1250's field
 * meanings are partly an assumption, see src/targets/arch.h), and roofline
 * the perf model's constants `name,value` joined by `;` (empty for an arch
 * without one; gfx1250: clock_mhz, simds_per_cu, wmma_cycles,
 * max_waves_per_simd, hbm_bytes_per_us, l2_bytes_per_clk_per_cu, launch_ns,
 * cluster_barrier_cycles, kstep_issue_cycles; units in the names; sources and
 * assumptions in src/targets/arch.h and docs/perf_model.md).
 * Sources: LLVM AMDGPU.td / GCNSubtarget, AMDGPUUsage.rst processor table,
 * IntrinsicsAMDGPU.td; see src/targets/arch.h. malloc'd text, NULL on OOM. */
CPE_API char *cpe_arch_table_text(void);

/* The intrinsic table for `flavor` (aliases resolved): one line per row in
 * table order, key\tdeclaration\n. On CPE_OK *out receives malloc'd text
 * (free with cpe_free); an unknown flavor (or NULL) gives CPE_REJECTED with
 * "flavor '<name>' is not one of llvm20, llvm22, llvm23, llvm24". */
CPE_API cpe_status cpe_intrinsic_table_text(const char *flavor, char **out, char *reason, size_t reason_len);

/* Canonical name of `flavor` ("llvm24" -> "llvm23") written NUL-terminated to
 * `canonical` (truncated to canonical_len); unknown -> CPE_REJECTED with the
 * reason above. */
CPE_API cpe_status cpe_resolve_flavor(const char *flavor, char *canonical, size_t canonical_len, char *reason,
                                      size_t reason_len);

/* Origin recording, the divergence locator's debug mode (docs/gate.md).
 * cpe_origins_record(1) switches it on for the calling thread, (0) off; off
 * is the default. Either call clears the thread's origin table. While it is
 * on, every IR module a <prefix>_lower call of this thread prints also leaves
 * its origin table (the last module's) for cpe_origins_take. Recording never
 * changes a byte of the output. */
CPE_API void cpe_origins_record(int on);

/* Moves out the calling thread's origin table: the table of the last IR
 * module lowered on this thread while recording was on. *out receives
 * malloc'd text (free with cpe_free) holding one line per line of that
 * module's text, in order, each ended by '\n': the C++ source location of
 * the builder call that made the block label or instruction on that line,
 * as "cpp_engine/src/<path>.cpp:<line>", or an empty line for a line no
 * builder call made (datalayout, declarations, define, '}', blank lines,
 * attributes, metadata). *out is NULL (and CPE_OK is returned) when no
 * table is held: nothing lowered since recording was switched on, or a text
 * family (conv_abi, conv_launch, ...) whose text is no IR module. The table
 * is cleared. CPE_INTERNAL_ERROR (out of memory, NULL out) with `reason`. */
CPE_API cpe_status cpe_origins_take(char **out, char *reason, size_t reason_len);

#ifdef __cplusplus
}
#endif

#endif /* CPP_ENGINE_CPP_ENGINE_H */
