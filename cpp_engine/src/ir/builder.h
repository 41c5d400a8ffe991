// IRBuilder: appends instructions to the current block of a function.
// Twin of python_engine/ir/builder.py.
//
// Each method formats its instruction at call time, taking the next name from
// the function counter, so the order of builder calls decides the printed
// bytes. The line is written straight into the insertion block's text
// (ir/function.h Block, TextBuffer): no string per instruction
// (docs/cpp_engine.md, "The output path"). C++ does not fix the evaluation order of function arguments, so a
// caller never nests builder calls inside another call's argument list: every
// intermediate value is first bound to a local (DESIGN §2).
// Operand type mismatches throw std::logic_error (an engine bug, not a rejection).
//
// Every emitting method ends in `Here here = {}`: the caller's source location
// (ir/origin.h), recorded on the instruction only while origin recording is on.
// Callers never pass it; a method that calls another forwards its own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ir/function.h"
#include "ir/origin.h"
#include "ir/types.h"
#include "ir/values.h"
#include "ir/intrinsics.h"

namespace cpe::ir {

using Flags = std::vector<std::string>;

class IRBuilder {
public:
    // Builds the function of `module`. Call position() before emitting.
    explicit IRBuilder(Module &module);

    Module &module() const { return module_; }
    Function &fn() const { return fn_; }
    Block *block() const { return block_; }

    // -- structure ------------------------------------------------------------
    // Append subsequent instructions to `block`.
    void position(Block &block) { block_ = &block; }
    // Create a block named `hint` + counter (does not move the insertion point).
    Block &new_block(std::string_view hint, Here here = {});

    // -- arithmetic -----------------------------------------------------------
    // Integer or float binary operator `op` (`add`, `fmul`, ...) with optional
    // flags (`nuw`, `nsw`, `exact`, fast-math flags) in the given order.
    Value binop(std::string_view op, const Value &a, const Value &b, std::string_view hint,
                const Flags &flags = {}, Here here = {});
    Value add(const Value &a, const Value &b, std::string_view hint = "add", const Flags &flags = {}, Here here = {});
    Value sub(const Value &a, const Value &b, std::string_view hint = "sub", const Flags &flags = {}, Here here = {});
    Value mul(const Value &a, const Value &b, std::string_view hint = "mul", const Flags &flags = {}, Here here = {});
    Value fadd(const Value &a, const Value &b, std::string_view hint = "fadd", Here here = {});
    Value fmul(const Value &a, const Value &b, std::string_view hint = "fmul", Here here = {});
    // Float negation `fneg`.
    Value fneg(const Value &a, std::string_view hint = "fneg", Here here = {});
    // Integer compare; result i1 (or vector of i1).
    Value icmp(std::string_view pred, const Value &a, const Value &b, std::string_view hint = "cmp", Here here = {});
    // Float compare; result i1 (or vector of i1).
    Value fcmp(std::string_view pred, const Value &a, const Value &b, std::string_view hint = "fcmp", Here here = {});
    // `select c, a, b`.
    Value select(const Value &c, const Value &a, const Value &b, std::string_view hint = "sel", Here here = {});
    // Cast instruction `op` (`zext`, `fptrunc`, ...) of `v` to `to`.
    Value cast(std::string_view op, const Value &v, const Type *to, std::string_view hint = "cast", Here here = {});

    // -- memory ---------------------------------------------------------------
    // `getelementptr [inbounds] elem, base, indices...`; result has base's type.
    Value gep(const Type *elem, const Value &base, Operands indices,
              std::string_view hint = "gep", bool inbounds = true, Here here = {});
    // `load t, p, align N` (align in bytes).
    Value load(const Type *t, const Value &p, long long align, std::string_view hint = "ld", Here here = {});
    // `store v, p, align N` (align in bytes).
    void store(const Value &v, const Value &p, long long align, Here here = {});
    // `fence syncscope("scope") ordering` (scope `workgroup`, `agent`, ...); `mmra`
    // non-empty: a metadata id (`!1`) attached as `, !mmra !1`.
    void fence(const std::string &scope, const std::string &ordering, const std::string &mmra = "",
               Here here = {});

    // -- vectors --------------------------------------------------------------
    Value extractelement(const Value &v, const Value &idx, std::string_view hint = "elt", Here here = {});
    Value insertelement(const Value &v, const Value &e, const Value &idx, std::string_view hint = "ins", Here here = {});
    // `shufflevector a, b, <n x i32> <mask>`; mask entries are lane indices.
    Value shufflevector(const Value &a, const Value &b, const std::vector<int> &mask,
                        std::string_view hint = "shuf", Here here = {});

    // -- control flow ---------------------------------------------------------
    // A phi of type `t` at the current position; add edges with add_incoming.
    Phi &phi(const Type *t, std::string_view hint = "phi", Here here = {});
    void br(const Block &target, Here here = {});
    void cond_br(const Value &c, const Block &t, const Block &f, Here here = {});
    void ret_void(Here here = {});

    // -- intrinsics -----------------------------------------------------------
    // Call non-void intrinsic `key` of the module's flavor and return its
    // result. Argument types are checked against the table (std::logic_error).
    Value call(std::string_view key, Operands args, std::string_view hint = "call", Here here = {});
    // Call void intrinsic `key` (`call void @...`).
    void call_void(std::string_view key, Operands args, Here here = {});

private:
    // Check the insertion block and start an instruction line in it
    // (Block::begin_line): the caller appends the instruction, then '\n'.
    TextBuffer &line(Here here) const;
    // icmp / fcmp (`inst`) after the predicate check.
    Value compare(std::string_view inst, std::string_view pred, const Value &a, const Value &b,
                  std::string_view hint, Here here);
    // binop after its checks (the shorthands add ... fmul skip the operator check).
    Value emit_binop(std::string_view op, const Value &a, const Value &b, std::string_view hint,
                     const Flags &flags, Here here);
    // line() for an instruction that defines a fresh register named `hint` + counter:
    // sets `*v` to it, writes "%name = " and returns the buffer.
    TextBuffer &def_line(Value *v, const Type *t, std::string_view hint, Here here);
    // The rest of a line after def_out: `rest` bytes are claimed in the
    // block's text (TextBuffer::claim) from `d` on; write at most that many
    // (copy_to), then end_at(end).
    struct LineOut {
        Block &block;
        char *d;
        void end_at(const char *end) const { block.text_end_at(end); }
    };
    // line() with room for `n` bytes of instruction claimed (inline: the
    // checks' throws are out of line, in bad_line).
    LineOut line_out(Here here, size_t n) {
        if (!block_ || block_->terminated()) bad_line();
        return LineOut{*block_, block_->begin_line_claim(origins_, here, n + kSlack)};
    }
    // Room claimed past a line's exact size: the pieces' fixed-size moves
    // (Type::copy_text, Ref::copy_out) may write this far past the line's end.
    static constexpr size_t kSlack = 32;
    [[noreturn]] void bad_line() const;
    // def_line with room for `rest` more bytes claimed (one capacity test for the line).
    LineOut def_out(Value *v, const Type *t, std::string_view hint, Here here, size_t rest);
    // Check `args` against intrinsic `key` (std::logic_error on a mismatch or
    // when its result is void != want_void) and record the use; its table row.
    IntrinsicRef check_call(std::string_view key, Operands args, bool want_void);
    // "call <ret> @<name>(<typed args>)\n": its byte count, and written at `d` (returns the end).
    static size_t call_size(const IntrinsicRef &it, Operands args);
    static char *call_to(char *d, const IntrinsicRef &it, Operands args);

    Module &module_;
    Function &fn_;
    Block *block_ = nullptr;
    bool origins_ = false;  // origin::recording() when the builder was made
};

}  // namespace cpe::ir
