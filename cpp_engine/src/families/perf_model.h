// Twin of python_engine/families/perf_model.py.
// Family `perf_model`: the perf model's candidates, predictions and choice as
// text (docs/perf_model.md), over policy/perf_model.h.
//
// The spec is split_k_policy's (PolicySpec: the conv_implicit_gemm fields with
// split_k = -1, the problem, cus), validated by split_k_policy's rules, plus
// rules (0: every admitted candidate; 1: only the candidates the reference's
// rules admit, policy::perf_model::rules_admission; any other value is
// rejected). build
// returns the problem and fold, the roofline constants, one line per admitted
// candidate with its predicted terms (selected and runner-up marked), the
// selection, the seed policy's choice evaluated by the model, then the
// selected binary in split_k_policy's words (with rules = 1 an
// "admitted_by <rule>" line follows the "rule" line).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "families/split_k_policy.h"

namespace cpe::families::perf_model {

extern const char *const kFamily;  // "perf_model"

struct Spec : split_k_policy::PolicySpec {
    int64_t rules = 0;  // 1: only the candidates the reference's rules admit
};

const std::vector<spec::Field> &fields();  // split_k_policy's, then rules
std::optional<std::string> validate(const Spec &spec, const targets::Arch &arch, const targets::Flavor &flavor);
std::string kernel_name(const Spec &spec, const targets::Arch &arch, const targets::Flavor &flavor);
std::pair<std::string, std::string> build(const Spec &spec, const targets::Arch &arch, const targets::Flavor &flavor);

}  // namespace cpe::families::perf_model
