// Twin of python_engine/kernels/conv_launch.py (admission and plan of a resolved
// spec; split_k = -1 is resolved in families/conv_launch.cpp). Admission arithmetic runs in
// 128-bit integers: every problem field is checked to be below 2^31 first, so
// no product of the rules (at most four such factors and small constants)
// overflows, and reasons print the exact values in plain decimal.
#include "kernels/conv_launch.h"

#include <array>
#include <cstring>
#include <map>
#include <stdexcept>

#include "ir/constants.h"
#include "ir/types.h"
#include "kernels/acc_epilogue.h"
#include "kernels/conv_abi.h"
#include "kernels/conv_problem.h"
#include "kernels/int_math.h"

namespace cpe::kernels::conv_launch {

const char *const kFamily = "conv_launch";

namespace {

using kernels::i128;

constexpr int64_t kI32Max = 2147483647;             // 2^31 - 1
constexpr int64_t kBytesLimit = int64_t(1) << 31;   // every byte count below this
// HIP grid limits (blocks per dimension) as hipGetDeviceProperties reports
// them (x 2^31-1, y and z 2^16-1; ROCm/clr issue #140, ROCm/ROCR-Runtime PR
// #298) and the AQL dispatch packet's grid size in work-items (uint32).
constexpr int64_t kGridMax[3] = {kI32Max, 65535, 65535};
constexpr int64_t kAqlWorkitemsMax = (int64_t(1) << 32) - 1;
constexpr int64_t kStoreVec = 4;  // cshuffle / cluster-fold store width (output channels)
constexpr int64_t kElemBytes = 2;  // bf16 / fp16


// One given problem field: name, value, lowest allowed value.
struct ProblemField {
    const char *name;
    int64_t value;
    int64_t lo;
};

std::vector<ProblemField> problem_fields(const LaunchSpec &s) {
    return {{"N", s.N, 1},           {"C", s.C, 1},           {"H", s.H, 1},         {"W", s.W, 1},
            {"K", s.K, 1},           {"Y", s.Y, 1},           {"X", s.X, 1},         {"stride_h", s.stride_h, 1},
            {"stride_w", s.stride_w, 1}, {"pad_h", s.pad_h, 0}, {"pad_w", s.pad_w, 0}, {"dil_h", s.dil_h, 1},
            {"dil_w", s.dil_w, 1},   {"groups", s.groups, 1}};
}

// The problem with every size exact (valid only after the field range checks
// and the filter-fit check: numerators are then >= 0).
struct Sizes {
    i128 Ho, Wo, M, kpg, cpg, Kgemm;
};

Sizes sizes(const LaunchSpec &s) {
    Sizes z;
    z.Ho = (i128(s.H) + 2 * i128(s.pad_h) - i128(s.dil_h) * (s.Y - 1) - 1) / s.stride_h + 1;
    z.Wo = (i128(s.W) + 2 * i128(s.pad_w) - i128(s.dil_w) * (s.X - 1) - 1) / s.stride_w + 1;
    z.M = i128(s.N) * z.Ho * z.Wo;
    z.kpg = s.K / s.groups;
    z.cpg = s.C / s.groups;
    z.Kgemm = i128(s.Y) * s.X * z.cpg;
    return z;
}

// (name, value) of the problem block, in conv_problem::problem_args() order.
std::vector<std::pair<std::string, i128>> problem_block(const LaunchSpec &s, const Sizes &z) {
    const i128 v[] = {s.N,     s.C,     s.H,     s.W,      s.K,  s.Y,  s.X,  s.stride_h, s.stride_w, s.pad_h,
                      s.pad_w, s.dil_h, s.dil_w, s.groups, z.Ho, z.Wo, z.M,  z.kpg,      z.cpg,      z.Kgemm};
    const auto &names = conv_problem::problem_args();
    std::vector<std::pair<std::string, i128>> out;
    for (size_t i = 0; i < names.size(); ++i) out.emplace_back(names[i], v[i]);
    return out;
}

struct Slicing {
    i128 ks, ks_count, data;  // data: the slices that carry data (<= ks_count)
};

// A two-stage binary launches ks_count = data (every slice non-empty); a
// cluster binary launches ks_count = S = degree, so its trailing S - data
// slices may be empty. data <= degree always (ks >= Kgemm / degree).
// The reduction the kernel's K loop covers: Kgemm, or for a padded-pixel
// vector_a (3, 5, 6, 7; the small-channel path) Y*X taps of pixel_slot(vector_a)
// elements (the padding channels are zero in A and B).
i128 reduction(const LaunchSpec &s, const Sizes &z) {
    const int64_t va = s.conv.vector_a;
    return conv_implicit_gemm::is_pixel_vector(va) ? i128(s.Y) * s.X * conv_implicit_gemm::pixel_slot(va) : z.Kgemm;
}

Slicing slicing(const LaunchSpec &s, const Sizes &z) {
    const i128 tk = s.conv.tile_k;
    const i128 kr = reduction(s, z);
    const i128 ks = ceil_div(ceil_div(kr, s.degree), tk) * tk;
    const i128 data = ceil_div(kr, ks);
    const int64_t S = s.conv.split_k_cluster;
    if (S && data > S)  // an internal invariant of the slicing rule, not an admission rule
        throw std::logic_error("conv_launch: " + dec128(data) + " slices carry data, more than the cluster's " +
                               ir::dec(S) + " (reduction " + dec128(kr) + ", ks " + dec128(ks) + ")");
    return {ks, S ? i128(S) : data, data};
}

// (name, bytes) of every buffer the forward kernel range-checks, in check order
// (at most five; no allocation).
struct ByteCounts {
    std::pair<const char *, i128> v[5];
    size_t n = 0;
    void add(const char *name, i128 bytes) { v[n++] = {name, bytes}; }
    const std::pair<const char *, i128> *begin() const { return v; }
    const std::pair<const char *, i128> *end() const { return v + n; }
};

ByteCounts byte_counts(const LaunchSpec &s, const Sizes &z, i128 ks_count) {
    ByteCounts out;
    out.add("x_bytes", i128(s.N) * s.H * s.W * s.C * kElemBytes);
    out.add("w_bytes", i128(s.K) * s.Y * s.X * z.cpg * kElemBytes);
    out.add("d_bytes", z.M * s.K * kElemBytes);
    if (acc_epilogue::has(s.conv.acc_epilogue, "bias")) out.add("bias_bytes", i128(s.K) * 4);
    if (s.conv.split_k > 1) out.add("ws_bytes", ks_count * z.M * s.K * 4);
    return out;
}

i128 lookup(const ByteCounts &v, const char *name, i128 missing) {
    for (const auto &p : v)
        if (std::strcmp(p.first, name) == 0) return p.second;
    return missing;
}

std::array<i128, 3> grid(const LaunchSpec &s, const Sizes &z, i128 ks_count) {
    return {ceil_div(z.M, s.conv.tile_m), ceil_div(z.kpg, s.conv.tile_n), i128(s.groups) * ks_count};
}

}  // namespace

const std::vector<spec::Field> &fields() {
    static const std::vector<spec::Field> f = [] {
        std::vector<spec::Field> v = conv_implicit_gemm::fields();
        for (const char *n : {"N", "C", "H", "W", "K", "Y", "X", "stride_h", "stride_w", "pad_h", "pad_w", "dil_h",
                              "dil_w", "groups", "degree"})
            v.push_back({n, spec::FieldKind::Int});
        return v;
    }();
    return f;
}

std::optional<std::string> problem_reason(const LaunchSpec &spec) {
    for (const ProblemField &f : problem_fields(spec))
        if (f.value < f.lo || f.value > kI32Max)
            return std::string("problem field ") + f.name + " must be in " + ir::dec(f.lo) + ".." + ir::dec(kI32Max) +
                   ", got " + ir::dec(f.value);
    const int64_t g = spec.groups;
    if (spec.C % g || spec.K % g)
        return "groups " + ir::dec(g) + " must divide C " + ir::dec(spec.C) + " and K " + ir::dec(spec.K);
    const i128 fh = i128(spec.dil_h) * (spec.Y - 1) + 1, fw = i128(spec.dil_w) * (spec.X - 1) + 1;
    const i128 ph = i128(spec.H) + 2 * i128(spec.pad_h), pw = i128(spec.W) + 2 * i128(spec.pad_w);
    if (fh > ph || fw > pw)
        return "the dilated filter " + dec128(fh) + "x" + dec128(fw) + " does not fit the padded input " +
               dec128(ph) + "x" + dec128(pw);
    const Sizes z = sizes(spec);
    for (const auto &a : problem_block(spec, z))
        if (a.second > kI32Max)
            return "kernel argument " + a.first + " = " + dec128(a.second) + " exceeds the i32 range (max " +
                   ir::dec(kI32Max) + ")";
    return std::nullopt;
}

conv_problem::ConvProblem problem_of(const LaunchSpec &s) {
    conv_problem::ConvProblem p{s.N, s.C, s.H, s.W, s.K, s.Y, s.X};
    p.stride_h = s.stride_h;
    p.stride_w = s.stride_w;
    p.pad_h = s.pad_h;
    p.pad_w = s.pad_w;
    p.dil_h = s.dil_h;
    p.dil_w = s.dil_w;
    p.groups = s.groups;
    return p;
}

std::optional<std::string> validate(const LaunchSpec &spec, const targets::Arch &arch,
                                    const targets::Flavor &flavor) {
    if (auto r = conv_implicit_gemm::validate(spec.conv, arch, flavor)) return r;
    return launch_reason(spec);
}

std::optional<std::string> launch_reason(const LaunchSpec &spec, const std::optional<std::string> *problem) {
    const int64_t d = spec.degree, sk = spec.conv.split_k, s = spec.conv.split_k_cluster;
    if (d < 1) return "degree must be >= 1 (the split-K degree of this launch), got " + ir::dec(d);
    if (sk == 1 && d != 1) return "the plain binary (split_k = 1) launches with degree 1, got " + ir::dec(d);
    if (s && d != s)
        return "the cluster binary (split_k_cluster = " + ir::dec(s) + ") launches with degree " + ir::dec(s) +
               ", got " + ir::dec(d);
    if (auto r = problem ? *problem : problem_reason(spec)) return r;
    const Sizes z = sizes(spec);
    const int64_t va = spec.conv.vector_a;
    if (conv_implicit_gemm::is_pixel_vector(va) && z.cpg != va)
        return "vector_a " + ir::dec(va) + " loads one padded pixel of " + ir::dec(va) + " channels: it needs cpg = " +
               ir::dec(va) + ", got cpg " + dec128(z.cpg);
    const std::pair<const char *, int64_t> vecs[] = {{"vector_a", spec.conv.vector_a},
                                                     {"vector_b", spec.conv.vector_b}};
    for (const auto &fv : vecs)
        if (z.cpg % fv.second)
            return std::string(fv.first) + " " + ir::dec(fv.second) + " must divide the channels per group cpg " +
                   dec128(z.cpg);
    const bool cshuffle = *spec.conv.epilogue == "cshuffle";
    if ((cshuffle || s) && (z.kpg % kStoreVec || spec.K % kStoreVec))
        return std::string("the ") + (cshuffle ? "cshuffle epilogue" : "cluster fold") + " stores " +
               ir::dec(kStoreVec) + " output channels per vector: kpg and K must be multiples of " +
               ir::dec(kStoreVec) + ", got kpg " + dec128(z.kpg) + ", K " + ir::dec(spec.K);
    const Slicing sl = slicing(spec, z);  // a cluster: ks_count = S, trailing empty slices admitted
    for (const auto &b : byte_counts(spec, z, sl.ks_count))
        if (b.second >= kBytesLimit)
            return std::string(b.first) + " = " + dec128(b.second) +
                   " must be below 2^31 (the kernel's buffer offsets are 32-bit)";
    const std::array<i128, 3> gr = grid(spec, z, sl.ks_count);
    const char axes[3] = {'x', 'y', 'z'};
    for (int i = 0; i < 3; ++i)
        if (gr[i] > kGridMax[i])
            return std::string("grid ") + axes[i] + " = " + dec128(gr[i]) + (i == 2 ? " (groups * ks_count)" : "") +
                   " exceeds the HIP limit " + ir::dec(kGridMax[i]);
    const i128 items = gr[0] * conv_implicit_gemm::threads(spec.conv);
    if (items > kAqlWorkitemsMax)
        return "grid x * block = " + dec128(items) + " work-items exceeds the 32-bit AQL grid size " +
               ir::dec(kAqlWorkitemsMax);
    const std::pair<const char *, i128> sargs[] = {{"ks", sl.ks}, {"ks_count", sl.ks_count}};
    for (const auto &a : sargs)
        if (a.second > kI32Max)
            return std::string("kernel argument ") + a.first + " = " + dec128(a.second) + " exceeds the i32 range (max " +
                   ir::dec(kI32Max) + ")";
    return std::nullopt;
}

std::string kernel_name(const LaunchSpec &spec) { return conv_implicit_gemm::kernel_name(spec.conv); }

namespace {

// Value text of every argument of `variant` (see conv_launch.py _arg_values):
// byte counts and extents in decimal, pointers "buffer <tensor>" or "unused",
// epilogue scalars "caller" or "unused".
std::map<std::string, std::string> arg_values(const LaunchSpec &spec, const Sizes &z, const std::string &variant,
                                              const Slicing &sl) {
    const std::string &acc = *spec.conv.acc_epilogue;
    const auto nb = byte_counts(spec, z, sl.ks_count);
    std::map<std::string, std::string> v;
    if (variant == "reduce") {
        v["ws_ptr"] = "buffer ws";
        v["ws_bytes"] = dec128(sl.ks_count * z.M * spec.K * 4);
        v["d_ptr"] = "buffer d";
        v["d_bytes"] = dec128(lookup(nb, "d_bytes", 0));
        v["M"] = dec128(z.M);
        v["K"] = ir::dec(spec.K);
        v["ks_count"] = dec128(sl.ks_count);
        if (acc_epilogue::has(acc, "bias")) {
            v["bias_ptr"] = "buffer bias";
            v["bias_bytes"] = dec128(lookup(nb, "bias_bytes", 0));
        }
        if (acc_epilogue::has(acc, "scale")) v["scale"] = "caller";
        if (acc_epilogue::has(acc, "clamp")) {
            v["clamp_lo"] = "caller";
            v["clamp_hi"] = "caller";
        }
        return v;
    }
    const bool writes_d = variant != "two_stage";
    const std::string epi = writes_d ? acc : std::string("identity");  // Stage 1 stores raw partials
    v["x_ptr"] = "buffer x";
    v["x_bytes"] = dec128(lookup(nb, "x_bytes", 0));
    v["w_ptr"] = "buffer w";
    v["w_bytes"] = dec128(lookup(nb, "w_bytes", 0));
    v["d_ptr"] = writes_d ? "buffer d" : "unused";
    v["d_bytes"] = dec128(lookup(nb, "d_bytes", 0));
    v["bias_ptr"] = acc_epilogue::has(epi, "bias") ? "buffer bias" : "unused";
    v["scale"] = acc_epilogue::has(epi, "scale") ? "caller" : "unused";
    v["clamp_lo"] = acc_epilogue::has(epi, "clamp") ? "caller" : "unused";
    v["clamp_hi"] = acc_epilogue::has(epi, "clamp") ? "caller" : "unused";
    for (const auto &a : problem_block(spec, z)) v[a.first] = dec128(a.second);
    if (variant != "plain") {
        v["ws_ptr"] = "buffer ws";
        v["ws_bytes"] = dec128(lookup(nb, "ws_bytes", 0));
        v["ks"] = dec128(sl.ks);
        v["ks_count"] = dec128(sl.ks_count);
    }
    return v;
}

// (name, value text) per argument of `variant`, in ABI order; a missing or
// extra name is an internal error.
std::vector<PlanArg> arg_list(const std::map<std::string, std::string> &values, const std::string &variant,
                              const std::string &acc = "identity") {
    const std::vector<std::string> names = conv_abi::param_names(variant, acc);
    std::string missing, extra;
    for (const std::string &n : names)
        if (!values.count(n)) missing += (missing.empty() ? "" : ", ") + n;
    for (const auto &kv : values) {
        bool known = false;
        for (const std::string &n : names) known = known || n == kv.first;
        if (!known) extra += (extra.empty() ? "" : ", ") + kv.first;
    }
    if (!missing.empty() || !extra.empty())
        throw std::logic_error("conv_launch: argument values of variant " + variant +
                               " do not match its ABI (missing: " + (missing.empty() ? "-" : missing) +
                               "; extra: " + (extra.empty() ? "-" : extra) + ")");
    std::vector<PlanArg> out;
    for (const std::string &n : names) out.push_back({n, values.at(n)});
    return out;
}

// "<index> <name> = <value>" per argument.
std::string arg_lines(const std::vector<PlanArg> &args) {
    std::string out;
    for (size_t i = 0; i < args.size(); ++i)
        out += ir::dec(static_cast<int64_t>(i)) + " " + args[i].name + " = " + args[i].value + "\n";
    return out;
}

}  // namespace

Plan plan(const LaunchSpec &spec, const targets::Arch &, const targets::Flavor &) {
    const Sizes z = sizes(spec);
    const int64_t s = spec.conv.split_k_cluster;
    const Slicing sl = slicing(spec, z);  // every value below 2^31 once admitted
    const bool two_stage = spec.conv.split_k > 1;
    const std::array<i128, 3> gr = grid(spec, z, sl.ks_count);
    Plan p;
    p.kernel = kernel_name(spec);
    p.variant = conv_abi::variant_of(spec.conv.split_k, s);
    p.degree = spec.degree;
    p.ks = static_cast<int64_t>(sl.ks);
    p.ks_count = static_cast<int64_t>(sl.ks_count);
    p.data_slices = static_cast<int64_t>(sl.data);
    for (int i = 0; i < 3; ++i) p.grid[i] = static_cast<int64_t>(gr[i]);
    p.block[0] = conv_implicit_gemm::threads(spec.conv);
    p.lds_bytes = conv_implicit_gemm::lds_bytes(spec.conv);
    p.cluster_slices = s;
    p.workspace_bytes = static_cast<int64_t>(lookup(byte_counts(spec, z, sl.ks_count), "ws_bytes", 0));
    p.needs_stage2 = two_stage && !s;  // the one predicate for Stage 2
    p.args = arg_list(arg_values(spec, z, p.variant, sl), p.variant);
    if (p.needs_stage2)
        p.stage2_args = arg_list(arg_values(spec, z, "reduce", sl), "reduce", *spec.conv.acc_epilogue);
    p.acc_epilogue = *spec.conv.acc_epilogue;
    return p;
}

std::string plan_text(const Plan &p) {
    const int64_t s = p.cluster_slices;
    std::string t = "conv_launch " + p.kernel + "\n";
    t += "variant " + p.variant + "\n";
    t += "degree " + ir::dec(p.degree) + "\n";
    t += "ks " + ir::dec(p.ks) + "\n";
    t += "ks_count " + ir::dec(p.ks_count) + "\n";
    if (s) t += "data_slices " + ir::dec(p.data_slices) + "\n";
    t += "grid " + ir::dec(p.grid[0]) + " " + ir::dec(p.grid[1]) + " " + ir::dec(p.grid[2]) + "\n";
    t += "block " + ir::dec(p.block[0]) + " " + ir::dec(p.block[1]) + " " + ir::dec(p.block[2]) + "\n";
    t += "lds_bytes " + ir::dec(p.lds_bytes) + "\n";
    t += "cluster " + (s ? "1 1 " + ir::dec(s) : std::string("none")) + "\n";
    t += "workspace_bytes " + ir::dec(p.workspace_bytes) + "\n";
    t += std::string("needs_stage2 ") + (p.needs_stage2 ? "true" : "false") + "\n";
    t += "args " + p.variant + "\n";
    t += arg_lines(p.args);
    if (p.needs_stage2) {
        t += "stage2_args reduce" +
             (p.acc_epilogue == "identity" ? std::string() : " acc_epilogue=" + p.acc_epilogue) + "\n";
        t += arg_lines(p.stage2_args);
    }
    return t;
}

std::pair<std::string, std::string> build(const LaunchSpec &spec, const targets::Arch &arch,
                                          const targets::Flavor &flavor) {
    const Plan p = plan(spec, arch, flavor);
    return {p.kernel, plan_text(p)};
}

}  // namespace cpe::kernels::conv_launch
