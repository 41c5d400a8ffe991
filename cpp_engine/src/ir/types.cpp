// Twin of python_engine/ir/types.py.
#include "ir/types.h"

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "ir/constants.h"

namespace cpe::ir {

namespace {

const Type *make_scalar(const char *text, Kind kind, int bits) {
    // Leaked on purpose: scalar types live for the whole process.
    return new Type(text, kind, bits, nullptr, 0, 0);
}

// Interning tables for derived types; guarded by one mutex.
struct Interner {
    std::mutex mu;
    std::map<std::pair<int64_t, const Type *>, std::unique_ptr<Type>> vecs;
    std::map<int, std::unique_ptr<Type>> ptrs;
    std::map<std::pair<int64_t, const Type *>, std::unique_ptr<Type>> arrays;
};

Interner &interner() {
    static Interner *in = new Interner();  // never destroyed: types outlive static teardown
    return *in;
}


}  // namespace

#define CPE_SCALAR(fn, text, kind, bits)        \
    const Type *fn() {                          \
        static const Type *t = make_scalar(text, kind, bits); \
        return t;                               \
    }
CPE_SCALAR(void_, "void", Kind::Void, 0)
CPE_SCALAR(i1, "i1", Kind::Int, 1)
CPE_SCALAR(i8, "i8", Kind::Int, 8)
CPE_SCALAR(i16, "i16", Kind::Int, 16)
CPE_SCALAR(i32, "i32", Kind::Int, 32)
CPE_SCALAR(i64, "i64", Kind::Int, 64)
CPE_SCALAR(half, "half", Kind::Float, 16)
CPE_SCALAR(bfloat, "bfloat", Kind::Float, 16)
CPE_SCALAR(float_, "float", Kind::Float, 32)
CPE_SCALAR(double_, "double", Kind::Float, 64)
#undef CPE_SCALAR

const Type *vec(int64_t count, const Type *elem) {
    Kind k = elem->kind();
    if (count < 1 || (k != Kind::Int && k != Kind::Float && k != Kind::Ptr))
        throw std::invalid_argument("vector of " + dec(count) + " x " + elem->text() +
                                    " is not a valid LLVM vector");
    Interner &in = interner();
    std::lock_guard<std::mutex> lock(in.mu);
    auto &slot = in.vecs[{count, elem}];
    if (!slot)
        slot.reset(new Type("<" + dec(count) + " x " + elem->text() + ">", Kind::Vector, elem->bits(),
                            elem, count, 0));
    return slot.get();
}

const Type *ptr(int addrspace) {
    Interner &in = interner();
    std::lock_guard<std::mutex> lock(in.mu);
    auto &slot = in.ptrs[addrspace];
    if (!slot) {
        std::string text = addrspace == 0 ? "ptr" : "ptr addrspace(" + dec(addrspace) + ")";
        slot.reset(new Type(text, Kind::Ptr, 0, nullptr, 0, addrspace));
    }
    return slot.get();
}

const Type *array(int64_t count, const Type *elem) {
    Interner &in = interner();
    std::lock_guard<std::mutex> lock(in.mu);
    auto &slot = in.arrays[{count, elem}];
    if (!slot)
        slot.reset(new Type("[" + dec(count) + " x " + elem->text() + "]", Kind::Array, 0, elem, count, 0));
    return slot.get();
}

const Type *scalar(const std::string &name) {
    for (const Type *t : {i1(), i8(), i16(), i32(), i64(), half(), bfloat(), float_(), double_()})
        if (t->text() == name) return t;
    throw std::out_of_range("unknown scalar type " + name);
}

int64_t byte_size(const Type *t) {
    switch (t->kind()) {
        case Kind::Ptr:
            switch (t->addrspace()) {
                case 3: case 5: return 4;
                case 8: return 16;
                default: return 8;
            }
        case Kind::Vector:
        case Kind::Array:
            return byte_size(t->elem()) * t->count();
        default:
            return t->bits() / 8 > 1 ? t->bits() / 8 : 1;
    }
}

}  // namespace cpe::ir
