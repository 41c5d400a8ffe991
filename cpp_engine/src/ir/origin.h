// Origin recording: the divergence locator's debug mode (docs/gate.md,
// "Finding the builder call behind a difference").
// Twin of python_engine/ir/origin.py.
//
// While recording is on for the calling thread, every IR builder records the
// source location (file and line) of the builder call that made each
// instruction and block, and printing a module keeps, per printed line, the
// location that produced it (ir/printer.h line_origins) as the thread's last
// origin table. Recording never changes a printed byte. It is off by default;
// off, a builder stores nothing (one flag read per builder, one branch per
// instruction).
//
// The location comes from __builtin_FILE / __builtin_LINE (GCC >= 4.8 and
// Clang >= 9, usable under C++17) defaulted through every builder method's
// last parameter (`Here here = {}`), so it names the kernel line that called
// the builder, not the builder itself.
#pragma once

#include <string>
#include <vector>

namespace cpe::ir {

// A source location: `file` as the compiler spelled it (static storage), `line` 1-based.
struct Here {
    const char *file;
    int line;
    // Defaults to the location of the expression that constructs it; as a
    // defaulted parameter (`Here here = {}`), the caller's call site.
    Here(const char *f = __builtin_FILE(), int l = __builtin_LINE()) : file(f), line(l) {}
};

namespace origin {

// Whether the calling thread records origins (default false).
bool recording();
// Switch recording on or off for the calling thread; clears the last table.
void set_recording(bool on);
// "cpp_engine/src/<path>:<line>" for `here` (the path from its last
// "cpp_engine/src/"; the file as given when it has none); "" for a null file.
std::string text(const char *file, int line);
// Keep `table` (one entry per printed line) as the thread's last origin table.
void set_last(std::vector<std::string> table);
// Move out the thread's last origin table; `*had` false when there was none
// (no module printed since recording was switched on: a text family).
std::vector<std::string> take_last(bool *had);

}  // namespace origin
}  // namespace cpe::ir
