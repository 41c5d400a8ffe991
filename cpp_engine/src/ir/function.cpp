// Twin of python_engine/ir/function.py.
#include "ir/function.h"

#include <stdexcept>

#include "ir/constants.h"

namespace cpe::ir {

void Phi::add_incoming(const Value &value, const Block &block) { incoming_.emplace_back(value, block.name()); }

namespace {

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

void check_hint(const std::string &hint) {
    bool ok = !hint.empty() && (is_alpha(hint[0]) || hint[0] == '_') && !is_digit(hint.back());
    for (char c : hint) ok = ok && (is_alpha(c) || is_digit(c) || c == '_');
    if (!ok) throw std::invalid_argument("SSA name hint '" + hint + "' must be an identifier not ending in a digit");
}

}  // namespace

std::string Function::fresh(const std::string &hint) {
    check_hint(hint);
    std::string name;
    name += hint;
    append_dec(name, counter_++);
    return name;
}

std::string Function::fresh_ref(const std::string &hint) {
    check_hint(hint);
    std::string ref;
    ref += '%';
    ref += hint;
    append_dec(ref, counter_++);
    return ref;
}

Value Function::param(const std::string &name) const {
    for (const Param &p : params_)
        if (p.name == name) return p.value();
    throw std::out_of_range("function " + name_ + " has no parameter " + name);
}

Block &Function::block(const std::string &hint) {
    blocks_.push_back(std::make_unique<Block>(fresh(hint)));
    return *blocks_.back();
}

Value Module::add_lds(const std::string &name, const Type *t, long long align) {
    lds_.push_back(LdsGlobal{name, t, align});
    return lds_.back().value();
}

}  // namespace cpe::ir
