// Twin of python_engine/policy/select.py.
#include "policy/select.h"

#include <algorithm>

#include "ir/constants.h"
#include "kernels/int_math.h"
#include "policy/aot.h"
#include "policy/fold.h"

namespace cpe::policy {

namespace {

using kernels::ceil_div;
using kernels::i128;
using ir::dec;
namespace CIG = kernels::conv_implicit_gemm;

// True when `name` is an arch of the AOT grid (aot::arches()).
bool is_aot_arch(const std::string &name) {
    const std::vector<std::string> &a = aot::arches();
    return std::find(a.begin(), a.end(), name) != a.end();
}

// (cluster spec or nullopt, note)
std::pair<std::optional<CIG::ConvSpec>, std::string> cluster(const CIG::ConvSpec &spec,
                                                              const kernels::conv_problem::ConvProblem &p,
                                                              const targets::Arch &ar, const targets::Flavor &fl,
                                                              int64_t cus) {
    const int64_t tm = spec.tile_m, tn = spec.tile_n;
    const i128 tiles = i128(ceil_div(p.M(), tm)) * ceil_div(p.kpg(), tn) * p.groups;
    if (auto why = cluster_offer_reason(tm, tn, p, ar, fl)) return {std::nullopt, *why};
    const int64_t target = kWgPerCu * cus;
    const int64_t tk = aot::kClusterTileK;
    const int64_t ktiles = ceil_div(p.Kgemm(), tk);
    // The shortest slice ks, then the smallest S (trailing empty slices admitted).
    std::optional<CIG::ConvSpec> best;
    int64_t best_ks = 0, best_s = 0;
    for (const int64_t s : aot::kClusterSizes) {  // ascending
        if (tiles * s > target || ktiles < kMinSliceKtiles * s) continue;
        const CIG::ConvSpec cs = aot::conv_spec(*spec.dtype, tm, tn, tk, "cshuffle", 2, s);
        const int64_t ks = ceil_div(ceil_div(p.Kgemm(), s), tk) * tk;
        if (!kernels::conv_launch::validate(launch_spec(cs, p, s), ar, fl) && (!best || ks < best_ks)) {
            best = cs;
            best_ks = ks;
            best_s = s;
        }
    }
    if (!best) return {std::nullopt, "offered, but no cluster size fits the target, the slices and admission"};
    return {best, "S " + dec(best_s) + ": " + dec(static_cast<int64_t>(tiles)) + " output tiles x " + dec(best_s) +
                      " <= the target " + dec(target) + ", ks " + dec(best_ks) + " (" +
                      dec(ceil_div(p.Kgemm(), best_ks)) + " of " + dec(best_s) + " slices carry data)"};
}

}  // namespace

std::optional<std::string> cluster_offer_reason(int64_t tm, int64_t tn, const kernels::conv_problem::ConvProblem &p,
                                                const targets::Arch &ar, const targets::Flavor &fl) {
    const i128 tiles = i128(ceil_div(p.M(), tm)) * ceil_div(p.kpg(), tn) * p.groups;
    if (!(fl.clusters && ar.clusters))
        return "not offered: flavor " + fl.canonical + " / arch " + ar.name + " has no workgroup clusters";
    if (std::find(aot::kClusterTiles.begin(), aot::kClusterTiles.end(), std::make_pair(tm, tn)) ==
        aot::kClusterTiles.end())
        return "not offered: tile " + dec(tm) + "x" + dec(tn) + " has no cluster binary";
    if (tiles >= kClusterMaxTiles)
        return "not offered: " + dec(static_cast<int64_t>(tiles)) + " output tiles (needs fewer than " +
               dec(kClusterMaxTiles) + ")";
    if (p.Kgemm() < kClusterMinReduction)
        return "not offered: reduction Kgemm " + dec(p.Kgemm()) + " (needs at least " + dec(kClusterMinReduction) +
               ")";
    if (p.K % kClusterKMultiple) return "not offered: K " + dec(p.K) + " is not a multiple of " + dec(kClusterKMultiple);
    if (p.kpg() % kClusterKMultiple)
        return "not offered: kpg " + dec(p.kpg()) + " is not a multiple of " + dec(kClusterKMultiple);
    return std::nullopt;
}

kernels::conv_launch::LaunchSpec launch_spec(const CIG::ConvSpec &spec, const kernels::conv_problem::ConvProblem &p,
                                             int64_t degree) {
    kernels::conv_launch::LaunchSpec l;
    l.conv = spec;
    l.N = p.N;
    l.C = p.C;
    l.H = p.H;
    l.W = p.W;
    l.K = p.K;
    l.Y = p.Y;
    l.X = p.X;
    l.stride_h = p.stride_h;
    l.stride_w = p.stride_w;
    l.pad_h = p.pad_h;
    l.pad_w = p.pad_w;
    l.dil_h = p.dil_h;
    l.dil_w = p.dil_w;
    l.groups = p.groups;
    l.degree = degree;
    return l;
}

namespace {

// The binary for a decision of degree `d` (select_binary): the spec's own split-K
// request, else plain (d <= 1), else the cluster binary when the spec asks for one or
// cluster() finds a size, else two-stage. Sets sel.binary, sel.degree and sel.cluster;
// returns the binary's spec.
CIG::ConvSpec choose_binary(const CIG::ConvSpec &spec, const kernels::conv_problem::ConvProblem &p,
                            const targets::Arch &ar, const targets::Flavor &fl, int64_t n_cus, int64_t d,
                            Selection &sel) {
    CIG::ConvSpec b = spec;
    if (spec.split_k != -1) {
        sel.binary = spec.split_k_cluster ? "cluster" : spec.split_k > 1 ? "two_stage" : "plain";
        sel.degree = spec.split_k_cluster ? spec.split_k_cluster : spec.split_k;
        if (sel.binary == "cluster") sel.cluster = "given by the spec";
    } else if (d <= 1) {
        b.split_k = 1;
        b.split_k_cluster = 0;
        sel.binary = "plain";
        sel.degree = 1;
    } else if (spec.split_k_cluster) {
        b.split_k = d;
        sel.binary = "cluster";
        sel.degree = d;
        sel.cluster = "given by the spec";
    } else {
        auto c = cluster(spec, p, ar, fl, n_cus);
        sel.cluster = c.second;
        if (c.first) {
            b = *c.first;
            sel.binary = "cluster";
            sel.degree = b.split_k_cluster;
        } else {
            b.split_k = d;
            sel.binary = "two_stage";
            sel.degree = d;
        }
    }
    return b;
}

// The AOT side of a selection whose binary has spec `b` (select_binary): the Stage-2
// reduce of an admitted two-stage binary, and whether every kernel is an AOT job
// (sel.aot; sel.aot_note: the hashes, or why not).
void aot_side(const CIG::ConvSpec &b, const kernels::conv_problem::ConvProblem &p, const targets::Arch &ar,
              const targets::Flavor &fl, Selection &sel) {
    if (sel.binary == "two_stage" && !sel.admission) {
        const int64_t ks = ceil_div(ceil_div(p.Kgemm(), sel.degree), b.tile_k) * b.tile_k;
        const int64_t kc = ceil_div(p.Kgemm(), ks);
        const bool unrolled =
            std::find(aot::kReduceDegrees.begin(), aot::kReduceDegrees.end(), kc) != aot::kReduceDegrees.end();
        sel.reduce_spec = aot::reduce_spec(*b.dtype, unrolled ? kc : 0, aot::reduce_vector(p.K), *b.acc_epilogue);
        sel.reduce_identity = KernelIdentity::of_reduce(*sel.reduce_spec, ar.name, fl.canonical);
    }
    sel.aot = sel.identity && is_aot_arch(ar.name) && aot::is_job(fl, *sel.identity) &&
              (!sel.reduce_identity || aot::is_job(fl, *sel.reduce_identity));
    if (sel.aot) {
        sel.aot_note = sel.identity->hash();
        if (sel.reduce_identity) sel.aot_note += " " + sel.reduce_identity->hash();
    } else if (!is_aot_arch(ar.name)) {
        sel.aot_note = "arch " + ar.name + " has no AOT grid (" + aot::arches_text() + " only)";
    } else if (!sel.identity) {
        sel.aot_note = "the binary is rejected";
    } else {
        std::optional<std::string> why = aot::conv_miss_reason(b, fl);
        if (!why && sel.reduce_spec) why = aot::reduce_miss_reason(*sel.reduce_spec);
        sel.aot_note = why ? *why : std::string("not in the grid");
    }
}

}  // namespace

Selection select_binary(const CIG::ConvSpec &spec, const kernels::conv_problem::ConvProblem &problem,
                        const targets::Arch &ar, const targets::Flavor &fl, int64_t cus) {
    const int64_t n_cus = cus > 0 ? cus : ar.cus;
    Selection sel;
    const auto folded = fold_width(problem);
    sel.fold = folded.first;
    sel.problem = folded.second;
    const kernels::conv_problem::ConvProblem &p = sel.problem;
    sel.cluster = "-";
    try {
        sel.decision = resolve_conv_split_k("fwd", spec, p, ar, false, &fl, n_cus);
    } catch (const spec::SpecRejected &e) {  // an explicit cluster request this flavor/arch cannot build
        sel.decision = {1, "rejected", std::string("the cluster request is rejected: ") + e.what()};
        sel.binary = "none";
        sel.degree = 1;
        sel.admission = std::string(e.what());
        sel.aot_note = "the binary is rejected";
        return sel;
    }
    const int64_t d = sel.decision.degree;
    if (!targets::has_wmma_16x16x32(ar)) {
        CIG::ConvSpec plain = spec;
        plain.split_k = 1;
        plain.split_k_cluster = 0;
        sel.binary = "none";
        sel.degree = 1;
        sel.admission = CIG::validate(plain, ar, fl);
        sel.aot_note = "arch " + ar.name + " has no AOT grid (" + aot::arches_text() + " only)";
        return sel;
    }
    const CIG::ConvSpec b = choose_binary(spec, p, ar, fl, n_cus, d, sel);
    sel.has_spec = true;
    sel.spec = b;
    sel.admission = kernels::conv_launch::validate(launch_spec(b, p, sel.degree), ar, fl);
    if (!CIG::validate(b, ar, fl)) sel.identity = KernelIdentity::of_conv(b, ar.name, fl.canonical);
    aot_side(b, p, ar, fl, sel);
    return sel;
}

}  // namespace cpe::policy
