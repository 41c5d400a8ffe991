// Internal helpers of the C API (not installed): the exception boundary,
// reason/output buffers and C string conversion. Each family's C entry points
// (src/api/<family>.cpp) are thin wrappers built from these.
// Twin: python_engine/api.py (the engine API that these C entry points give C callers).
#pragma once

#include <cstddef>
#include <cstring>
#include <cfenv>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "cpp_engine/cpp_engine.h"
#include "ir/function.h"
#include "spec/fields.h"
#include "targets/target.h"

namespace cpe::api {

// Copy `s` NUL-terminated into `buf` of `len` bytes (truncated); no-op when
// buf is NULL or len is 0.
inline void write_c(char *buf, size_t len, const char *data, size_t size) noexcept {
    if (!buf || len == 0) return;
    size_t n = size < len - 1 ? size : len - 1;
    std::memcpy(buf, data, n);
    buf[n] = '\0';
}
inline void write_c(char *buf, size_t len, const std::string &s) noexcept { write_c(buf, len, s.data(), s.size()); }

static_assert(spec::kMaxStringBytes == CPE_MAX_STRING_BYTES, "C API string limit differs from spec::kMaxStringBytes");

// The calling thread's last reason (cpe_last_reason, src/api/engine.cpp):
// set by every guarded() call, empty after CPE_OK. thread_local: never shared.
std::string &last_reason() noexcept;

// Keep `text` as the thread's last reason (left empty when it cannot be
// copied: out of memory) and write it into the caller's buffer.
inline void report(char *buf, size_t len, const char *text) noexcept {
    std::string &last = last_reason();
    try {
        last = text;
    } catch (...) {
        last.clear();
    }
    write_c(buf, len, text, std::strlen(text));
}

// malloc'd copy of `s` (released by cpe_free); std::bad_alloc on failure.
char *dup_c(const std::string &s);

// The reason for a NULL arch or flavor (`what`), named as the C caller wrote it:
// the engine's unknown-name reason of the empty name, `unknown_of_empty`
// ("flavor '' is not one of llvm20, ..."), with its quoted '' replaced by NULL
// ("flavor NULL is not one of llvm20, ..."). The Python engine reads Python's
// None as the text None; the binding passes None as that text, so Python
// callers read 'None' from both engines and C callers read NULL.
inline std::string null_name_reason(const std::string &what, const std::string &unknown_of_empty) {
    const std::string quoted = what + " ''";
    if (unknown_of_empty.compare(0, quoted.size(), quoted) == 0)
        return what + " NULL" + unknown_of_empty.substr(quoted.size());
    return what + " is NULL";
}

// A C string argument naming a flavor: SpecRejected for NULL (null_name_reason),
// else its text. Read no further than spec::kMaxStringBytes + 1 bytes (a longer
// name is refused by its length, targets::unknown_flavor_reason).
inline std::string flavor_arg(const char *s) {
    if (!s) throw spec::SpecRejected(null_name_reason("flavor", targets::unknown_flavor_reason("")));
    return spec::bounded_c_string(s);
}

// The target of a C call's arch and flavor, checked as targets::resolve_target
// does (flavor first, then arch); a NULL one is refused as NULL (null_name_reason).
// any_processor: the family takes any LLVM AMDGPU processor (targets::processor_arch).
inline targets::Target target_args(const char *arch, const char *flavor, bool any_processor = false) {
    const std::string fl = flavor_arg(flavor);
    if (!arch) {
        if (!targets::find_flavor(fl)) throw spec::SpecRejected(targets::unknown_flavor_reason(fl));
        throw spec::SpecRejected(null_name_reason("arch", targets::unknown_arch_reason("")));
    }
    return targets::resolve_target(spec::bounded_c_string(arch), fl, any_processor);
}

// A C string spec field `name`: NULL is JSON null; a string longer than
// spec::kMaxStringBytes (read no further than one byte past it) or bytes
// that are not printable UTF-8 (spec::printable_utf8: control characters,
// line/paragraph separators, invalid UTF-8, surrogates) throw SpecRejected
// with spec::string_reason, the text the Python engine gives for such a str
// (its own field-order check).
inline std::optional<std::string> str_field(const char *s, const char *name) {
    if (!s) return std::nullopt;
    std::string v = spec::bounded_c_string(s);
    if (auto why = spec::string_reason(std::string("spec field '") + name + "'", v)) throw spec::SpecRejected(*why);
    return v;
}

// Run `body` behind the C boundary, in the default FP environment
// (DefaultFpEnv): no exception escapes. SpecRejected ->
// CPE_REJECTED with its reason; any other exception -> CPE_INTERNAL_ERROR
// with "internal error: <what()>".
// The host's floating-point environment (rounding mode, exception flags and
// traps) for the life of a C API call is the default one (round to nearest,
// ties to even; no traps), and the caller's is restored on the way out: the
// engine's output never depends on its host's FP state (issue 14).
class DefaultFpEnv {
public:
    DefaultFpEnv() noexcept : saved_(std::fegetenv(&env_) == 0) { std::fesetenv(FE_DFL_ENV); }
    ~DefaultFpEnv() {
        if (saved_) std::fesetenv(&env_);
    }
    DefaultFpEnv(const DefaultFpEnv &) = delete;
    DefaultFpEnv &operator=(const DefaultFpEnv &) = delete;

private:
    std::fenv_t env_{};
    bool saved_;
};

template <class F>
cpe_status guarded(char *reason, size_t reason_len, F &&body) noexcept {
    const DefaultFpEnv fp_env;
    last_reason().clear();
    try {
        body();
        return CPE_OK;
    } catch (const spec::SpecRejected &e) {
        report(reason, reason_len, e.what());
        return CPE_REJECTED;
    } catch (const std::exception &e) {
        try {
            report(reason, reason_len, (std::string("internal error: ") + e.what()).c_str());
        } catch (...) {
            report(reason, reason_len, "internal error");
        }
        return CPE_INTERNAL_ERROR;
    } catch (...) {
        report(reason, reason_len, "internal error: unknown exception");
        return CPE_INTERNAL_ERROR;
    }
}

// Fill `out` with a malloc'd copy of `kernel` and `text`, a malloc'd
// NUL-terminated string whose ownership passes to `out` (freed here when the
// kernel copy fails: all-or-nothing).
void fill_output(cpe_output *out, const std::string &kernel, char *text);

// The validate/lower bodies every family's C API shares. `Fam` is a family
// namespace wrapped in a traits struct with `Spec`, `validate(spec, arch,
// flavor)` and `build(spec, arch, flavor)`; `spec` is the converted C++ spec.
// Front checks (flavor, arch) run before the family rules, as in python_engine.
// True for a family whose traits declare `static constexpr bool kAnyProcessor = true`
// (the families built on the split-K resolver: any LLVM AMDGPU processor is a target).
template <class Fam, class = void>
struct AnyProcessor : std::false_type {};
template <class Fam>
struct AnyProcessor<Fam, std::void_t<decltype(Fam::kAnyProcessor)>> : std::bool_constant<Fam::kAnyProcessor> {};

template <class Fam>
targets::Target check_spec(const typename Fam::Spec &s, const char *arch, const char *flavor) {
    const targets::Target t = target_args(arch, flavor, AnyProcessor<Fam>::value);
    if (auto r = Fam::validate(s, *t.arch, *t.flavor)) throw spec::SpecRejected(*r);
    return t;
}

template <class Fam, class ToCpp>
cpe_status validate_spec(ToCpp to_cpp, const char *arch, const char *flavor, char *reason,
                         size_t reason_len) noexcept {
    return guarded(reason, reason_len, [&] { check_spec<Fam>(to_cpp(), arch, flavor); });
}

// The LLVM IR text of `m`, malloc'd and NUL-terminated (free with std::free):
// sized exactly first, then written once into that one buffer, which becomes
// cpe_output.text as is (docs/cpp_engine.md, "The output path"). With origin
// recording on, also keeps the origin table (debug mode only).
char *module_text_c(const ir::Module &m);

// The output text of a build, malloc'd: a module prints as LLVM IR; a text
// family (conv_abi, conv_launch, split_k_policy) builds its text itself.
inline char *output_text(const std::string &text) { return dup_c(text); }
inline char *output_text(const std::unique_ptr<ir::Module> &m) { return module_text_c(*m); }

template <class Fam, class ToCpp>
cpe_status lower_spec(ToCpp to_cpp, const char *arch, const char *flavor, cpe_output *out, char *reason,
                      size_t reason_len) noexcept {
    if (out) {
        out->kernel = nullptr;
        out->text = nullptr;
    }
    return guarded(reason, reason_len, [&] {
        const typename Fam::Spec s = to_cpp();
        const targets::Target t = check_spec<Fam>(s, arch, flavor);
        if (!out) throw std::invalid_argument("out is NULL");
        auto built = Fam::build(s, *t.arch, *t.flavor);
        fill_output(out, built.first, output_text(built.second));
    });
}

}  // namespace cpe::api
