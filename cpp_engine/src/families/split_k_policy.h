// Twin of python_engine/families/split_k_policy.py.
// Family `split_k_policy`: both engines' split-K decisions as text
// (docs/policy.md), over policy/select.h.
//
// The spec is flat: the 15 conv_implicit_gemm fields (split_k defaults to -1,
// auto), the problem (conv_launch's problem fields, same defaults), then cus
// (0: the arch table's CU count). validate checks the problem (conv_launch's
// problem rules, same texts) and cus; build returns the decision text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/conv_implicit_gemm.h"
#include "kernels/conv_launch.h"
#include "kernels/conv_problem.h"
#include "policy/select.h"
#include "spec/fields.h"
#include "targets/arch.h"
#include "targets/flavors.h"

namespace cpe::families::split_k_policy {

extern const char *const kFamily;  // "split_k_policy"
constexpr int64_t kMaxCus = 65536;
// split_k / split_k_cluster upper bound: an i32 kernel argument (2^31 - 1).
constexpr int64_t kMaxDegreeField = 2147483647;

const std::vector<spec::Field> &fields();

// "N=.. C=.. ... groups=.." of a problem: the `problem` / `folded` lines of this
// family's text and of perf_model's (twin: split_k_policy.py problem_text).
std::string problem_text(const kernels::conv_problem::ConvProblem &p);

// The reduce / reduce_identity / reduce_spec (or "reduce none") and aot lines of a
// Selection, each ending in "\n": the tail of this family's text and of
// perf_model's (twin: split_k_policy.py reduce_and_aot_lines).
std::string reduce_and_aot_text(const policy::Selection &sel);

struct PolicySpec {
    // The binary; split_k defaults to -1 (auto).
    kernels::conv_launch::LaunchSpec launch = [] {
        kernels::conv_launch::LaunchSpec l;
        l.conv.split_k = -1;
        return l;
    }();  // degree is unused
    int64_t cus = 0;
};

std::optional<std::string> validate(const PolicySpec &spec, const targets::Arch &arch, const targets::Flavor &flavor);
std::string kernel_name(const PolicySpec &spec, const targets::Arch &arch, const targets::Flavor &flavor);
std::pair<std::string, std::string> build(const PolicySpec &spec, const targets::Arch &arch,
                                          const targets::Flavor &flavor);

}  // namespace cpe::families::split_k_policy
