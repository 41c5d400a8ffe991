// Twin of python_engine/ir/values.py.
#include "ir/values.h"

#include <stdexcept>

#include "ir/constants.h"

namespace cpe::ir {

Value const_int(const Type *t, int64_t v) {
    if (t->kind() != Kind::Int) throw std::invalid_argument("const_int needs an integer type, got " + t->text());
    return Value{t, fmt_int(v, t->bits())};
}

Value const_float(const Type *t, double x) {
    if (t->kind() != Kind::Float)
        throw std::invalid_argument("const_float needs a floating type, got " + t->text());
    return Value{t, fmt_float(x, t->text())};
}

Value const_vector(const Type *t, const std::vector<Value> &elems) {
    if (t->kind() != Kind::Vector || static_cast<int64_t>(elems.size()) != t->count())
        throw std::invalid_argument("const_vector: " + dec(static_cast<int64_t>(elems.size())) +
                                    " elements for " + t->text());
    std::string ref = "<";
    for (size_t i = 0; i < elems.size(); ++i) {
        if (elems[i].type != t->elem())
            throw std::invalid_argument("const_vector: element " + elems[i].typed() + " in " + t->text());
        if (i) ref += ", ";
        ref += elems[i].typed();
    }
    ref += ">";
    return Value{t, ref};
}

Value splat(const Type *t, const Value &elem) {
    if (t->kind() != Kind::Vector) throw std::invalid_argument("splat needs a vector type, got " + t->text());
    return const_vector(t, std::vector<Value>(static_cast<size_t>(t->count()), elem));
}

Value zeroinit(const Type *t) { return Value{t, "zeroinitializer"}; }

Value poison(const Type *t) { return Value{t, "poison"}; }

namespace {

// i32 / i64 constants of the values kernels use most, made once per process
// (C++11 thread-safe static initialization; read-only after): ci32 / ci64 of
// such a value is a copy, not a formatting.
constexpr int64_t kSmallLo = -128, kSmallHi = 1024;

struct SmallInts {
    std::vector<Value> i32s, i64s;
    SmallInts() {
        i32s.reserve(kSmallHi - kSmallLo);
        i64s.reserve(kSmallHi - kSmallLo);
        for (int64_t v = kSmallLo; v < kSmallHi; ++v) {
            i32s.push_back(const_int(i32(), v));
            i64s.push_back(const_int(i64(), v));
        }
    }
};

const SmallInts &small_ints() {
    static const SmallInts t;
    return t;
}

}  // namespace

Value ci32(int64_t v) {
    if (v >= kSmallLo && v < kSmallHi) return small_ints().i32s[static_cast<size_t>(v - kSmallLo)];
    return const_int(i32(), v);
}
Value ci64(int64_t v) {
    if (v >= kSmallLo && v < kSmallHi) return small_ints().i64s[static_cast<size_t>(v - kSmallLo)];
    return const_int(i64(), v);
}
Value ci1(bool v) { return const_int(i1(), v ? 1 : 0); }

}  // namespace cpe::ir
