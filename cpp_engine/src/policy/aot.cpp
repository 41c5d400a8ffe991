// Twin of python_engine/policy/aot.py.
#include "policy/aot.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <set>

#include "ir/constants.h"
#include "kernels/conv_implicit_gemm/lds.h"
#include "policy/split_k.h"

namespace cpe::policy::aot {

using ir::dec;
namespace CIG = kernels::conv_implicit_gemm;
namespace RED = kernels::conv_fwd_split_k_reduce;

const std::vector<std::string> &arches() { return split_arches(); }

std::string arches_text() {
    std::string t;
    for (const std::string &a : arches()) t += (t.empty() ? "" : ", ") + a;
    return t;
}
const std::vector<std::string> kDtypes{"bf16", "fp16"};
const std::vector<int64_t> kTileSides{16, 32, 64, 128};
const std::vector<int64_t> kWaveCounts{1, 2, 4};
const std::vector<int64_t> kTileK{32, 64};
const std::vector<std::pair<std::string, int64_t>> kPipelines{{"mem", 1}, {"wavelet", 1}, {"wavelet", 2}};
const std::vector<int64_t> kVectors{8, 4, 2, 1};
const std::vector<std::string> kEpilogues{"default", "cshuffle"};
const std::vector<int64_t> kReduceVectors{8, 4, 2};
const std::vector<int64_t> kReduceDegrees{0, 2, 4, 8, 16, 32};
const std::vector<std::pair<int64_t, int64_t>> kClusterTiles{{16, 32}, {32, 32}, {64, 32}, {64, 64}, {128, 128}};
const std::vector<int64_t> kClusterSizes{4, 8, 12, 15};
// identity, then the fused epilogues (issue 36): the reduce kernels and the cluster binaries per
// epilogue; two-stage Stage 1 of a fused layer is the identity binary (stage1_acc)
const std::vector<std::string> kAccEpilogues{"identity", "bias", "scale", "relu", "clamp", "bias_relu", "bias_clamp"};
const std::vector<int64_t> kPlainVectors{8, 4, 2, 1, 3, 5, 6, 7};

std::vector<std::pair<int64_t, int64_t>> wave_layouts(int64_t tm, int64_t tn) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (int64_t wm : kWaveCounts)
        for (int64_t wn : kWaveCounts) {
            if (tm % (16 * wm) || tn % (16 * wn) || wm * wn > kMaxComputeWaves) continue;
            if ((tm / (16 * wm)) * (tn / (16 * wn)) > kMaxWaveFragments) continue;
            out.emplace_back(wm, wn);
        }
    return out;
}

int64_t loads_per_lane(int64_t tm, int64_t tn, int64_t tk, int64_t wm, int64_t wn, const std::string &pipeline,
                       int64_t load_waves, int64_t vector) {
    const int64_t lanes = kWave * (pipeline == "mem" ? wm * wn : load_waves);
    const int64_t n = (tm + tn) * tk;
    const int64_t d = vector * lanes;
    return (n + d - 1) / d;
}

int64_t candidate_loads(int64_t tm, int64_t tn, int64_t tk, int64_t wm, int64_t wn, const std::string &pipeline,
                        int64_t load_waves, int64_t vector) {
    return loads_per_lane(tm, tn, tk, wm, wn, pipeline, load_waves, CIG::pixel_slot(vector)) *
           int64_t(CIG::pixel_pieces(vector).size());
}

const std::vector<PlainAxes> &plain_axes() {
    static const std::vector<PlainAxes> axes = [] {
        std::vector<PlainAxes> out;
        for (int64_t tm : kTileSides)
            for (int64_t tn : kTileSides) {
                const int64_t wm = std::min<int64_t>(2, tm / 16), wn = std::min<int64_t>(2, tn / 16);
                for (int64_t v : kPlainVectors)
                    if (candidate_loads(tm, tn, kPlainTileK, wm, wn, "mem", 1, v) <= plain_budget(wm, wn))
                        out.push_back({tm, tn, wm, wn, v});
            }
        return out;
    }();
    return axes;
}

CIG::ConvSpec conv_spec(const std::string &dtype, int64_t tm, int64_t tn, int64_t tk, const std::string &epilogue,
                        int64_t split_k, int64_t s, int64_t wm, int64_t wn, const std::string &pipeline,
                        int64_t load_waves, int64_t vector) {
    CIG::ConvSpec c;
    c.dtype = dtype;
    c.tile_m = tm;
    c.tile_n = tn;
    c.tile_k = tk;
    c.waves_m = wm ? wm : std::min<int64_t>(2, tm / 16);
    c.waves_n = wm ? wn : std::min<int64_t>(2, tn / 16);
    c.pipeline = pipeline;
    c.num_load_waves = load_waves;
    c.epilogue = epilogue;
    c.vector_a = vector;
    c.vector_b = vector;
    c.split_k = split_k;
    c.split_k_cluster = s;
    return c;
}

RED::ReduceSpec reduce_spec(const std::string &dtype, int64_t degree, int64_t vector, const std::string &acc_epilogue) {
    RED::ReduceSpec r;
    r.acc_epilogue = acc_epilogue;
    r.dtype = dtype;
    r.vector = vector;
    r.threads = kReduceThreads;
    r.degree = degree;
    return r;
}

CIG::ConvSpec plain_spec(const std::string &dtype, int64_t tm, int64_t tn, int64_t vector,
                         const std::string &acc_epilogue) {
    CIG::ConvSpec c = conv_spec(dtype, tm, tn, kPlainTileK, "default", 1, 0, 0, 0, "mem", 1, vector);
    c.acc_epilogue = acc_epilogue;
    return c;
}

std::string conv_spec_text(const CIG::ConvSpec &s) {
    auto str = [](const std::optional<std::string> &v) { return v.value_or(""); };
    return "dtype=" + str(s.dtype) + ";tile_m=" + dec(s.tile_m) + ";tile_n=" + dec(s.tile_n) +
           ";tile_k=" + dec(s.tile_k) + ";waves_m=" + dec(s.waves_m) + ";waves_n=" + dec(s.waves_n) +
           ";pipeline=" + str(s.pipeline) + ";num_load_waves=" + dec(s.num_load_waves) +
           ";epilogue=" + str(s.epilogue) + ";vector_a=" + dec(s.vector_a) + ";vector_b=" + dec(s.vector_b) +
           ";acc_epilogue=" + str(s.acc_epilogue) + ";split_k=" + dec(s.split_k) +
           ";split_k_cluster=" + dec(s.split_k_cluster) + ";name_prefix=" + str(s.name_prefix);
}

std::string reduce_spec_text(const RED::ReduceSpec &s) {
    return "dtype=" + s.dtype.value_or("") + ";vector=" + dec(s.vector) + ";threads=" + dec(s.threads) +
           ";degree=" + dec(s.degree) +
           (s.acc_epilogue.value_or("") == "identity" ? std::string() : ";acc_epilogue=" + s.acc_epilogue.value_or(""));
}

std::string Job::line() const {
    const std::string spec = family == "conv_implicit_gemm" ? conv_spec_text(conv) : reduce_spec_text(reduce);
    return family + "\t" + identity.hash() + "\t" + identity.label() + "\t" + spec;
}

namespace {

// The jobs of one arch of arches() at `flavor`, appended to `out` in grid order.
void arch_jobs(const std::string &arch, const targets::Flavor &flavor, std::vector<Job> &out) {
    auto conv_job = [&](const CIG::ConvSpec &c) {
        Job j;
        j.family = "conv_implicit_gemm";
        j.conv = c;
        j.identity = KernelIdentity::of_conv(j.conv, arch, flavor.canonical);
        out.push_back(j);
    };
    for (const std::string &dt : kDtypes)
        for (int64_t tm : kTileSides)
            for (int64_t tn : kTileSides)
                for (const auto &w : wave_layouts(tm, tn))
                    for (int64_t tk : kTileK)
                        for (const auto &p : kPipelines)
                            for (int64_t v : kVectors) {
                                if (loads_per_lane(tm, tn, tk, w.first, w.second, p.first, p.second, v) >
                                    kMaxLoadsPerLane)
                                    continue;
                                for (const std::string &epi : kEpilogues)
                                    conv_job(conv_spec(dt, tm, tn, tk, epi, 2, 0, w.first, w.second, p.first,
                                                       p.second, v));
                            }
    for (const std::string &acc : kAccEpilogues) {
        for (const std::string &dt : kDtypes)
            for (int64_t v : kReduceVectors)
                for (int64_t d : kReduceDegrees) {
                    Job j;
                    j.family = "conv_fwd_split_k_reduce";
                    j.reduce = reduce_spec(dt, d, v, acc);
                    j.identity = KernelIdentity::of_reduce(j.reduce, arch, flavor.canonical);
                    out.push_back(j);
                }
        if (flavor.clusters)
            for (const std::string &dt : kDtypes)
                for (const auto &t : kClusterTiles)
                    for (int64_t s : kClusterSizes) {
                        CIG::ConvSpec c = conv_spec(dt, t.first, t.second, kClusterTileK, "cshuffle", 2, s);
                        c.acc_epilogue = acc;
                        conv_job(c);
                    }
    }
    for (const std::string &acc : kAccEpilogues)
        for (const std::string &dt : kDtypes)
            for (const PlainAxes &a : plain_axes()) conv_job(plain_spec(dt, a.tm, a.tn, a.vector, acc));
}

}  // namespace

std::vector<Job> jobs(const targets::Flavor &flavor) {
    std::vector<Job> out;
    for (const std::string &arch : arches()) arch_jobs(arch, flavor, out);
    return out;
}

int64_t count_two_stage(int64_t dtype_count) {
    int64_t n = 0;
    for (int64_t tm : kTileSides)
        for (int64_t tn : kTileSides)
            for (const auto &w : wave_layouts(tm, tn))
                for (int64_t tk : kTileK)
                    for (const auto &p : kPipelines)
                        for (int64_t v : kVectors)
                            if (loads_per_lane(tm, tn, tk, w.first, w.second, p.first, p.second, v) <=
                                kMaxLoadsPerLane)
                                n += int64_t(kEpilogues.size());
    return n * dtype_count;
}

int64_t count_jobs(const targets::Flavor &flavor) {
    const int64_t accs = int64_t(kAccEpilogues.size());
    int64_t n = count_two_stage(int64_t(kDtypes.size())) +
                accs * int64_t(kDtypes.size() * kReduceVectors.size() * kReduceDegrees.size());
    if (flavor.clusters) n += accs * int64_t(kDtypes.size() * kClusterTiles.size() * kClusterSizes.size());
    return int64_t(arches().size()) * (n + accs * int64_t(kDtypes.size() * plain_axes().size()));
}

bool has_job(const targets::Flavor &flavor, const std::string &hash) {
    static std::mutex mu;
    static std::map<std::string, std::set<std::string>> cache;  // canonical flavor -> job hashes
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(flavor.canonical);
    if (it == cache.end()) {
        std::set<std::string> hs;
        for (const Job &j : jobs(flavor)) hs.insert(j.identity.hash());
        it = cache.emplace(flavor.canonical, std::move(hs)).first;
    }
    return it->second.count(hash) > 0;
}

namespace {

template <class T>
bool contains(const std::vector<T> &v, const T &x) {
    return std::find(v.begin(), v.end(), x) != v.end();
}

// The grid job whose axes are those of `k`, when they are the grid's (the loops of
// jobs(), asked of one identity instead of run); nullopt when they are not.
std::optional<KernelIdentity> grid_job_like(const KernelIdentity &k, const targets::Flavor &flavor) {
    if (!contains(arches(), k.arch) || !contains(kDtypes, k.dtype)) return std::nullopt;
    if (k.family == RED::kFamily) {
        if (!contains(kReduceVectors, k.vector) || !contains(kReduceDegrees, k.degree) ||
            !contains(kAccEpilogues, k.acc_epilogue))
            return std::nullopt;
        return KernelIdentity::of_reduce(reduce_spec(k.dtype, k.degree, k.vector, k.acc_epilogue), k.arch,
                                         flavor.canonical);
    }
    if (k.family != CIG::kFamily) return std::nullopt;
    const int64_t tm = k.tile_m, tn = k.tile_n, S = k.split_k_cluster;
    if (S) {
        if (!flavor.clusters || !contains(kClusterTiles, std::make_pair(tm, tn)) || !contains(kClusterSizes, S) ||
            !contains(kAccEpilogues, k.acc_epilogue))
            return std::nullopt;
        CIG::ConvSpec c = conv_spec(k.dtype, tm, tn, kClusterTileK, "cshuffle", 2, S);
        c.acc_epilogue = k.acc_epilogue;
        return KernelIdentity::of_conv(c, k.arch, flavor.canonical);
    }
    if (!k.two_stage) {
        if (!contains(kAccEpilogues, k.acc_epilogue)) return std::nullopt;
        for (const PlainAxes &a : plain_axes())
            if (a.tm == tm && a.tn == tn && a.vector == k.vector_a)
                return KernelIdentity::of_conv(plain_spec(k.dtype, tm, tn, a.vector, k.acc_epilogue), k.arch,
                                               flavor.canonical);
        return std::nullopt;
    }
    const int64_t tk = k.tile_k, wm = k.waves_m, wn = k.waves_n, lw = k.num_load_waves, v = k.vector_a;
    if (!contains(kTileSides, tm) || !contains(kTileSides, tn) || !contains(wave_layouts(tm, tn), std::make_pair(wm, wn)) ||
        !contains(kTileK, tk) || !contains(kPipelines, std::make_pair(k.pipeline, lw)) || !contains(kVectors, v) ||
        loads_per_lane(tm, tn, tk, wm, wn, k.pipeline, lw, v) > kMaxLoadsPerLane || !contains(kEpilogues, k.epilogue))
        return std::nullopt;
    return KernelIdentity::of_conv(conv_spec(k.dtype, tm, tn, tk, k.epilogue, 2, 0, wm, wn, k.pipeline, lw, v), k.arch,
                                   flavor.canonical);
}

}  // namespace

bool is_job(const targets::Flavor &flavor, const KernelIdentity &k) {
    // hashed_text is one "name=value" line per field kept: with no line break in a
    // string field, equal texts are equal fields, so an identity is a job's exactly
    // when it is the job with its own axes. Otherwise (never from a valid spec) the set.
    for (const std::string *s : {&k.family, &k.arch, &k.flavor, &k.dtype, &k.pipeline, &k.epilogue, &k.acc_epilogue,
                                 &k.name_prefix})
        if (s->find('\n') != std::string::npos) return has_job(flavor, k.hash());
    const std::optional<KernelIdentity> j = grid_job_like(k, flavor);
    return j && j->hashed_text() == k.hashed_text();
}

std::string jobs_text(const targets::Flavor &flavor) {
    std::string out;
    for (const Job &j : jobs(flavor)) out += j.line() + "\n";
    return out;
}

namespace {

template <class T>
std::string join(const std::vector<T> &v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + dec(v[i]);
    return s;
}

std::string join_tiles(const std::vector<std::pair<int64_t, int64_t>> &v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + dec(v[i].first) + "x" + dec(v[i].second);
    return s;
}

}  // namespace

static std::optional<std::string> plain_miss_reason(const CIG::ConvSpec &s) {
    const int64_t tm = s.tile_m, tn = s.tile_n, v = s.vector_a;
    if (!contains(kTileSides, tm) || !contains(kTileSides, tn))
        return "plain tile " + dec(tm) + "x" + dec(tn) + " is not in the grid (tile_m, tile_n in " + join(kTileSides) +
               ")";
    const CIG::ConvSpec w = plain_spec(s.dtype.value_or(""), tm, tn, v, s.acc_epilogue.value_or(""));
    const std::pair<const char *, std::pair<std::string, std::string>> fields[] = {
        {"tile_k", {dec(w.tile_k), dec(s.tile_k)}},
        {"waves_m", {dec(w.waves_m), dec(s.waves_m)}},
        {"waves_n", {dec(w.waves_n), dec(s.waves_n)}},
        {"pipeline", {w.pipeline.value_or(""), s.pipeline.value_or("")}},
        {"epilogue", {w.epilogue.value_or(""), s.epilogue.value_or("")}},
        {"vector_b", {dec(w.vector_b), dec(s.vector_b)}},
    };
    for (const auto &f : fields)
        if (f.second.first != f.second.second)
            return "plain jobs of tile " + dec(tm) + "x" + dec(tn) + " have " + f.first + " " + f.second.first +
                   ", not " + f.second.second;
    if (!contains(kPlainVectors, v)) return "plain vector " + dec(v) + " is not in the grid (" + join(kPlainVectors) + ")";
    const int64_t n = candidate_loads(tm, tn, kPlainTileK, w.waves_m, w.waves_n, "mem", 1, v);
    const int64_t budget = plain_budget(w.waves_m, w.waves_n);
    if (n > budget)
        return dec(n) + " global loads per load lane per K tile exceed the plain jobs' budget of " + dec(budget);
    return std::nullopt;
}

std::optional<std::string> conv_miss_reason(const CIG::ConvSpec &s, const targets::Flavor &flavor) {
    const std::string prefix = s.name_prefix.value_or("");
    if (!prefix.empty()) return "name_prefix '" + prefix + "' is not in the grid (AOT jobs have none)";
    const int64_t tm = s.tile_m, tn = s.tile_n, tk = s.tile_k, wm = s.waves_m, wn = s.waves_n, v = s.vector_a;
    const int64_t S = s.split_k_cluster;
    if (S) {
        if (!flavor.clusters) return "flavor " + flavor.canonical + " has no cluster jobs";
        if (!contains(kClusterTiles, std::make_pair(tm, tn)))
            return "tile " + dec(tm) + "x" + dec(tn) + " has no cluster job (cluster tiles " + join_tiles(kClusterTiles) +
                   ")";
        if (!contains(kClusterSizes, S)) return "split_k_cluster " + dec(S) + " is not in the grid (" + join(kClusterSizes) + ")";
        const CIG::ConvSpec w = conv_spec(s.dtype.value_or(""), tm, tn, kClusterTileK, "cshuffle", 2, S);
        const std::pair<const char *, std::pair<std::string, std::string>> fields[] = {
            {"tile_k", {dec(w.tile_k), dec(s.tile_k)}},
            {"waves_m", {dec(w.waves_m), dec(s.waves_m)}},
            {"waves_n", {dec(w.waves_n), dec(s.waves_n)}},
            {"epilogue", {w.epilogue.value_or(""), s.epilogue.value_or("")}},
            {"vector_a", {dec(w.vector_a), dec(s.vector_a)}},
            {"vector_b", {dec(w.vector_b), dec(s.vector_b)}},
        };
        for (const auto &f : fields)
            if (f.second.first != f.second.second)
                return std::string("cluster jobs have ") + f.first + " " + f.second.first + ", not " + f.second.second;
        return std::nullopt;
    }
    if (s.split_k <= 1) return plain_miss_reason(s);
    if (!contains(kTileSides, tm) || !contains(kTileSides, tn))
        return "tile " + dec(tm) + "x" + dec(tn) + " is not in the grid (tile_m, tile_n in " + join(kTileSides) + ")";
    if (!contains(kTileK, tk)) return "tile_k " + dec(tk) + " is not in the grid (" + join(kTileK) + ")";
    const auto layouts = wave_layouts(tm, tn);
    if (!contains(layouts, std::make_pair(wm, wn)))
        return "waves " + dec(wm) + "x" + dec(wn) + " on the " + dec(tm) + "x" + dec(tn) +
               " tile are not in the grid (layouts " + join_tiles(layouts) + ")";
    const std::string pipe = s.pipeline.value_or("");
    const int64_t lw = pipe == "wavelet" ? s.num_load_waves : 1;
    if (!contains(kPipelines, std::make_pair(pipe, lw)))
        return "pipeline wavelet" + dec(lw) + " is not in the grid (mem, wavelet1, wavelet2)";
    if (s.vector_a != s.vector_b || !contains(kVectors, v))
        return "vectors " + dec(s.vector_a) + "/" + dec(s.vector_b) + " are not in the grid (vector_a = vector_b in " +
               join(kVectors) + ")";
    const int64_t n = loads_per_lane(tm, tn, tk, wm, wn, pipe, lw, v);
    if (n > kMaxLoadsPerLane)
        return dec(n) + " global loads per load lane per K tile exceed the grid's budget of " + dec(kMaxLoadsPerLane);
    return std::nullopt;
}

std::optional<std::string> reduce_miss_reason(const RED::ReduceSpec &s) {
    if (!contains(kReduceVectors, s.vector))
        return "reduce vector " + dec(s.vector) + " is not in the grid (" + join(kReduceVectors) + ")";
    if (s.threads != kReduceThreads)
        return "reduce threads " + dec(s.threads) + " is not in the grid (" + dec(kReduceThreads) + ")";
    if (!contains(kReduceDegrees, s.degree))
        return "reduce degree " + dec(s.degree) + " is not in the grid (" + join(kReduceDegrees) + ")";
    return std::nullopt;
}

int64_t reduce_vector(int64_t K) {
    for (int64_t v : kReduceVectors)
        if (K % v == 0) return v;
    return 1;
}

}  // namespace cpe::policy::aot
