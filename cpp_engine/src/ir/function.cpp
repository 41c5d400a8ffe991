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

void Function::bump_counter() {
    ++counter_;
    size_t i = counter_len_;
    while (i > 0 && counter_text_[i - 1] == '9') counter_text_[--i] = '0';
    if (i > 0) {
        ++counter_text_[i - 1];
    } else {  // all nines: one more digit
        std::memmove(counter_text_ + 1, counter_text_, counter_len_);
        counter_text_[0] = '1';
        ++counter_len_;
    }
}

std::string Function::fresh(std::string_view hint) {
    check_hint(hint);
    std::string name(hint);
    name.append(counter_text_, counter_len_);
    bump_counter();
    return name;
}

std::string Function::fresh_ref(std::string_view hint) {
    const size_t n = 1 + hint.size() + counter_len_;
    if (n > 64) return "%" + fresh(hint);
    // Check the hint while copying it (one pass), then the counter's digits;
    // the name is built on the stack and becomes one string (no allocation for a short name).
    char buf[64];
    buf[0] = '%';
    unsigned ok = !hint.empty() && !is_digit(hint[0]) && !is_digit(hint.back());
    for (size_t i = 0; i < hint.size(); ++i) {
        const auto c = static_cast<unsigned char>(hint[i]);
        ok &= kIdent.ok[c];
        buf[1 + i] = static_cast<char>(c);
    }
    if (!ok) check_hint(hint);  // throws the reason
    for (size_t i = 0; i < counter_len_; ++i) buf[1 + hint.size() + i] = counter_text_[i];
    bump_counter();
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
