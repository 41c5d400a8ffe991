// Exact integer helpers shared by conv_launch and the split-K policy: 128-bit
// arithmetic for admission and policy products (every extent is held below
// 2^31, so no product of a few of them overflows), printed as Python prints
// an int.
// No Python twin (a twin-less helper): Python integers are exact, so the Python engine needs none.
#pragma once

#include <cstdint>
#include <string>

namespace cpe::kernels {

using i128 = __int128;

// Appends the decimal text of `v` to `out`, as Python prints an int (no
// temporary string; 64-bit divisions once the value fits 64 bits).
inline void append_dec128(std::string &out, i128 v) {
    char buf[41];  // |v| <= 2^127: 39 digits, and a sign
    char *const end = buf + sizeof buf;
    char *p = end;
    const bool neg = v < 0;
    unsigned __int128 u = neg ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
    while (u > static_cast<unsigned __int128>(UINT64_MAX)) {
        *--p = static_cast<char>('0' + static_cast<int>(u % 10));
        u /= 10;
    }
    uint64_t w = static_cast<uint64_t>(u);
    do {
        *--p = static_cast<char>('0' + static_cast<int>(w % 10));
        w /= 10;
    } while (w);
    if (neg) *--p = '-';
    out.append(p, end);
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
template <class A, class B>
constexpr auto ceil_div(A a, B b) -> decltype(a + b) {
    using T = decltype(a + b);
    return static_cast<T>(a) / static_cast<T>(b) + (static_cast<T>(a) % static_cast<T>(b) != 0 ? 1 : 0);
}

}  // namespace cpe::kernels
