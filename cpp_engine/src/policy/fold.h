// Width folding (docs/policy.md). Twin of python_engine/policy/fold.py.
//
// Fold f adjacent W positions into the channels when f divides the filter
// width X, the W stride, the input width W and the W padding (and groups == 1,
// dil_w == 1, so the channel index stays the same). With NHWC input and KYXC
// weights the folded problem C' = f*C, W' = W/f, X' = X/f, stride_w' =
// stride_w/f, pad_w' = pad_w/f reads the same bytes at the same offsets, so
// it computes the original output from the same tensors with no copy. f is the
// largest such factor (the gcd). FLOP counts and references stay the original
// problem's.
#pragma once

#include <cstdint>
#include <utility>

#include "kernels/conv_problem.h"

namespace cpe::policy {

// The largest f that may be folded (1: none).
int64_t fold_factor(const kernels::conv_problem::ConvProblem &p);

// (f, folded problem); (1, p) when nothing folds.
std::pair<int64_t, kernels::conv_problem::ConvProblem> fold_width(const kernels::conv_problem::ConvProblem &p);

}  // namespace cpe::policy
