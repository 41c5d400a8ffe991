// The AOT job grid (docs/policy.md). Twin of python_engine/policy/aot.py.
//
// Per flavor, gfx1250 only, in this order: two-stage split-K forward binaries
// on kTwoStageTiles x tile_k {32, 64} x epilogue {default, cshuffle}, bf16 and
// fp16, mem pipeline, 16-byte vectors; the reduce kernels they need (vector 8,
// 256 threads, degree 0 and the unrolled degrees 2..32); and, at flavors with
// clusters (llvm23), cluster binaries S in {4, 8, 12, 15} on the mem/cshuffle
// tiles kClusterTiles, tile_k 64, 16-byte vectors. Waves per tile:
// min(2, tile_m/16) x min(2, tile_n/16). count_jobs is arithmetic.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "policy/identity.h"
#include "targets/flavors.h"

namespace cpe::policy::aot {

extern const char *const kArch;  // "gfx1250"
extern const std::vector<std::string> kDtypes;
extern const std::vector<std::pair<int64_t, int64_t>> kTwoStageTiles;
extern const std::vector<int64_t> kTwoStageTileK;
extern const std::vector<std::string> kTwoStageEpilogues;
extern const std::vector<int64_t> kReduceDegrees;
extern const std::vector<std::pair<int64_t, int64_t>> kClusterTiles;
extern const std::vector<int64_t> kClusterSizes;
constexpr int64_t kClusterTileK = 64;
constexpr int64_t kVector = 8;
constexpr int64_t kReduceVector = 8;
constexpr int64_t kReduceThreads = 256;

struct Job {
    std::string family;
    kernels::conv_implicit_gemm::ConvSpec conv;          // family conv_implicit_gemm
    kernels::conv_fwd_split_k_reduce::ReduceSpec reduce;  // family conv_fwd_split_k_reduce
    KernelIdentity identity;
    // "<family>\t<hash>\t<label>\t<spec as name=value;...>" (spec in field order)
    std::string line() const;
};

kernels::conv_implicit_gemm::ConvSpec conv_spec(const std::string &dtype, int64_t tm, int64_t tn, int64_t tk,
                                                const std::string &epilogue, int64_t split_k = 2, int64_t s = 0);
kernels::conv_fwd_split_k_reduce::ReduceSpec reduce_spec(const std::string &dtype, int64_t degree);

std::vector<Job> jobs(const targets::Flavor &flavor);
int64_t count_jobs(const targets::Flavor &flavor);
bool has_job(const targets::Flavor &flavor, const std::string &hash);
std::string jobs_text(const targets::Flavor &flavor);  // one line() per job, LF, trailing newline

// "name=value;..." of a spec in field order (str null as empty).
std::string conv_spec_text(const kernels::conv_implicit_gemm::ConvSpec &s);
std::string reduce_spec_text(const kernels::conv_fwd_split_k_reduce::ReduceSpec &s);

}  // namespace cpe::policy::aot
