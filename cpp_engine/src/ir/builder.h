// IRBuilder: appends instructions to the current block of a function.
// Twin of python_engine/ir/builder.py.
//
// Each method formats its instruction at call time, taking the next name from
// the function counter, so the order of builder calls decides the printed
// bytes. C++ does not fix the evaluation order of function arguments, so a
// caller never nests builder calls inside another call's argument list: every
// intermediate value is first bound to a local (DESIGN §2).
// Operand type mismatches throw std::logic_error (an engine bug, not a rejection).
//
// Every emitting method ends in `Here here = {}`: the caller's source location
// (ir/origin.h), recorded on the instruction only while origin recording is on.
// Callers never pass it; a method that calls another forwards its own.
#pragma once

#include <string>
#include <vector>

#include "ir/function.h"
#include "ir/origin.h"
#include "ir/types.h"
#include "ir/values.h"

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
    Block &new_block(const std::string &hint, Here here = {});

    // -- arithmetic -----------------------------------------------------------
    // Integer or float binary operator `op` (`add`, `fmul`, ...) with optional
    // flags (`nuw`, `nsw`, `exact`, fast-math flags) in the given order.
    Value binop(const std::string &op, const Value &a, const Value &b, const std::string &hint,
                const Flags &flags = {}, Here here = {});
    Value add(const Value &a, const Value &b, const std::string &hint = "add", const Flags &flags = {}, Here here = {});
    Value sub(const Value &a, const Value &b, const std::string &hint = "sub", const Flags &flags = {}, Here here = {});
    Value mul(const Value &a, const Value &b, const std::string &hint = "mul", const Flags &flags = {}, Here here = {});
    Value fadd(const Value &a, const Value &b, const std::string &hint = "fadd", Here here = {});
    Value fmul(const Value &a, const Value &b, const std::string &hint = "fmul", Here here = {});
    // Float negation `fneg`.
    Value fneg(const Value &a, const std::string &hint = "fneg", Here here = {});
    // Integer compare; result i1 (or vector of i1).
    Value icmp(const std::string &pred, const Value &a, const Value &b, const std::string &hint = "cmp", Here here = {});
    // Float compare; result i1 (or vector of i1).
    Value fcmp(const std::string &pred, const Value &a, const Value &b, const std::string &hint = "fcmp", Here here = {});
    // `select c, a, b`.
    Value select(const Value &c, const Value &a, const Value &b, const std::string &hint = "sel", Here here = {});
    // Cast instruction `op` (`zext`, `fptrunc`, ...) of `v` to `to`.
    Value cast(const std::string &op, const Value &v, const Type *to, const std::string &hint = "cast", Here here = {});

    // -- memory ---------------------------------------------------------------
    // `getelementptr [inbounds] elem, base, indices...`; result has base's type.
    Value gep(const Type *elem, const Value &base, const std::vector<Value> &indices,
              const std::string &hint = "gep", bool inbounds = true, Here here = {});
    // `load t, p, align N` (align in bytes).
    Value load(const Type *t, const Value &p, long long align, const std::string &hint = "ld", Here here = {});
    // `store v, p, align N` (align in bytes).
    void store(const Value &v, const Value &p, long long align, Here here = {});
    // `fence syncscope("scope") ordering` (scope `workgroup`, `agent`, ...); `mmra`
    // non-empty: a metadata id (`!1`) attached as `, !mmra !1`.
    void fence(const std::string &scope, const std::string &ordering, const std::string &mmra = "",
               Here here = {});

    // -- vectors --------------------------------------------------------------
    Value extractelement(const Value &v, const Value &idx, const std::string &hint = "elt", Here here = {});
    Value insertelement(const Value &v, const Value &e, const Value &idx, const std::string &hint = "ins", Here here = {});
    // `shufflevector a, b, <n x i32> <mask>`; mask entries are lane indices.
    Value shufflevector(const Value &a, const Value &b, const std::vector<int> &mask,
                        const std::string &hint = "shuf", Here here = {});

    // -- control flow ---------------------------------------------------------
    // A phi of type `t` at the current position; add edges with add_incoming.
    Phi &phi(const Type *t, const std::string &hint = "phi", Here here = {});
    void br(const Block &target, Here here = {});
    void cond_br(const Value &c, const Block &t, const Block &f, Here here = {});
    void ret_void(Here here = {});

    // -- intrinsics -----------------------------------------------------------
    // Call non-void intrinsic `key` of the module's flavor and return its
    // result. Argument types are checked against the table (std::logic_error).
    Value call(const std::string &key, const std::vector<Value> &args, const std::string &hint = "call", Here here = {});
    // Call void intrinsic `key` (`call void @...`).
    void call_void(const std::string &key, const std::vector<Value> &args, Here here = {});

private:
    void append(std::unique_ptr<Instr> ins, Here here);
    void append_line(std::string line, Here here);
    void terminate(std::string line, Here here);
    Value def(const Type *t, const std::string &hint, const std::string &rhs, Here here);
    std::string call_text(const std::string &key, const std::vector<Value> &args, bool want_void,
                          const Type **ret);

    Module &module_;
    Function &fn_;
    Block *block_ = nullptr;
    bool origins_ = false;  // origin::recording() when the builder was made
};

}  // namespace cpe::ir
