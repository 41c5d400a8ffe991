// Twin of python_engine/policy/aot.py.
#include "policy/aot.h"

#include <algorithm>
#include <map>

#include "ir/constants.h"

namespace cpe::policy::aot {

using ir::dec;

const char *const kArch = "gfx1250";
const std::vector<std::string> kDtypes{"bf16", "fp16"};
const std::vector<std::pair<int64_t, int64_t>> kTwoStageTiles{{16, 16}, {16, 32}, {32, 32}, {64, 32}, {64, 64}};
const std::vector<int64_t> kTwoStageTileK{32, 64};
const std::vector<std::string> kTwoStageEpilogues{"default", "cshuffle"};
const std::vector<int64_t> kReduceDegrees{0, 2, 4, 8, 16, 32};
const std::vector<std::pair<int64_t, int64_t>> kClusterTiles{{16, 32}, {32, 32}, {64, 32}, {64, 64}, {128, 128}};
const std::vector<int64_t> kClusterSizes{4, 8, 12, 15};

kernels::conv_implicit_gemm::ConvSpec conv_spec(const std::string &dtype, int64_t tm, int64_t tn, int64_t tk,
                                                const std::string &epilogue, int64_t split_k, int64_t s) {
    kernels::conv_implicit_gemm::ConvSpec c;
    c.dtype = dtype;
    c.tile_m = tm;
    c.tile_n = tn;
    c.tile_k = tk;
    c.waves_m = std::min<int64_t>(2, tm / 16);
    c.waves_n = std::min<int64_t>(2, tn / 16);
    c.pipeline = std::string("mem");
    c.epilogue = epilogue;
    c.vector_a = kVector;
    c.vector_b = kVector;
    c.split_k = split_k;
    c.split_k_cluster = s;
    return c;
}

kernels::conv_fwd_split_k_reduce::ReduceSpec reduce_spec(const std::string &dtype, int64_t degree) {
    kernels::conv_fwd_split_k_reduce::ReduceSpec r;
    r.dtype = dtype;
    r.vector = kReduceVector;
    r.threads = kReduceThreads;
    r.degree = degree;
    return r;
}

std::string conv_spec_text(const kernels::conv_implicit_gemm::ConvSpec &s) {
    auto str = [](const std::optional<std::string> &v) { return v.value_or(""); };
    return "dtype=" + str(s.dtype) + ";tile_m=" + dec(s.tile_m) + ";tile_n=" + dec(s.tile_n) +
           ";tile_k=" + dec(s.tile_k) + ";waves_m=" + dec(s.waves_m) + ";waves_n=" + dec(s.waves_n) +
           ";pipeline=" + str(s.pipeline) + ";num_load_waves=" + dec(s.num_load_waves) +
           ";epilogue=" + str(s.epilogue) + ";vector_a=" + dec(s.vector_a) + ";vector_b=" + dec(s.vector_b) +
           ";acc_epilogue=" + str(s.acc_epilogue) + ";split_k=" + dec(s.split_k) +
           ";split_k_cluster=" + dec(s.split_k_cluster) + ";name_prefix=" + str(s.name_prefix);
}

std::string reduce_spec_text(const kernels::conv_fwd_split_k_reduce::ReduceSpec &s) {
    return "dtype=" + s.dtype.value_or("") + ";vector=" + dec(s.vector) + ";threads=" + dec(s.threads) +
           ";degree=" + dec(s.degree);
}

std::string Job::line() const {
    const std::string spec = family == "conv_implicit_gemm" ? conv_spec_text(conv) : reduce_spec_text(reduce);
    return family + "\t" + identity.hash() + "\t" + identity.label() + "\t" + spec;
}

std::vector<Job> jobs(const targets::Flavor &flavor) {
    std::vector<Job> out;
    for (const std::string &dt : kDtypes)
        for (const auto &t : kTwoStageTiles)
            for (int64_t tk : kTwoStageTileK)
                for (const std::string &epi : kTwoStageEpilogues) {
                    Job j;
                    j.family = "conv_implicit_gemm";
                    j.conv = conv_spec(dt, t.first, t.second, tk, epi);
                    j.identity = KernelIdentity::of_conv(j.conv, kArch, flavor.canonical);
                    out.push_back(j);
                }
    for (const std::string &dt : kDtypes)
        for (int64_t d : kReduceDegrees) {
            Job j;
            j.family = "conv_fwd_split_k_reduce";
            j.reduce = reduce_spec(dt, d);
            j.identity = KernelIdentity::of_reduce(j.reduce, kArch, flavor.canonical);
            out.push_back(j);
        }
    if (flavor.clusters)
        for (const std::string &dt : kDtypes)
            for (const auto &t : kClusterTiles)
                for (int64_t s : kClusterSizes) {
                    Job j;
                    j.family = "conv_implicit_gemm";
                    j.conv = conv_spec(dt, t.first, t.second, kClusterTileK, "cshuffle", 2, s);
                    j.identity = KernelIdentity::of_conv(j.conv, kArch, flavor.canonical);
                    out.push_back(j);
                }
    return out;
}

int64_t count_jobs(const targets::Flavor &flavor) {
    int64_t n = int64_t(kDtypes.size()) *
                (int64_t(kTwoStageTiles.size() * kTwoStageTileK.size() * kTwoStageEpilogues.size()) +
                 int64_t(kReduceDegrees.size()));
    if (flavor.clusters) n += int64_t(kDtypes.size() * kClusterTiles.size() * kClusterSizes.size());
    return n;
}

bool has_job(const targets::Flavor &flavor, const std::string &hash) {
    for (const Job &j : jobs(flavor))
        if (j.identity.hash() == hash) return true;
    return false;
}

std::string jobs_text(const targets::Flavor &flavor) {
    std::string out;
    for (const Job &j : jobs(flavor)) out += j.line() + "\n";
    return out;
}

}  // namespace cpe::policy::aot
