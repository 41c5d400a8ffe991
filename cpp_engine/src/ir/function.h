// Functions, parameters, basic blocks, instructions, and the module.
// Twin of python_engine/ir/function.py.
//
// Names: every register and block label inside a function is `hint` followed
// by the function's one counter (`%acc12`, `loop3`), given when the builder
// creates it, so the builder call order alone decides the bytes (DESIGN §2).
// Parameters keep their names as given.
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/origin.h"
#include "ir/types.h"
#include "ir/values.h"
#include "targets/arch.h"
#include "targets/flavors.h"

namespace cpe::ir {

// A kernel parameter: name, type and attribute keys in print order. Keys print
// literally except "capture", which prints the flavor's pointer-capture
// attribute (`nocapture` or `captures(none)`).
struct Param {
    std::string name;
    const Type *type;
    std::vector<std::string> attrs;

    Value value() const { return Value{type, "%" + name}; }
};

// Copy n <= 16 bytes with two possibly overlapping fixed-size moves (never
// reads or writes outside [s, s + n) / [d, d + n)): no libc call.
inline void copy_small(char *d, const char *s, size_t n) {
    if (n >= 8) {
        uint64_t a, b;
        std::memcpy(&a, s, 8);
        std::memcpy(&b, s + n - 8, 8);
        std::memcpy(d, &a, 8);
        std::memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        std::memcpy(&a, s, 4);
        std::memcpy(&b, s + n - 4, 4);
        std::memcpy(d, &a, 4);
        std::memcpy(d + n - 4, &b, 4);
    } else if (n) {
        d[0] = s[0];
        d[n / 2] = s[n / 2];
        d[n - 1] = s[n - 1];
    }
}

// Copy `n` bytes to `d` (copy_small up to 16, else memcpy); returns d + n.
inline char *copy_to(char *d, const char *s, size_t n) {
    if (n <= 16)
        copy_small(d, s, n);
    else
        std::memcpy(d, s, n);
    return d + n;
}
inline char *copy_to(char *d, std::string_view s) { return copy_to(d, s.data(), s.size()); }
// A string literal: a copy of constant size (no branch).
template <size_t N>
inline char *copy_to(char *d, const char (&s)[N]) {
    std::memcpy(d, s, N - 1);
    return d + N - 1;
}

// A growable byte buffer that appends in place: the text of a block. put()
// and += are inline (one capacity test and a memcpy); the storage grows by
// doubling (malloc/realloc, std::bad_alloc on failure). Holds bytes, not a C
// string: no NUL is kept.
//
// Storage is recycled per thread: a buffer made with a reserve takes a block
// of storage its thread released earlier (thread_local list of at most
// kPoolSize, each kept at the capacity it grew to), and a destroyed buffer
// gives its storage back to that list (freed when the list is full, or at
// thread exit). So after a thread's first kernel the blocks of the next ones
// grow without realloc copies. No storage is shared between threads.
class TextBuffer {
public:
    explicit TextBuffer(size_t reserve = 0) {
        if (reserve) {
            take_pooled();
            if (cap_ < reserve) grow(reserve);
        }
    }
    ~TextBuffer() { release(); }
    // Storage blocks a thread keeps for reuse.
    static constexpr size_t kPoolSize = 64;
    TextBuffer(const TextBuffer &) = delete;
    TextBuffer &operator=(const TextBuffer &) = delete;

    const char *data() const { return p_; }
    size_t size() const { return size_; }

    void put(const char *s, size_t n) {
        if (n > cap_ - size_) grow(n);
        char *d = p_ + size_;
        if (n <= 16)
            copy_small(d, s, n);  // most pieces (names, types, keywords): no libc call
        else
            std::memcpy(d, s, n);
        size_ += n;
    }
    TextBuffer &operator+=(std::string_view s) {
        put(s.data(), s.size());
        return *this;
    }
    // A string literal (its length is known at compile time).
    template <size_t N>
    TextBuffer &operator+=(const char (&s)[N]) {
        put(s, N - 1);
        return *this;
    }
    TextBuffer &operator+=(char c) {
        put(&c, 1);
        return *this;
    }
    // Room for `n` more bytes (one capacity test): returns where they go. The
    // caller writes at most n bytes there (copy_to) and then calls
    // end_at(end of what it wrote); nothing else may append in between.
    char *claim(size_t n) {
        if (n > cap_ - size_) grow(n);
        return p_ + size_;
    }
    void end_at(const char *end) { size_ = static_cast<size_t>(end - p_); }
    // Append the decimal text of `v` (std::to_chars; locale-independent).
    void put_dec(int64_t v) {
        char buf[24];
        auto res = std::to_chars(buf, buf + sizeof buf, v);
        put(buf, static_cast<size_t>(res.ptr - buf));
    }

private:
    void grow(size_t n);  // room for `n` more bytes at least
    void take_pooled();   // adopt a storage block of this thread's pool, if any
    void release();       // give the storage to this thread's pool (or free it)
    char *p_ = nullptr;
    size_t size_ = 0;
    size_t cap_ = 0;
};

class Block;

// `phi`; incoming edges may be added after creation (loops), so its line is
// written when the module prints (ir/printer.cpp), not when it is made.
class Phi {
public:
    explicit Phi(Value result) : result_(std::move(result)) { incoming_.reserve(2); }  // most phis join two edges
    const Value &result() const { return result_; }
    void add_incoming(const Value &value, const Block &block);
    // (value, block label) of every incoming edge, in add order.
    const std::vector<std::pair<Value, std::string>> &incoming() const { return incoming_; }

private:
    Value result_;
    std::vector<std::pair<Value, std::string>> incoming_;  // (value, block label)
};

// A basic block: a label and its instructions. Ends with one terminator.
//
// Output path (docs/cpp_engine.md, "The output path"): the builder writes each
// instruction's line straight into the block's one text buffer, indented and
// newline-terminated ("  <instr>\n"), so no instruction owns a string and the
// printer copies each block's text once. A phi is the one instruction printed
// late: the block keeps it with the byte offset of its place in the text.
class Block {
public:
    explicit Block(std::string name) : name_(std::move(name)), text_(kTextReserve) {}
    const std::string &name() const { return name_; }
    bool terminated() const { return terminated_; }
    void set_terminated() { terminated_ = true; }
    // The builder call that made it, while origin recording was on (ir/origin.h); file null otherwise.
    void set_origin(Here here) { origin_ = here; }
    const Here &origin() const { return origin_; }

    // Start the next instruction line: appends the two-space indent and returns
    // the text buffer the caller appends the instruction to, then '\n'.
    // `here` is recorded when `record` (origin recording) is on.
    TextBuffer &begin_line(bool record, Here here) {
        note_origin(record, here);
        ++lines_;
        text_ += "  ";
        return text_;
    }
    // begin_line with room for `n` more bytes claimed (TextBuffer::claim) after
    // the indent: returns where the instruction goes; the caller writes at most
    // n bytes there, then text_end_at(end) (its '\n' included).
    char *begin_line_claim(bool record, Here here, size_t n) {
        note_origin(record, here);
        ++lines_;
        char *d = text_.claim(n + 2);
        d[0] = ' ';
        d[1] = ' ';
        return d + 2;
    }
    void text_end_at(const char *end) { text_.end_at(end); }
    // The text buffer itself, to append to the line begin_line started (IRBuilder).
    TextBuffer &text_buffer() { return text_; }
    // Place a phi at the current end of the text (the next instruction line).
    Phi &add_phi(Value result, bool record, Here here) {
        note_origin(record, here);
        ++lines_;
        phis_.emplace_back(text_.size(), std::make_unique<Phi>(std::move(result)));
        return *phis_.back().second;
    }

    // Every non-phi instruction line, in order, each "  <instr>\n".
    const TextBuffer &text() const { return text_; }
    // (offset in text() where its line goes, phi), in creation order (offsets ascending).
    const std::vector<std::pair<size_t, std::unique_ptr<Phi>>> &phis() const { return phis_; }
    // Instruction lines (phis included).
    size_t lines() const { return lines_; }
    // Origin of instruction line `i` (0-based); file null when none was recorded.
    Here line_origin(size_t i) const { return i < origins_.size() ? origins_[i] : Here{nullptr, 0}; }

    // Bytes reserved for a new block's text (grown by doubling past it).
    static constexpr size_t kTextReserve = 2048;

private:
    void note_origin(bool record, Here here) {
        if (!record) return;
        origins_.resize(lines_, Here{nullptr, 0});  // lines made while recording was off
        origins_.push_back(here);
    }

    std::string name_;
    TextBuffer text_;
    std::vector<std::pair<size_t, std::unique_ptr<Phi>>> phis_;
    std::vector<Here> origins_;  // only while recording
    size_t lines_ = 0;
    bool terminated_ = false;
    Here origin_{nullptr, 0};
};

// A function definition (`define`). `cc` is the calling convention
// (`amdgpu_kernel`), attr_group the ordered (key, value) attribute pairs
// printed as `attributes #0` (a pair without a value prints its key bare).
class Function {
public:
    using Attrs = std::vector<std::pair<std::string, std::optional<std::string>>>;

    Function(std::string name, std::vector<Param> params, const Type *ret, std::string cc, Attrs attr_group);

    const std::string &name() const { return name_; }
    const std::vector<Param> &params() const { return params_; }
    const Type *ret() const { return ret_; }
    const std::string &cc() const { return cc_; }
    const Attrs &attr_group() const { return attr_group_; }
    const std::vector<std::unique_ptr<Block>> &blocks() const { return blocks_; }

    // Next name from the function's counter: `hint` + number. A hint must be a
    // non-empty ASCII identifier not ending in a digit; std::invalid_argument otherwise.
    std::string fresh(std::string_view hint);
    // The register name of the next fresh(hint): "%" + fresh(hint), built in one buffer.
    std::string fresh_ref(std::string_view hint);
    // Bytes fresh_ref_to may write: '%', a hint of at most kShortHint bytes, the counter.
    static constexpr size_t kShortHint = 16;
    static constexpr size_t kRefBytes = 1 + kShortHint + 24;
    // fresh_ref(hint) written into `buf` (kRefBytes): returns its length, or 0
    // (nothing written, the counter unchanged) when short_name(hint) is false
    // -- then call fresh_ref. Same checks and errors as fresh.
    size_t fresh_ref_to(std::string_view hint, char *buf) {
        if (!short_name(hint)) return 0;
        const size_t h = hint.size();
        buf[0] = '%';
        copy_small(buf + 1, hint.data(), h);
        std::memcpy(buf + 1 + h, counter_text_, 8);
        const size_t n = 1 + h + counter_len_;
        bump_counter();
        return n;
    }
    // The pieces of fresh_ref for a writer that places the name itself (the IR
    // builder writes it straight into the value and the line): short_name(hint)
    // checks `hint` as fresh does (std::invalid_argument for a bad one) and is
    // true when it has 1..kShortHint bytes and the counter at most 8 digits;
    // the name is then "%" + hint + the first counter_len() of the 8 bytes at
    // counter_digits(), and take_counter() moves the counter on. False: use fresh_ref.
    bool short_name(std::string_view hint) {  // inline: once per instruction
        const size_t h = hint.size();
        if (h == 0 || h > kShortHint || counter_len_ > 8) return false;
        uint64_t a, b;
        hint_words(hint.data(), h, &a, &b);
        HintSeen &seen = hints_seen_[((a * 0x9E3779B97F4A7C15ull) ^ (b + h)) * 0x9E3779B97F4A7C15ull >> 56];
        if (seen.len != h || seen.a != a || seen.b != b) hint_miss(hint, seen, a, b);
        return true;
    }
    const char *counter_digits() const { return counter_text_; }
    size_t counter_len() const { return counter_len_; }
    void take_counter() { bump_counter(); }

    // The value of parameter `name` (`%name`, made once per function; looked up
    // by a hash of the name); std::out_of_range if there is none.
    const Value &param(std::string_view name) const;

    // Create (and append) a new basic block labelled `hint` + counter.
    Block &block(std::string_view hint);

private:
    std::string name_;
    std::vector<Param> params_;
    const Type *ret_;
    std::string cc_;
    Attrs attr_group_;
    std::vector<std::unique_ptr<Block>> blocks_;
    long long counter_ = 0;
    // param(): `%name` of every parameter (params_ order) and an open-addressed
    // index into them by a hash of the name (1 + index; 0 = empty slot).
    std::vector<Value> param_values_;
    static constexpr size_t kParamSlots = 128;
    uint8_t param_slot_[kParamSlots] = {};
    // Hints of at most 16 bytes already checked, by content (two overlapping
    // words and the length; len 0 = empty slot): a repeated hint is not checked again.
    struct HintSeen {
        uint64_t a = 0, b = 0;
        size_t len = 0;
    };
    static constexpr size_t kHintSlots = 256;  // a power of two (index: the top 8 bits of a hash)
    HintSeen hints_seen_[kHintSlots];
    // A hint not in its slot: check it (throws for a bad hint), then remember it there.
    static void hint_miss(std::string_view hint, HintSeen &seen, uint64_t a, uint64_t b);
    // The content key of a hint of n <= 16 bytes: the two overlapping words
    // copy_small moves (they cover every byte, so equal keys mean equal bytes).
    static void hint_words(const char *s, size_t n, uint64_t *a, uint64_t *b) {
        if (n >= 8) {
            std::memcpy(a, s, 8);
            std::memcpy(b, s + n - 8, 8);
        } else if (n >= 4) {
            uint32_t x, y;
            std::memcpy(&x, s, 4);
            std::memcpy(&y, s + n - 4, 4);
            *a = x;
            *b = y;
        } else {
            *a = n ? static_cast<uint64_t>(static_cast<unsigned char>(s[0])) |
                         static_cast<uint64_t>(static_cast<unsigned char>(s[n / 2])) << 8 |
                         static_cast<uint64_t>(static_cast<unsigned char>(s[n - 1])) << 16
                   : 0;
            *b = 0;
        }
    }
    // counter_ as decimal text, kept in step (incremented in place: no number formatting per name).
    char counter_text_[24] = {'0'};
    size_t counter_len_ = 1;
    void bump_counter() {  // counter_ + 1, its text incremented in place
        ++counter_;
        size_t i = counter_len_;
        while (i > 0 && counter_text_[i - 1] == '9') counter_text_[--i] = '0';
        if (i > 0)
            ++counter_text_[i - 1];
        else
            carry_counter();
    }
    void carry_counter();  // all nines became zeros: one more digit
};

// An LDS (`addrspace(3)`) global:
// `@name = internal addrspace(3) global [count x elem] poison, align N`.
struct LdsGlobal {
    std::string name;
    const Type *type;
    long long align;
    // The add_lds call site while origin recording is on (ir/origin.h), else a null file.
    Here origin{nullptr, 0};

    Value value() const { return Value{lds_ptr(), "@" + name}; }
};

// One LLVM module for one kernel at one arch and flavor. `flavor` and `arch`
// point at rows of the target tables; intrinsics used are recorded by their
// row's index in the intrinsic table and declared in table order by the printer.
class Module {
public:
    Module(const targets::Flavor &flavor, const targets::Arch &arch) : flavor_(&flavor), arch_(&arch) {}

    const targets::Flavor &flavor() const { return *flavor_; }
    const targets::Arch &arch() const { return *arch_; }
    const std::vector<LdsGlobal> &lds() const { return lds_; }
    // Whether intrinsic row `index` (intrinsic_ref(...).index, ir/intrinsics.h) is used.
    bool uses_intrinsic(size_t index) const { return index < used_.size() && used_[index]; }
    Function *function() const { return function_.get(); }
    const std::vector<std::string> &metadata() const { return metadata_; }

    // Declare an LDS global (align in bytes); returns a pointer value to it.
    Value add_lds(const std::string &name, const Type *t, long long align, Here here = {});
    void use_intrinsic(size_t index) {
        if (index >= used_.size()) used_.resize(index + 1, 0);
        used_[index] = 1;
    }
    Function &set_function(std::unique_ptr<Function> fn) {
        function_ = std::move(fn);
        return *function_;
    }
    void add_metadata(std::string line) { metadata_.push_back(std::move(line)); }

private:
    const targets::Flavor *flavor_;
    const targets::Arch *arch_;
    std::vector<LdsGlobal> lds_;
    std::vector<unsigned char> used_;  // by intrinsic row index: 1 = used
    std::unique_ptr<Function> function_;
    std::vector<std::string> metadata_;
};

}  // namespace cpe::ir
