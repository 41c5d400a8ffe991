// Twin of python_engine/ir/builder.py.
#include "ir/builder.h"

#include <algorithm>
#include <stdexcept>

#include "ir/constants.h"
#include "targets/intrinsics.h"

namespace cpe::ir {

namespace {

const char *const kIntBinops[] = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem",
                                  "shl", "lshr", "ashr", "and", "or", "xor"};
const char *const kFloatBinops[] = {"fadd", "fsub", "fmul", "fdiv"};
const char *const kCasts[] = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptosi", "fptoui",
                              "sitofp", "uitofp", "bitcast", "ptrtoint", "inttoptr", "addrspacecast"};
const char *const kIcmpPreds[] = {"eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle"};
const char *const kFcmpPreds[] = {"oeq", "one", "ogt", "oge", "olt", "ole", "ord",
                                  "uno", "ueq", "une", "ugt", "uge", "ult", "ule"};

template <size_t N>
bool one_of(const std::string &s, const char *const (&list)[N]) {
    return std::any_of(list, list + N, [&](const char *x) { return s == x; });
}

void same(const Value &a, const Value &b, const std::string &what) {
    if (a.type != b.type)
        throw std::logic_error(what + ": operand types differ (" + a.typed() + " vs " + b.typed() + ")");
}

const Type *cmp_result(const Value &a) { return a.type->kind() == Kind::Vector ? vec(a.type->count(), i1()) : i1(); }

}  // namespace

IRBuilder::IRBuilder(Module &module)
    : module_(module), fn_(*module.function()), origins_(origin::recording()) {}

Block &IRBuilder::new_block(const std::string &hint, Here here) {
    Block &b = fn_.block(hint);
    if (origins_) b.set_origin(here);
    return b;
}

void IRBuilder::append(std::unique_ptr<Instr> ins, Here here) {
    if (!block_) throw std::logic_error("IRBuilder has no insertion block");
    if (block_->terminated()) throw std::logic_error("block " + block_->name() + " is already terminated");
    if (origins_) ins->set_origin(here);
    block_->append(std::move(ins));
}

void IRBuilder::append_line(std::string line, Here here) { append(std::make_unique<Instr>(std::move(line)), here); }

void IRBuilder::terminate(std::string line, Here here) {
    append_line(std::move(line), here);
    block_->set_terminated();
}

Value IRBuilder::def(const Type *t, const std::string &hint, const std::string &rhs, Here here) {
    Value v{t, "%" + fn_.fresh(hint)};
    append_line(v.ref + " = " + rhs, here);
    return v;
}

Value IRBuilder::binop(const std::string &op, const Value &a, const Value &b, const std::string &hint,
                       const Flags &flags, Here here) {
    if (!one_of(op, kIntBinops) && !one_of(op, kFloatBinops))
        throw std::logic_error("unknown binary operator " + op);
    same(a, b, op);
    std::string fl;
    for (const std::string &f : flags) fl += " " + f;
    return def(a.type, hint, op + fl + " " + a.typed() + ", " + b.ref, here);
}

Value IRBuilder::add(const Value &a, const Value &b, const std::string &hint, const Flags &flags, Here here) {
    return binop("add", a, b, hint, flags, here);
}
Value IRBuilder::sub(const Value &a, const Value &b, const std::string &hint, const Flags &flags, Here here) {
    return binop("sub", a, b, hint, flags, here);
}
Value IRBuilder::mul(const Value &a, const Value &b, const std::string &hint, const Flags &flags, Here here) {
    return binop("mul", a, b, hint, flags, here);
}
Value IRBuilder::fadd(const Value &a, const Value &b, const std::string &hint, Here here) { return binop("fadd", a, b, hint, {}, here); }
Value IRBuilder::fmul(const Value &a, const Value &b, const std::string &hint, Here here) { return binop("fmul", a, b, hint, {}, here); }

Value IRBuilder::fneg(const Value &a, const std::string &hint, Here here) { return def(a.type, hint, "fneg " + a.typed(), here); }

Value IRBuilder::icmp(const std::string &pred, const Value &a, const Value &b, const std::string &hint, Here here) {
    if (!one_of(pred, kIcmpPreds)) throw std::logic_error("unknown icmp predicate " + pred);
    same(a, b, "icmp");
    return def(cmp_result(a), hint, "icmp " + pred + " " + a.typed() + ", " + b.ref, here);
}

Value IRBuilder::fcmp(const std::string &pred, const Value &a, const Value &b, const std::string &hint, Here here) {
    if (!one_of(pred, kFcmpPreds)) throw std::logic_error("unknown fcmp predicate " + pred);
    same(a, b, "fcmp");
    return def(cmp_result(a), hint, "fcmp " + pred + " " + a.typed() + ", " + b.ref, here);
}

Value IRBuilder::select(const Value &c, const Value &a, const Value &b, const std::string &hint, Here here) {
    same(a, b, "select");
    return def(a.type, hint, "select " + c.typed() + ", " + a.typed() + ", " + b.typed(), here);
}

Value IRBuilder::cast(const std::string &op, const Value &v, const Type *to, const std::string &hint, Here here) {
    if (!one_of(op, kCasts)) throw std::logic_error("unknown cast " + op);
    return def(to, hint, op + " " + v.typed() + " to " + to->text(), here);
}

Value IRBuilder::gep(const Type *elem, const Value &base, const std::vector<Value> &indices,
                     const std::string &hint, bool inbounds, Here here) {
    std::string idx;
    for (const Value &i : indices) idx += ", " + i.typed();
    return def(base.type, hint,
               std::string("getelementptr") + (inbounds ? " inbounds" : "") + " " + elem->text() + ", " +
                   base.typed() + idx, here);
}

Value IRBuilder::load(const Type *t, const Value &p, long long align, const std::string &hint, Here here) {
    if (p.type->kind() != Kind::Ptr) throw std::logic_error("load from non-pointer " + p.typed());
    return def(t, hint, "load " + t->text() + ", " + p.typed() + ", align " + dec(align), here);
}

void IRBuilder::store(const Value &v, const Value &p, long long align, Here here) {
    if (p.type->kind() != Kind::Ptr) throw std::logic_error("store to non-pointer " + p.typed());
    append_line("store " + v.typed() + ", " + p.typed() + ", align " + dec(align), here);
}

void IRBuilder::fence(const std::string &scope, const std::string &ordering, const std::string &mmra, Here here) {
    append_line("fence syncscope(\"" + scope + "\") " + ordering + (mmra.empty() ? "" : ", !mmra " + mmra), here);
}

Value IRBuilder::extractelement(const Value &v, const Value &idx, const std::string &hint, Here here) {
    return def(v.type->elem(), hint, "extractelement " + v.typed() + ", " + idx.typed(), here);
}

Value IRBuilder::insertelement(const Value &v, const Value &e, const Value &idx, const std::string &hint, Here here) {
    if (e.type != v.type->elem())
        throw std::logic_error("insertelement: " + e.typed() + " into " + v.type->text());
    return def(v.type, hint, "insertelement " + v.typed() + ", " + e.typed() + ", " + idx.typed(), here);
}

Value IRBuilder::shufflevector(const Value &a, const Value &b, const std::vector<int> &mask,
                               const std::string &hint, Here here) {
    same(a, b, "shufflevector");
    const auto n = static_cast<int64_t>(mask.size());
    const Type *mt = vec(n, i32());
    std::string m;
    for (size_t i = 0; i < mask.size(); ++i) {
        if (i) m += ", ";
        m += "i32 " + dec(mask[i]);
    }
    const Type *rt = vec(n, a.type->elem());
    return def(rt, hint, "shufflevector " + a.typed() + ", " + b.typed() + ", " + mt->text() + " <" + m + ">", here);
}

Phi &IRBuilder::phi(const Type *t, const std::string &hint, Here here) {
    auto ins = std::make_unique<Phi>(Value{t, "%" + fn_.fresh(hint)});
    Phi &ref = *ins;
    append(std::move(ins), here);
    return ref;
}

void IRBuilder::br(const Block &target, Here here) { terminate("br label %" + target.name(), here); }

void IRBuilder::cond_br(const Value &c, const Block &t, const Block &f, Here here) {
    terminate("br " + c.typed() + ", label %" + t.name() + ", label %" + f.name(), here);
}

void IRBuilder::ret_void(Here here) { terminate("ret void", here); }

std::string IRBuilder::call_text(const std::string &key, const std::vector<Value> &args, bool want_void,
                                 const Type **ret) {
    const targets::Intrinsic it = targets::intrinsic(key, module_.flavor().canonical);
    bool match = args.size() == it.params.size();
    for (size_t i = 0; match && i < args.size(); ++i) match = args[i].type == it.params[i];
    if (!match) {
        std::string got, want;
        for (size_t i = 0; i < args.size(); ++i) got += (i ? ", " : "") + args[i].type->text();
        for (size_t i = 0; i < it.params.size(); ++i) want += (i ? ", " : "") + it.params[i]->text();
        throw std::logic_error("call " + it.name + ": arguments (" + got + ") do not match (" + want + ")");
    }
    if (want_void != (it.ret == void_()))
        throw std::logic_error("call " + it.name + ": " + (want_void ? "returns " + it.ret->text() : "returns void"));
    module_.use_intrinsic(key);
    std::string a;
    for (size_t i = 0; i < args.size(); ++i) a += (i ? ", " : "") + args[i].typed();
    *ret = it.ret;
    return "call " + it.ret->text() + " @" + it.name + "(" + a + ")";
}

Value IRBuilder::call(const std::string &key, const std::vector<Value> &args, const std::string &hint, Here here) {
    const Type *ret = nullptr;
    std::string text = call_text(key, args, false, &ret);
    return def(ret, hint, text, here);
}

void IRBuilder::call_void(const std::string &key, const std::vector<Value> &args, Here here) {
    const Type *ret = nullptr;
    append_line(call_text(key, args, true, &ret), here);
}

}  // namespace cpe::ir
