// Exact integer helpers shared by conv_launch and the split-K policy: 128-bit
// arithmetic for admission and policy products (every extent is held below
// 2^31, so no product of a few of them overflows), printed in plain decimal
// (a '-' for negatives, no leading zeros), the text every reason uses.
// No twin: the Python engine's integers are exact, so it needs no such helper.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace cpe::kernels {

using i128 = __int128;

// The most bytes write_dec128 writes: |v| <= 2^127 has 39 digits, and a sign.
constexpr int kDec128Max = 40;

// Writes the plain decimal text of `v` at `p` (64-bit divisions once the value
// fits 64 bits); returns the end. `p` has room for
// kDec128Max bytes; no NUL is written.
inline char *write_dec128(char *p, i128 v) {
    char buf[kDec128Max];
    char *const end = buf + sizeof buf;
    char *q = end;
    const bool neg = v < 0;
    unsigned __int128 u = neg ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
    while (u > static_cast<unsigned __int128>(UINT64_MAX)) {
        *--q = static_cast<char>('0' + static_cast<int>(u % 10));
        u /= 10;
    }
    static constexpr char kPairs[] =  // "00" .. "99": two digits per division
        "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
        "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
        "8081828384858687888990919293949596979899";
    uint64_t w = static_cast<uint64_t>(u);
    while (w >= 100) {
        const char *d = kPairs + 2 * (w % 100);
        w /= 100;
        *--q = d[1];
        *--q = d[0];
    }
    if (w >= 10) {
        *--q = kPairs[2 * w + 1];
        *--q = kPairs[2 * w];
    } else {
        *--q = static_cast<char>('0' + w);
    }
    if (neg) *--q = '-';
    const size_t n = static_cast<size_t>(end - q);
    std::memcpy(p, q, n);
    return p + n;
}

// Appends the decimal text of `v` to `out` (write_dec128; no temporary string).
inline void append_dec128(std::string &out, i128 v) {
    char buf[kDec128Max];
    out.append(buf, write_dec128(buf, v));
}

// Decimal text of `v` (ir::dec is the int64_t form).
inline std::string dec128(i128 v) {
    std::string s;
    append_dec128(s, v);
    return s;
}

// ceil(a / b) for a >= 0, b > 0, in the common type of a and b. Written as
// a / b + (a % b != 0) so that no intermediate exceeds a (a + b - 1 overflows
// for b near the type's maximum; issue 14).
// A 128-bit quotient whose operands fit 64 bits is taken in 64 bits (the same
// value; a 128-bit division is a libgcc call, several times slower).
template <class A, class B>
constexpr auto ceil_div(A a, B b) -> decltype(a + b) {
    using T = decltype(a + b);
    const T x = static_cast<T>(a), y = static_cast<T>(b);
    if constexpr (sizeof(T) > sizeof(int64_t)) {
        if (x >= 0 && x <= INT64_MAX && y > 0 && y <= INT64_MAX) {
            const int64_t x64 = static_cast<int64_t>(x), y64 = static_cast<int64_t>(y);
            return static_cast<T>(x64 / y64 + (x64 % y64 != 0 ? 1 : 0));
        }
    }
    return x / y + (x % y != 0 ? 1 : 0);
}

}  // namespace cpe::kernels
