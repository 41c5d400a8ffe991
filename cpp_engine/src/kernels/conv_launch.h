// Twin of python_engine/kernels/conv_launch.py.
// Family `conv_launch`, the kernel side: admission and launch plan of a
// conv_implicit_gemm binary for one problem at one split-K degree
// (docs/conv_launch.md), for a spec whose split_k is explicit. The family
// entry, which first resolves split_k = -1 through the split-K policy, is
// families/conv_launch.h (this layer does not reach policy/).
//
// The spec is one flat record, fields in this order: every
// ImplicitGemmConvSpec field (the binary, conv_implicit_gemm::fields()), then
// the problem (N C H W K Y X stride_h stride_w pad_h pad_w dil_h dil_w groups),
// then degree (the split-K degree this launch asks for).
//
// validate() returns the admission reason (why this binary may not run this
// problem); build() returns the launch plan as text, not an LLVM module: grid,
// block, LDS bytes, cluster shape, workspace bytes, whether Stage 2 runs, and
// every kernel argument value by name in the order of the variant's conv_abi
// list (a missing or extra name is an internal error, std::logic_error).
//
// Slicing rule: ks = ceil(ceil(Kgemm/degree)/tile_k)*tile_k (a multiple of
// tile_k), ks_count = ceil(Kgemm/ks) (<= degree; every slice is non-empty).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/conv_implicit_gemm.h"
#include "kernels/conv_problem.h"
#include "spec/fields.h"
#include "targets/arch.h"
#include "targets/flavors.h"

namespace cpe::kernels::conv_launch {

extern const char *const kFamily;  // "conv_launch"

// The fields in spec order (names and kinds; defaults are LaunchSpec's).
const std::vector<spec::Field> &fields();

struct LaunchSpec {
    conv_implicit_gemm::ConvSpec conv;  // the binary
    // The problem (a 56x56x64 3x3 same-padding layer by default).
    int64_t N = 1, C = 64, H = 56, W = 56, K = 64, Y = 3, X = 3;
    int64_t stride_h = 1, stride_w = 1, pad_h = 1, pad_w = 1, dil_h = 1, dil_w = 1, groups = 1;
    int64_t degree = 1;  // the split-K degree of this launch
};

// The problem rules (field ranges, groups, filter fit, i32 problem block): the
// reason, or nullopt. Part of validate; split_k_policy checks its problem with it.
std::optional<std::string> problem_reason(const LaunchSpec &spec);

// The problem of a spec.
conv_problem::ConvProblem problem_of(const LaunchSpec &spec);

// The admission reason of a resolved spec (split_k != -1; a spec still at -1
// gets conv_implicit_gemm's "must be resolved" reason), or nullopt. Order: the
// binary (conv_implicit_gemm's rules), degree, problem fields, groups, filter
// fit, i32 problem block, vector widths, 4-wide stores, cluster slice count,
// byte counts, grid, i32 slicing arguments. families::conv_launch::validate
// resolves split_k = -1 first, then calls this.
std::optional<std::string> validate(const LaunchSpec &spec, const targets::Arch &arch,
                                    const targets::Flavor &flavor);

// The rules of validate after the binary's own (conv_implicit_gemm's), in the
// same order: for a caller that has just run conv_implicit_gemm::validate on
// the same binary fields (policy/perf_model.cpp), so they do not run twice.
// `problem`: problem_reason(spec) when the caller has it (one problem, many
// candidate specs); nullptr: computed here. Twin of conv_launch.py launch_reason.
std::optional<std::string> launch_reason(const LaunchSpec &spec, const std::optional<std::string> *problem = nullptr);

// The name of the forward kernel the plan launches (of an admitted, resolved spec).
std::string kernel_name(const LaunchSpec &spec);

// One kernel argument of a plan: its ABI name and value text (decimal, or
// "buffer <tensor>", "unused", "caller"; docs/conv_launch.md).
struct PlanArg {
    std::string name;
    std::string value;
};

// The launch plan of an admitted spec, the values the text prints (twin of
// parity/runtime/plan.py's LaunchPlan, which reads them back from the
// text). Every count is below 2^31 once admitted.
struct Plan {
    std::string kernel;    // the forward kernel's symbol name
    std::string variant;   // conv_abi variant: plain, two_stage, cluster
    int64_t degree = 1, ks = 0, ks_count = 0;
    int64_t data_slices = 0;          // slices that carry data (<= ks_count; printed for cluster binaries)
    int64_t grid[3] = {1, 1, 1};      // workgroups per dimension
    int64_t block[3] = {1, 1, 1};     // work-items per workgroup
    int64_t lds_bytes = 0;
    int64_t cluster_slices = 0;       // S of a cluster binary (cluster 1 1 S), 0: none
    int64_t workspace_bytes = 0;
    bool needs_stage2 = false;
    std::vector<PlanArg> args;         // the forward kernel's, ABI order
    std::vector<PlanArg> stage2_args;  // the reduce kernel's (needs_stage2 only)
    std::string acc_epilogue = "identity";  // the reduce kernel's epilogue (Stage 2 applies it)
};

// The plan of an admitted, resolved spec (call validate first).
Plan plan(const LaunchSpec &spec, const targets::Arch &arch, const targets::Flavor &flavor);

// The launch plan text of a plan (docs/conv_launch.md "Launch plan text").
std::string plan_text(const Plan &plan);

// (kernel name, launch plan text) of an admitted, resolved spec.
std::pair<std::string, std::string> build(const LaunchSpec &spec, const targets::Arch &arch,
                                          const targets::Flavor &flavor);

}  // namespace cpe::kernels::conv_launch
