// Twin of python_engine/spec/fields.py.
#include "spec/fields.h"

#include <cstdint>
#include <cstring>

namespace cpe::spec {

bool printable_utf8(const std::string &s) {
    const size_t n = s.size();
    size_t i = 0;
    while (i < n) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        uint32_t cp;
        size_t len;
        if (c < 0x80) {
            cp = c;
            len = 1;
        } else if (c >= 0xC2 && c <= 0xDF) {
            cp = c & 0x1F;
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            cp = c & 0x0F;
            len = 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            cp = c & 0x07;
            len = 4;
        } else {
            return false;  // continuation byte, overlong lead (C0/C1) or F5..FF
        }
        if (n - i < len) return false;
        for (size_t k = 1; k < len; ++k) {
            const unsigned char cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (cc & 0x3F);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF))) return false;  // overlong
        if (cp >= 0xD800 && cp <= 0xDFFF) return false;                                                 // surrogate
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F)) return false;                                      // control
        if (cp == 0x2028 || cp == 0x2029) return false;                           // line / paragraph separator
        i += len;
    }
    return true;
}

std::string bounded_c_string(const char *s) { return std::string(s, ::strnlen(s, kMaxStringBytes + 1)); }

std::string length_reason(const std::string &what) {
    return what + " must be at most " + std::to_string(kMaxStringBytes) + " bytes of UTF-8 text";
}

std::string text_reason(const std::string &what) {
    return what +
           " must be printable UTF-8 text (no control characters, line or paragraph separators, NUL or lone "
           "surrogates)";
}

std::optional<std::string> string_reason(const std::string &what, const std::string &s) {
    if (too_long(s)) return length_reason(what);
    if (!printable_utf8(s)) return text_reason(what);
    return std::nullopt;
}

std::string show(const std::optional<std::string> &v) { return v ? "'" + *v + "'" : "null"; }

std::string float_text(double v) {
    static const char kDigits[] = "0123456789ABCDEF";
    uint64_t bits;
    static_assert(sizeof bits == sizeof v, "double is not 64 bits");
    std::memcpy(&bits, &v, sizeof bits);
    std::string s = "0x0000000000000000";
    for (size_t i = s.size(); i > 2; --i) {
        s[i - 1] = kDigits[bits & 0xF];
        bits >>= 4;
    }
    return s;
}

}  // namespace cpe::spec
