// The AOT job grid (docs/policy.md). Twin of python_engine/policy/aot.py.
//
// Per flavor and per arch of arches() (the resolver's split_arches(): the arch
// table's rows with the 16x16x32 WMMA the kernels use; gfx1250 today), each
// arch's jobs after the previous arch's, in this order:
// 1. two-stage split-K forward binaries, per dtype: tiles with both sides in
//    kTileSides (tile_m outer), wave layouts (waves_m, waves_n) in
//    kWaveCounts^2 (waves_m outer) that cut the tile into whole 16x16 tiles,
//    at most kMaxComputeWaves waves and kMaxWaveFragments accumulator tiles
//    per wave; tile_k in kTileK; pipelines kPipelines (mem, wavelet1,
//    wavelet2); vector_a = vector_b in kVectors (8, 4, 2, 1: 910 two-stage jobs per
//    dtype, as the reference); epilogues kEpilogues; keeping
//    the combinations whose load lanes issue at most kMaxLoadsPerLane global
//    loads per K tile (loads_per_lane: the register budget of 0 spills);
// 2. reduce kernels per dtype x kReduceVectors x kReduceDegrees, 256 threads;
// 3. at flavors with clusters (llvm23): cluster binaries S in kClusterSizes on
//    kClusterTiles, mem/cshuffle, tile_k 64, 16-byte vectors, waves
//    min(2, tile/16) per axis;
// 4. plain forward binaries (split_k 1, issue 37): per acc epilogue x dtype x
//    tile (default waves) x kPlainVectors, tile_k kPlainTileK, mem, default
//    epilogue, within the perf model's candidate budget kPlainMaxLoads
//    (candidate_loads): the plain candidates every selection mode can pick.
// count_jobs counts over the axes without building specs; tests hold it equal
// to jobs().size(). conv_miss_reason / reduce_miss_reason say why a binary is
// not an AOT job (the first grid axis it leaves).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "policy/identity.h"
#include "targets/flavors.h"

namespace cpe::policy::aot {

// The grid's arches, from the resolver's arch table (policy/split_k.h split_arches()).
const std::vector<std::string> &arches();
// The grid's arches as text, "gfx1250" (joined by ", "): the "(<arches> only)" of a miss note.
std::string arches_text();
extern const std::vector<std::string> kDtypes;
extern const std::vector<int64_t> kTileSides;
extern const std::vector<int64_t> kWaveCounts;
constexpr int64_t kMaxComputeWaves = 8;
constexpr int64_t kMaxWaveFragments = 16;
extern const std::vector<int64_t> kTileK;
extern const std::vector<std::pair<std::string, int64_t>> kPipelines;  // (pipeline, num_load_waves)
extern const std::vector<int64_t> kVectors;
extern const std::vector<std::string> kEpilogues;
constexpr int64_t kMaxLoadsPerLane = 16;
extern const std::vector<int64_t> kReduceVectors;
extern const std::vector<int64_t> kReduceDegrees;
extern const std::vector<std::pair<int64_t, int64_t>> kClusterTiles;
extern const std::vector<int64_t> kClusterSizes;
constexpr int64_t kClusterTileK = 64;
constexpr int64_t kPlainTileK = 32;      // conv_implicit_gemm's default tile_k
extern const std::vector<int64_t> kPlainVectors;  // 8, 4, 2, 1, 3, 5, 6, 7: every load_vector width
constexpr int64_t kPlainMaxLoads = 32;   // = perf_model kMaxLoadsPerLane (a test holds them equal)
constexpr int64_t kPlainMaxLoadsOneWave = 30;  // = perf_model kMaxLoadsOneWave: 16x16 w1x1 vector 1 spills SGPRs
// The plain jobs' load budget at wm x wn waves (twin of aot.py plain_budget).
constexpr int64_t plain_budget(int64_t wm, int64_t wn) { return wm * wn == 1 ? kPlainMaxLoadsOneWave : kPlainMaxLoads; }
constexpr int64_t kVector = 8;
constexpr int64_t kReduceThreads = 256;
constexpr int64_t kWave = 32;

struct Job {
    std::string family;
    kernels::conv_implicit_gemm::ConvSpec conv;          // family conv_implicit_gemm
    kernels::conv_fwd_split_k_reduce::ReduceSpec reduce;  // family conv_fwd_split_k_reduce
    KernelIdentity identity;
    // "<family>\t<hash>\t<label>\t<spec as name=value;...>" (spec in field order)
    std::string line() const;
};

// The grid's wave layouts of a tile, waves_m outer.
std::vector<std::pair<int64_t, int64_t>> wave_layouts(int64_t tm, int64_t tn);
// Global loads one load lane issues per K tile (rounded up).
int64_t loads_per_lane(int64_t tm, int64_t tn, int64_t tk, int64_t wm, int64_t wn, const std::string &pipeline,
                       int64_t load_waves, int64_t vector);

// The perf model's load count of a candidate: loads_per_lane at pixel_slot(vector)
// times the loads per slot (pixel_pieces(vector).size()).
int64_t candidate_loads(int64_t tm, int64_t tn, int64_t tk, int64_t wm, int64_t wn, const std::string &pipeline,
                        int64_t load_waves, int64_t vector);
struct PlainAxes {
    int64_t tm, tn, wm, wn, vector;
};
// (tm, tn, wm, wn, vector) of the plain jobs of one dtype and epilogue, in grid order.
const std::vector<PlainAxes> &plain_axes();

// wm = wn = 0: the default layout min(2, tile/16) per axis.
kernels::conv_implicit_gemm::ConvSpec conv_spec(const std::string &dtype, int64_t tm, int64_t tn, int64_t tk,
                                                const std::string &epilogue, int64_t split_k = 2, int64_t s = 0,
                                                int64_t wm = 0, int64_t wn = 0,
                                                const std::string &pipeline = "mem", int64_t load_waves = 1,
                                                int64_t vector = kVector);
// The grid's reduce spec; acc_epilogue is the layer's accumulator epilogue
// (reduce_spec_text names it only when it is not "identity").
kernels::conv_fwd_split_k_reduce::ReduceSpec reduce_spec(const std::string &dtype, int64_t degree,
                                                         int64_t vector = 8,
                                                         const std::string &acc_epilogue = "identity");

// The grid's plain spec (split_k 1) of one tile at its default waves.
kernels::conv_implicit_gemm::ConvSpec plain_spec(const std::string &dtype, int64_t tm, int64_t tn, int64_t vector,
                                                 const std::string &acc_epilogue = "identity");

std::vector<Job> jobs(const targets::Flavor &flavor);
int64_t count_two_stage(int64_t dtype_count = 1);
int64_t count_jobs(const targets::Flavor &flavor);
bool has_job(const targets::Flavor &flavor, const std::string &hash);  // cached hash set per flavor
// has_job(flavor, k.hash()) without the set: k's axes checked against the grid's
// and k's identity text compared with that job's (no sha256, no grid built; the
// set only for an identity whose strings hold a line break, which no valid spec gives).
bool is_job(const targets::Flavor &flavor, const KernelIdentity &k);
std::string jobs_text(const targets::Flavor &flavor);  // one line() per job, LF, trailing newline

// Why a valid gfx1250 binary is not an AOT job; nullopt when it is one.
std::optional<std::string> conv_miss_reason(const kernels::conv_implicit_gemm::ConvSpec &s,
                                            const targets::Flavor &flavor);
std::optional<std::string> reduce_miss_reason(const kernels::conv_fwd_split_k_reduce::ReduceSpec &s);
// The reduce vector for K output channels: the largest of kReduceVectors dividing K, else 1.
int64_t reduce_vector(int64_t K);

// "name=value;..." of a spec in field order (str null as empty).
std::string conv_spec_text(const kernels::conv_implicit_gemm::ConvSpec &s);
std::string reduce_spec_text(const kernels::conv_fwd_split_k_reduce::ReduceSpec &s);

}  // namespace cpe::policy::aot
