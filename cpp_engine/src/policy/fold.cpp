// Twin of python_engine/policy/fold.py.
#include "policy/fold.h"

namespace cpe::policy {

namespace {
int64_t gcd(int64_t a, int64_t b) {
    while (b) {
        const int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}
}  // namespace

int64_t fold_factor(const kernels::conv_problem::ConvProblem &p) {
    if (p.groups != 1 || p.dil_w != 1) return 1;
    return gcd(gcd(p.X, p.stride_w), gcd(p.W, p.pad_w));
}

std::pair<int64_t, kernels::conv_problem::ConvProblem> fold_width(const kernels::conv_problem::ConvProblem &p) {
    const int64_t f = fold_factor(p);
    if (f <= 1) return {1, p};
    kernels::conv_problem::ConvProblem q = p;
    q.C = p.C * f;
    q.W = p.W / f;
    q.X = p.X / f;
    q.stride_w = p.stride_w / f;
    q.pad_w = p.pad_w / f;
    return {f, q};
}

}  // namespace cpe::policy
