// Twin of python_engine/ir/printer.py.
#include "ir/printer.h"

#include <stdexcept>
#include <vector>

#include "ir/constants.h"
#include "ir/origin.h"
#include "targets/intrinsics.h"

namespace cpe::ir {

namespace {

using Section = std::vector<std::string>;

std::string param_text(const Param &p, const std::string &capture_attr) {
    std::string s = p.type->text();
    for (const std::string &a : p.attrs) s += " " + (a == "capture" ? capture_attr : a);
    return s + " %" + p.name;
}

std::string attr_text(const std::string &key, const std::optional<std::string> &value) {
    return value ? "\"" + key + "\"=\"" + *value + "\"" : key;
}

}  // namespace

std::string print_module(const Module &m) {
    const targets::Flavor &fl = m.flavor();
    const Function *f = m.function();
    if (!f) throw std::logic_error("module has no function");
    std::vector<Section> sections;
    sections.push_back({"target datalayout = \"" + fl.datalayout + "\"",
                        std::string("target triple = \"") + targets::kTriple + "\""});
    if (!m.lds().empty()) {
        Section s;
        for (const LdsGlobal &g : m.lds())
            s.push_back("@" + g.name + " = internal addrspace(3) global " + g.type->text() + " poison, align " +
                        dec(g.align));
        sections.push_back(std::move(s));
    }
    Section decls;
    for (const std::string &key : targets::intrinsic_keys())  // table order, never use order
        if (m.used_intrinsics().count(key)) decls.push_back(targets::intrinsic(key, fl.canonical).declaration());
    if (!decls.empty()) sections.push_back(std::move(decls));

    std::string params;
    for (size_t i = 0; i < f->params().size(); ++i) {
        if (i) params += ", ";
        params += param_text(f->params()[i], fl.capture_attr);
    }
    const bool group = !f->attr_group().empty();
    Section body{"define " + f->cc() + " " + f->ret()->text() + " @" + f->name() + "(" + params + ")" +
                 (group ? " #0" : "") + " {"};
    for (size_t i = 0; i < f->blocks().size(); ++i) {
        const Block &b = *f->blocks()[i];
        if (i) body.emplace_back();
        body.push_back(b.name() + ":");
        for (const auto &ins : b.instrs()) body.push_back("  " + ins->text());
    }
    body.emplace_back("}");
    sections.push_back(std::move(body));
    if (group) {
        std::string line = "attributes #0 = {";
        for (const auto &kv : f->attr_group()) line += " " + attr_text(kv.first, kv.second);
        sections.push_back({line + " }"});
    }
    if (!m.metadata().empty()) sections.push_back(m.metadata());

    std::string out;
    for (size_t i = 0; i < sections.size(); ++i) {
        if (i) out += "\n\n";
        for (size_t j = 0; j < sections[i].size(); ++j) {
            if (j) out += "\n";
            out += sections[i][j];
        }
    }
    return out + "\n";
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
        for (const auto &ins : b.instrs()) {
            if (at >= lines.size()) throw std::logic_error("line_origins: text ends inside block " + b.name());
            out[at++] = origin::text(ins->origin().file, ins->origin().line);
        }
    }
    return out;
}

}  // namespace cpe::ir
