// Twin of python_engine/spec/fields.py.
// Spec fields and the common front of validation, shared by every family: the
// bottom layer (includes nothing of src/).
//
// A family declares its fields once, in spec order: name and kind (int, str,
// bool or float: a C double; the binding turns an int of magnitude at most
// 2**53 into the double of the same value; NaN and infinities reach the family
// rules). Kind errors and unknown fields are found by the Python binding
// (cpp_engine/_binding.py) before a spec reaches C++, because a C struct
// cannot hold a value of the wrong kind; a C caller fills the struct starting
// from its `*_default()` constructor. A str field may be null (NULL in C,
// std::nullopt here), which the family rules then reject by name ("got null").
//
// What C++ checks, in the order of python_engine/api.py `_prepare`: flavor,
// then arch (targets/target.h resolve_target), then the family rules.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

namespace cpe::spec {

// A spec, arch or flavor the engine will not lower; reason() says why. A
// normal outcome, distinct from an internal error (any other exception).
class SpecRejected : public std::runtime_error {
public:
    explicit SpecRejected(const std::string &reason) : std::runtime_error(reason) {}
    std::string reason() const { return what(); }
};

enum class FieldKind { Int, Str, Bool, Float };

// One spec field: name and kind (the default lives in the family's spec struct).
struct Field {
    const char *name;
    FieldKind kind;
};

// True when `s` is valid UTF-8 (no overlong form, no surrogate, nothing above
// U+10FFFF) holding no control character (U+0000-U+001F, U+007F-U+009F) and no
// Unicode line or paragraph separator (U+2028, U+2029): the strings
// python_engine/spec/fields.py `printable` accepts, as bytes.
bool printable_utf8(const std::string &s);

// The longest string (a spec field, arch or flavor) the engine takes, in
// bytes (the same value as python_engine/spec/fields.py MAX_STRING_BYTES and
// the C API's CPE_MAX_STRING_BYTES). Checked before any other look at the
// bytes: a longer string is read no further than kMaxStringBytes + 1 bytes.
constexpr size_t kMaxStringBytes = 4096;

// The C string `s` (not NULL) as a std::string of at most kMaxStringBytes + 1
// bytes (strnlen: a longer string is cut there, and is then too_long).
std::string bounded_c_string(const char *s);

// True when `s` is longer than kMaxStringBytes.
inline bool too_long(const std::string &s) { return s.size() > kMaxStringBytes; }

// Reason for a string `what` longer than kMaxStringBytes (same text as
// python_engine/spec/fields.py `length_reason`).
std::string length_reason(const std::string &what);

// Reason for a string `what` (e.g. "spec field 'dtype'", "arch") that is not
// printable_utf8 (same text as python_engine/spec/fields.py `text_reason`).
std::string text_reason(const std::string &what);

// The reason the string `s` of `what` is refused: length_reason first, then
// text_reason; nullopt when it is neither too long nor unprintable (the order
// of python_engine/spec/fields.py `string_reason`).
std::optional<std::string> string_reason(const std::string &what, const std::string &s);

// Text of a str field value in a reason: `'value'`, or `null` for no value.
std::string show(const std::optional<std::string> &v);

// The one text form of a float field value (reasons, kernel names): `0x` + the
// 16 upper-case hex digits of its IEEE-754 binary64 bits, so -0.0, subnormals
// and NaN payloads keep their bits (the IR's double constant form, except that
// a NaN is not canonicalised; docs/ir_text.md). Bits by memcpy, digits by
// hand: no printf, no iostream, no locale. Same text as
// python_engine/spec/fields.py `float_text`.
std::string float_text(double v);

}  // namespace cpe::spec
