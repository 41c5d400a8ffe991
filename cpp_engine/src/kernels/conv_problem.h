// The forward 2-D convolution problem (DESIGN §4): extents, derived sizes and
// the problem block of kernel argument values.
// Twin of python_engine/kernels/conv_problem.py.
//
// Layouts: input NHWC, weights KYXC (per group [kpg][Y][X][cpg]), output NHWK,
// G groups packed in the channel dimension (C = G*cpg, K = G*kpg). Per group
// the implicit GEMM is M = N*Ho*Wo output pixels by kpg output channels over
// Kgemm = Y*X*cpg (c fastest, then x, then y).
//
// The kernels are generic in every extent: they read the problem block as
// kernel arguments, so one binary serves every problem its launch admits.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cpe::kernels::conv_problem {

// The problem block of the forward kernel ABI, in argument order: the given
// extents first, then the derived ones (the kernel never divides to derive
// them). Every entry is an i32 kernel argument:
// N C H W K Y X stride_h stride_w pad_h pad_w dil_h dil_w groups Ho Wo M kpg cpg Kgemm.
const std::vector<const char *> &problem_args();

// A forward 2-D convolution. Extents in elements/pixels; `groups` divides both
// C and K. Derived sizes use floor division (rounding toward negative infinity).
struct ConvProblem {
    int64_t N, C, H, W, K, Y, X;
    int64_t stride_h = 1, stride_w = 1;
    int64_t pad_h = 0, pad_w = 0;
    int64_t dil_h = 1, dil_w = 1;
    int64_t groups = 1;

    // Output height/width: (H + 2*pad - dil*(Y-1) - 1) / stride + 1.
    int64_t Ho() const;
    int64_t Wo() const;
    int64_t M() const { return N * Ho() * Wo(); }      // output pixels
    int64_t kpg() const { return fdiv(K, groups); }    // output channels per group
    int64_t cpg() const { return fdiv(C, groups); }    // input channels per group
    int64_t Kgemm() const { return Y * X * cpg(); }    // reduction length per group

    // The problem block: (argument name, value) in problem_args() order.
    std::vector<std::pair<std::string, int64_t>> problem_args() const;

    int64_t x_elems() const { return N * H * W * C; }
    int64_t w_elems() const { return K * Y * X * cpg(); }
    int64_t d_elems() const { return M() * K; }

    // Floor division (rounds toward negative infinity); b != 0.
    static int64_t fdiv(int64_t a, int64_t b);
};

}  // namespace cpe::kernels::conv_problem
