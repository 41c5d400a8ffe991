// Twin of python_engine/ir/origin.py.
#include "ir/origin.h"

#include <cstring>
#include <utility>

#include "ir/constants.h"

namespace cpe::ir::origin {

namespace {

thread_local bool tl_recording = false;
thread_local bool tl_has_last = false;
thread_local std::vector<std::string> tl_last;

}  // namespace

bool recording() { return tl_recording; }

void set_recording(bool on) {
    tl_recording = on;
    tl_has_last = false;
    tl_last.clear();
}

std::string text(const char *file, int line) {
    if (!file) return "";
    static const char kRoot[] = "cpp_engine/src/";
    std::string f(file);
    for (char &c : f)
        if (c == '\\') c = '/';
    const size_t at = f.rfind(kRoot);
    return (at == std::string::npos ? f : f.substr(at)) + ":" + dec(line);
}

void set_last(std::vector<std::string> table) {
    tl_last = std::move(table);
    tl_has_last = true;
}

std::vector<std::string> take_last(bool *had) {
    *had = tl_has_last;
    tl_has_last = false;
    return std::exchange(tl_last, {});
}

}  // namespace cpe::ir::origin
