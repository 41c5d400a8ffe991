// Twin of python_engine/kernels/conv_abi.py.
#include "kernels/conv_abi.h"

#include <stdexcept>

#include "ir/constants.h"
#include "kernels/common.h"
#include "kernels/conv_fwd_split_k_reduce.h"
#include "kernels/conv_problem.h"

namespace cpe::kernels::conv_abi {

namespace {

const std::vector<Arg> &head() {
    static const std::vector<Arg> h{
        {"x_ptr", "in_ptr"}, {"x_bytes", "i64"}, {"w_ptr", "in_ptr"}, {"w_bytes", "i64"},
        {"d_ptr", "out_ptr"}, {"d_bytes", "i64"},
        {"bias_ptr", "in_ptr"},                       // fp32[K], read by acc_epilogue 'bias' only
        {"scale", "f32"},                             // acc_epilogue 'scale'
        {"clamp_lo", "f32"}, {"clamp_hi", "f32"},     // acc_epilogue 'clamp'
    };
    return h;
}

std::vector<Arg> forward(bool tail, bool cluster) {
    std::vector<Arg> out = head();
    for (const char *n : conv_problem::problem_args()) out.push_back({n, "i32"});
    if (tail) {
        out.push_back({"ws_ptr", cluster ? "inout_ptr" : "out_ptr"});
        out.push_back({"ws_bytes", "i64"});
        out.push_back({"ks", "i32"});
        out.push_back({"ks_count", "i32"});
    }
    return out;
}

ir::Param make(const Arg &a) {
    if (a.kind == "in_ptr") return in_ptr(a.name);
    if (a.kind == "out_ptr") return out_ptr(a.name);
    if (a.kind == "inout_ptr") return inout_ptr(a.name);
    if (a.kind == "i64") return scalar(a.name, ir::i64());
    if (a.kind == "i32") return scalar(a.name, ir::i32());
    if (a.kind == "f32") return scalar(a.name, ir::float_());
    throw std::logic_error("unknown conv ABI argument kind " + a.kind);
}

}  // namespace

const std::vector<std::string> &variants() {
    static const std::vector<std::string> v{"plain", "two_stage", "cluster", "reduce"};
    return v;
}

std::vector<Arg> args(const std::string &variant, const std::string &acc_epilogue) {
    if (variant == "plain") return forward(false, false);
    if (variant == "two_stage") return forward(true, false);
    if (variant == "cluster") return forward(true, true);
    if (variant == "reduce") {
        std::vector<Arg> out;
        for (const auto &a : conv_fwd_split_k_reduce::args(acc_epilogue)) out.push_back({a.name, a.kind});
        return out;
    }
    throw std::invalid_argument("unknown conv ABI variant " + variant);
}

std::vector<ir::Param> params(const std::string &variant, const std::string &acc_epilogue) {
    std::vector<ir::Param> ps;
    for (const Arg &a : args(variant, acc_epilogue)) ps.push_back(make(a));
    return ps;
}

std::string variant_of(int64_t split_k, int64_t split_k_cluster) {
    if (split_k_cluster) return "cluster";
    return split_k > 1 ? "two_stage" : "plain";
}

std::string text(const std::string &variant, const targets::Flavor &flavor, const std::string &acc_epilogue) {
    std::string out = "conv_abi " + variant;
    if (acc_epilogue != "identity") out += " acc_epilogue=" + acc_epilogue;
    out += "\n";
    const std::vector<ir::Param> ps = params(variant, acc_epilogue);
    for (size_t i = 0; i < ps.size(); ++i) {
        std::string attrs;
        for (const std::string &a : ps[i].attrs) {
            if (!attrs.empty()) attrs += " ";
            attrs += a == "capture" ? flavor.capture_attr : a;
        }
        out += ir::dec(static_cast<int64_t>(i)) + " " + ps[i].name + ": " + ps[i].type->text();
        if (!attrs.empty()) out += " " + attrs;
        out += "\n";
    }
    return out;
}

std::vector<std::string> param_names(const std::string &variant, const std::string &acc_epilogue) {
    std::vector<std::string> out;
    for (const Arg &a : args(variant, acc_epilogue)) out.push_back(a.name);
    return out;
}

}  // namespace cpe::kernels::conv_abi
