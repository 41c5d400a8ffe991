// Twin of python_engine/kernels/conv_problem.py.
#include "kernels/conv_problem.h"

namespace cpe::kernels::conv_problem {

const std::vector<const char *> &problem_args() {
    static const std::vector<const char *> a{
        "N",     "C",     "H",      "W", "K",  "Y",   "X",   "stride_h", "stride_w", "pad_h",
        "pad_w", "dil_h", "dil_w",  "groups", "Ho", "Wo", "M", "kpg",      "cpg",      "Kgemm",
    };
    return a;
}

int64_t ConvProblem::fdiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

int64_t ConvProblem::Ho() const { return fdiv(H + 2 * pad_h - dil_h * (Y - 1) - 1, stride_h) + 1; }

int64_t ConvProblem::Wo() const { return fdiv(W + 2 * pad_w - dil_w * (X - 1) - 1, stride_w) + 1; }

std::vector<std::pair<std::string, int64_t>> ConvProblem::problem_args() const {
    const int64_t v[] = {N,     C,     H,     W,      K,    Y,    X,   stride_h, stride_w, pad_h,
                         pad_w, dil_h, dil_w, groups, Ho(), Wo(), M(), kpg(),    cpg(),    Kgemm()};
    std::vector<std::pair<std::string, int64_t>> out;
    const auto &names = conv_problem::problem_args();
    for (size_t i = 0; i < names.size(); ++i) out.emplace_back(names[i], v[i]);
    return out;
}

}  // namespace cpe::kernels::conv_problem
