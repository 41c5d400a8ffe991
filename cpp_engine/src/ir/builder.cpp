// Twin of python_engine/ir/builder.py.
#include "ir/builder.h"

#include <algorithm>
#include <charconv>
#include <new>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include "ir/constants.h"
#include "ir/intrinsics.h"

namespace cpe::ir {

namespace {

using std::string_view;
constexpr string_view kIntBinops[] = {"add", "sub", "mul", "udiv", "sdiv", "urem", "srem",
                                      "shl", "lshr", "ashr", "and", "or", "xor"};
constexpr string_view kFloatBinops[] = {"fadd", "fsub", "fmul", "fdiv"};
constexpr string_view kCasts[] = {"trunc", "zext", "sext", "fptrunc", "fpext", "fptosi", "fptoui",
                                  "sitofp", "uitofp", "bitcast", "ptrtoint", "inttoptr", "addrspacecast"};
constexpr string_view kIcmpPreds[] = {"eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle"};
constexpr string_view kFcmpPreds[] = {"oeq", "one", "ogt", "oge", "olt", "ole", "ord",
                                      "uno", "ueq", "une", "ugt", "uge", "ult", "ule"};

// The bytes and length of a name of at most 7 bytes in one word (the length in
// the low byte): equal keys mean equal names. kNoKey for a longer name.
constexpr uint64_t kNoKey = ~uint64_t{0};
constexpr uint64_t name_key(string_view s) {
    if (s.size() > 7) return kNoKey;
    uint64_t k = s.size();
    for (size_t i = 0; i < s.size(); ++i) k |= uint64_t{static_cast<unsigned char>(s[i])} << (8 * (i + 1));
    return k;
}

template <size_t N>
struct NameKeys {
    uint64_t k[N] = {};
    constexpr explicit NameKeys(const string_view (&list)[N]) {
        for (size_t i = 0; i < N; ++i) k[i] = name_key(list[i]);
    }
};

// `v` is one of `list` (whose keys are `keys`): one word compare per entry
// for a short name, the string compares for a longer one.
template <size_t N>
bool one_of(string_view v, const string_view (&list)[N], const NameKeys<N> &keys) {
    const uint64_t key = name_key(v);
    if (key == kNoKey) return std::any_of(list, list + N, [&](string_view x) { return v == x; });
    return std::any_of(keys.k, keys.k + N, [&](uint64_t x) { return x == key; });
}

constexpr NameKeys kIntBinopKeys(kIntBinops);
constexpr NameKeys kFloatBinopKeys(kFloatBinops);
constexpr NameKeys kCastKeys(kCasts);
constexpr NameKeys kIcmpKeys(kIcmpPreds);
constexpr NameKeys kFcmpKeys(kFcmpPreds);

void same(const Value &a, const Value &b, string_view what) {
    if (a.type != b.type)
        throw std::logic_error(std::string(what) + ": operand types differ (" + a.typed() + " vs " + b.typed() + ")");
}

const Type *cmp_result(const Value &a) { return a.type->kind() == Kind::Vector ? vec(a.type->count(), i1()) : i1(); }

// Append `<type> <ref>` (Value::typed) to `o` without a temporary.
void put_typed(TextBuffer &o, const Value &v) {
    o += v.type->text();
    o += ' ';
    o += v.ref;
}

// Append `<type> <ref>, <type> <ref>` of `a` and `b`.
void put_typed_pair(TextBuffer &o, const Value &a, const Value &b) {
    put_typed(o, a);
    o += ", ";
    put_typed(o, b);
}

// The line pieces below write into room claimed up front (TextBuffer::claim):
// `*_size` is the byte count of the text its `*_to` twin writes.

// Decimal text of an integer: at most kDecMax bytes (std::to_chars).
constexpr size_t kDecMax = 20;
char *dec_to(char *d, long long v) { return std::to_chars(d, d + kDecMax, v).ptr; }

// `<type> <ref>` (Value::typed).
size_t typed_size(const Value &v) { return v.type->text().size() + 1 + v.ref.size(); }
char *typed_to(char *d, const Value &v) {  // within a line_out claim (its kSlack covers the moves)
    d = v.type->copy_text(d);
    *d++ = ' ';
    return v.ref.copy_out(d);
}

// `<type> <a>, <b>\n`: the operands of a binary operator or compare (one type).
size_t same_typed_size(const Value &a, const Value &b) { return typed_size(a) + 2 + b.ref.size() + 1; }
char *same_typed_to(char *d, const Value &a, const Value &b) {
    d = typed_to(d, a);
    d = copy_to(d, ", ");
    d = b.ref.copy_out(d);
    *d++ = '\n';
    return d;
}

// `<type> <ref>` of `a`, `b` and `c` joined by ", ", then '\n' (select, insertelement).
size_t typed_three_size(const Value &a, const Value &b, const Value &c) {
    return typed_size(a) + 2 + typed_size(b) + 2 + typed_size(c) + 1;
}
char *typed_three_to(char *d, const Value &a, const Value &b, const Value &c) {
    d = typed_to(d, a);
    d = copy_to(d, ", ");
    d = typed_to(d, b);
    d = copy_to(d, ", ");
    d = typed_to(d, c);
    *d++ = '\n';
    return d;
}

// Operator names of the shorthand methods, made once (not per call).
constexpr string_view kAdd = "add", kSub = "sub", kMul = "mul", kFadd = "fadd", kFmul = "fmul";
const Flags kNoFlags;

}  // namespace

IRBuilder::IRBuilder(Module &module)
    : module_(module), fn_(*module.function()), origins_(origin::recording()) {}

Block &IRBuilder::new_block(std::string_view hint, Here here) {
    Block &b = fn_.block(hint);
    if (origins_) b.set_origin(here);
    return b;
}

TextBuffer &IRBuilder::line(Here here) const {
    if (!block_) throw std::logic_error("IRBuilder has no insertion block");
    if (block_->terminated()) throw std::logic_error("block " + block_->name() + " is already terminated");
    return block_->begin_line(origins_, here);
}

void IRBuilder::bad_line() const {
    line({});  // throws: no insertion block, or a terminated one
    throw std::logic_error("IRBuilder::bad_line on a good line");
}

IRBuilder::LineOut IRBuilder::def_out(Value *v, const Type *t, std::string_view hint, Here here, size_t rest) {
    v->type = t;
    const size_t h = hint.size();
    if (h < Function::kShortHint && v->ref.empty() && fn_.short_name(hint)) {
        // The usual case (a hint of at most 15 bytes, the caller's fresh Value):
        // the name is built in place in the value ('%', hint, 8 bytes of counter
        // of which counter_len() count: 1 + 15 + 8 <= Ref::kInline), and the
        // line gets the same pieces copied from where they already were, not
        // from the name just written (no store-to-load stall).
        const size_t n = 1 + h + fn_.counter_len();
        char *r = v->ref.fill_inline(n);
        r[0] = '%';
        copy_small(r + 1, hint.data(), h);
        std::memcpy(r + 1 + h, fn_.counter_digits(), 8);
        const LineOut o = line_out(here, n + 8 + 3 + rest);  // 8: the counter is moved as one word
        char *d = o.d;
        d[0] = '%';
        copy_small(d + 1, hint.data(), h);
        std::memcpy(d + 1 + h, fn_.counter_digits(), 8);
        fn_.take_counter();
        return LineOut{o.block, copy_to(d + n, " = ")};
    }
    v->ref = fn_.fresh_ref(hint);
    const LineOut o = line_out(here, v->ref.size() + 3 + rest);
    char *d = copy_to(o.d, v->ref);
    d = copy_to(d, " = ");
    return LineOut{o.block, d};
}

TextBuffer &IRBuilder::def_line(Value *v, const Type *t, std::string_view hint, Here here) {
    const LineOut o = def_out(v, t, hint, here, 0);
    o.end_at(o.d);
    return o.block.text_buffer();
}

Value IRBuilder::binop(std::string_view op, const Value &a, const Value &b, std::string_view hint,
                       const Flags &flags, Here here) {
    if (!one_of(op, kIntBinops, kIntBinopKeys) && !one_of(op, kFloatBinops, kFloatBinopKeys))
        throw std::logic_error("unknown binary operator " + std::string(op));
    same(a, b, op);
    return emit_binop(op, a, b, hint, flags, here);
}

Value IRBuilder::emit_binop(std::string_view op, const Value &a, const Value &b, std::string_view hint,
                            const Flags &flags, Here here) {
    size_t flags_size = 0;
    for (const std::string &f : flags) flags_size += 1 + f.size();
    Value v;
    const LineOut o = def_out(&v, a.type, hint, here, op.size() + flags_size + 1 + same_typed_size(a, b));
    char *d = copy_to(o.d, op);
    for (const std::string &f : flags) {
        *d++ = ' ';
        d = copy_to(d, f);
    }
    *d++ = ' ';
    o.end_at(same_typed_to(d, a, b));
    return v;
}

Value IRBuilder::add(const Value &a, const Value &b, std::string_view hint, const Flags &flags, Here here) {
    same(a, b, "add");
    return emit_binop(kAdd, a, b, hint, flags, here);
}
Value IRBuilder::sub(const Value &a, const Value &b, std::string_view hint, const Flags &flags, Here here) {
    same(a, b, "sub");
    return emit_binop(kSub, a, b, hint, flags, here);
}
Value IRBuilder::mul(const Value &a, const Value &b, std::string_view hint, const Flags &flags, Here here) {
    same(a, b, "mul");
    return emit_binop(kMul, a, b, hint, flags, here);
}
Value IRBuilder::fadd(const Value &a, const Value &b, std::string_view hint, Here here) {
    same(a, b, "fadd");
    return emit_binop(kFadd, a, b, hint, kNoFlags, here);
}
Value IRBuilder::fmul(const Value &a, const Value &b, std::string_view hint, Here here) {
    same(a, b, "fmul");
    return emit_binop(kFmul, a, b, hint, kNoFlags, here);
}

Value IRBuilder::fneg(const Value &a, std::string_view hint, Here here) {
    Value v;
    const LineOut o = def_out(&v, a.type, hint, here, 5 + typed_size(a) + 1);
    char *d = copy_to(o.d, "fneg ");
    d = typed_to(d, a);
    *d++ = '\n';
    o.end_at(d);
    return v;
}

Value IRBuilder::compare(std::string_view inst, std::string_view pred, const Value &a, const Value &b,
                         std::string_view hint, Here here) {
    same(a, b, inst);
    Value v;
    const LineOut o = def_out(&v, cmp_result(a), hint, here, inst.size() + 1 + pred.size() + 1 + same_typed_size(a, b));
    char *d = copy_to(o.d, inst);
    *d++ = ' ';
    d = copy_to(d, pred);
    *d++ = ' ';
    o.end_at(same_typed_to(d, a, b));
    return v;
}

Value IRBuilder::icmp(std::string_view pred, const Value &a, const Value &b, std::string_view hint, Here here) {
    if (!one_of(pred, kIcmpPreds, kIcmpKeys)) throw std::logic_error("unknown icmp predicate " + std::string(pred));
    return compare("icmp", pred, a, b, hint, here);
}

Value IRBuilder::fcmp(std::string_view pred, const Value &a, const Value &b, std::string_view hint, Here here) {
    if (!one_of(pred, kFcmpPreds, kFcmpKeys)) throw std::logic_error("unknown fcmp predicate " + std::string(pred));
    return compare("fcmp", pred, a, b, hint, here);
}

Value IRBuilder::select(const Value &c, const Value &a, const Value &b, std::string_view hint, Here here) {
    same(a, b, "select");
    Value v;
    const LineOut o = def_out(&v, a.type, hint, here, 7 + typed_three_size(c, a, b));
    o.end_at(typed_three_to(copy_to(o.d, "select "), c, a, b));
    return v;
}

Value IRBuilder::cast(std::string_view op, const Value &v, const Type *to, std::string_view hint, Here here) {
    if (!one_of(op, kCasts, kCastKeys)) throw std::logic_error("unknown cast " + std::string(op));
    Value r;
    const LineOut o = def_out(&r, to, hint, here, op.size() + 1 + typed_size(v) + 4 + to->text().size() + 1);
    char *d = copy_to(o.d, op);
    *d++ = ' ';
    d = typed_to(d, v);
    d = copy_to(d, " to ");
    d = copy_to(d, to->text());
    *d++ = '\n';
    o.end_at(d);
    return r;
}

Value IRBuilder::gep(const Type *elem, const Value &base, Operands indices,
                     std::string_view hint, bool inbounds, Here here) {
    size_t rest = 23 + elem->text().size() + 2 + typed_size(base) + 1;
    for (const Value &i : indices) rest += 2 + typed_size(i);
    Value v;
    const LineOut o = def_out(&v, base.type, hint, here, rest);
    char *d = inbounds ? copy_to(o.d, "getelementptr inbounds ") : copy_to(o.d, "getelementptr ");
    d = copy_to(d, elem->text());
    d = copy_to(d, ", ");
    d = typed_to(d, base);
    for (const Value &i : indices) {
        d = copy_to(d, ", ");
        d = typed_to(d, i);
    }
    *d++ = '\n';
    o.end_at(d);
    return v;
}

Value IRBuilder::load(const Type *t, const Value &p, long long align, std::string_view hint, Here here) {
    if (p.type->kind() != Kind::Ptr) throw std::logic_error("load from non-pointer " + p.typed());
    Value v;
    const LineOut o = def_out(&v, t, hint, here, 5 + t->text().size() + 2 + typed_size(p) + 8 + kDecMax + 1);
    char *d = copy_to(o.d, "load ");
    d = copy_to(d, t->text());
    d = copy_to(d, ", ");
    d = typed_to(d, p);
    d = copy_to(d, ", align ");
    d = dec_to(d, align);
    *d++ = '\n';
    o.end_at(d);
    return v;
}

void IRBuilder::store(const Value &v, const Value &p, long long align, Here here) {
    if (p.type->kind() != Kind::Ptr) throw std::logic_error("store to non-pointer " + p.typed());
    const LineOut o = line_out(here, 6 + typed_size(v) + 2 + typed_size(p) + 8 + kDecMax + 1);
    char *d = copy_to(o.d, "store ");
    d = typed_to(d, v);
    d = copy_to(d, ", ");
    d = typed_to(d, p);
    d = copy_to(d, ", align ");
    d = dec_to(d, align);
    *d++ = '\n';
    o.end_at(d);
}

void IRBuilder::fence(const std::string &scope, const std::string &ordering, const std::string &mmra, Here here) {
    TextBuffer &o = line(here);
    o += "fence syncscope(\"";
    o += scope;
    o += "\") ";
    o += ordering;
    if (!mmra.empty()) {
        o += ", !mmra ";
        o += mmra;
    }
    o += '\n';
}

Value IRBuilder::extractelement(const Value &v, const Value &idx, std::string_view hint, Here here) {
    Value r;
    const LineOut o = def_out(&r, v.type->elem(), hint, here, 15 + typed_size(v) + 2 + typed_size(idx) + 1);
    char *d = copy_to(o.d, "extractelement ");
    d = typed_to(d, v);
    d = copy_to(d, ", ");
    d = typed_to(d, idx);
    *d++ = '\n';
    o.end_at(d);
    return r;
}

Value IRBuilder::insertelement(const Value &v, const Value &e, const Value &idx, std::string_view hint, Here here) {
    if (e.type != v.type->elem())
        throw std::logic_error("insertelement: " + e.typed() + " into " + v.type->text());
    Value r;
    const LineOut o = def_out(&r, v.type, hint, here, 14 + typed_three_size(v, e, idx));
    o.end_at(typed_three_to(copy_to(o.d, "insertelement "), v, e, idx));
    return r;
}

Value IRBuilder::shufflevector(const Value &a, const Value &b, const std::vector<int> &mask,
                               std::string_view hint, Here here) {
    same(a, b, "shufflevector");
    const auto n = static_cast<int64_t>(mask.size());
    const Type *mt = vec(n, i32());
    const Type *rt = vec(n, a.type->elem());
    Value v;
    TextBuffer &o = def_line(&v, rt, hint, here);
    o += "shufflevector ";
    put_typed_pair(o, a, b);
    o += ", ";
    o += mt->text();
    o += " <";
    for (size_t i = 0; i < mask.size(); ++i) {
        if (i) o += ", ";
        o += "i32 ";
        o.put_dec(mask[i]);
    }
    o += ">\n";
    return v;
}

Phi &IRBuilder::phi(const Type *t, std::string_view hint, Here here) {
    Value v{t, fn_.fresh_ref(hint)};
    if (!block_) throw std::logic_error("IRBuilder has no insertion block");
    if (block_->terminated()) throw std::logic_error("block " + block_->name() + " is already terminated");
    return block_->add_phi(std::move(v), origins_, here);
}

void IRBuilder::br(const Block &target, Here here) {
    TextBuffer &o = line(here);
    o += "br label %";
    o += target.name();
    o += '\n';
    block_->set_terminated();
}

void IRBuilder::cond_br(const Value &c, const Block &t, const Block &f, Here here) {
    TextBuffer &o = line(here);
    o += "br ";
    put_typed(o, c);
    o += ", label %";
    o += t.name();
    o += ", label %";
    o += f.name();
    o += '\n';
    block_->set_terminated();
}

void IRBuilder::ret_void(Here here) {
    line(here) += "ret void\n";
    block_->set_terminated();
}

IntrinsicRef IRBuilder::check_call(std::string_view key, Operands args,
                                            bool want_void) {
    const IntrinsicRef it = intrinsic_ref(key, module_.flavor().canonical);
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
    module_.use_intrinsic(it.index);
    return it;
}

size_t IRBuilder::call_size(const IntrinsicRef &it, Operands args) {
    size_t n = 5 + it.ret->text().size() + 2 + it.name.size() + 1 + 2;
    for (const Value &a : args) n += 2 + typed_size(a);
    return n;
}

char *IRBuilder::call_to(char *d, const IntrinsicRef &it, Operands args) {
    d = copy_to(d, "call ");
    d = copy_to(d, it.ret->text());
    d = copy_to(d, " @");
    d = copy_to(d, it.name);
    *d++ = '(';
    for (size_t i = 0; i < args.size(); ++i) {
        if (i) d = copy_to(d, ", ");
        d = typed_to(d, args[i]);
    }
    return copy_to(d, ")\n");
}

Value IRBuilder::call(std::string_view key, Operands args, std::string_view hint, Here here) {
    const IntrinsicRef it = check_call(key, args, false);
    Value v;
    const LineOut o = def_out(&v, it.ret, hint, here, call_size(it, args));
    o.end_at(call_to(o.d, it, args));
    return v;
}

void IRBuilder::call_void(std::string_view key, Operands args, Here here) {
    const IntrinsicRef it = check_call(key, args, true);
    const LineOut o = line_out(here, call_size(it, args));
    o.end_at(call_to(o.d, it, args));
}

}  // namespace cpe::ir
