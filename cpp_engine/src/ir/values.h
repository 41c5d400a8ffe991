// Values: SSA registers, parameters, constants and globals.
// Twin of python_engine/ir/values.py.
//
// A value is its type plus the text that names it in an operand (`%acc12`,
// `0x3FF0000000000000`, `@lds_a`). Constants are built by the helpers below,
// which apply the constant text rules of constants.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/types.h"

namespace cpe::ir {

// The operand text of a value (`%acc12`, `0x3FF0000000000000`, `<2 x i32> <...>`).
// Text of at most kInline bytes lives in the object and is copied as one
// fixed-size block (no length-dependent branch, no libc call: kernels copy
// values all the time); longer text is on the heap. Not NUL-terminated.
class Ref {
public:
    static constexpr size_t kInline = 24;

    Ref() noexcept { std::memset(in_, 0, sizeof in_); }
    Ref(std::string_view s) { init(s); }  // NOLINT: converts like a std::string
    Ref(const std::string &s) { init(s); }  // NOLINT
    Ref(const char *s) { init(std::string_view(s)); }  // NOLINT
    Ref(const Ref &o) {
        if (o.heap_) {
            init(o);
        } else {  // inline text: one fixed-size copy
            std::memcpy(in_, o.in_, kInline);
            size_ = o.size_;
        }
    }
    Ref(Ref &&o) noexcept : heap_(o.heap_), size_(o.size_) {
        std::memcpy(in_, o.in_, kInline);
        o.heap_ = nullptr;
        o.size_ = 0;
    }
    Ref &operator=(const Ref &o) {
        if (this != &o) {
            Ref t(o);
            swap(t);
        }
        return *this;
    }
    Ref &operator=(Ref &&o) noexcept {
        Ref t(std::move(o));
        swap(t);
        return *this;
    }
    ~Ref() { delete[] heap_; }

    const char *data() const { return heap_ ? heap_ : in_; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    operator std::string_view() const { return std::string_view(data(), size_); }  // NOLINT
    std::string str() const { return std::string(data(), size_); }
    // Write the text at `d`, returning its end; may write up to kInline bytes
    // from `d` (one fixed-size move for inline text), so the caller has that much room.
    char *copy_out(char *d) const {
        if (heap_)
            std::memcpy(d, heap_, size_);
        else
            std::memcpy(d, in_, kInline);
        return d + size_;
    }

    // An empty inline Ref set to `n` <= kInline bytes that the caller writes at
    // the returned pointer (the IR builder builds a fresh name in place); the
    // kInline bytes there may all be written, only the first n count.
    char *fill_inline(size_t n) {
        size_ = n;
        return in_;
    }

private:
    void init(std::string_view s) {
        size_ = s.size();
        if (size_ <= kInline) {
            std::memset(in_, 0, sizeof in_);
            std::memcpy(in_, s.data(), size_);
        } else {
            heap_ = new char[size_];
            std::memcpy(heap_, s.data(), size_);
        }
    }
    void swap(Ref &o) noexcept {
        char t[kInline];
        std::memcpy(t, in_, kInline);
        std::memcpy(in_, o.in_, kInline);
        std::memcpy(o.in_, t, kInline);
        std::swap(heap_, o.heap_);
        std::swap(size_, o.size_);
    }

    char in_[kInline];
    char *heap_ = nullptr;  // the text when longer than kInline
    size_t size_ = 0;
};

struct Value {
    const Type *type = nullptr;
    Ref ref;  // operand text without the type

    // `<type> <ref>`, the usual operand form.
    std::string typed() const { return type->text() + " " + ref.str(); }
};

// A read-only view of a call's or gep's operands, so a braced list makes no
// std::vector: `{a, b}` (an initializer list, whose array lives until the end
// of the full expression that makes the call) or a std::vector<Value>. Only a
// parameter type: never keep one past the call it was made for.
class Operands {
public:
    Operands() = default;
    Operands(std::initializer_list<Value> l) {  // the list's array outlives the call (see above)
        p_ = l.begin();
        n_ = l.size();
    }
    Operands(const std::vector<Value> &v) : p_(v.data()), n_(v.size()) {}
    const Value *begin() const { return p_; }
    const Value *end() const { return p_ + n_; }
    size_t size() const { return n_; }
    const Value &operator[](size_t i) const { return p_[i]; }

private:
    const Value *p_ = nullptr;
    size_t n_ = 0;
};

// Integer constant of integer type `t` (decimal; i1 as true/false).
// std::invalid_argument if `t` is not an integer type or `v` does not fit.
Value const_int(const Type *t, int64_t v);

// Floating constant of type `t` (half, bfloat, float, double), rounded RNE
// from the double `x`. std::invalid_argument for a non-float type.
Value const_float(const Type *t, double x);

// Vector constant `<a, b, ...>` from scalar constants of `t->elem()`;
// std::invalid_argument on a count or element type mismatch.
Value const_vector(const Type *t, const std::vector<Value> &elems);

// Vector constant with every lane equal to the scalar constant `elem`.
Value splat(const Type *t, const Value &elem);

// `zeroinitializer` of a vector or array type.
Value zeroinit(const Type *t);

// `poison` of any first-class type.
Value poison(const Type *t);

// Shorthands for i32 / i64 / i1 constants.
Value ci32(int64_t v);
Value ci64(int64_t v);
Value ci1(bool v);

}  // namespace cpe::ir
