// Twin of python_engine/policy/perf_model.py.
#include "policy/perf_model.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>
#include <tuple>

#include "ir/constants.h"
#include "kernels/acc_epilogue.h"
#include "kernels/conv_launch.h"
#include "policy/aot.h"
#include "policy/fold.h"
#include "policy/select.h"
#include "policy/split_k.h"

namespace cpe::policy::perf_model {

const std::vector<int64_t> kDegrees = {2, 4, 8, 16, 32};

namespace {

using kernels::ceil_div;
using kernels::dec128;
using kernels::i128;
using ir::dec;
namespace CIG = kernels::conv_implicit_gemm;
using kernels::conv_problem::ConvProblem;

constexpr int64_t kElemBytes = 2;   // bf16 / fp16
constexpr int64_t kAccBytes = 4;    // fp32 workspace element
constexpr int64_t kWmmaMN = 16, kWmmaK = 32;
constexpr int64_t kPsPerUs = 1000000;
// Global loads per load lane per K tile a candidate may issue: the largest a shipped
// kernel compiles spill-free (64x64x32 at vector 1: 32); 40 and 48 spill (perf_model.py).
constexpr int64_t kMaxLoadsPerLane = 32;
// A one-wave workgroup issues every load itself: 16x16x32 w1x1 at vector 1 (32 loads) spills
// SGPRs under LLVM 22 (docs/aot.md "Plain jobs"); 30 built spill-free (perf_model.py
// MAX_LOADS_ONE_WAVE). A measured compile fact, not a hardware one.
constexpr int64_t kMaxLoadsOneWave = 30;

// The load budget of a candidate with waves_m x waves_n waves (twin of perf_model.py load_budget).
int64_t load_budget(int64_t waves_m, int64_t waves_n) {
    return waves_m * waves_n == 1 ? kMaxLoadsOneWave : kMaxLoadsPerLane;
}

int64_t roof(const targets::Arch &a, const char *name) {
    for (const auto &kv : a.roofline)
        if (kv.first == name) return kv.second;
    throw std::logic_error(std::string("arch ") + a.name + " has no roofline constant " + name);
}

// The roofline constants predict reads, looked up by name once per arch and call
// (not once per candidate); a constant the arch lacks throws where it is read.
struct Roof {
    const targets::Arch *arch;
    int64_t at(const char *name) const { return roof(*arch, name); }
    int64_t simds, wmma_cycles, kstep_issue_cycles, max_waves, clock, hbm, l2_per_clk, launch_ns;
    explicit Roof(const targets::Arch &a)
        : arch(&a), simds(at("simds_per_cu")), wmma_cycles(at("wmma_cycles")),
          kstep_issue_cycles(at("kstep_issue_cycles")), max_waves(at("max_waves_per_simd")), clock(at("clock_mhz")),
          hbm(at("hbm_bytes_per_us")), l2_per_clk(at("l2_bytes_per_clk_per_cu")), launch_ns(at("launch_ns")) {}
    int64_t cluster_barrier() const { return at("cluster_barrier_cycles"); }  // cluster candidates only
};

std::vector<Term> predict_at(const CIG::ConvSpec &spec, const std::string &binary, int64_t degree,
                             const ConvProblem &p, const Roof &rf, int64_t cus);

// The reduction the kernel's K loop covers (conv_launch's): Kgemm, or Y*X taps of
// pixel_slot(vector_a) elements for a padded-pixel vector (the small-channel path).
int64_t reduction(const CIG::ConvSpec &spec, const ConvProblem &p) {
    return CIG::is_pixel_vector(spec.vector_a) ? p.Y * p.X * CIG::pixel_slot(spec.vector_a) : p.Kgemm();
}

// The register budget's reason for a candidate binary (problem-independent), or nullopt.
std::optional<std::string> budget_reason(const CIG::ConvSpec &spec) {
    const int64_t v = std::min(spec.vector_a, spec.vector_b);  // a padded pixel: its slots, each in its pieces
    const int64_t loads = aot::loads_per_lane(spec.tile_m, spec.tile_n, spec.tile_k, spec.waves_m, spec.waves_n,
                                              *spec.pipeline, spec.num_load_waves, CIG::pixel_slot(v)) *
                          int64_t(CIG::pixel_pieces(v).size());
    const int64_t budget = load_budget(spec.waves_m, spec.waves_n);
    if (loads > budget)
        return dec(loads) + " global loads per load lane per K tile exceed the register budget " + dec(budget);
    return std::nullopt;
}

// conv_launch's admission minus the problem's rules, whose reason the caller has
// (`problem`: one problem, many candidate specs), for a binary that passed
// conv_implicit_gemm's rules; `budget` is its budget_reason. In the order of
// conv_launch.validate: the launch rules, then the register budget, then the slices.
std::optional<std::string> admission(const CIG::ConvSpec &spec, std::string_view binary, int64_t degree,
                                     const ConvProblem &p, const std::optional<std::string> &problem,
                                     const std::optional<std::string> &budget) {
    if (auto r = kernels::conv_launch::launch_reason(launch_spec(spec, p, degree), &problem)) return r;
    if (budget) return budget;
    if (binary == "plain") return std::nullopt;
    const int64_t tk = spec.tile_k;
    const int64_t kr = reduction(spec, p);
    const int64_t ks = ceil_div(ceil_div(kr, degree), tk) * tk;
    if (binary == "two_stage" && ceil_div(kr, ks) != degree)
        return "degree " + dec(degree) + " launches " + dec(ceil_div(kr, ks)) + " slices (ks " + dec(ks) + ")";
    if (ceil_div(kr, tk) < kMinSliceKtiles * degree)
        return "degree " + dec(degree) + " leaves slices under " + dec(kMinSliceKtiles) + " K tiles";
    return std::nullopt;
}

struct Listed {
    std::string binary;
    CIG::ConvSpec spec;
    int64_t degree;
    std::optional<std::string> why;
    std::string rule;  // the rule that admitted it under the reference's rules ("" otherwise)
};

// The candidates of a base spec before any problem: every candidate in list order
// with, as `why`, what no problem changes (conv_implicit_gemm's rules, or the split
// form's rejection); nullopt where the problem decides. `budget`: each one's
// budget_reason (applied after the launch rules).
struct Shape {
    std::vector<Listed> items;
    std::vector<std::optional<std::string>> budget;
};

Shape candidate_shape(const CIG::ConvSpec &spec, const targets::Arch &ar, const targets::Flavor &fl) {
    Shape sh;
    const size_t n = aot::kTileSides.size() * aot::kTileSides.size() * (1 + kDegrees.size()) +
                     aot::kClusterTiles.size() * aot::kClusterSizes.size();
    sh.items.reserve(n);
    sh.budget.reserve(n);
    CIG::ConvSpec split = spec;
    split.split_k = 2;
    split.split_k_cluster = 0;
    const bool split_ok = !CIG::validate(split, ar, fl);
    const bool clusters = fl.clusters && ar.clusters;
    const std::string rejected = "the split form is rejected";
    auto add = [&](const char *binary, const CIG::ConvSpec &cs, int64_t degree, bool ok) {
        std::optional<std::string> why = ok ? CIG::validate(cs, ar, fl) : std::optional<std::string>(rejected);
        sh.budget.push_back(why ? std::nullopt : budget_reason(cs));
        sh.items.push_back({binary, cs, degree, std::move(why), ""});
    };
    for (const int64_t tm : aot::kTileSides) {
        for (const int64_t tn : aot::kTileSides) {
            CIG::ConvSpec cs = spec;
            cs.tile_m = tm;
            cs.tile_n = tn;
            cs.waves_m = std::min<int64_t>(2, tm / 16);
            cs.waves_n = std::min<int64_t>(2, tn / 16);
            cs.split_k = 1;
            cs.split_k_cluster = 0;
            add("plain", cs, 1, true);
            for (const int64_t d : kDegrees) {
                CIG::ConvSpec s2 = cs;
                s2.split_k = d;
                add("two_stage", s2, d, split_ok);
            }
            if (clusters && std::find(aot::kClusterTiles.begin(), aot::kClusterTiles.end(), std::make_pair(tm, tn)) !=
                                aot::kClusterTiles.end()) {
                for (const int64_t s : aot::kClusterSizes) {
                    if (!split_ok) {  // (a null dtype never reaches conv_spec)
                        add("cluster", CIG::ConvSpec{}, s, false);
                        continue;
                    }
                    CIG::ConvSpec sc = aot::conv_spec(*spec.dtype, tm, tn, aot::kClusterTileK, "cshuffle", 2, s);
                    sc.acc_epilogue = spec.acc_epilogue;  // the layer's epilogue, applied in the fold
                    add("cluster", sc, s, true);
                }
            }
        }
    }
    return sh;
}

bool same_spec(const CIG::ConvSpec &a, const CIG::ConvSpec &b);

// The shapes this thread made last (problem-independent; thread_local, bounded:
// emptied when full), keyed by the arch row, the flavor's clusters and the base spec.
const Shape &memo_shape(const CIG::ConvSpec &spec, const targets::Arch &ar, const targets::Flavor &fl) {
    struct Entry {
        const targets::Arch *ar;
        std::string arch_name;
        bool clusters;
        CIG::ConvSpec spec;
        std::shared_ptr<const Shape> shape;
    };
    thread_local std::vector<Entry> memo;
    for (const Entry &e : memo)
        if (e.ar == &ar && e.clusters == fl.clusters && e.arch_name == ar.name && same_spec(e.spec, spec))
            return *e.shape;
    if (memo.size() >= 64) memo.clear();
    memo.push_back({&ar, ar.name, fl.clusters, spec, std::make_shared<const Shape>(candidate_shape(spec, ar, fl))});
    return *memo.back().shape;
}

// Every candidate and its admission (before the reference's rules): the memoised
// shape of the base spec, and for each candidate its rules pass, the problem's part.
std::vector<Listed> admitted_list(const CIG::ConvSpec &spec, const ConvProblem &p, const targets::Arch &ar,
                                  const targets::Flavor &fl) {
    const Shape &sh = memo_shape(spec, ar, fl);
    std::vector<Listed> out = sh.items;
    // the problem's rules once per problem (they do not read the candidate)
    const std::optional<std::string> problem = kernels::conv_launch::problem_reason(launch_spec(spec, p, 1));
    for (size_t i = 0; i < out.size(); ++i) {
        Listed &l = out[i];
        if (!l.why) l.why = admission(l.spec, l.binary, l.degree, p, problem, sh.budget[i]);
    }
    return out;
}

bool same_spec(const CIG::ConvSpec &a, const CIG::ConvSpec &b) {
    return std::tie(a.dtype, a.tile_m, a.tile_n, a.tile_k, a.waves_m, a.waves_n, a.pipeline, a.num_load_waves,
                    a.epilogue, a.vector_a, a.vector_b, a.acc_epilogue, a.split_k, a.split_k_cluster,
                    a.name_prefix) == std::tie(b.dtype, b.tile_m, b.tile_n, b.tile_k, b.waves_m, b.waves_n,
                                               b.pipeline, b.num_load_waves, b.epilogue, b.vector_a, b.vector_b,
                                               b.acc_epilogue, b.split_k, b.split_k_cluster, b.name_prefix);
}

bool same_problem(const ConvProblem &a, const ConvProblem &b) {
    return std::tie(a.N, a.C, a.H, a.W, a.K, a.Y, a.X, a.stride_h, a.stride_w, a.pad_h, a.pad_w, a.dil_h, a.dil_w,
                    a.groups) == std::tie(b.N, b.C, b.H, b.W, b.K, b.Y, b.X, b.stride_h, b.stride_w, b.pad_h,
                                          b.pad_w, b.dil_h, b.dil_w, b.groups);
}

// The admissions of the candidate lists this thread made last (twin of the Python
// engine's per-problem admission memo): thread_local, so concurrent C API calls share
// nothing and take no lock; bounded (emptied when full). An entry is keyed by all that
// admitted_list reads: the arch (table row: its address and name), the flavor's
// `clusters` (the one flavor fact the admission reads: conv_implicit_gemm::validate's
// cluster rule and the cluster candidates; so llvm20 and llvm22 share a list), the
// folded problem and the base spec.
struct MemoEntry {
    const targets::Arch *ar;
    std::string arch_name;
    bool clusters;
    ConvProblem p;
    CIG::ConvSpec spec;
    std::shared_ptr<const std::vector<Listed>> listed;
};
constexpr size_t kMemoMax = 64;

std::shared_ptr<const std::vector<Listed>> memo_admitted(const CIG::ConvSpec &spec, const ConvProblem &p,
                                                         const targets::Arch &ar, const targets::Flavor &fl) {
    thread_local std::vector<MemoEntry> memo;
    for (const MemoEntry &e : memo)
        if (e.ar == &ar && e.clusters == fl.clusters && e.arch_name == ar.name && same_problem(e.p, p) &&
            same_spec(e.spec, spec))
            return e.listed;
    if (memo.size() >= kMemoMax) memo.clear();
    auto listed = std::make_shared<const std::vector<Listed>>(admitted_list(spec, p, ar, fl));
    memo.push_back({&ar, ar.name, fl.clusters, p, spec, listed});
    return listed;
}

// rules_cus > 0: the reference's rules apply too (rules_admission), at that CU count
// (on a copy); otherwise the memoised list itself (read only, not copied).
std::shared_ptr<const std::vector<Listed>> candidate_list(const CIG::ConvSpec &spec, const ConvProblem &p,
                                                          const targets::Arch &ar, const targets::Flavor &fl,
                                                          int64_t rules_cus) {
    std::shared_ptr<const std::vector<Listed>> admitted = memo_admitted(spec, p, ar, fl);
    if (rules_cus <= 0) return admitted;
    auto out = std::make_shared<std::vector<Listed>>(*admitted);
    for (Listed &l : *out) {
        if (l.why) continue;
        auto [why, rule] = rules_admission(l.binary, l.spec, l.degree, p, ar, fl, rules_cus);
        l.why = why;
        l.rule = rule;
    }
    return out;
}

}  // namespace

std::pair<std::optional<std::string>, std::string> rules_admission(const std::string &binary,
                                                                   const CIG::ConvSpec &spec, int64_t degree,
                                                                   const ConvProblem &p, const targets::Arch &ar,
                                                                   const targets::Flavor &fl, int64_t cus) {
    if (binary == "plain") return {std::nullopt, "plain: the plain kernel is always admitted"};
    const int64_t tm = spec.tile_m, tn = spec.tile_n;
    const std::string tile = dec(tm) + "x" + dec(tn) + "x" + dec(spec.tile_k);
    CIG::ConvSpec auto_spec = spec;
    auto_spec.split_k = -1;
    auto_spec.split_k_cluster = 0;
    auto_spec.acc_epilogue = std::string("identity");  // fused layers: the unfused rules (docs/policy.md)
    const Decision d = resolve_conv_split_k("fwd", auto_spec, p, ar, false, &fl, cus);
    if (d.degree < 2)
        return {"the policy does not split at " + tile + " (rule " + d.rule + ": " + d.detail + ")", ""};
    if (binary == "two_stage") {
        if (degree > d.degree)
            return {"degree " + dec(degree) + " is over the policy's degree " + dec(d.degree) + " at " + tile +
                        " (rule " + d.rule + ")",
                    ""};
        return {std::nullopt, "policy: degree " + dec(degree) + " <= the policy's degree " + dec(d.degree) + " at " +
                                  tile + " (rule " + d.rule + ")"};
    }
    if (auto why = cluster_offer_reason(tm, tn, p, ar, fl)) return {"cluster " + *why, ""};
    const i128 tiles = i128(ceil_div(p.M(), tm)) * ceil_div(p.kpg(), tn) * p.groups;
    const int64_t target = kWgPerCu * cus;
    if (tiles * degree > target)
        return {"cluster S " + dec(degree) + ": " + dec128(tiles) + " output tiles x " + dec(degree) +
                    " is over the target " + dec(target),
                ""};
    return {std::nullopt, "cluster offer: " + dec128(tiles) + " output tiles < " + dec(kClusterMaxTiles) + ", Kgemm " +
                              dec(p.Kgemm()) + " >= " + dec(kClusterMinReduction) + ", K " + dec(p.K) + " and kpg " +
                              dec(p.kpg()) + " multiples of " + dec(kClusterKMultiple) + ", " + dec128(tiles) +
                              " x S " + dec(degree) + " <= the target " + dec(target) + "; the policy splits at " +
                              tile + " (degree " + dec(d.degree) + ", rule " + d.rule + ")"};
}

i128 Candidate::total_ps() const {
    for (const Term &t : terms)
        if (std::strcmp(t.name, "total_ps") == 0) return t.value;
    return 0;
}

namespace {

// The most bytes write_label writes after the binary's name.
constexpr size_t kLabelMax = 6 * (2 + kernels::kDec128Max);

// Writes "<binary> <tm>x<tn>x<tk> w<wm>x<wn> d<degree>" at `p` (room for
// binary.size() + kLabelMax bytes); returns the end.
char *write_label(char *p, const Candidate &c) {
    p = std::copy(c.binary.begin(), c.binary.end(), p);
    const std::pair<const char *, int64_t> parts[] = {{" ", c.spec.tile_m},  {"x", c.spec.tile_n},
                                                      {"x", c.spec.tile_k},  {" w", c.spec.waves_m},
                                                      {"x", c.spec.waves_n}, {" d", c.degree}};
    for (const auto &pv : parts) {
        for (const char *q = pv.first; *q;) *p++ = *q++;
        p = kernels::write_dec128(p, pv.second);
    }
    return p;
}

}  // namespace

std::string Candidate::label() const {
    std::string s(binary.size() + kLabelMax, '\0');
    s.resize(static_cast<size_t>(write_label(&s[0], *this) - s.data()));
    return s;
}

std::string Candidate::line() const {
    std::string s;
    append_line(s);
    return s;
}

void Candidate::append_line(std::string &s) const {
    // sized first (at most: "c" and the index, a space, the label, and per term a
    // space, its name, "=" and its value), written in place, cut to what was written
    size_t room = 2 + kernels::kDec128Max + binary.size() + kLabelMax;
    for (const Term &t : terms) room += 2 + std::strlen(t.name) + (t.text.empty() ? kernels::kDec128Max : t.text.size());
    const size_t at = s.size();
    s.resize(at + room);
    char *const start = &s[at];
    char *p = start;
    *p++ = 'c';
    p = kernels::write_dec128(p, index);
    *p++ = ' ';
    p = write_label(p, *this);
    for (const Term &t : terms) {
        *p++ = ' ';
        for (const char *q = t.name; *q;) *p++ = *q++;
        *p++ = '=';
        p = t.text.empty() ? kernels::write_dec128(p, t.value) : std::copy(t.text.begin(), t.text.end(), p);
    }
    s.resize(at + static_cast<size_t>(p - start));
}

std::vector<Term> predict(const CIG::ConvSpec &spec, const std::string &binary, int64_t degree, const ConvProblem &p,
                          const targets::Arch &arch, int64_t cus) {
    return predict_at(spec, binary, degree, p, Roof(arch), cus);
}

namespace {

// The K split of predict_at: the slice length `ks` (whole K tiles of `tk`), the slices
// that carry data, and the slices launched (`kc`: the cluster launches all `degree`).
struct Slicing {
    i128 ks, data, kc;
};

Slicing slicing(bool plain, bool cluster, int64_t degree, i128 Kg, int64_t tk) {
    if (plain) return {ceil_div(Kg, i128(tk)) * tk, 1, 1};
    const i128 ks = ceil_div(ceil_div(Kg, i128(degree)), i128(tk)) * tk;
    const i128 data = ceil_div(Kg, ks);
    return {ks, data, cluster ? i128(degree) : data};
}

// One term of predict_at's table: a number, or a text (bound's; `text` nullptr for a number).
struct Row {
    const char *name;
    i128 value;
    const char *text;
};

// The terms of `rows`, in order, made in place: no std::string per term but a text's.
std::vector<Term> terms_of(const Row *rows, size_t n) {
    std::vector<Term> t(n);
    for (size_t i = 0; i < n; ++i) {
        t[i].name = rows[i].name;
        t[i].value = rows[i].value;
        if (rows[i].text) t[i].text = rows[i].text;
    }
    return t;
}

std::vector<Term> predict_at(const CIG::ConvSpec &spec, const std::string &binary, int64_t degree,
                             const ConvProblem &p, const Roof &rf, int64_t cus) {
    const targets::Arch &arch = *rf.arch;
    const int64_t tm = spec.tile_m, tn = spec.tile_n, tk = spec.tile_k, wm = spec.waves_m, wn = spec.waves_n;
    const i128 M = p.M(), kpg = p.kpg(), g = p.groups, Kg = reduction(spec, p), K = p.K;
    const bool plain = binary == "plain", two_stage = binary == "two_stage", cluster = binary == "cluster";
    const Slicing sl = slicing(plain, cluster, degree, Kg, tk);
    const i128 ks = sl.ks, data = sl.data, kc = sl.kc;
    const i128 mt = ceil_div(M, i128(tm)), nt = ceil_div(kpg, i128(tn));
    const i128 wgs = mt * nt * g * kc;
    const int64_t waves = wm * wn;
    const int64_t all_waves = CIG::threads(spec) / aot::kWave;
    const int64_t simds = rf.simds;
    const int64_t steps = tk / kWmmaK;
    const int64_t per_wave = (tm / (kWmmaMN * wm)) * (tn / (kWmmaMN * wn)) * steps;
    const i128 wave_step = std::max<i128>(i128(per_wave) * rf.wmma_cycles,
                                          i128(rf.kstep_issue_cycles) * steps);
    const i128 occupancy = std::max<i128>(1, std::min<i128>(arch.lds_bytes / CIG::lds_bytes(spec),
                                                            simds * rf.max_waves / all_waves));
    const i128 wg_per_cu = ceil_div(wgs, i128(cus));
    const i128 conc = std::min(occupancy, wg_per_cu);
    const i128 rounds = ceil_div(wg_per_cu, conc);
    const i128 per_simd = ceil_div(conc * waves, i128(simds));
    const i128 barrier = cluster ? rf.cluster_barrier() : 0;
    const i128 compute_cycles = rounds * (per_simd * wave_step * (ks / tk) + barrier);
    const i128 wmma = mt * nt * g * (tm / kWmmaMN) * (tn / kWmmaMN) * ceil_div(Kg, i128(tk)) * steps;
    const i128 useful = g * ceil_div(M, i128(kWmmaMN)) * ceil_div(kpg, i128(kWmmaMN)) * ceil_div(Kg, i128(kWmmaK));
    const i128 d_bytes = M * K * kElemBytes, slab = M * K * kAccBytes;
    // plain: D only; two-stage: the slabs (Stage 2 reads them); cluster: the slabs, read back by the fold, and D
    const i128 writes = plain ? d_bytes : two_stage ? kc * slab : kc * slab + d_bytes;
    const i128 ws_reads = plain || two_stage ? 0 : kc * slab;
    const i128 a_bytes = g * M * Kg * kElemBytes * nt;
    const i128 b_bytes = g * kpg * Kg * kElemBytes * mt;
    // the accumulator epilogue's reads (bias: fp32[K]) go to the kernel that applies
    // it: the plain kernel, the cluster fold (stage 1) or Stage 2
    const i128 epi_bytes = kernels::acc_epilogue::has(spec.acc_epilogue, "bias") ? K * kAccBytes : 0;
    const i128 stage1_epi = two_stage ? 0 : epi_bytes;
    const i128 l2_bytes = a_bytes + b_bytes + writes + ws_reads + stage1_epi;
    const i128 hbm_bytes =
        i128(p.x_elems()) * kElemBytes + i128(p.w_elems()) * kElemBytes + writes + ws_reads + stage1_epi;
    const int64_t clock = rf.clock, hbm = rf.hbm;
    const i128 l2_cycles = ceil_div(l2_bytes, i128(rf.l2_per_clk) * cus);
    const i128 compute_ps = ceil_div(compute_cycles * kPsPerUs, i128(clock));
    const i128 l2_ps = ceil_div(l2_cycles * kPsPerUs, i128(clock));
    const i128 hbm_ps = ceil_div(hbm_bytes * kPsPerUs, i128(hbm));
    const i128 launch_ps = i128(rf.launch_ns) * 1000;
    const i128 body = std::max({compute_ps, l2_ps, hbm_ps});
    const char *const bound = body == compute_ps ? "compute" : body == l2_ps ? "l2" : "hbm";
    const i128 stage1_ps = launch_ps + body;
    const i128 stage2_bytes = two_stage ? kc * slab + d_bytes + epi_bytes : 0;
    const i128 stage2_ps = stage2_bytes ? launch_ps + ceil_div(stage2_bytes * kPsPerUs, i128(hbm)) : 0;
    const Row rows[] = {
        {"ks", ks, nullptr},
        {"ks_count", kc, nullptr},
        {"data", data, nullptr},
        {"wgs", wgs, nullptr},
        {"occupancy", occupancy, nullptr},
        {"rounds", rounds, nullptr},
        {"wmma", wmma, nullptr},
        {"useful", useful, nullptr},
        {"compute_cycles", compute_cycles, nullptr},
        {"l2_bytes", l2_bytes, nullptr},
        {"hbm_bytes", hbm_bytes, nullptr},
        {"compute_ps", compute_ps, nullptr},
        {"l2_ps", l2_ps, nullptr},
        {"hbm_ps", hbm_ps, nullptr},
        {"bound", 0, bound},
        {"stage1_ps", stage1_ps, nullptr},
        {"stage2_ps", stage2_ps, nullptr},
        {"total_ps", stage1_ps + stage2_ps, nullptr}};
    return terms_of(rows, sizeof rows / sizeof rows[0]);
}

}  // namespace

ModelSelection select_by_model(const ConvProblem &problem, const targets::Arch &ar, const targets::Flavor &fl,
                               const CIG::ConvSpec &spec, int64_t cus, bool rules) {
    ModelSelection ms;
    ms.cus = cus > 0 ? cus : ar.cus;
    ms.rules = rules;
    auto [f, p] = fold_width(problem);
    ms.fold = f;
    ms.problem = p;
    const bool wmma = std::any_of(ar.wmma.begin(), ar.wmma.end(),
                                  [](const targets::WmmaShape &w) { return w.m == 16 && w.n == 16 && w.k == 32; });
    if (ar.roofline.empty() || !wmma) {
        ms.seed_note = "arch " + ar.name + " has no roofline (gfx1250 only)";
        return ms;
    }
    const std::shared_ptr<const std::vector<Listed>> list = candidate_list(spec, p, ar, fl, rules ? ms.cus : 0);
    const std::vector<Listed> &listed = *list;
    ms.tried = static_cast<int64_t>(listed.size());
    const Roof rf(ar);
    ms.candidates.reserve(listed.size());
    for (size_t i = 0; i < listed.size(); ++i) {
        const Listed &l = listed[i];
        if (l.why) continue;
        Candidate c;
        c.index = static_cast<int64_t>(i);
        c.binary = l.binary;
        c.spec = l.spec;
        c.degree = l.degree;
        c.rule = l.rule;
        c.terms = predict_at(l.spec, l.binary, l.degree, p, rf, ms.cus);
        ms.candidates.push_back(std::move(c));
    }
    // The lowest total_ps; ties: less L2 traffic, fewer workgroups, the earlier candidate.
    // The rank keys are looked up by name once per candidate, not per comparison.
    // Every candidate's terms come from predict_at in one order: a key is looked for
    // where the last candidate had it first (`at`), then searched.
    auto term = [&](size_t i, const char *name, size_t &at) {
        const std::vector<Term> &ts = ms.candidates[i].terms;
        if (at < ts.size() && std::strcmp(ts[at].name, name) == 0) return ts[at].value;
        for (size_t k = 0; k < ts.size(); ++k)
            if (std::strcmp(ts[k].name, name) == 0) {
                at = k;
                return ts[k].value;
            }
        return i128(0);
    };
    using Rank = std::tuple<i128, i128, i128, int64_t>;  // total_ps, l2_bytes, wgs, position
    std::vector<Rank> order(ms.candidates.size());
    size_t at_total = 0, at_l2 = 0, at_wgs = 0;
    for (size_t i = 0; i < order.size(); ++i)
        order[i] = {term(i, "total_ps", at_total), term(i, "l2_bytes", at_l2), term(i, "wgs", at_wgs),
                    static_cast<int64_t>(i)};
    // A total order (the position last), so the ranking is deterministic; only the best
    // two are needed.
    const size_t top = std::min<size_t>(2, order.size());
    std::partial_sort(order.begin(), order.begin() + top, order.end());
    if (top > 0) ms.best = std::get<3>(order[0]);
    if (top > 1) ms.runner_up = std::get<3>(order[1]);
    const Selection sel = select_binary(spec, problem, ar, fl, ms.cus);
    if (sel.binary == "none" || sel.admission) {
        ms.seed_note = "the seed policy selects no admitted binary: " +
                       (sel.admission ? *sel.admission : sel.decision.detail);
    } else {
        Candidate c;
        c.binary = sel.binary;
        c.spec = sel.spec;
        c.degree = sel.degree;
        c.terms = predict(sel.spec, sel.binary, sel.degree, sel.problem, ar, ms.cus);
        ms.seed = std::move(c);
    }
    return ms;
}

}  // namespace cpe::policy::perf_model
