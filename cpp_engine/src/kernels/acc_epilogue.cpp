// Twin of python_engine/kernels/acc_epilogue.py. Every builder call is a
// statement of its own, so the SSA counter runs in source order.
#include "kernels/acc_epilogue.h"

#include <map>
#include <stdexcept>

#include "ir/constants.h"
#include "ir/values.h"

namespace cpe::kernels::acc_epilogue {

using namespace cpe::ir;

const char *const kNamesText = "identity, bias, scale, relu, clamp, bias_relu or bias_clamp";

const std::vector<std::string> &names() {
    static const std::vector<std::string> n{"identity", "bias", "scale", "relu", "clamp", "bias_relu", "bias_clamp"};
    return n;
}

namespace {
const std::map<std::string, std::vector<std::string>> &step_table() {
    static const std::map<std::string, std::vector<std::string>> t{
        {"identity", {}},         {"bias", {"bias"}},
        {"scale", {"scale"}},     {"relu", {"relu"}},
        {"clamp", {"clamp"}},     {"bias_relu", {"bias", "relu"}},
        {"bias_clamp", {"bias", "clamp"}},
    };
    return t;
}

// Broadcast the fp32 scalar v to `width` lanes (width 1: the scalar).
Value broadcast(IRBuilder &b, const Value &v, int64_t width) {
    if (width == 1) return v;
    const Type *vt = vec(width, float_());
    const Value ins = b.insertelement(zeroinit(vt), v, ci32(0), "bc");
    return b.shufflevector(ins, ins, std::vector<int>(static_cast<size_t>(width), 0), "bcast");
}

Value fconst(double v, int64_t width) {
    const Value e = const_float(float_(), v);
    return width == 1 ? e : splat(vec(width, float_()), e);
}
}  // namespace

bool known(const std::optional<std::string> &kind) { return kind && step_table().count(*kind); }

const std::vector<std::string> &steps(const std::string &kind) {
    const auto it = step_table().find(kind);
    if (it == step_table().end()) throw std::logic_error("acc_epilogue: no accumulator epilogue '" + kind + "'");
    return it->second;
}

bool has(const std::optional<std::string> &kind, const std::string &step) {
    if (!known(kind)) return false;
    for (const std::string &s : steps(*kind))
        if (s == step) return true;
    return false;
}

std::vector<StepArg> args(const std::string &kind) {
    std::vector<StepArg> out;
    for (const std::string &s : steps(kind)) {
        if (s == "bias") {
            out.push_back({"bias_ptr", "in_ptr"});
            out.push_back({"bias_bytes", "i64"});
        } else if (s == "scale") {
            out.push_back({"scale", "f32"});
        } else if (s == "clamp") {
            out.push_back({"clamp_lo", "f32"});
            out.push_back({"clamp_hi", "f32"});
        }
    }
    return out;
}

Value emit(IRBuilder &b, const std::string &kind, const Value &x, int64_t width, const std::function<Value()> &bias,
           const std::function<Value(const char *)> &param) {
    Value y = x;
    for (const std::string &step : steps(kind)) {
        if (step == "bias") {
            const Value bv = bias();
            y = b.fadd(y, bv, "biased");
        } else if (step == "scale") {
            const Value sc = broadcast(b, param("scale"), width);
            y = b.fmul(y, sc, "scaled");
        } else if (step == "relu") {
            const Value neg = b.fcmp("olt", y, fconst(0.0, width), "neg");
            y = b.select(neg, fconst(0.0, width), y, "relu");
        } else {
            const Value lo = broadcast(b, param("clamp_lo"), width);
            const Value hi = broadcast(b, param("clamp_hi"), width);
            const Value below = b.fcmp("olt", y, lo, "below");
            const Value x1 = b.select(below, lo, y, "clamp_l");
            const Value above = b.fcmp("ogt", x1, hi, "above");
            y = b.select(above, hi, x1, "clamp_h");
        }
    }
    return y;
}

}  // namespace cpe::kernels::acc_epilogue
