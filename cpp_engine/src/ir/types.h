// LLVM IR types used by the engine (DESIGN §2). Twin of python_engine/ir/types.py.
//
// A type is an immutable object with its printed text. Scalar types are
// singletons; vector, pointer and array types are interned, so
// `vec(4, float_()) == vec(4, float_())` compares equal as pointers. Types are
// compared by identity (`const Type *`) everywhere.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace cpe::ir {

enum class Kind { Void, Int, Float, Vector, Ptr, Array };

class Type {
public:
    // Printed text (`i32`, `<4 x float>`, `ptr addrspace(1)`, `[256 x float]`).
    const std::string &text() const { return text_; }
    Kind kind() const { return kind_; }
    // Scalar width in bits (vectors: the element width; 0 for void/ptr/array).
    int bits() const { return bits_; }
    // Element type of a vector or array, else nullptr.
    const Type *elem() const { return elem_; }
    // Lane/element count of a vector or array, else 0.
    int64_t count() const { return count_; }
    // Address space of a pointer, else 0.
    int addrspace() const { return addrspace_; }
    // The element type of a vector, else the type itself.
    const Type *scalar() const { return kind_ == Kind::Vector ? elem_ : this; }

    Type(std::string text, Kind kind, int bits, const Type *elem, int64_t count, int addrspace)
        : text_(std::move(text)), kind_(kind), bits_(bits), elem_(elem), count_(count), addrspace_(addrspace) {
        std::memset(padded_, 0, sizeof padded_);
        if (text_.size() <= kPadded) std::memcpy(padded_, text_.data(), text_.size());
    }
    // Bytes copy_text may write past the text's end.
    static constexpr size_t kPadded = 32;
    // Write text() at `d`, returning its end; may write up to kPadded bytes
    // from `d` (one fixed-size move for a text of at most kPadded bytes), so
    // the caller has that much room.
    char *copy_text(char *d) const {
        if (text_.size() <= kPadded)
            std::memcpy(d, padded_, kPadded);
        else
            std::memcpy(d, text_.data(), text_.size());
        return d + text_.size();
    }
    Type(const Type &) = delete;
    Type &operator=(const Type &) = delete;

private:
    std::string text_;
    char padded_[kPadded];  // text_ zero-padded, when it fits
    Kind kind_;
    int bits_;
    const Type *elem_;
    int64_t count_;
    int addrspace_;
};

// Scalar singletons.
const Type *void_();
const Type *i1();
const Type *i8();
const Type *i16();
const Type *i32();
const Type *i64();
const Type *half();
const Type *bfloat();
const Type *float_();
const Type *double_();

// Fixed vector `<count x elem>`; count >= 1 and elem a scalar int/float/ptr,
// else std::invalid_argument. Interned (thread-safe).
const Type *vec(int64_t count, const Type *elem);

// Opaque pointer in `addrspace` (0 prints as plain `ptr`). AMDGPU address
// spaces (LLVM AMDGPUUsage.rst, "Address Spaces"): 0 flat, 1 global,
// 3 local (LDS), 4 constant, 5 private, 8 buffer resource. Interned.
const Type *ptr(int addrspace = 0);

// Array type `[count x elem]` (LDS globals). Interned.
const Type *array(int64_t count, const Type *elem);

inline const Type *global_ptr() { return ptr(1); }
inline const Type *lds_ptr() { return ptr(3); }
inline const Type *rsrc_ptr() { return ptr(8); }

// Scalar type by its LLVM name (`i32`, `bfloat`, ...); std::out_of_range if unknown.
const Type *scalar(const std::string &name);

// Store size in bytes of a scalar, vector or array type. Pointers by address
// space: 64-bit, except LDS/private 32-bit and buffer resources 128-bit
// (LLVM AMDGPU datalayout).
int64_t byte_size(const Type *t);

}  // namespace cpe::ir
