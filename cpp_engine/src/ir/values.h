// Values: SSA registers, parameters, constants and globals.
// Twin of python_engine/ir/values.py.
//
// A value is its type plus the text that names it in an operand (`%acc12`,
// `0x3FF0000000000000`, `@lds_a`). Constants are built by the helpers below,
// which apply the constant text rules of constants.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "ir/types.h"

namespace cpe::ir {

struct Value {
    const Type *type = nullptr;
    std::string ref;  // operand text without the type

    // `<type> <ref>`, the usual operand form.
    std::string typed() const { return type->text() + " " + ref; }
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
