// Binary selection for one forward problem (docs/policy.md). Twin of
// python_engine/policy/select.py: fold the width, resolve the degree on the
// folded problem, then the plain binary (degree 1), a cluster binary (asked
// for by the spec, or offered for split_k = -1: clusters at this flavor and
// arch, the spec's tile has a cluster binary, fewer than kClusterMaxTiles
// output tiles, Kgemm >= kClusterMinReduction, K and kpg % 4 == 0 (cluster_offer_reason); among the S whose
// grid fits the target, whose slices keep 2 K tiles on average and whose
// launch is admitted (trailing empty slices allowed), the shortest slice ks,
// then the smallest S), else the two-stage binary at the resolved degree plus the reduce
// kernel for its ks_count at the vector aot::reduce_vector(K). aot_note names the AOT
// job hashes, or the first grid axis a binary leaves (aot::conv_miss_reason, ...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kernels/conv_launch.h"
#include "policy/identity.h"
#include "policy/split_k.h"

namespace cpe::policy {

constexpr int64_t kClusterMaxTiles = 256;
constexpr int64_t kClusterMinReduction = 1500;
constexpr int64_t kClusterKMultiple = 4;

struct Selection {
    int64_t fold = 1;
    kernels::conv_problem::ConvProblem problem{};  // folded
    Decision decision;
    std::string binary;   // plain | two_stage | cluster | none
    std::string cluster;  // why a cluster binary was or was not chosen
    bool has_spec = false;
    kernels::conv_implicit_gemm::ConvSpec spec;
    int64_t degree = 1;
    std::optional<std::string> admission;  // conv_launch's reason
    std::optional<KernelIdentity> identity;
    std::optional<kernels::conv_fwd_split_k_reduce::ReduceSpec> reduce_spec;
    std::optional<KernelIdentity> reduce_identity;
    bool aot = false;
    std::string aot_note;  // the job hashes (aot) or why no AOT job serves the problem
};

// Why the cluster offer rule does not offer a cluster binary of tile tm x tn to
// the (folded) problem p ("not offered: ..."), or nullopt when it does: clusters
// at this flavor and arch, a cluster tile, fewer than kClusterMaxTiles output
// tiles, Kgemm >= kClusterMinReduction, K and kpg multiples of kClusterKMultiple.
std::optional<std::string> cluster_offer_reason(int64_t tm, int64_t tn, const kernels::conv_problem::ConvProblem &p,
                                                const targets::Arch &ar, const targets::Flavor &fl);

kernels::conv_launch::LaunchSpec launch_spec(const kernels::conv_implicit_gemm::ConvSpec &spec,
                                             const kernels::conv_problem::ConvProblem &p, int64_t degree);

// cus <= 0: the arch table's count.
Selection select_binary(const kernels::conv_implicit_gemm::ConvSpec &spec,
                        const kernels::conv_problem::ConvProblem &problem, const targets::Arch &arch,
                        const targets::Flavor &flavor, int64_t cus = 0);

}  // namespace cpe::policy
