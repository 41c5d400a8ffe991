// Twin of python_engine/policy/split_k_policy.py.
#include "policy/split_k_policy.h"

#include "ir/constants.h"
#include "kernels/int_math.h"
#include "policy/aot.h"
#include "policy/select.h"

namespace cpe::policy::split_k_policy {

const char *const kFamily = "split_k_policy";

namespace {

using kernels::dec128;
using kernels::i128;
using ir::dec;
constexpr int64_t kI32Max = 2147483647;

std::string problem_text(const kernels::conv_problem::ConvProblem &p) {
    return "N=" + dec(p.N) + " C=" + dec(p.C) + " H=" + dec(p.H) + " W=" + dec(p.W) + " K=" + dec(p.K) +
           " Y=" + dec(p.Y) + " X=" + dec(p.X) + " stride_h=" + dec(p.stride_h) + " stride_w=" + dec(p.stride_w) +
           " pad_h=" + dec(p.pad_h) + " pad_w=" + dec(p.pad_w) + " dil_h=" + dec(p.dil_h) +
           " dil_w=" + dec(p.dil_w) + " groups=" + dec(p.groups);
}

Selection decide(const PolicySpec &spec, const targets::Arch &arch, const targets::Flavor &flavor) {
    return select_binary(spec.launch.conv, problem_of(spec.launch), arch, flavor, spec.cus);
}

}  // namespace

const std::vector<kernels::Field> &fields() {
    static const std::vector<kernels::Field> f = [] {
        std::vector<kernels::Field> v = kernels::conv_implicit_gemm::fields();
        for (const char *n : {"N", "C", "H", "W", "K", "Y", "X", "stride_h", "stride_w", "pad_h", "pad_w", "dil_h",
                              "dil_w", "groups", "cus"})
            v.push_back({n, kernels::FieldKind::Int});
        return v;
    }();
    return f;
}

kernels::conv_problem::ConvProblem problem_of(const kernels::conv_launch::LaunchSpec &s) {
    kernels::conv_problem::ConvProblem p{s.N, s.C, s.H, s.W, s.K, s.Y, s.X};
    p.stride_h = s.stride_h;
    p.stride_w = s.stride_w;
    p.pad_h = s.pad_h;
    p.pad_w = s.pad_w;
    p.dil_h = s.dil_h;
    p.dil_w = s.dil_w;
    p.groups = s.groups;
    return p;
}

std::optional<std::string> problem_reason(const kernels::conv_launch::LaunchSpec &s) {
    const std::pair<const char *, int64_t> fs[] = {
        {"N", s.N},         {"C", s.C},         {"H", s.H},         {"W", s.W},         {"K", s.K},
        {"Y", s.Y},         {"X", s.X},         {"stride_h", s.stride_h}, {"stride_w", s.stride_w},
        {"pad_h", s.pad_h}, {"pad_w", s.pad_w}, {"dil_h", s.dil_h}, {"dil_w", s.dil_w}, {"groups", s.groups}};
    for (const auto &f : fs) {
        const std::string n = f.first;
        const int64_t lo = (n == "pad_h" || n == "pad_w") ? 0 : 1;
        if (f.second < lo || f.second > kI32Max)
            return "problem field " + n + " must be in " + dec(lo) + ".." + dec(kI32Max) + ", got " + dec(f.second);
    }
    if (s.C % s.groups || s.K % s.groups)
        return "groups " + dec(s.groups) + " must divide C " + dec(s.C) + " and K " + dec(s.K);
    const i128 fh = i128(s.dil_h) * (s.Y - 1) + 1, fw = i128(s.dil_w) * (s.X - 1) + 1;
    const i128 ph = i128(s.H) + 2 * i128(s.pad_h), pw = i128(s.W) + 2 * i128(s.pad_w);
    if (fh > ph || fw > pw)
        return "the dilated filter " + dec128(fh) + "x" + dec128(fw) + " does not fit the padded input " + dec128(ph) + "x" +
               dec128(pw);
    const i128 Ho = (i128(s.H) + 2 * i128(s.pad_h) - i128(s.dil_h) * (s.Y - 1) - 1) / s.stride_h + 1;
    const i128 Wo = (i128(s.W) + 2 * i128(s.pad_w) - i128(s.dil_w) * (s.X - 1) - 1) / s.stride_w + 1;
    const i128 M = i128(s.N) * Ho * Wo, kpg = s.K / s.groups, cpg = s.C / s.groups, Kg = i128(s.Y) * s.X * cpg;
    const std::pair<const char *, i128> derived[] = {{"Ho", Ho}, {"Wo", Wo}, {"M", M},
                                                     {"kpg", kpg}, {"cpg", cpg}, {"Kgemm", Kg}};
    for (const auto &a : derived)
        if (a.second > kI32Max)
            return std::string("kernel argument ") + a.first + " = " + dec128(a.second) + " exceeds the i32 range (max " +
                   dec(kI32Max) + ")";
    return std::nullopt;
}

std::optional<std::string> validate(const PolicySpec &spec, const targets::Arch &, const targets::Flavor &) {
    if (auto r = problem_reason(spec.launch)) return r;
    if (spec.cus < 0 || spec.cus > kMaxCus)
        return "cus must be 0 (the arch table's count) or 1.." + dec(kMaxCus) + ", got " + dec(spec.cus);
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
    t += "problem " + problem_text(problem_of(spec.launch)) + "\n";
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
    if (sel.reduce_identity) {
        t += "reduce " + sel.reduce_identity->kernel_name() + "\n";
        t += "reduce_identity " + sel.reduce_identity->hash() + " " + sel.reduce_identity->label() + "\n";
        t += "reduce_spec " + aot::reduce_spec_text(*sel.reduce_spec) + "\n";
    } else {
        t += "reduce none\n";
    }
    t += std::string("aot ") + (sel.aot ? "yes" : "no") + "\n";
    return {"split_k_policy_d" + dec(sel.decision.degree) + "_" + sel.binary, t};
}

}  // namespace cpe::policy::split_k_policy
