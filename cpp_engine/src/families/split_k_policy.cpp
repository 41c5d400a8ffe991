// Twin of python_engine/families/split_k_policy.py.
#include "families/split_k_policy.h"

#include "ir/constants.h"
#include "policy/aot.h"
#include "policy/select.h"

namespace cpe::families::split_k_policy {

const char *const kFamily = "split_k_policy";

namespace {

using ir::dec;
using policy::Selection;
using policy::select_binary;
namespace aot = policy::aot;

Selection decide(const PolicySpec &spec, const targets::Arch &arch, const targets::Flavor &flavor) {
    return select_binary(spec.launch.conv, kernels::conv_launch::problem_of(spec.launch), arch, flavor, spec.cus);
}

}  // namespace

std::string problem_text(const kernels::conv_problem::ConvProblem &p) {
    return "N=" + dec(p.N) + " C=" + dec(p.C) + " H=" + dec(p.H) + " W=" + dec(p.W) + " K=" + dec(p.K) +
           " Y=" + dec(p.Y) + " X=" + dec(p.X) + " stride_h=" + dec(p.stride_h) + " stride_w=" + dec(p.stride_w) +
           " pad_h=" + dec(p.pad_h) + " pad_w=" + dec(p.pad_w) + " dil_h=" + dec(p.dil_h) +
           " dil_w=" + dec(p.dil_w) + " groups=" + dec(p.groups);
}

std::string reduce_and_aot_text(const policy::Selection &sel) {
    std::string t;
    if (sel.reduce_identity) {
        t += "reduce " + sel.reduce_identity->kernel_name() + "\n";
        t += "reduce_identity " + sel.reduce_identity->hash() + " " + sel.reduce_identity->label() + "\n";
        t += "reduce_spec " + aot::reduce_spec_text(*sel.reduce_spec) + "\n";
    } else {
        t += "reduce none\n";
    }
    t += std::string("aot ") + (sel.aot ? "yes" : "no") + ": " + sel.aot_note + "\n";
    return t;
}

const std::vector<spec::Field> &fields() {
    static const std::vector<spec::Field> f = [] {
        std::vector<spec::Field> v = kernels::conv_implicit_gemm::fields();
        for (const char *n : {"N", "C", "H", "W", "K", "Y", "X", "stride_h", "stride_w", "pad_h", "pad_w", "dil_h",
                              "dil_w", "groups", "cus"})
            v.push_back({n, spec::FieldKind::Int});
        return v;
    }();
    return f;
}

std::optional<std::string> validate(const PolicySpec &spec, const targets::Arch &, const targets::Flavor &) {
    if (auto r = kernels::conv_launch::problem_reason(spec.launch)) return r;
    if (spec.cus < 0 || spec.cus > kMaxCus)
        return "cus must be 0 (the arch table's count) or 1.." + dec(kMaxCus) + ", got " + dec(spec.cus);
    // The degree fields are bounded before any arithmetic uses them (issue 14).
    const int64_t sk = spec.launch.conv.split_k, skc = spec.launch.conv.split_k_cluster;
    if (!(sk >= -1 && sk <= kMaxDegreeField))
        return "split_k must be in -1.." + dec(kMaxDegreeField) + " (-1: auto), got " + dec(sk);
    if (!(skc >= 0 && skc <= kMaxDegreeField))
        return "split_k_cluster must be 0.." + dec(kMaxDegreeField) + ", got " + dec(skc);
    return std::nullopt;
}

std::string kernel_name(const PolicySpec &spec, const targets::Arch &arch, const targets::Flavor &flavor) {
    const Selection sel = decide(spec, arch, flavor);
    return "split_k_policy_d" + dec(sel.decision.degree) + "_" + sel.binary;
}

std::pair<std::string, std::string> build(const PolicySpec &spec, const targets::Arch &arch,
                                          const targets::Flavor &flavor) {
    const Selection sel = decide(spec, arch, flavor);
    const kernels::conv_problem::ConvProblem &p = sel.problem;
    const int64_t cus = spec.cus ? spec.cus : arch.cus;
    std::string t = "split_k_policy " + arch.name + " " + flavor.canonical + "\n";
    t += "problem " + problem_text(kernels::conv_launch::problem_of(spec.launch)) + "\n";
    t += "fold " + dec(sel.fold) + "\n";
    if (sel.fold > 1) t += "folded " + problem_text(p) + "\n";
    t += "gemm M=" + dec(p.M()) + " kpg=" + dec(p.kpg()) + " groups=" + dec(p.groups) + " Kgemm=" + dec(p.Kgemm()) +
         "\n";
    t += "cus " + dec(cus) + "\n";
    t += "degree " + dec(sel.decision.degree) + "\n";
    t += "rule " + sel.decision.rule + ": " + sel.decision.detail + "\n";
    t += "binary " + sel.binary + "\n";
    t += "cluster " + sel.cluster + "\n";
    t += "launch_degree " + dec(sel.degree) + "\n";
    t += "admission " + (sel.admission ? *sel.admission : std::string("ok")) + "\n";
    if (sel.identity) {
        t += "kernel " + sel.identity->kernel_name() + "\n";
        t += "identity " + sel.identity->hash() + " " + sel.identity->label() + "\n";
        t += "spec " + aot::conv_spec_text(sel.spec) + "\n";
    } else {
        t += "kernel none\n";
    }
    t += reduce_and_aot_text(sel);
    return {"split_k_policy_d" + dec(sel.decision.degree) + "_" + sel.binary, t};
}

}  // namespace cpe::families::split_k_policy
