// Twin of python_engine/ir/constants.py.
#include "ir/constants.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <system_error>

namespace cpe::ir {

std::string dec(int64_t v) {
    char buf[24];
    auto res = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, res.ptr);
}

std::string hex(uint64_t v, int digits) {
    static const char kDigits[] = "0123456789ABCDEF";
    std::string s(static_cast<size_t>(digits), '0');
    for (int i = digits - 1; i >= 0; --i) {
        s[static_cast<size_t>(i)] = kDigits[v & 0xF];
        v >>= 4;
    }
    return s;
}

uint64_t double_bits(double x) {
    if (std::isnan(x)) return kCanonicalNanDouble;
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

uint64_t float_as_double_bits(double x) {
    if (std::isnan(x)) return kCanonicalNanDouble;
    auto bits32 = static_cast<uint32_t>(small_float_bits(x, 8, 23));
    float f;
    std::memcpy(&f, &bits32, sizeof f);
    return double_bits(static_cast<double>(f));
}

uint64_t small_float_bits(double x, int ebits, int mbits) {
    const int top = ebits + mbits;
    const uint64_t exp_all = (uint64_t{1} << ebits) - 1;
    if (std::isnan(x)) return (exp_all << mbits) | (uint64_t{1} << (mbits - 1));
    const uint64_t sign = std::signbit(x) ? 1 : 0;
    if (std::isinf(x)) return (sign << top) | (exp_all << mbits);
    const double a = std::fabs(x);
    if (a == 0.0) return sign << top;
    const int bias = (1 << (ebits - 1)) - 1;
    int e = 0;
    std::frexp(a, &e);
    int exp = e - 1;  // a = 1.f * 2**exp
    const bool normal = exp >= 1 - bias;
    const int quantum = normal ? exp - mbits : 1 - bias - mbits;
    // a = m * 2**(e - 53) exactly (frexp and a power-of-two scale are exact);
    // n = a / 2**quantum rounded to nearest, ties to even, in integers, so the
    // host's FP rounding mode never matters (issue 14).
    const auto m = static_cast<uint64_t>(std::ldexp(std::frexp(a, &e), 53));
    const int shift = (e - 53) - quantum;
    uint64_t n;
    if (shift >= 0) {
        n = m << shift;
    } else if (-shift > 54) {
        n = 0;  // below half of the quantum
    } else {
        const int r = -shift;
        const uint64_t q = m >> r, rem = m & ((uint64_t{1} << r) - 1), half = uint64_t{1} << (r - 1);
        n = q + ((rem > half || (rem == half && (q & 1))) ? 1 : 0);
    }
    if (normal) {
        if (n == uint64_t{1} << (mbits + 1)) {
            exp += 1;
            n >>= 1;
        }
        if (exp > bias) return (sign << top) | (exp_all << mbits);
        return (sign << top) | (static_cast<uint64_t>(exp + bias) << mbits) | (n - (uint64_t{1} << mbits));
    }
    // subnormal (n == 1 << mbits rounds up into the smallest normal, same bits)
    return (sign << top) | n;
}

std::string fmt_int(int64_t v, int bits) {
    if (bits == 1) {
        if (v != 0 && v != 1 && v != -1)
            throw std::invalid_argument("i1 constant " + dec(v) + " is not 0 or 1");
        return v ? "true" : "false";
    }
    if (bits < 1 || bits > 64) throw std::invalid_argument("integer width " + dec(bits) + " is not 1..64");
    if (bits == 64) return dec(v);  // every int64 fits, and prints signed
    const int64_t lo = -(int64_t{1} << (bits - 1));
    const int64_t hi = int64_t{1} << bits;  // exclusive
    if (v < lo || v >= hi) throw std::invalid_argument("constant " + dec(v) + " does not fit i" + dec(bits));
    if (v >= int64_t{1} << (bits - 1)) v -= hi;  // LLVM prints integers signed
    return dec(v);
}

std::string fmt_float(double x, const std::string &type_name) {
    if (type_name == "double") return "0x" + hex(double_bits(x), 16);
    if (type_name == "float") return "0x" + hex(float_as_double_bits(x), 16);
    if (type_name == "half") return "0xH" + hex(small_float_bits(x, 5, 10), 4);
    if (type_name == "bfloat") return "0xR" + hex(small_float_bits(x, 8, 7), 4);
    throw std::invalid_argument(type_name + " is not a floating-point type");
}

}  // namespace cpe::ir
