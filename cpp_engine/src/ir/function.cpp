// Twin of python_engine/ir/function.py.
#include "ir/function.h"

#include <new>
#include <stdexcept>

#include "ir/constants.h"

namespace cpe::ir {

void TextBuffer::grow(size_t n) {
    size_t cap = cap_ ? cap_ : 64;
    while (cap - size_ < n) cap *= 2;
    char *p = static_cast<char *>(std::realloc(p_, cap));
    if (!p) throw std::bad_alloc();
    p_ = p;
    cap_ = cap;
}

void Phi::add_incoming(const Value &value, const Block &block) { incoming_.emplace_back(value, block.name()); }

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// 1 for the bytes of an identifier ([A-Za-z0-9_]), else 0.
struct IdentTable {
    unsigned char ok[256] = {};
    constexpr IdentTable() {
        for (int c = 'a'; c <= 'z'; ++c) ok[c] = 1;
        for (int c = 'A'; c <= 'Z'; ++c) ok[c] = 1;
        for (int c = '0'; c <= '9'; ++c) ok[c] = 1;
        ok[static_cast<unsigned char>('_')] = 1;
    }
};
constexpr IdentTable kIdent;

void check_hint(std::string_view hint) {
    unsigned all = !hint.empty() && !is_digit(hint[0]) && !is_digit(hint.back());
    for (char c : hint) all &= kIdent.ok[static_cast<unsigned char>(c)];
    if (!all) throw std::invalid_argument("SSA name hint '" + std::string(hint) + "' must be an identifier not ending in a digit");
}

}  // namespace

std::string Function::fresh(std::string_view hint) {
    check_hint(hint);
    std::string name(hint);
    append_dec(name, counter_++);
    return name;
}

std::string Function::fresh_ref(std::string_view hint) {
    check_hint(hint);
    char num[24];
    const auto res = std::to_chars(num, num + sizeof num, counter_++);
    const auto digits = static_cast<size_t>(res.ptr - num);
    const size_t n = 1 + hint.size() + digits;
    if (n > 64) return "%" + std::string(hint) + std::string(num, digits);
    char buf[64];  // built on the stack, then one string (no allocation for a short name)
    buf[0] = '%';
    std::memcpy(buf + 1, hint.data(), hint.size());
    std::memcpy(buf + 1 + hint.size(), num, digits);
    return std::string(buf, n);
}

Value Function::param(const std::string &name) const {
    for (const Param &p : params_)
        if (p.name == name) return p.value();
    throw std::out_of_range("function " + name_ + " has no parameter " + name);
}

Block &Function::block(std::string_view hint) {
    blocks_.push_back(std::make_unique<Block>(fresh(hint)));
    return *blocks_.back();
}

Value Module::add_lds(const std::string &name, const Type *t, long long align) {
    lds_.push_back(LdsGlobal{name, t, align});
    return lds_.back().value();
}

}  // namespace cpe::ir
