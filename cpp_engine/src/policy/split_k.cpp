// Twin of python_engine/policy/split_k.py. Products run in 128-bit integers:
// the problem is held below 2^31 per extent by the callers (conv_launch's
// problem rules), so no product here overflows.
#include "policy/split_k.h"

#include "ir/constants.h"
#include "kernels/int_math.h"

namespace cpe::policy {

const char *const kDefaultFlavor = "llvm23";

const std::vector<std::string> &split_arches() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> out;
        for (const targets::Arch &a : targets::arches())
            if (targets::has_wmma_16x16x32(a)) out.push_back(a.name);
        return out;
    }();
    return names;
}

namespace {

using kernels::ceil_div;
using kernels::dec128;
using kernels::i128;
using ir::dec;

}  // namespace

std::string Decision::text() const { return "degree " + dec(degree) + "\nrule " + rule + ": " + detail + "\n"; }

Decision select_split_k_fwd(int64_t M, int64_t kpg, int64_t groups, int64_t Kgemm, int64_t tile_m, int64_t tile_n,
                            int64_t tile_k, int64_t cus) {
    const i128 target = i128(kWgPerCu) * cus;
    const std::string tgt =
        "the target " + dec128(target) + " (" + dec(kWgPerCu) + " per CU x " + dec(cus) + " CUs)";
    const int64_t mt = ceil_div(M, tile_m), nt = ceil_div(kpg, tile_n);
    const i128 unsplit = i128(mt) * nt * groups;
    if (2 * unsplit >= target)
        return {1, "grid",
                "unsplit grid " + dec(mt) + "x" + dec(nt) + "x" + dec(groups) + " = " + dec128(unsplit) +
                    " workgroups is not under half of " + tgt};
    if (Kgemm < kMinReduction)
        return {1, "reduction", "reduction Kgemm " + dec(Kgemm) + " is below " + dec(kMinReduction)};
    const int64_t ktiles = ceil_div(Kgemm, tile_k);
    int64_t p = 1;
    std::string rule, detail;
    while (true) {
        const int64_t q = 2 * p;
        if (q > kMaxDegree) {
            rule = "cap";
            detail = "degree " + dec(p) + " is the largest allowed (" + dec(kMaxDegree) + ")";
            break;
        }
        if (unsplit * q > target) {
            rule = "target";
            detail = "degree " + dec(q) + " would make the grid " + dec128(unsplit * q) + " workgroups (unsplit " +
                     dec128(unsplit) + "), over " + tgt;
            break;
        }
        if (ktiles < kMinSliceKtiles * q) {
            rule = "slice";
            detail = "degree " + dec(q) + " would leave slices under " + dec(kMinSliceKtiles) + " K tiles (Kgemm " +
                     dec(Kgemm) + " is " + dec(ktiles) + " K tiles of " + dec(tile_k) + ")";
            break;
        }
        p = q;
    }
    while (p > 1 && i128(groups) * p > kGridZMax) {
        rule = "grid_z";
        detail = "groups " + dec(groups) + " x degree " + dec(p) + " exceeds the gridDim.z budget " + dec(kGridZMax);
        p /= 2;
    }
    const i128 K = i128(kpg) * groups;
    while (p > 1 && i128(p) * M * K * 4 >= kWorkspaceLimit) {
        rule = "workspace";
        detail = "degree " + dec(p) + " needs a workspace of " + dec128(i128(p) * M * K * 4) + " bytes (degree x M " +
                 dec(M) + " x K " + dec128(K) + " x 4), not below 2^31";
        p /= 2;
    }
    if (p < 2) return {1, rule, detail + "; a degree under 2 is 1"};
    return {p, rule, detail};
}

std::optional<std::string> split_form_reason(const kernels::conv_implicit_gemm::ConvSpec &spec,
                                             const targets::Arch &arch, const targets::Flavor &flavor,
                                             bool seed_fused) {
    kernels::conv_implicit_gemm::ConvSpec split = spec;
    split.split_k = 2;
    if (seed_fused && (!spec.acc_epilogue || *spec.acc_epilogue != "identity")) {
        kernels::conv_implicit_gemm::ConvSpec early = split;
        early.split_k_cluster = 0;
        early.name_prefix = std::string();
        const auto r = kernels::conv_implicit_gemm::validate(early, arch, flavor);
        if (r) return r;
        return "split-K needs the identity accumulator epilogue (it applies per slice), got " +
               spec::show(spec.acc_epilogue);
    }
    return kernels::conv_implicit_gemm::validate(split, arch, flavor);
}

namespace {

Decision resolve(const std::string &direction, const kernels::conv_implicit_gemm::ConvSpec &spec,
                 const kernels::conv_problem::ConvProblem &problem, const targets::Arch &arch, bool raise_on_reject,
                 const targets::Flavor *flavor, int64_t cus) {
    if (direction != "fwd")
        throw spec::SpecRejected("direction '" + direction + "' has no split-K policy (only fwd)");
    const int64_t sk = spec.split_k;
    if (sk != -1) return {sk, "given", "split_k " + dec(sk) + " is given by the spec"};
    if (!targets::has_wmma_16x16x32(arch)) {
        const std::string reason = "arch " + arch.name + " has no split-K form (requires gfx1250)";
        if (raise_on_reject) throw spec::SpecRejected(reason);
        return {1, "arch", reason};
    }
    const targets::Flavor *fl = flavor ? flavor : targets::find_flavor(kDefaultFlavor);
    const auto reason = split_form_reason(spec, arch, *fl);
    // an explicit cluster request is never built plain
    if (reason && spec.split_k_cluster > 0) throw spec::SpecRejected(*reason);
    if (problem.Y == 1 && problem.X == 1) return {1, "pointwise", "a pointwise (1x1) problem is not split"};
    if (reason) {
        if (raise_on_reject) throw spec::SpecRejected(*reason);
        return {1, "rejected", "the split form is rejected: " + *reason};
    }
    const int64_t s = spec.split_k_cluster;
    if (s) return {s, "cluster", "split_k_cluster " + dec(s) + " fixes the degree"};
    const int64_t n = cus > 0 ? cus : arch.cus;
    return select_split_k_fwd(problem.M(), problem.kpg(), problem.groups, problem.Kgemm(), spec.tile_m, spec.tile_n,
                              spec.tile_k, n);
}

}  // namespace

Decision resolve_conv_split_k(const std::string &direction, const kernels::conv_implicit_gemm::ConvSpec &spec,
                              const kernels::conv_problem::ConvProblem &problem, const targets::Arch &arch,
                              bool raise_on_reject, const targets::Flavor *flavor, int64_t cus, bool allow_unsplit) {
    const Decision d = resolve(direction, spec, problem, arch, raise_on_reject, flavor, cus);
    if (!allow_unsplit && spec.split_k == -1 && d.degree == 1)
        throw spec::SpecRejected("the split-K policy does not split (" + d.rule + "): " + d.detail);
    return d;
}

}  // namespace cpe::policy
