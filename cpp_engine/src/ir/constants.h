// Constant text forms (DESIGN §2). Twin of python_engine/ir/constants.py.
//
// Integers print in decimal; `float` and `double` as `0x` plus the 16 hex
// digits (upper case) of the value widened to IEEE double; `half` as `0xH`
// and `bfloat` as `0xR` plus 4 hex digits. Values are converted with
// round-to-nearest-even directly from the double the caller gives (one
// rounding), and every NaN prints as the canonical positive quiet NaN.
// Nothing here goes through printf, iostreams or the locale: decimal text
// comes from std::to_chars, hex digits are produced by hand, so a process
// that called setlocale(LC_ALL, "") with LC_NUMERIC=de_DE prints the same bytes.
#pragma once

#include <cstdint>
#include <string>

namespace cpe::ir {

constexpr uint64_t kCanonicalNanDouble = 0x7FF8000000000000ull;

// Decimal text of `v` (std::to_chars; locale-independent).
std::string dec(int64_t v);

// Upper-case hex text of the low `digits` nibbles of `v`, zero-padded.
std::string hex(uint64_t v, int digits);

// IEEE-754 binary64 bit pattern of `x` (NaN -> canonical quiet NaN).
uint64_t double_bits(double x);

// Round `x` to binary32 (RNE) and return the bits of that value widened to
// binary64 -- the form LLVM prints a `float` constant in. Overflow gives inf.
uint64_t float_as_double_bits(double x);

// Bits of `x` rounded (nearest, ties to even) to an IEEE-style binary format
// with `ebits` exponent and `mbits` fraction bits; subnormals kept, overflow to
// infinity, NaN to the canonical positive quiet NaN. The fraction is scaled
// with frexp/ldexp and rounded half to even by std::nearbyint in the default
// FE_TONEAREST mode (the twin uses the same algorithm with round()).
// binary16: (5, 10); bfloat16: (8, 7); binary32: (8, 23).
uint64_t small_float_bits(double x, int ebits, int mbits);

// Decimal text of an integer constant of width `bits` (1..64; i1 prints
// true/false). `v` may be given signed or (below 64 bits) unsigned; it prints
// signed for the width. std::invalid_argument when it does not fit.
std::string fmt_int(int64_t v, int bits);

// Text of a floating constant of LLVM type `type_name` (`half`, `bfloat`,
// `float`, `double`); std::invalid_argument for any other name.
std::string fmt_float(double x, const std::string &type_name);

}  // namespace cpe::ir
