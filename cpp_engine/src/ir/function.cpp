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

namespace {

// A thread's recycled TextBuffer storage (TextBuffer::take_pooled / release).
// `t_pool_gone` is set when the pool is destroyed at thread exit, so a buffer
// destroyed later in that thread frees its storage instead.
thread_local bool t_pool_gone = false;
struct TextPool {
    char *p[TextBuffer::kPoolSize];
    size_t cap[TextBuffer::kPoolSize];
    size_t n = 0;
    ~TextPool() {
        t_pool_gone = true;
        while (n) std::free(p[--n]);
    }
};
thread_local TextPool t_pool;

}  // namespace

void TextBuffer::take_pooled() {
    if (p_ || t_pool_gone || t_pool.n == 0) return;
    TextPool &pool = t_pool;
    --pool.n;
    p_ = pool.p[pool.n];
    cap_ = pool.cap[pool.n];
    size_ = 0;
}

void TextBuffer::release() {
    if (!p_) return;
    if (!t_pool_gone && t_pool.n < kPoolSize) {
        TextPool &pool = t_pool;
        pool.p[pool.n] = p_;
        pool.cap[pool.n] = cap_;
        ++pool.n;
    } else {
        std::free(p_);
    }
    p_ = nullptr;
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

void Function::carry_counter() {
    std::memmove(counter_text_ + 1, counter_text_, counter_len_);
    counter_text_[0] = '1';
    ++counter_len_;
}

std::string Function::fresh(std::string_view hint) {
    check_hint(hint);
    std::string name(hint);
    name.append(counter_text_, counter_len_);
    bump_counter();
    return name;
}

void Function::hint_miss(std::string_view hint, HintSeen &seen, uint64_t a, uint64_t b) {
    check_hint(hint);  // throws for a bad hint
    seen = HintSeen{a, b, hint.size()};
}

std::string Function::fresh_ref(std::string_view hint) {
    char buf[kRefBytes];
    const size_t n = fresh_ref_to(hint, buf);
    return n ? std::string(buf, n) : "%" + fresh(hint);
}

namespace {

// Hash of a parameter name for Function's param index (FNV-1a).
size_t name_hash(std::string_view s) {
    uint64_t x = 0xcbf29ce484222325ull;
    for (char c : s) x = (x ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
    return static_cast<size_t>(x ^ (x >> 29));
}

}  // namespace

Function::Function(std::string name, std::vector<Param> params, const Type *ret, std::string cc, Attrs attr_group)
    : name_(std::move(name)), params_(std::move(params)), ret_(ret), cc_(std::move(cc)),
      attr_group_(std::move(attr_group)) {
    param_values_.reserve(params_.size());
    for (const Param &p : params_) param_values_.push_back(p.value());
    if (params_.size() >= kParamSlots / 2) return;  // param() scans the list instead
    for (size_t i = 0; i < params_.size(); ++i) {
        size_t at = name_hash(params_[i].name) % kParamSlots;
        while (param_slot_[at]) at = (at + 1) % kParamSlots;
        param_slot_[at] = static_cast<uint8_t>(i + 1);
    }
}

const Value &Function::param(std::string_view name) const {
    if (params_.size() < kParamSlots / 2) {
        for (size_t at = name_hash(name) % kParamSlots; param_slot_[at]; at = (at + 1) % kParamSlots) {
            const size_t i = param_slot_[at] - 1u;
            if (params_[i].name == name) return param_values_[i];
        }
    } else {
        for (size_t i = 0; i < params_.size(); ++i)
            if (params_[i].name == name) return param_values_[i];
    }
    throw std::out_of_range("function " + name_ + " has no parameter " + std::string(name));
}

Block &Function::block(std::string_view hint) {
    blocks_.push_back(std::make_unique<Block>(fresh(hint)));
    return *blocks_.back();
}

Value Module::add_lds(const std::string &name, const Type *t, long long align, Here here) {
    // the divergence locator names the kernel line that declared it
    lds_.push_back(LdsGlobal{name, t, align, origin::recording() ? here : Here{nullptr, 0}});
    return lds_.back().value();
}

}  // namespace cpe::ir
