// C API: shared entry points of cpp_engine.h (version, tables, free).
// Twin: python_engine/api.py (the engine API that these C entry points give C callers).
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "api/c_api.h"
#include "cpp_engine/cpp_engine.h"
#include "families/registry.h"
#include "ir/constants.h"
#include "ir/origin.h"
#include "ir/printer.h"
#include "targets/arch.h"
#include "targets/flavors.h"
#include "ir/intrinsics.h"

#ifndef CPE_VERSION_STRING
#define CPE_VERSION_STRING "0.0.0"
#endif

namespace cpe::api {

char *dup_c(const std::string &s) {
    char *p = static_cast<char *>(std::malloc(s.size() + 1));
    if (!p) throw std::bad_alloc();
    std::memcpy(p, s.c_str(), s.size() + 1);
    return p;
}

std::string &last_reason() noexcept {
    thread_local std::string text;  // per thread: calls on other threads never see it
    return text;
}

char *module_text_c(const ir::Module &m) {
    const ir::ModulePrint p(m);
    char *t = static_cast<char *>(std::malloc(p.size() + 1));
    if (!t) throw std::bad_alloc();
    *p.write(t) = '\0';
    if (ir::origin::recording()) {  // debug mode only
        try {
            ir::origin::set_last(ir::line_origins(m, std::string(t, p.size())));
        } catch (...) {
            std::free(t);
            throw;
        }
    }
    return t;
}

void fill_output(cpe_output *out, const std::string &kernel, char *text) {
    char *k = nullptr;
    try {
        k = dup_c(kernel);
    } catch (...) {
        std::free(text);
        throw;
    }
    out->kernel = k;
    out->text = text;
}

namespace {

// Run `make` (which returns the text) and return a malloc'd copy, or NULL on
// any failure.
template <class F>
char *text_or_null(F &&make) noexcept {
    try {
        return dup_c(make());
    } catch (...) {
        return nullptr;
    }
}

}  // namespace

}  // namespace cpe::api

using namespace cpe;

extern "C" {

void cpe_output_free(cpe_output *out) {
    if (!out) return;
    std::free(out->kernel);
    std::free(out->text);
    out->kernel = nullptr;
    out->text = nullptr;
}

void cpe_free(char *s) { std::free(s); }

const char *cpe_version(void) { return CPE_VERSION_STRING; }

size_t cpe_last_reason(char *buf, size_t len) {
    const std::string &r = api::last_reason();
    api::write_c(buf, len, r);
    return r.size() + 1;
}

char *cpe_flavor_table_text(void) {
    return api::text_or_null([] {
        std::string s;
        for (const targets::Flavor &f : targets::flavors())
            s += f.name + "\t" + f.canonical + "\t" + f.datalayout + "\t" + f.capture_attr + "\t" +
                 ir::dec(f.rsrc_num_records_bits) + "\t" + (f.clusters ? "1" : "0") + "\n";
        return s;
    });
}

char *cpe_arch_table_text(void) {
    return api::text_or_null([] {
        std::string s;
        for (const targets::Arch &a : targets::arches()) {
            std::string wmma;
            for (size_t i = 0; i < a.wmma.size(); ++i) {
                const targets::WmmaShape &w = a.wmma[i];
                wmma += (i ? ";" : "") + ir::dec(w.m) + "," + ir::dec(w.n) + "," + ir::dec(w.k) + "," + w.dtype;
            }
            s += a.name + "\t" + ir::dec(a.wave_size) + "\t" + ir::dec(a.lds_bytes) + "\t" + a.matrix + "\t" + wmma +
                 "\t" + (a.clusters ? "1" : "0") + "\t" + ir::dec(a.cus) + "\t" + ir::dec(a.rsrc_flags) + "\t" + a.rsrc_layout + "\t" + ir::dec(a.rsrc_word3) + "\t";
            const std::vector<targets::RsrcField> fields = targets::rsrc_fields(a.rsrc_layout);
            for (size_t i = 0; i < fields.size(); ++i)
                s += (i ? ";" : "") + fields[i].name + "," + ir::dec(fields[i].lo) + "," + ir::dec(fields[i].width);
            s += "\t";
            for (size_t i = 0; i < a.roofline.size(); ++i)
                s += (i ? ";" : "") + a.roofline[i].first + "," + ir::dec(a.roofline[i].second);
            s += "\n";
        }
        return s;
    });
}

cpe_status cpe_intrinsic_table_text(const char *flavor, char **out, char *reason, size_t reason_len) {
    if (out) *out = nullptr;
    return api::guarded(reason, reason_len, [&] {
        const std::string name = api::flavor_arg(flavor);
        const targets::Flavor *fl = targets::find_flavor(name);
        if (!fl) throw spec::SpecRejected(targets::unknown_flavor_reason(name));
        std::string s;
        for (const auto &row : ir::intrinsic_table(fl->canonical)) s += row.first + "\t" + row.second + "\n";
        if (!out) throw std::invalid_argument("cpe_intrinsic_table_text: out is NULL");
        *out = api::dup_c(s);
    });
}

cpe_status cpe_resolve_flavor(const char *flavor, char *canonical, size_t canonical_len, char *reason,
                              size_t reason_len) {
    return api::guarded(reason, reason_len, [&] {
        const std::string name = api::flavor_arg(flavor);
        const targets::Flavor *fl = targets::find_flavor(name);
        if (!fl) throw spec::SpecRejected(targets::unknown_flavor_reason(name));
        api::write_c(canonical, canonical_len, fl->canonical);
    });
}

}  // extern "C"

extern "C" {

size_t cpe_family_count(void) { return cpe::families::registry::families().size(); }

const char *cpe_family_name(size_t index) {
    const auto &f = cpe::families::registry::families();
    return index < f.size() ? f[index].name : nullptr;
}

const char *cpe_family_prefix(size_t index) {
    const auto &f = cpe::families::registry::families();
    return index < f.size() ? f[index].prefix : nullptr;
}

const char *cpe_family_fields(size_t index) {
    namespace R = cpe::families::registry;
    try {
        static const std::vector<std::string> texts = [] {
            std::vector<std::string> t;
            for (const R::Family &f : R::families()) t.push_back(R::fields_text(f.fields()));
            return t;
        }();
        return index < texts.size() ? texts[index].c_str() : nullptr;
    } catch (...) {  // out of memory on first use: no text (a later call tries again)
        return nullptr;
    }
}

}  // extern "C"

extern "C" {

void cpe_origins_record(int on) { cpe::ir::origin::set_recording(on != 0); }

cpe_status cpe_origins_take(char **out, char *reason, size_t reason_len) {
    return cpe::api::guarded(reason, reason_len, [&] {
        if (!out) throw std::invalid_argument("out is NULL");
        *out = nullptr;
        bool had = false;
        const std::vector<std::string> table = cpe::ir::origin::take_last(&had);
        if (!had) return;
        std::string text;
        for (const std::string &line : table) text += line + "\n";
        *out = cpe::api::dup_c(text);
    });
}

}  // extern "C"
