// The split-K degree policy of the forward convolution and its resolver
// (docs/policy.md). Twin of python_engine/policy/split_k.py.
//
// select_split_k_fwd aims at kWgPerCu workgroups per CU. It splits only an
// unsplit grid (M tiles x N tiles x groups) under half of that target, over a
// reduction of at least kMinReduction; the degree is the largest power of two
// that keeps the grid at or under the target, at most kMaxDegree, and leaves
// each slice at least kMinSliceKtiles K tiles; then it is held to the
// gridDim.z budget and to a workspace below 2^31 bytes; anything under 2 is 1.
// The result names the rule that decided it.
//
// resolve_conv_split_k turns a spec's split_k = -1 (auto) into a degree: the
// policy on arches that have the split form (gfx1250), 1 on other arches, on
// pointwise problems and for any spec the split form rejects (or SpecRejected
// with raise_on_reject).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/conv_implicit_gemm.h"
#include "kernels/conv_problem.h"

namespace cpe::policy {

constexpr int64_t kWgPerCu = 8;
constexpr int64_t kMinReduction = 512;
constexpr int64_t kMaxDegree = 32;
constexpr int64_t kMinSliceKtiles = 2;
constexpr int64_t kGridZMax = 65535;
constexpr int64_t kWorkspaceLimit = int64_t(1) << 31;
extern const char *const kDefaultFlavor;  // "llvm23"

// The arches the resolver gives the split form: the arch table's rows with the
// 16x16x32 WMMA the kernels use (targets::has_wmma_16x16x32), in table order;
// the AOT grid's arches (policy/aot.h arches()). Twin of SPLIT_ARCHES.
const std::vector<std::string> &split_arches();

// A resolved degree and the rule that decided it (rule: a stable id; detail:
// the numbers behind it).
struct Decision {
    int64_t degree;
    std::string rule;
    std::string detail;
    std::string text() const;  // "degree <d>\nrule <rule>: <detail>\n"
};

// All arguments >= 1; M, kpg, groups, Kgemm below 2^31 (conv_launch's problem rules).
Decision select_split_k_fwd(int64_t M, int64_t kpg, int64_t groups, int64_t Kgemm, int64_t tile_m, int64_t tile_n,
                            int64_t tile_k, int64_t cus);

// The degree spec.split_k stands for on `problem` (see the header comment and
// python_engine/policy/split_k.py). flavor: nullptr means kDefaultFlavor; cus
// <= 0 means the arch table's count. Throws SpecRejected for a direction other
// than "fwd"; for an explicit cluster request (split_k_cluster > 0, split_k =
// -1) whose split form is rejected (never built plain); with raise_on_reject
// for an arch without the split form or a spec whose split form is rejected;
// with allow_unsplit = false for every auto outcome of degree 1 ("the split-K
// policy does not split (<rule>): <detail>").
// Why the spec's split form (split_k = 2) may not be used, or nullopt:
// conv_implicit_gemm's rules, with the seed's fused-layer rule (the reference
// design resolves a fused layer to 1; the kernels split it) when seed_fused,
// in the place of the kernels' former split-K epilogue rule. Twin of
// split_form_reason in python_engine/policy/split_k.py.
std::optional<std::string> split_form_reason(const kernels::conv_implicit_gemm::ConvSpec &spec,
                                             const targets::Arch &arch, const targets::Flavor &flavor,
                                             bool seed_fused = true);

Decision resolve_conv_split_k(const std::string &direction, const kernels::conv_implicit_gemm::ConvSpec &spec,
                              const kernels::conv_problem::ConvProblem &problem, const targets::Arch &arch,
                              bool raise_on_reject = false, const targets::Flavor *flavor = nullptr,
                              int64_t cus = 0, bool allow_unsplit = true);

}  // namespace cpe::policy
