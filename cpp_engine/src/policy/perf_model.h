// The perf model: a gfx1250 roofline that predicts the time of a forward
// convolution for every admitted candidate (tile x split-K degree x binary)
// and selects the fastest (docs/perf_model.md). Twin of
// python_engine/policy/perf_model.py: same candidates in the same order, same
// integer formula (cycles, bytes, picoseconds; every division rounds up), same
// tie rule (the lowest total_ps; then less L2 traffic, fewer workgroups, the
// earlier candidate). Constants: the arch table's roofline column
// (targets/arch.h, with sources).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/conv_implicit_gemm.h"
#include "kernels/conv_problem.h"
#include "kernels/int_math.h"
#include "targets/arch.h"
#include "targets/flavors.h"

namespace cpe::policy::perf_model {

// Two-stage degrees tried (the reduce kernel's unrolled degrees).
extern const std::vector<int64_t> kDegrees;

// One predicted term: name and value (an integer, or the text of `bound`).
struct Term {
    const char *name = "";   // a string literal (static storage)
    kernels::i128 value = 0;
    std::string text;  // non-empty for `bound`
};

struct Candidate {
    int64_t index = -1;    // candidate order; -1 for the seed's choice
    std::string binary;    // plain | two_stage | cluster
    kernels::conv_implicit_gemm::ConvSpec spec;
    int64_t degree = 1;    // launched slices (S for a cluster binary)
    std::vector<Term> terms;
    std::string rule;      // the rule that admitted it under the reference's rules ("" otherwise)
    kernels::i128 total_ps() const;
    std::string label() const;  // "<binary> <tm>x<tn>x<tk> w<wm>x<wn> d<degree>"
    std::string line() const;   // "c<index> <label> name=value ..."
    void append_line(std::string &s) const;  // line() appended to `s` in place
};

struct ModelSelection {
    int64_t fold = 1;
    kernels::conv_problem::ConvProblem problem{};  // folded
    int64_t cus = 0;
    int64_t tried = 0;                   // candidates listed (admitted or not)
    std::vector<Candidate> candidates;   // admitted, candidate order
    int64_t best = -1, runner_up = -1;   // positions in candidates, -1: none
    std::optional<Candidate> seed;       // the seed policy's choice, evaluated
    std::string seed_note = "-";
    bool rules = false;                  // candidates restricted to the reference's rules
};

// The reference's rules for one candidate (twin: rules_admission): {reason, ""}
// when they do not admit it, else {nullopt, the rule that admits it}. Plain: always;
// two_stage: the split-K policy at the candidate's tile resolves to D >= 2 and
// degree <= D; cluster: cluster_offer_reason holds, S * output tiles <= 8 * cus and
// the policy splits at the cluster tile. `p` is the folded problem.
std::pair<std::optional<std::string>, std::string> rules_admission(
    const std::string &binary, const kernels::conv_implicit_gemm::ConvSpec &spec, int64_t degree,
    const kernels::conv_problem::ConvProblem &p, const targets::Arch &ar, const targets::Flavor &fl, int64_t cus);

// The predicted terms of one launch (docs/perf_model.md).
std::vector<Term> predict(const kernels::conv_implicit_gemm::ConvSpec &spec, const std::string &binary,
                          int64_t degree, const kernels::conv_problem::ConvProblem &p, const targets::Arch &arch,
                          int64_t cus);

// Every admitted candidate, the best, the runner-up and the seed's choice.
// `problem` unfolded; cus <= 0: the arch table's count; rules: only the candidates
// the reference's rules admit (rules_admission).
ModelSelection select_by_model(const kernels::conv_problem::ConvProblem &problem, const targets::Arch &arch,
                               const targets::Flavor &flavor, const kernels::conv_implicit_gemm::ConvSpec &spec,
                               int64_t cus = 0, bool rules = false);

}  // namespace cpe::policy::perf_model
