// Twin of python_engine/ir/printer.py.
#include "ir/printer.h"

#include <charconv>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "ir/constants.h"
#include "ir/origin.h"
#include "ir/intrinsics.h"

namespace cpe::ir {

namespace {

// The two sinks of ModulePrint::emit: one counts bytes, one copies them.
struct Counter {
    size_t n = 0;
    void put(const char *, size_t k) { n += k; }
};
struct Writer {
    char *p;
    void put(const char *s, size_t k) {
        std::memcpy(p, s, k);
        p += k;
    }
};

template <class Out>
void put(Out &o, const std::string &s) {
    o.put(s.data(), s.size());
}
template <class Out>
void put(Out &o, const Ref &s) {
    o.put(s.data(), s.size());
}
template <class Out, size_t N>
void put(Out &o, const char (&s)[N]) {
    o.put(s, N - 1);
}
template <class Out>
void put_dec(Out &o, int64_t v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    o.put(buf, static_cast<size_t>(res.ptr - buf));
}

// `%r = phi <type> [ v, %label ], ...` (without indent or newline).
template <class Out>
void put_phi(Out &o, const Phi &p) {
    put(o, p.result().ref);
    put(o, " = phi ");
    put(o, p.result().type->text());
    put(o, " ");
    for (size_t i = 0; i < p.incoming().size(); ++i) {
        if (i) put(o, ", ");
        put(o, "[ ");
        put(o, p.incoming()[i].first.ref);
        put(o, ", %");
        put(o, p.incoming()[i].second);
        put(o, " ]");
    }
}

// `<type> <attrs...> %name` of a kernel parameter ("capture" prints the flavor's attribute).
template <class Out>
void put_param(Out &o, const Param &p, const std::string &capture_attr) {
    put(o, p.type->text());
    for (const std::string &a : p.attrs) {
        put(o, " ");
        put(o, a == "capture" ? capture_attr : a);
    }
    put(o, " %");
    put(o, p.name);
}

// `"key"="value"`, or the bare key of a pair without a value.
template <class Out>
void put_attr(Out &o, const std::string &key, const std::optional<std::string> &value) {
    if (!value) {
        put(o, key);
        return;
    }
    put(o, "\"");
    put(o, key);
    put(o, "\"=\"");
    put(o, *value);
    put(o, "\"");
}

}  // namespace

ModulePrint::ModulePrint(const Module &m) : m_(m) {
    const targets::Flavor &fl = m.flavor();
    const Function *f = m.function();
    if (!f) throw std::logic_error("module has no function");
    for (size_t i = 0, n = intrinsic_count(); i < n; ++i)  // table order, never use order
        if (m.uses_intrinsic(i)) decls_.push_back(&intrinsic_at(i, fl.canonical).declaration);
    for (const auto &b : f->blocks())
        for (const auto &ph : b->phis())
            if (ph.second->incoming().empty())
                throw std::logic_error("phi " + ph.second->result().ref.str() + " has no incoming edge");
    Counter c;
    emit(c);
    size_ = c.n;
}

char *ModulePrint::write(char *dst) const {
    Writer w{dst};
    emit(w);
    return w.p;
}

template <class Out>
void ModulePrint::emit(Out &o) const {
    put(o, "target datalayout = \"");
    put(o, m_.flavor().datalayout);
    put(o, "\"\ntarget triple = \"");
    o.put(targets::kTriple, std::strlen(targets::kTriple));
    put(o, "\"\n");
    if (!m_.lds().empty()) {
        put(o, "\n");
        for (const LdsGlobal &g : m_.lds()) {
            put(o, "@");
            put(o, g.name);
            put(o, " = internal addrspace(3) global ");
            put(o, g.type->text());
            put(o, " poison, align ");
            put_dec(o, g.align);
            put(o, "\n");
        }
    }
    if (!decls_.empty()) {
        put(o, "\n");
        for (const std::string *d : decls_) {
            put(o, *d);
            put(o, "\n");
        }
    }
    const Function &f = *m_.function();
    const bool group = !f.attr_group().empty();
    put(o, "\ndefine ");
    put(o, f.cc());
    put(o, " ");
    put(o, f.ret()->text());
    put(o, " @");
    put(o, f.name());
    put(o, "(");
    for (size_t i = 0; i < f.params().size(); ++i) {
        if (i) put(o, ", ");
        put_param(o, f.params()[i], m_.flavor().capture_attr);
    }
    if (group)
        put(o, ") #0 {\n");
    else
        put(o, ") {\n");
    for (size_t i = 0; i < f.blocks().size(); ++i) {
        const Block &b = *f.blocks()[i];
        if (i) put(o, "\n");
        put(o, b.name());
        put(o, ":\n");
        const TextBuffer &text = b.text();
        size_t at = 0;
        for (const auto &ph : b.phis()) {  // each phi's line goes at its offset in the block text
            o.put(text.data() + at, ph.first - at);
            at = ph.first;
            put(o, "  ");
            put_phi(o, *ph.second);
            put(o, "\n");
        }
        o.put(text.data() + at, text.size() - at);
    }
    put(o, "}\n");
    if (group) {
        put(o, "\nattributes #0 = {");
        for (const auto &kv : f.attr_group()) {
            put(o, " ");
            put_attr(o, kv.first, kv.second);
        }
        put(o, " }\n");
    }
    if (!m_.metadata().empty()) {
        put(o, "\n");
        for (const std::string &line : m_.metadata()) {
            put(o, line);
            put(o, "\n");
        }
    }
}

std::string print_module(const Module &m) {
    const ModulePrint p(m);
    std::string out(p.size(), '\0');
    p.write(out.data());
    return out;
}

std::vector<std::string> line_origins(const Module &m, const std::string &text) {
    std::vector<std::string> lines;
    size_t start = 0;
    for (size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', start)) {
        lines.push_back(text.substr(start, nl - start));
        start = nl + 1;
    }
    if (start < text.size()) lines.push_back(text.substr(start));
    std::vector<std::string> out(lines.size());
    for (size_t k = 0; k < m.lds().size(); ++k) {  // the LDS section: after the two header lines and a blank line
        const LdsGlobal &g = m.lds()[k];
        if (3 + k >= lines.size() || lines[3 + k].rfind("@" + g.name + " = ", 0) != 0)
            throw std::logic_error("line_origins: text does not match the module at LDS global " + g.name);
        out[3 + k] = origin::text(g.origin.file, g.origin.line);
    }
    size_t at = 0;
    while (at < lines.size() && lines[at].rfind("define ", 0) != 0) ++at;
    const Function *f = m.function();
    if (!f || at == lines.size()) throw std::logic_error("line_origins: no define line");
    ++at;
    for (size_t i = 0; i < f->blocks().size(); ++i) {
        const Block &b = *f->blocks()[i];
        if (i) ++at;  // the blank line between blocks
        if (at >= lines.size() || lines[at] != b.name() + ":")
            throw std::logic_error("line_origins: text does not match the module at block " + b.name());
        out[at++] = origin::text(b.origin().file, b.origin().line);
        for (size_t k = 0; k < b.lines(); ++k) {
            if (at >= lines.size()) throw std::logic_error("line_origins: text ends inside block " + b.name());
            const Here h = b.line_origin(k);
            out[at++] = origin::text(h.file, h.line);
        }
    }
    return out;
}

}  // namespace cpe::ir
