// Twin of python_engine/kernels/conv_implicit_gemm.py. Every builder call is a
// statement of its own (nested calls are hoisted into locals in Python's
// left-to-right evaluation order), so the SSA counter runs in the Python
// module's order; the methods of Kernel are in emission order and carry the
// Python method names.
#include "kernels/conv_implicit_gemm.h"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <map>
#include <stdexcept>

#include "ir/builder.h"
#include "ir/constants.h"
#include "ir/values.h"
#include "kernels/common.h"
#include "kernels/conv_abi.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

const char *const kFamily = "conv_implicit_gemm";

namespace {

constexpr int64_t kWmmaM = 16, kWmmaN = 16, kWmmaK = 32;
// A tile side above this can never fit the LDS of any arch; the bound also keeps
// every size the rules compute (threads, LDS bytes) well inside 64 bits.
constexpr int64_t kMaxTile = 1024;
constexpr int64_t kWave = 32;
constexpr int64_t kMaxLoadWaves = 8;
// A/B LDS layout: rows of tile_k elements (no padding), XOR-swizzled in 16-byte
// chunks of kChunk elements (see swizzle()); the C-shuffle rows are tile_n +
// kPadC fp32 (16 bytes) apart. Bank model (64 banks x 4 bytes, a 256-byte phase
// = kSweepChunks chunks): parity/sim/lds_banks.py.
constexpr int64_t kChunk = 8;
constexpr int64_t kSweepChunks = 16;
constexpr int64_t kPadC = 4;
// Elements per lane in the C-shuffle store phase and the cluster fold (fp32
// slabs, and D when kpg or K is not a multiple of kDVec).
constexpr int64_t kOutVec = 4;
// Elements per lane of a 16-byte D store (both epilogues, when K and kpg are
// multiples of kDVec: a wave-uniform run-time branch on the kernel arguments).
constexpr int64_t kDVec = 8;
// Per-wave D transpose region of the default epilogue: 16 rows of kDtRow
// elements (row stride 48 bytes: conflict-free b16 writes and b128 reads).
constexpr int64_t kDtRow = 24;
// Per-wave fp32 slab transpose region of the default epilogue with split-K: 16
// rows of kWtRow floats (row stride 80 bytes: the half-waves' b32 rows sit 32
// banks apart, the 16 rows of a b128 phase start at 16 distinct multiples of 4
// banks; 0 conflicts in parity/sim/lds_banks.py).
constexpr int64_t kWtRow = 20;
// 16-byte cshuffle D slots per row segment: with more per row, two rows share a
// 16-lane phase (kPairSlots slots each) so the b128 C loads do not collide.
constexpr int64_t kPairSlots = 8;

// (rows_per_phase, period) of the A/B XOR swizzle (python swizzle()).
std::pair<int64_t, int64_t> swizzle(int64_t tile_k) {
    const int64_t cpr = tile_k / kChunk;
    return {std::max<int64_t>(1, kSweepChunks / cpr), std::min<int64_t>(cpr & -cpr, kSweepChunks)};
}

// Byte offsets and sizes inside the one LDS allocation (python lds_parts()).
struct LdsParts {
    int64_t a_off, a_bytes, b_off, b_bytes;
    bool has_c, has_dt;
    int64_t c_bytes, dt_bytes;  // both at offset 0 (aliasing A/B)
    int64_t end() const {
        int64_t n = std::max(a_off + a_bytes, b_off + b_bytes);
        if (has_c) n = std::max(n, c_bytes);
        if (has_dt) n = std::max(n, dt_bytes);
        return n;
    }
};

bool is_dtype(const std::optional<std::string> &d) { return d && (*d == "bf16" || *d == "fp16"); }
const Type *dtype_type(const std::string &d) { return d == "bf16" ? bfloat() : half(); }
const char *wmma_key(const std::string &d) {
    return d == "bf16" ? "wmma_f32_16x16x32_bf16" : "wmma_f32_16x16x32_f16";
}

bool one_of(const std::optional<std::string> &v, std::initializer_list<const char *> set) {
    if (!v) return false;
    for (const char *s : set)
        if (*v == s) return true;
    return false;
}

bool is_identifier(const std::string &s) {
    // [A-Za-z_][A-Za-z0-9_]* (ASCII)
    if (s.empty()) return false;
    for (size_t i = 0; i < s.size(); ++i) {
        const unsigned char c = static_cast<unsigned char>(s[i]);
        const bool alpha = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
        const bool digit = c >= '0' && c <= '9';
        if (!(alpha || (i > 0 && digit))) return false;
    }
    return true;
}

}  // namespace

const std::vector<spec::Field> &fields() {
    constexpr spec::FieldKind Int = spec::FieldKind::Int, Str = spec::FieldKind::Str;
    static const std::vector<spec::Field> f{
        {"dtype", Str},          {"tile_m", Int},         {"tile_n", Int},
        {"tile_k", Int},         {"waves_m", Int},        {"waves_n", Int},
        {"pipeline", Str},       {"num_load_waves", Int}, {"epilogue", Str},
        {"vector_a", Int},       {"vector_b", Int},       {"acc_epilogue", Str},
        {"split_k", Int},        {"split_k_cluster", Int}, {"name_prefix", Str},
    };
    return f;
}

int64_t threads(const ConvSpec &spec) {
    int64_t w = spec.waves_m * spec.waves_n;
    if (*spec.pipeline == "wavelet") w += spec.num_load_waves;
    return w * kWave;
}

namespace {
LdsParts lds_parts(const ConvSpec &spec) {
    const int64_t es = byte_size(dtype_type(*spec.dtype));
    LdsParts p{};
    p.a_off = 0;
    p.a_bytes = 2 * spec.tile_m * spec.tile_k * es;
    p.b_off = p.a_bytes;
    p.b_bytes = 2 * spec.tile_n * spec.tile_k * es;
    p.has_c = *spec.epilogue == "cshuffle";
    p.has_dt = !p.has_c;
    p.c_bytes = spec.tile_m * (spec.tile_n + kPadC) * 4;
    // D (fp16/bf16, kDtRow) or, with split-K, fp32 slab (kWtRow) transpose regions.
    p.dt_bytes = spec.split_k == 1 ? spec.waves_m * spec.waves_n * 16 * kDtRow * es
                                   : spec.waves_m * spec.waves_n * 16 * kWtRow * 4;
    return p;
}
}  // namespace

std::vector<LdsBuffer> lds_layout(const ConvSpec &spec) {
    const Type *et = dtype_type(*spec.dtype);
    return {{"lds", et, lds_parts(spec).end() / byte_size(et)}};
}

int64_t lds_bytes(const ConvSpec &spec) {
    int64_t n = 0;
    for (const auto &b : lds_layout(spec)) n += byte_size(b.elem) * b.count;
    return n;
}

std::optional<std::string> validate(const ConvSpec &spec, const targets::Arch &arch,
                                    const targets::Flavor &flavor) {
    if (!is_dtype(spec.dtype)) return "dtype must be bf16 or fp16, got " + spec::show(spec.dtype);
    const int64_t tm = spec.tile_m, tn = spec.tile_n, tk = spec.tile_k;
    if (tm < kWmmaM || tm % kWmmaM || tn < kWmmaN || tn % kWmmaN || tk < kWmmaK || tk % kWmmaK ||
        std::max({tm, tn, tk}) > kMaxTile)
        return "tile must be a multiple of the WMMA shape 16x16x32 (tile_m, tile_n multiples of 16, "
               "tile_k a multiple of 32, each at most 1024), got " +
               dec(tm) + "x" + dec(tn) + "x" + dec(tk);
    const int64_t wm = spec.waves_m, wn = spec.waves_n;
    // tm % (wm*16) without overflow: wm > tm/16 leaves a remainder of tm != 0.
    if (wm < 1 || wn < 1 || wm > tm / kWmmaM || tm % (wm * kWmmaM) || wn > tn / kWmmaN || tn % (wn * kWmmaN))
        return "waves " + dec(wm) + "x" + dec(wn) + " must divide the tile " + dec(tm) + "x" + dec(tn) +
               " into per-wave tiles that are multiples of 16x16";
    if (!one_of(spec.pipeline, {"mem", "wavelet"}))
        return "pipeline must be mem or wavelet, got " + spec::show(spec.pipeline);
    const int64_t lw = spec.num_load_waves;
    if (*spec.pipeline == "wavelet" && (lw < 1 || lw > kMaxLoadWaves))
        return "num_load_waves must be 1.." + dec(kMaxLoadWaves) + " for the wavelet pipeline, got " + dec(lw);
    if (!one_of(spec.epilogue, {"default", "cshuffle"}))
        return "epilogue must be default or cshuffle, got " + spec::show(spec.epilogue);
    // Bounded by the tile rule (waves <= 1024/16 per axis), so int64 is exact.
    const int64_t t = threads(spec);
    if (t > 1024) return "work-group of " + dec(t) + " threads exceeds 1024";
    const std::pair<const char *, int64_t> vecs[] = {{"vector_a", spec.vector_a}, {"vector_b", spec.vector_b}};
    for (const auto &fv : vecs) {
        const int64_t v = fv.second;
        if (v < 1 || v > 8) return std::string(fv.first) + " must be 1 to 8 elements, got " + dec(v);
    }
    if ((is_pixel_vector(spec.vector_a) || is_pixel_vector(spec.vector_b)) && spec.vector_a != spec.vector_b)
        return "padded-pixel loads (vector 3, 5, 6 or 7) need vector_a = vector_b (A and B share the padded K "
               "order), got " +
               dec(spec.vector_a) + " and " + dec(spec.vector_b);
    if (!one_of(spec.acc_epilogue, {"identity", "bias", "scale", "relu", "clamp"}))
        return "acc_epilogue must be identity, bias, scale, relu or clamp, got " + spec::show(spec.acc_epilogue);
    const int64_t nb = lds_bytes(spec);
    if (nb > arch.lds_bytes)
        return "LDS use of " + dec(nb) + " bytes exceeds the " + dec(arch.lds_bytes) + " bytes of " + arch.name;
    if (!targets::has_wmma_16x16x32(arch))
        return "arch " + arch.name + " has no 16x16x32 WMMA (conv_implicit_gemm requires gfx1250)";
    const int64_t sk = spec.split_k;
    if (sk == -1) return std::string("split_k = -1 (auto) must be resolved before lowering");
    if (sk < 1) return "split_k must be 1 (off) or greater than 1 (two-stage), got " + dec(sk);
    if (sk > 1 && *spec.acc_epilogue != "identity")
        return "split-K needs the identity accumulator epilogue (it applies per slice), got " +
               spec::show(spec.acc_epilogue);
    const int64_t s = spec.split_k_cluster;
    if (s) {
        if (!flavor.clusters) return std::string("split_k_cluster requires flavor llvm23");
        if (!arch.clusters) return std::string("split_k_cluster requires arch gfx1250");
        if (*spec.pipeline != "mem") return std::string("split_k_cluster requires the mem pipeline");
        if (s < 2 || s > 15) return "split_k_cluster must be 0 (off) or 2..15, got " + dec(s);
        if (sk == 1) return std::string("split_k_cluster requires split_k > 1 (the two-stage ABI)");
    }
    const std::optional<std::string> &p = spec.name_prefix;
    if (!p || (!p->empty() && !is_identifier(*p)))
        return "name_prefix must be empty or an identifier, got " + spec::show(p);
    return std::nullopt;
}

bool is_pixel_vector(int64_t v) { return v == 3 || v == 5 || v == 6 || v == 7; }

int64_t pixel_slot(int64_t v) { return v == 3 ? 4 : is_pixel_vector(v) ? 8 : v; }

std::vector<int64_t> pixel_pieces(int64_t v) {
    if (!is_pixel_vector(v)) return {2 * v};
    std::vector<int64_t> out;
    int64_t n = 2 * v;
    for (int64_t w : {8, 4, 2}) {
        if (n >= w) {
            out.push_back(w);
            n -= w;
        }
    }
    return out;
}

std::string kernel_name(const ConvSpec &spec) {
    const std::string pipe = *spec.pipeline == "mem" ? std::string("mem") : "wavelet" + dec(spec.num_load_waves);
    std::string name = "conv_implicit_gemm_" + *spec.dtype + "_" + dec(spec.tile_m) + "x" + dec(spec.tile_n) + "x" +
                       dec(spec.tile_k) + "_w" + dec(spec.waves_m) + "x" + dec(spec.waves_n) + "_" + pipe + "_" +
                       *spec.epilogue + "_va" + dec(spec.vector_a) + "_vb" + dec(spec.vector_b) + "_" +
                       *spec.acc_epilogue;
    if (spec.split_k > 1) name += "_spk";
    if (spec.split_k_cluster) name += "_skc" + dec(spec.split_k_cluster);
    if (!spec.name_prefix->empty()) name = *spec.name_prefix + "_" + name;
    return name;
}

namespace {

// The raw buffer load/store type of `nbytes` (2, 4, 8 or 16).
const Type *raw_type(int64_t nbytes) {
    switch (nbytes) {
        case 2: return i16();
        case 4: return float_();
        case 8: return vec(2, float_());
        case 16: return vec(4, float_());
        default: throw std::logic_error("no raw buffer type of " + dec(nbytes) + " bytes");
    }
}

const char *load_key(int64_t nbytes) {
    switch (nbytes) {
        case 2: return "raw_buffer_load_i16";
        case 4: return "raw_buffer_load_f32";
        case 8: return "raw_buffer_load_v2f32";
        case 16: return "raw_buffer_load_v4f32";
        default: throw std::logic_error("no raw buffer load of " + dec(nbytes) + " bytes");
    }
}

const char *store_key(int64_t nbytes) {
    switch (nbytes) {
        case 2: return "raw_buffer_store_i16";
        case 4: return "raw_buffer_store_f32";
        case 8: return "raw_buffer_store_v2f32";
        case 16: return "raw_buffer_store_v4f32";
        default: throw std::logic_error("no raw buffer store of " + dec(nbytes) + " bytes");
    }
}

// The uniform per-K-tile step of the im2col walk (tile_k = sa*cpg + sb, sa = ay*X + ax):
// sb, cpg; x step without/with the channel carry and the wrap limit X*dil_w; y step
// without/with the x carry; byte step without/with the channel carry; the extra
// byte step of the x carry.
struct KStep {
    Value sb, cpg, xs0, xs1, xlim, ys0, ys1, ko0, ko1, d2;
};
// An A K state: the element offset koff inside the tile row, the bound klim
// (k0 < klim <=> k0 + koff < k_end), and the loop-carried c, xd, yd, ko.
struct KState {
    Value koff, klim, c, xd, yd, ko;
};
// A B K state: koff and klim.
struct BState {
    Value kv, koff, klim;
};
// Per-thread A load slot values, fixed for the whole K loop: the K state index,
// hbase (2^30 for a row past M), wbase, the pixel byte base, the LDS offset.
struct ASlot {
    size_t st;
    Value hb, wb, pbase, lds;
};
// Per-thread B load slot values: the K state index, n < kpg, the byte offset of
// (row, koff) in w, the LDS offset.
struct BSlot {
    size_t st;
    Value nok, wbyte, lds;
};
// The loop-carried fields of a KState, in phi order.
constexpr const char *kCarried[4] = {"c", "xd", "yd", "ko"};
Value &carried(KState &s, size_t f) { return f == 0 ? s.c : f == 1 ? s.xd : f == 2 ? s.yd : s.ko; }
const Value &carried(const KState &s, size_t f) { return f == 0 ? s.c : f == 1 ? s.xd : f == 2 ? s.yd : s.ko; }

// Registers loaded for one K tile: the A slots then the B slots.
struct TileVals {
    std::vector<Value> a, b;
};

// Emits one kernel. Method order is emission order (the bytes depend on it).
class Kernel {
public:
    Kernel(IRBuilder &b, const ConvSpec &spec) : b_(b), s_(spec) {
        et_ = dtype_type(*spec.dtype);
        tm_ = spec.tile_m;
        tn_ = spec.tile_n;
        tk_ = spec.tile_k;
        wm_ = tm_ / spec.waves_m;  // per-wave tile
        wn_ = tn_ / spec.waves_n;
        fm_ = wm_ / kWmmaM;  // fragments per wave
        fn_ = wn_ / kWmmaN;
        ncw_ = spec.waves_m * spec.waves_n;  // compute waves
        wavelet_ = *spec.pipeline == "wavelet";
        threads_ = threads(spec);
        load_threads_ = wavelet_ ? spec.num_load_waves * kWave : threads_;
        split_ = spec.split_k > 1;
        cluster_ = spec.split_k_cluster;
        swz_ = swizzle(tk_);
        ncp_ = tn_ + kPadC;
        // Small-channel path: a slot is one pixel of pix = cpg channels, padded to
        // slot_a elements along K (0: the plain path, slot_* = vector_*).
        pix_ = is_pixel_vector(spec.vector_a) ? spec.vector_a : 0;
        slot_a_ = pixel_slot(spec.vector_a);
        slot_b_ = pixel_slot(spec.vector_b);
    }

    void emit() {
        Block &entry = b_.new_block("entry");
        b_.position(entry);
        prologue_values();
        slot_setup();
        main_loop();
        epilogue();
    }

private:
    // -- small helpers ------------------------------------------------------------
    Value p(const std::string &name) const { return b_.fn().param(name); }

    // min(v, c) for a slot index (icmp ult + select).
    Value umin_const(const Value &v, int64_t c, const std::string &hint) {
        const Value lt = b_.icmp("ult", v, ci32(c), hint + "_lt");
        return b_.select(lt, v, ci32(c), hint);
    }

    void barrier() {
        b_.fence("workgroup", "release");
        b_.call_void("s_barrier", {});
        b_.fence("workgroup", "acquire");
    }

    // Buffer resource over `nbytes` (i64 value) bytes at parameter `ptr_name`;
    // word 3 is the arch table's rsrc_flags (raw offset range check).
    Value rsrc(const std::string &ptr_name, const Value &nbytes, const std::string &hint) {
        Value n = nbytes;
        if (b_.module().flavor().rsrc_num_records_bits == 32) n = b_.cast("trunc", nbytes, i32(), hint + "_nrec");
        const Value ptr = p(ptr_name);
        return b_.call("make_buffer_rsrc", {ptr, const_int(i16(), 0), n, ci32(b_.module().arch().rsrc_flags)}, hint);
    }

    // The reduction length the K loop runs over: Kgemm, or Y*X*slot on the
    // padded-pixel path.
    Value kgemm() {
        if (!pix_) return p("Kgemm");
        const Value yx = b_.mul(p("Y"), p("X"), "k_taps");
        return b_.mul(yx, ci32(slot_a_), "k_padded");
    }

    // -- emission -----------------------------------------------------------------
    void prologue_values() {
        tid_ = b_.call("workitem_id_x", {}, "tid");
        lane_ = b_.binop("and", tid_, ci32(kWave - 1), "lane");
        const Value wv = b_.binop("lshr", tid_, ci32(5), "wave_v");
        wave_ = b_.call("readfirstlane_i32", {wv}, "wave");
        const Value bx = b_.call("workgroup_id_x", {}, "bx");
        const Value by = b_.call("workgroup_id_y", {}, "by");
        const Value bz = b_.call("workgroup_id_z", {}, "bz");
        // z -> (group, slice); the slice's K range.
        if (split_) {
            const Value kc = p("ks_count");
            group_ = b_.binop("udiv", bz, kc, "group");
            slice_ = b_.binop("urem", bz, kc, "slice");
            const Value ks = p("ks");
            k_begin_ = b_.mul(slice_, ks, "k_begin");
            const Value kend0 = b_.add(k_begin_, ks, "k_end_raw");
            const Value kg = kgemm();
            const Value short_ = b_.icmp("ult", kend0, kg, "k_short");
            k_end_ = b_.select(short_, kend0, kg, "k_end");
        } else {
            group_ = bz;
            k_begin_ = ci32(0);
            k_end_ = kgemm();
        }
        // Number of K tiles: ceil((k_end - k_begin) / tile_k), 0 for an empty slice.
        const Value live = b_.icmp("ugt", k_end_, k_begin_, "k_live");
        const Value span = b_.sub(k_end_, k_begin_, "k_span");
        const Value span0 = b_.select(live, span, ci32(0), "k_span_nz");
        const Value sp = b_.add(span0, ci32(tk_ - 1), "k_span_up");
        ntiles_ = b_.binop("udiv", sp, ci32(tk_), "ntiles");
        // Tile origin and the group's channel bases.
        m0_ = b_.mul(bx, ci32(tm_), "m_org");
        n0_ = b_.mul(by, ci32(tn_), "n_org");
        cbase_ = b_.mul(group_, p("cpg"), "cbase");  // g*cpg
        kbase_ = b_.mul(group_, p("kpg"), "kbase");  // g*kpg
        // Buffer resources and the out-of-range offsets (the byte counts).
        rx_ = rsrc("x_ptr", p("x_bytes"), "rsrc_x");
        rw_ = rsrc("w_ptr", p("w_bytes"), "rsrc_w");
        oob_x_ = b_.cast("trunc", p("x_bytes"), i32(), "oob_x");
        oob_w_ = b_.cast("trunc", p("w_bytes"), i32(), "oob_w");
        if (!split_ || cluster_) {
            rd_ = rsrc("d_ptr", p("d_bytes"), "rsrc_d");
            oob_d_ = b_.cast("trunc", p("d_bytes"), i32(), "oob_d");
        }
        if (split_) {
            rws_ = rsrc("ws_ptr", p("ws_bytes"), "rsrc_ws");
            oob_ws_ = b_.cast("trunc", p("ws_bytes"), i32(), "oob_ws");
        }
        if (*s_.acc_epilogue == "bias") {
            const Value k4 = b_.mul(p("K"), ci32(4), "bias_nbytes");
            const Value k64 = b_.cast("zext", k4, i64(), "bias_nbytes_w");
            rbias_ = rsrc("bias_ptr", k64, "rsrc_bias");
            oob_bias_ = k4;
        }
        // Roles: compute wave coordinates (wave_m, wave_n); wavelet loaders.
        if (wavelet_) {
            is_loader_ = b_.icmp("uge", wave_, ci32(ncw_), "is_loader");
            ltid_ = b_.sub(tid_, ci32(ncw_ * kWave), "ltid");
        } else {
            ltid_ = tid_;
        }
        wave_m_ = b_.binop("udiv", wave_, ci32(s_.waves_n), "wave_m");
        wave_n_ = b_.binop("urem", wave_, ci32(s_.waves_n), "wave_n");
        // LDS globals: one allocation; B after A; the epilogue's parts alias A/B.
        for (const LdsBuffer &l : lds_layout(s_)) lds_[l.name] = b_.module().add_lds(l.name, array(l.count, l.elem), 16);
        lds_a_ = lds_.at("lds");
        const int64_t boff = lds_parts(s_).b_off / byte_size(et_);
        lds_b_ = b_.gep(et_, lds_.at("lds"), {ci32(boff)}, "lds_b");
    }

    // -- global -> LDS slots ----------------------------------------------------------
    // Per-thread load slots (fixed for the whole K loop): slot j of a thread is
    // vector v = ltid + j*load_threads of the tile, clamped to the last vector.
    // The im2col walk is strength-reduced: a slot's K coordinate lives in a K state
    // (channel c, xd = x*dil_w, yd = y*dil_h, byte offset ko of (y, x, c) inside a
    // pixel window), computed with divisions once here for k_begin and advanced by
    // tile_k per K tile with two single wraps (advance). Slots whose vector index
    // differs by a multiple of the row length share one K state; a clamped slot has
    // its own.
    void slot_setup() {
        // the K walk's channel count: cpg, or the padded pixel (channel 0 in every state)
        const Value cpg = pix_ ? ci32(slot_a_) : p("cpg"), X = p("X");
        kcpg_ = cpg;
        const Value dw = p("dil_w"), dh = p("dil_h");
        // tile_k = sa*cpg + sb, sa = ay*X + ax: the uniform per-tile step.
        const Value tk = ci32(tk_);
        const Value sa = b_.binop("udiv", tk, cpg, "k_sa");
        const Value sb = b_.binop("urem", tk, cpg, "k_sb");
        const Value ay = b_.binop("udiv", sa, X, "k_ay");
        const Value ax = b_.binop("urem", sa, X, "k_ax");
        c2_ = b_.mul(p("C"), ci32(2), "k_pixb");  // bytes per pixel
        rowb_ = b_.mul(p("W"), c2_, "k_rowb");    // bytes per image row
        const Value axd = b_.mul(ax, dw, "k_axd");
        const Value ayd = b_.mul(ay, dh, "k_ayd");
        const Value xlim = b_.mul(X, dw, "k_xlim");
        const Value sbb = b_.mul(sb, ci32(2), "k_sbb");
        const Value axb = b_.mul(axd, c2_, "k_axb");
        const Value kc = b_.add(sbb, axb, "k_kstep");
        const Value ayb = b_.mul(ayd, rowb_, "k_ayb");
        const Value ko0 = b_.add(kc, ayb, "k_kstep");
        const Value dwb = b_.mul(dw, c2_, "k_dwb");
        const Value cpgb = b_.mul(cpg, ci32(2), "k_cpgb");
        const Value d1 = b_.sub(dwb, cpgb, "k_dcy");
        const Value dhb = b_.mul(dh, rowb_, "k_dhb");
        const Value xlimb = b_.mul(xlim, c2_, "k_xlimb");
        const Value d2 = b_.sub(dhb, xlimb, "k_dcx");
        const Value xs1 = b_.add(axd, dw, "k_axdc");
        const Value ys1 = b_.add(ayd, dh, "k_aydc");
        const Value ko1 = b_.add(ko0, d1, "k_kstepc");
        step_ = KStep{sb, cpg, axd, xs1, xlim, ayd, ys1, ko0, ko1, d2};
        const int64_t lt = load_threads_;
        const int64_t va = slot_a_;
        int64_t per_row = tk_ / va;
        int64_t count = tm_ * per_row;
        for (int64_t j = 0; j < (count + lt - 1) / lt; ++j) {
            Value v = b_.add(ltid_, ci32(j * lt), "a_slot");
            const bool clamped = (j + 1) * lt > count;
            if (clamped) v = umin_const(v, count - 1, "a_slotc");
            const Value row = b_.binop("udiv", v, ci32(per_row), "a_row");
            if (j == 0 || clamped || lt % per_row) {
                const Value kv = b_.binop("urem", v, ci32(per_row), "a_kv");
                a_states_.push_back(k_state(kv, va, "a"));
            }
            const size_t st = a_states_.size() - 1;
            const Value koff = a_states_[st].koff;
            const Value m = b_.add(m0_, row, "a_m");
            const Value mok = b_.icmp("ult", m, p("M"), "a_mok");
            const Value hw = b_.mul(p("Ho"), p("Wo"), "a_hw");
            const Value img = b_.binop("udiv", m, hw, "a_img");
            const Value rem = b_.binop("urem", m, hw, "a_pix");
            const Value ho = b_.binop("udiv", rem, p("Wo"), "a_ho");
            const Value wo = b_.binop("urem", rem, p("Wo"), "a_wo");
            const Value hs = b_.mul(ho, p("stride_h"), "a_hs");
            const Value hbase = b_.sub(hs, p("pad_h"), "a_hbase");
            const Value ws = b_.mul(wo, p("stride_w"), "a_ws");
            const Value wbase = b_.sub(ws, p("pad_w"), "a_wbase");
            const Value nh = b_.mul(img, p("H"), "a_nh");
            // Byte offset of (img, hbase, wbase, channel g*cpg): the slot's pixel base;
            // a row past M gets hbase 2^30 so that its hi check always fails.
            const Value nhb = b_.add(nh, hbase, "a_nhb");
            const Value nhw = b_.mul(nhb, p("W"), "a_nhw");
            const Value pw = b_.add(nhw, wbase, "a_pw");
            const Value pwc = b_.mul(pw, p("C"), "a_pwc");
            const Value pc = b_.add(pwc, cbase_, "a_pe");
            const Value pbase = b_.mul(pc, ci32(2), "a_pbase");
            const Value hb = b_.select(mok, hbase, ci32(int64_t(1) << 30), "a_hb");
            const Value lds_off = slot_lds(row, koff, va, "a");
            a_slots_.push_back(ASlot{st, hb, wbase, pbase, lds_off});
        }
        const int64_t vb = slot_b_;
        per_row = tk_ / vb;
        count = tn_ * per_row;
        for (int64_t j = 0; j < (count + lt - 1) / lt; ++j) {
            Value v = b_.add(ltid_, ci32(j * lt), "b_slot");
            const bool clamped = (j + 1) * lt > count;
            if (clamped) v = umin_const(v, count - 1, "b_slotc");
            const Value row = b_.binop("udiv", v, ci32(per_row), "b_row");
            if (j == 0 || clamped || lt % per_row) {
                const Value kv = b_.binop("urem", v, ci32(per_row), "b_kv");
                const Value koff = b_.mul(kv, ci32(vb), "b_koff");
                const Value klim = k_limit(koff, "b");
                b_states_.push_back(BState{kv, koff, klim});
            }
            const size_t st = b_states_.size() - 1;
            const Value koff = b_states_[st].koff;
            const Value n = b_.add(n0_, row, "b_n");
            const Value nok = b_.icmp("ult", n, p("kpg"), "b_nok");
            const Value kn = b_.add(kbase_, n, "b_kn");
            const Value wrow = b_.mul(kn, p("Kgemm"), "b_wrow");
            Value wbyte;
            if (pix_) {  // filter tap kv of the tile: pix channels (2*pix bytes) per tap in w
                const Value wr = b_.mul(wrow, ci32(2), "b_wrowb");
                const Value tb = b_.mul(b_states_[st].kv, ci32(2 * pix_), "b_tapb");
                wbyte = b_.add(wr, tb, "b_wbyte");
            } else {
                const Value wk = b_.add(wrow, koff, "b_wk");
                wbyte = b_.mul(wk, ci32(2), "b_wbyte");
            }
            const Value lds_off = slot_lds(row, koff, vb, "b");
            b_slots_.push_back(BSlot{st, nok, wbyte, lds_off});
        }
    }

    // Element index in an A/B buffer of 16-byte chunk `ch` of tile row `row` (plus
    // `within` elements when given): row*tile_k + 8*(ch ^ f(row)), the swizzle.
    Value swz_index(const Value &row, const Value &ch, const Value *within, const std::string &hint) {
        const int64_t rps = swz_.first, per = swz_.second;
        int64_t sh = 0;
        while ((int64_t{1} << sh) < rps) ++sh;
        const Value q = rps == 1 ? row : b_.binop("lshr", row, ci32(sh), hint + "_swq");
        const Value f = b_.binop("and", q, ci32(per - 1), hint + "_swf");
        const Value sc = b_.binop("xor", ch, f, hint + "_sch");
        Value e = b_.binop("shl", sc, ci32(3), hint + "_sce");
        if (within) e = b_.binop("or", e, *within, hint + "_scw");
        const Value lrow = b_.mul(row, ci32(tk_), hint + "_lrow");
        return b_.add(lrow, e, hint + "_loff");
    }

    // LDS element index of a load slot's vector (koff elements into the row).
    Value slot_lds(const Value &row, const Value &koff, int64_t vec, const std::string &hint) {
        const Value ch = b_.binop("lshr", koff, ci32(3), hint + "_kch");
        if (vec < kChunk) {
            const Value within = b_.binop("and", koff, ci32(kChunk - 1), hint + "_kin");
            return swz_index(row, ch, &within, hint);
        }
        return swz_index(row, ch, nullptr, hint);
    }

    // klim with k0 + koff < k_end <=> k0 < klim (unsigned) for every tile origin k0:
    // k_end - koff, or 0 when koff >= k_end.
    Value k_limit(const Value &koff, const std::string &hint) {
        const Value kin = b_.icmp("ult", koff, k_end_, hint + "_kin");
        const Value kl = b_.sub(k_end_, koff, hint + "_klim");
        return b_.select(kin, kl, ci32(0), hint + "_klim");
    }

    // The K state of element r = k_begin + kv*va (divisions, once per workgroup).
    KState k_state(const Value &kv, int64_t va, const std::string &hint) {
        const Value koff = b_.mul(kv, ci32(va), hint + "_koff");
        const Value r0 = b_.add(k_begin_, koff, hint + "_rk");
        const Value c = b_.binop("urem", r0, kcpg_, hint + "_ck");
        const Value q = b_.binop("udiv", r0, kcpg_, hint + "_qk");
        const Value x = b_.binop("urem", q, p("X"), hint + "_xk");
        const Value y = b_.binop("udiv", q, p("X"), hint + "_yk");
        const Value xd = b_.mul(x, p("dil_w"), hint + "_xdk");
        const Value yd = b_.mul(y, p("dil_h"), hint + "_ydk");
        const Value kyb = b_.mul(yd, rowb_, hint + "_kyb");
        const Value kxb = b_.mul(xd, c2_, hint + "_kxb");
        const Value kxy = b_.add(kyb, kxb, hint + "_kxy");
        const Value kcb = b_.mul(c, ci32(2), hint + "_kcb");
        const Value ko = b_.add(kxy, kcb, hint + "_ko");
        const Value klim = k_limit(koff, hint);
        return KState{koff, klim, c, xd, yd, ko};
    }

    // The K states of the next tile: c += sb with one wrap (carry into x),
    // x += ax (+1) with one wrap (carry into y), y += ay (+1); ko follows with the
    // uniform byte steps. No division.
    std::vector<KState> advance(const std::vector<KState> &states) {
        const KStep &st = step_;
        std::vector<KState> out;
        for (const KState &s0 : states) {
            const Value c1 = b_.add(s0.c, st.sb, "k_cn");
            const Value cy1 = b_.icmp("uge", c1, st.cpg, "k_cyc");
            const Value cw = b_.select(cy1, st.cpg, ci32(0), "k_cw");
            const Value c = b_.sub(c1, cw, "k_c");
            const Value xs = b_.select(cy1, st.xs1, st.xs0, "k_xs");
            const Value xd1 = b_.add(s0.xd, xs, "k_xdn");
            const Value cy2 = b_.icmp("uge", xd1, st.xlim, "k_cyx");
            const Value xw = b_.select(cy2, st.xlim, ci32(0), "k_xw");
            const Value xd = b_.sub(xd1, xw, "k_xd");
            const Value ys = b_.select(cy2, st.ys1, st.ys0, "k_ys");
            const Value yd = b_.add(s0.yd, ys, "k_yd");
            const Value ks = b_.select(cy1, st.ko1, st.ko0, "k_ks");
            const Value ko1 = b_.add(s0.ko, ks, "k_kon");
            const Value kw = b_.select(cy2, st.d2, ci32(0), "k_kw");
            const Value ko = b_.add(ko1, kw, "k_ko");
            out.push_back(KState{s0.koff, s0.klim, c, xd, yd, ko});
        }
        return out;
    }

    // Global loads of the K tile starting at k0 (the A K states `states` describe
    // the same tile) into registers; returns the raw values of the A slots then the
    // B slots.
    TileVals load_tile(const Value &k0, const std::vector<KState> &states) {
        TileVals out;
        const int64_t va = s_.vector_a, vb = s_.vector_b;
        std::vector<Value> roks;
        for (const KState &st : a_states_) roks.push_back(b_.icmp("ult", k0, st.klim, "a_rok"));
        for (const ASlot &sl : a_slots_) {
            const KState &st = states[sl.st];
            const Value hi = b_.add(sl.hb, st.yd, "a_hi");
            const Value wi = b_.add(sl.wb, st.xd, "a_wi");
            const Value hok = b_.icmp("ult", hi, p("H"), "a_hok");  // unsigned: negative is out
            const Value wok = b_.icmp("ult", wi, p("W"), "a_wok");
            Value ok = b_.binop("and", roks[sl.st], hok, "a_ok");
            ok = b_.binop("and", ok, wok, "a_ok");
            Value off = b_.add(sl.pbase, st.ko, "a_byte");
            off = b_.select(ok, off, oob_x_, "a_off");
            out.a.push_back(load_slot(rx_, off, va, "a"));
        }
        roks.clear();
        for (const BState &st : b_states_) roks.push_back(b_.icmp("ult", k0, st.klim, "b_rok"));
        Value kb;
        if (pix_) {  // tap k0/slot of w: 2*pix bytes per tap
            int64_t sh = 0;
            while ((int64_t(1) << (sh + 1)) <= slot_b_) ++sh;
            const Value tap = b_.binop("lshr", k0, ci32(sh), "b_ktap");
            kb = b_.mul(tap, ci32(2 * pix_), "b_kbyte");
        } else {
            kb = b_.mul(k0, ci32(2), "b_kbyte");
        }
        for (const BSlot &sl : b_slots_) {
            const Value ok = b_.binop("and", sl.nok, roks[sl.st], "b_ok");
            Value off = b_.add(sl.wbyte, kb, "b_byte");
            off = b_.select(ok, off, oob_w_, "b_off");
            out.b.push_back(load_slot(rw_, off, vb, "b"));
        }
        return out;
    }

    // The raw value of one load slot at byte `off`: one 2*v-byte buffer load, or for
    // a padded pixel (v in 3, 5, 6, 7) the pieces of pixel_pieces at off, off+8, ...
    // (the constant as soffset) as i32 words, the 2-byte piece zero-extended (its
    // high half is the first padding channel), the words past them zero:
    // pixel_slot(v) elements. The pieces lie inside the pixel, so each is wholly in
    // or out of the buffer range with it.
    Value load_slot(const Value &rsrc, const Value &off, int64_t v, const std::string &hint) {
        if (!is_pixel_vector(v)) return b_.call(load_key(2 * v), {rsrc, off, ci32(0), ci32(0)}, hint + "_val");
        std::vector<Value> words;
        int64_t at = 0;
        for (int64_t nb : pixel_pieces(v)) {
            const Value x = b_.call(load_key(nb), {rsrc, off, ci32(at), ci32(0)}, hint + "_pc");
            if (nb == 8) {
                const Value xw = b_.cast("bitcast", x, vec(2, i32()), hint + "_pcw");
                const Value w0 = b_.extractelement(xw, ci32(0), hint + "_w");
                const Value w1 = b_.extractelement(xw, ci32(1), hint + "_w");
                words.push_back(w0);
                words.push_back(w1);
            } else if (nb == 4) {
                words.push_back(b_.cast("bitcast", x, i32(), hint + "_w"));
            } else {
                words.push_back(b_.cast("zext", x, i32(), hint + "_w"));
            }
            at += nb;
        }
        const int64_t nw = pixel_slot(v) / 2;
        Value vv = zeroinit(vec(nw, i32()));
        for (size_t k = 0; k < words.size(); ++k)
            vv = b_.insertelement(vv, words[k], ci32(int64_t(k)), hint + "_pix");
        return b_.cast("bitcast", vv, raw_type(2 * pixel_slot(v)), hint + "_val");
    }

    // Store loaded registers into LDS buffer `buf` (i32 0 or 1).
    void store_tile(const TileVals &vals, const Value &buf) {
        const Value abase = b_.mul(buf, ci32(tm_ * tk_), "a_buf");
        for (size_t i = 0; i < a_slots_.size(); ++i) {
            const Value idx = b_.add(abase, a_slots_[i].lds, "a_lidx");
            const Value ptr = b_.gep(et_, lds_a_, {idx}, "a_lp");
            b_.store(vals.a[i], ptr, 2 * slot_a_);
        }
        const Value bbase = b_.mul(buf, ci32(tn_ * tk_), "b_buf");
        for (size_t i = 0; i < b_slots_.size(); ++i) {
            const Value idx = b_.add(bbase, b_slots_[i].lds, "b_lidx");
            const Value ptr = b_.gep(et_, lds_b_, {idx}, "b_lp");
            b_.store(vals.b[i], ptr, 2 * slot_b_);
        }
    }

    // -- WMMA -------------------------------------------------------------------------
    // The 16-element A/B fragment of `row` (tile row) at K step kk: lane l holds
    // K = 8*(l/16) + [0,8) and 16 + 8*(l/16) + [0,8) of the 32, i.e. chunks
    // 4*kk + l/16 and 4*kk + 2 + l/16 of the (swizzled) row.
    Value fragment(const Value &lds, const Value &base, const Value &row, int64_t kk, const std::string &hint) {
        const Type *v8 = vec(8, et_);
        const Value ch = kk ? b_.add(half_, ci32(4 * kk), "f_ch") : half_;
        const Value i0 = swz_index(row, ch, nullptr, "f");
        const Value idx = b_.add(base, i0, "f_idx");
        const Value p0 = b_.gep(et_, lds, {idx}, hint);
        const Value lo = b_.load(v8, p0, 16, "f_lo");
        const Value ch2 = b_.add(half_, ci32(4 * kk + 2), "f_chh");
        const Value i1 = swz_index(row, ch2, nullptr, "fh");
        const Value idx2 = b_.add(base, i1, "f_idxh");
        const Value p1 = b_.gep(et_, lds, {idx2}, hint);
        const Value hi = b_.load(v8, p1, 16, "f_hi");
        std::vector<int> mask;
        for (int i = 0; i < 16; ++i) mask.push_back(i);
        return b_.shufflevector(lo, hi, mask, "frag");
    }

    // All WMMAs of one K tile from LDS buffer `buf`; returns the new accumulators.
    std::vector<Value> compute(const Value &buf, std::vector<Value> accs) {
        const Value abase = b_.mul(buf, ci32(tm_ * tk_), "c_abuf");
        const Value bbase = b_.mul(buf, ci32(tn_ * tk_), "c_bbuf");
        const std::string key = wmma_key(*s_.dtype);
        for (int64_t kk = 0; kk < tk_ / kWmmaK; ++kk) {
            std::vector<Value> fa, fb;
            for (int64_t i = 0; i < fm_; ++i) fa.push_back(fragment(lds_a_, abase, a_rows_[i], kk, "fa_p"));
            for (int64_t j = 0; j < fn_; ++j) fb.push_back(fragment(lds_b_, bbase, b_rows_[j], kk, "fb_p"));
            for (int64_t i = 0; i < fm_; ++i) {
                for (int64_t j = 0; j < fn_; ++j) {
                    const size_t k = static_cast<size_t>(i * fn_ + j);
                    accs[k] = b_.call(key,
                                      {ci1(false), fa[i], ci1(false), fb[j], const_int(i16(), 0), accs[k], ci1(false),
                                       ci1(false)},
                                      "acc");
                }
            }
        }
        return accs;
    }

    // -- main loop --------------------------------------------------------------------
    void main_loop() {
        // Fragment rows (tile rows of this wave's fragments) and the lane's K offset.
        half_ = b_.binop("lshr", lane_, ci32(4), "half");
        lrow_ = b_.binop("and", lane_, ci32(15), "lrow");
        lane_k_ = b_.mul(half_, ci32(8), "lane_k");
        wm0_ = b_.mul(wave_m_, ci32(wm_), "wm_org");
        wn0_ = b_.mul(wave_n_, ci32(wn_), "wn_org");
        for (int64_t i = 0; i < fm_; ++i) {
            const Value ar = b_.add(wm0_, ci32(i * kWmmaM), "ar");
            a_rows_.push_back(b_.add(ar, lrow_, "arow"));
        }
        for (int64_t j = 0; j < fn_; ++j) {
            const Value br = b_.add(wn0_, ci32(j * kWmmaN), "br");
            b_rows_.push_back(b_.add(br, lrow_, "brow"));
        }
        const size_t nacc = static_cast<size_t>(fm_ * fn_);
        const Type *v8f = vec(8, float_());
        const Value zero = zeroinit(v8f);
        const Value any_tile = b_.icmp("ugt", ntiles_, ci32(0), "any_tile");
        Block &entry = *b_.block();
        Block &pro = b_.new_block("prologue");
        Block &loop = b_.new_block("kloop");
        Block &done = b_.new_block("kdone");
        b_.cond_br(any_tile, pro, done);
        // Prologue: tile 0 -> buffer 0, barrier.
        b_.position(pro);
        if (wavelet_) {
            Block &pl = b_.new_block("pro_load");
            Block &pj = b_.new_block("pro_join");
            b_.cond_br(is_loader_, pl, pj);
            b_.position(pl);
            const TileVals v0 = load_tile(k_begin_, a_states_);
            store_tile(v0, ci32(0));
            b_.br(pj);
            b_.position(pj);
        } else {
            const TileVals v0 = load_tile(k_begin_, a_states_);
            store_tile(v0, ci32(0));
        }
        const std::vector<KState> st1 = advance(a_states_);
        barrier();
        Block &pro_end = *b_.block();
        b_.br(loop);
        // Loop: iteration t computes buffer t&1 while tile t+1 goes to buffer (t+1)&1.
        b_.position(loop);
        Phi &t = b_.phi(i32(), "t");
        std::vector<Phi *> acc_phis;
        for (size_t k = 0; k < nacc; ++k) acc_phis.push_back(&b_.phi(v8f, "acc_in"));
        std::vector<Value> accs;
        for (Phi *ph : acc_phis) accs.push_back(ph->result());
        // The A K states of tile t+1 (loop-carried).
        std::vector<std::array<Phi *, 4>> st_phis;
        std::vector<KState> cur;
        for (const KState &s0 : st1) {
            std::array<Phi *, 4> ph{};
            for (size_t f = 0; f < 4; ++f) ph[f] = &b_.phi(i32(), std::string("k_") + kCarried[f]);
            st_phis.push_back(ph);
            cur.push_back(KState{s0.koff, s0.klim, ph[0]->result(), ph[1]->result(), ph[2]->result(),
                                 ph[3]->result()});
        }
        const Value buf = b_.binop("and", t.result(), ci32(1), "buf");
        const Value nbuf = b_.binop("xor", buf, ci32(1), "nbuf");
        const Value t1 = b_.add(t.result(), ci32(1), "t_next", {"nuw", "nsw"});
        const Value kstep = b_.mul(t1, ci32(tk_), "k_step");
        const Value knext = b_.add(k_begin_, kstep, "k_next");
        std::vector<Value> nw;
        std::vector<KState> nxt;
        if (wavelet_) {
            Block &ld = b_.new_block("wl_load");
            Block &cp = b_.new_block("wl_compute");
            Block &jn = b_.new_block("wl_join");
            b_.cond_br(is_loader_, ld, cp);
            b_.position(ld);
            const TileVals v1 = load_tile(knext, cur);
            store_tile(v1, nbuf);
            const std::vector<KState> adv = advance(cur);
            b_.br(jn);
            b_.position(cp);
            const std::vector<Value> computed = compute(buf, accs);
            Block &cp_end = *b_.block();
            b_.br(jn);
            b_.position(jn);
            for (size_t k = 0; k < nacc; ++k) {
                Phi &ph = b_.phi(v8f, "acc_j");
                ph.add_incoming(accs[k], ld);
                ph.add_incoming(computed[k], cp_end);
                nw.push_back(ph.result());
            }
            for (size_t i = 0; i < adv.size(); ++i) {
                KState d = adv[i];
                for (size_t f = 0; f < 4; ++f) {
                    Phi &ph = b_.phi(i32(), std::string("k_j") + kCarried[f]);
                    ph.add_incoming(carried(adv[i], f), ld);
                    ph.add_incoming(carried(cur[i], f), cp_end);
                    carried(d, f) = ph.result();
                }
                nxt.push_back(d);
            }
        } else {
            // Software pipeline: tile t+1's global loads are issued first and fenced
            // from the WMMAs by a scheduling barrier (mask 0: nothing crosses), so the
            // machine scheduler cannot sink them; their wait lands at the LDS stores
            // after the WMMAs, which a second scheduling barrier keeps below the math
            // together with the K-state step (so no load-address register is reused
            // while the loads are in flight).
            const TileVals v1 = load_tile(knext, cur);
            b_.call_void("sched_barrier", {ci32(0)});
            nw = compute(buf, accs);
            b_.call_void("sched_barrier", {ci32(0)});
            nxt = advance(cur);
            store_tile(v1, nbuf);
        }
        barrier();
        const Value again = b_.icmp("ult", t1, ntiles_, "again");
        Block &loop_end = *b_.block();
        b_.cond_br(again, loop, done);
        t.add_incoming(ci32(0), pro_end);
        t.add_incoming(t1, loop_end);
        for (size_t k = 0; k < nacc; ++k) {
            acc_phis[k]->add_incoming(zero, pro_end);
            acc_phis[k]->add_incoming(nw[k], loop_end);
        }
        for (size_t i = 0; i < st_phis.size(); ++i) {
            for (size_t f = 0; f < 4; ++f) {
                st_phis[i][f]->add_incoming(carried(st1[i], f), pro_end);
                st_phis[i][f]->add_incoming(carried(nxt[i], f), loop_end);
            }
        }
        b_.position(done);
        for (size_t k = 0; k < nacc; ++k) {
            Phi &ph = b_.phi(v8f, "acc_out");
            ph.add_incoming(zero, entry);
            ph.add_incoming(nw[k], loop_end);
            accs_.push_back(ph.result());
        }
    }

    // -- epilogues ----------------------------------------------------------------------
    // Broadcast an fp32 scalar argument to `width` lanes (width 1: the scalar).
    Value bc(const Value &v, int64_t width) {
        if (width == 1) return v;
        const Type *vt = vec(width, float_());
        const Value ins = b_.insertelement(zeroinit(vt), v, ci32(0), "bc");
        return b_.shufflevector(ins, ins, std::vector<int>(static_cast<size_t>(width), 0), "bcast");
    }

    // An fp32 constant as a scalar or a splat of `width` lanes.
    static Value fconst(double v, int64_t width) {
        const Value e = const_float(float_(), v);
        return width == 1 ? e : splat(vec(width, float_()), e);
    }

    // The accumulator epilogue on fp32 x (scalar or <width x float>) whose first
    // output channel is n_elem (global channel index, i32).
    Value acc_epi(const Value &x, const Value &n_elem, int64_t width) {
        const std::string &kind = *s_.acc_epilogue;
        if (kind == "identity") return x;
        if (kind == "bias") {
            const int64_t nb = 4 * width;
            const Value off = b_.mul(n_elem, ci32(4), "bias_byte");
            const Value bias = b_.call(load_key(nb), {rbias_, off, ci32(0), ci32(0)}, "bias");
            return b_.fadd(x, bias, "biased");
        }
        if (kind == "scale") {
            const Value sc = bc(p("scale"), width);
            return b_.fmul(x, sc, "scaled");
        }
        if (kind == "relu") {
            const Value neg = b_.fcmp("olt", x, fconst(0.0, width), "neg");
            return b_.select(neg, fconst(0.0, width), x, "relu");
        }
        const Value lo = bc(p("clamp_lo"), width);
        const Value hi = bc(p("clamp_hi"), width);
        const Value below = b_.fcmp("olt", x, lo, "below");
        const Value x1 = b_.select(below, lo, x, "clamp_l");
        const Value above = b_.fcmp("ogt", x1, hi, "above");
        return b_.select(above, hi, x1, "clamp_h");
    }

    // Cast fp32 x (width 1 or kOutVec) and store it at D[m][kbase + n].
    void store_d(const Value &x, const Value &m, const Value &n, const Value &ok, int64_t width) {
        const Type *vt = width == 1 ? et_ : vec(width, et_);
        const Value y = b_.cast("fptrunc", x, vt, "d_val");
        store_d_raw(y, m, n, ok, width);
    }

    // Store `width` dtype elements y (already cast) at D[m][kbase + n].
    void store_d_raw(const Value &y, const Value &m, const Value &n, const Value &ok, int64_t width) {
        const Value raw = b_.cast("bitcast", y, raw_type(2 * width), "d_raw");
        const Value kn = b_.add(kbase_, n, "d_ch");
        const Value rowe = b_.mul(m, p("K"), "d_rowe");
        const Value e = b_.add(rowe, kn, "d_elem");
        Value off = b_.mul(e, ci32(2), "d_byte");
        off = b_.select(ok, off, oob_d_, "d_off");
        b_.call_void(store_key(2 * width), {raw, rd_, off, ci32(0), ci32(0)});
    }

    // Byte offset of ws[slab][m][kbase + n] (or the out-of-range offset).
    Value ws_offset(const Value &slab, const Value &m, const Value &n, const Value &ok, const std::string &hint) {
        const Value slabm = b_.mul(slab, p("M"), hint + "_slabm");
        const Value rows = b_.add(slabm, m, hint + "_row");
        const Value kn = b_.add(kbase_, n, hint + "_ch");
        const Value rowe = b_.mul(rows, p("K"), hint + "_rowe");
        const Value e = b_.add(rowe, kn, hint + "_elem");
        const Value off = b_.mul(e, ci32(4), hint + "_byte");
        return b_.select(ok, off, oob_ws_, hint + "_off");
    }

    // Write one fp32 element/vector of the tile: the slab (split) or D (plain).
    void out_elem(const Value &x, const Value &m, const Value &n, const Value &ok, int64_t width) {
        if (split_) {
            const Value off = ws_offset(slice_, m, n, ok, "ws");
            b_.call_void(store_key(4 * width), {x, rws_, off, ci32(0), ci32(0)});
        } else {
            const Value kn = b_.add(kbase_, n, "epi_ch");
            const Value y = acc_epi(x, kn, width);
            store_d(y, m, n, ok, width);
        }
    }

    void epilogue() {
        Block &exit_b = b_.new_block("exit");
        if (*s_.epilogue == "default") {
            if (wavelet_) {
                Block &body = b_.new_block("epi_compute");
                Block &skip = b_.new_block("epi_skip");
                b_.cond_br(is_loader_, skip, body);
                b_.position(body);
                epilogue_default();
                b_.br(skip);
                b_.position(skip);
            } else {
                epilogue_default();
            }
        } else {
            epilogue_cshuffle();
        }
        if (cluster_) cluster_fold();
        b_.br(exit_b);
        b_.position(exit_b);
        b_.ret_void();
    }

    // Wave-uniform: K and kpg are multiples of `vec` (kDVec for D, kOutVec for
    // fp32 slabs; kernel arguments only).
    Value d_vec_ok(int64_t vec = kDVec, const std::string &hint = "d") {
        const Value kk = b_.binop("or", p("K"), p("kpg"), hint + "_kk");
        const Value low = b_.binop("and", kk, ci32(vec - 1), hint + "_klow");
        return b_.icmp("eq", low, ci32(0), hint + "_wide");
    }

    // if d_vec_ok(vec): vec_fn() else: scalar_fn() (a uniform branch), then join.
    template <class V, class S>
    void d_branch(V vec_fn, S scalar_fn, const std::string &hint, int64_t vec = kDVec,
                  const std::string &ok_hint = "d") {
        const Value ok = d_vec_ok(vec, ok_hint);
        Block &bv = b_.new_block(hint + "_wide");
        Block &bs = b_.new_block(hint + "_narrow");
        Block &bj = b_.new_block(hint + "_done");
        b_.cond_br(ok, bv, bs);
        b_.position(bv);
        vec_fn();
        b_.br(bj);
        b_.position(bs);
        scalar_fn();
        b_.br(bj);
        b_.position(bj);
    }

    // D: 16-byte stores through the per-wave LDS transpose when K and kpg allow,
    // else scalar; fp32 slabs: 16-byte stores through the fp32 transpose when K
    // and kpg are multiples of kOutVec (slab_v4), else scalar.
    void epilogue_default() {
        if (split_) {
            d_branch([this] { slab_v4(); }, [this] { default_scalar(); }, "slab", kOutVec, "ws");
        } else {
            d_branch([this] { default_v16(); }, [this] { default_scalar(); }, "epi");
        }
    }

    // Each lane stores its fragment elements: acc[i][j] element e is tile row
    // wm0 + 16*i + 8*(lane/16) + e, tile column wn0 + 16*j + lane%16.
    void default_scalar() {
        const Value rbase = b_.mul(half_, ci32(8), "e_rbase");
        for (int64_t i = 0; i < fm_; ++i) {
            for (int64_t j = 0; j < fn_; ++j) {
                const Value acc = accs_[static_cast<size_t>(i * fn_ + j)];
                const Value ec = b_.add(wn0_, ci32(j * kWmmaN), "e_c");
                const Value col = b_.add(ec, lrow_, "e_col");
                const Value n = b_.add(n0_, col, "e_n");
                const Value nok = b_.icmp("ult", n, p("kpg"), "e_nok");
                for (int64_t e = 0; e < 8; ++e) {
                    const Value er = b_.add(wm0_, ci32(i * kWmmaM + e), "e_r");
                    const Value row = b_.add(er, rbase, "e_row");
                    const Value m = b_.add(m0_, row, "e_m");
                    const Value mok = b_.icmp("ult", m, p("M"), "e_mok");
                    const Value ok = b_.binop("and", mok, nok, "e_ok");
                    const Value x = b_.extractelement(acc, ci32(e), "e_x");
                    out_elem(x, m, n, ok, 1);
                }
            }
        }
    }

    // llvm.amdgcn.wave.barrier: no instruction, a code-motion barrier for the
    // wave; orders the transpose's cross-lane LDS writes and reads (RAW and WAR)
    // in LLVM's memory model.
    void wave_barrier() { b_.call_void("wave_barrier", {}); }

    // Per-wave LDS transpose (python default_v16): lane l writes its 8 elements
    // (epilogue applied, cast) to region rows 8*(l/16)+e, column l%16; a wave
    // barrier; then reads row l%16, columns 8*(l/16)+[0,8) and stores them with
    // one 16-byte store. A wave barrier precedes every accumulator's writes but
    // the first.
    void default_v16() {
        const Value lds = lds_.at("lds");
        const Value rb = b_.mul(wave_, ci32(16 * kDtRow), "dt_base");
        const Value wcol = b_.add(rb, lrow_, "dt_wcol");
        const Value rbase = b_.mul(half_, ci32(8), "e_rbase");
        const Value rrow0 = b_.mul(lrow_, ci32(kDtRow), "dt_rrow");
        const Value rrow = b_.add(rb, rrow0, "dt_rd");
        const Value rd = b_.add(rrow, rbase, "dt_rdc");
        for (int64_t i = 0; i < fm_; ++i) {
            for (int64_t j = 0; j < fn_; ++j) {
                const Value acc = accs_[static_cast<size_t>(i * fn_ + j)];
                if (i || j) wave_barrier();
                const Value ec = b_.add(wn0_, ci32(j * kWmmaN), "e_c");
                const Value col = b_.add(ec, lrow_, "e_col");
                const Value n = b_.add(n0_, col, "e_n");
                const Value kn = b_.add(kbase_, n, "epi_ch");
                for (int64_t e = 0; e < 8; ++e) {
                    const Value x = b_.extractelement(acc, ci32(e), "e_x");
                    const Value y = acc_epi(x, kn, 1);
                    const Value h = b_.cast("fptrunc", y, et_, "d_val");
                    const Value r = b_.add(rbase, ci32(e), "dt_r");
                    const Value wrow = b_.mul(r, ci32(kDtRow), "dt_wrow");
                    const Value idx = b_.add(wcol, wrow, "dt_widx");
                    const Value ptr = b_.gep(et_, lds, {idx}, "dt_p");
                    b_.store(h, ptr, 2);
                }
                wave_barrier();
                const Value ptr = b_.gep(et_, lds, {rd}, "dt_p");
                const Value v = b_.load(vec(kDVec, et_), ptr, 16, "dt_v");
                const Value rorg = b_.add(wm0_, ci32(i * kWmmaM), "dt_rorg");
                const Value row = b_.add(rorg, lrow_, "dt_row");
                const Value m = b_.add(m0_, row, "e_m");
                const Value corg = b_.add(wn0_, ci32(j * kWmmaN), "dt_corg");
                const Value cn = b_.add(corg, rbase, "dt_col");
                const Value n2 = b_.add(n0_, cn, "e_n");
                const Value mok = b_.icmp("ult", m, p("M"), "e_mok");
                const Value nok = b_.icmp("ult", n2, p("kpg"), "e_nok");
                const Value ok = b_.binop("and", mok, nok, "e_ok");
                store_d_raw(v, m, n2, ok, kDVec);
            }
        }
    }

    // fp32 slab transpose (python slab_v4; split-K, K and kpg multiples of
    // kOutVec): lane l writes its 8 fp32 elements to region rows 8*(l/16)+e,
    // column l%16 (region of wave w: 16*kWtRow floats at w*16*kWtRow); a wave
    // barrier; then reads row l%16, columns 8*(l/16)+[0,4) and +[4,8) and stores
    // each with one 16-byte store at ws[slice][m][kbase + n]. A wave barrier
    // precedes every accumulator's writes but the first.
    void slab_v4() {
        const Value lds = lds_.at("lds");
        const Value rb = b_.mul(wave_, ci32(16 * kWtRow), "wt_base");
        const Value wcol = b_.add(rb, lrow_, "wt_wcol");
        const Value rbase = b_.mul(half_, ci32(8), "e_rbase");
        const Value rrow0 = b_.mul(lrow_, ci32(kWtRow), "wt_rrow");
        const Value rrow = b_.add(rb, rrow0, "wt_rd");
        const Value rd = b_.add(rrow, rbase, "wt_rdc");
        for (int64_t i = 0; i < fm_; ++i) {
            for (int64_t j = 0; j < fn_; ++j) {
                const Value acc = accs_[static_cast<size_t>(i * fn_ + j)];
                if (i || j) wave_barrier();
                for (int64_t e = 0; e < 8; ++e) {
                    const Value x = b_.extractelement(acc, ci32(e), "e_x");
                    const Value r = b_.add(rbase, ci32(e), "wt_r");
                    const Value wrow = b_.mul(r, ci32(kWtRow), "wt_wrow");
                    const Value idx = b_.add(wcol, wrow, "wt_widx");
                    const Value ptr = b_.gep(float_(), lds, {idx}, "dt_p");
                    b_.store(x, ptr, 4);
                }
                wave_barrier();
                const Value rorg = b_.add(wm0_, ci32(i * kWmmaM), "dt_rorg");
                const Value row = b_.add(rorg, lrow_, "dt_row");
                const Value m = b_.add(m0_, row, "e_m");
                const Value mok = b_.icmp("ult", m, p("M"), "e_mok");
                const Value corg = b_.add(wn0_, ci32(j * kWmmaN), "dt_corg");
                const Value cn = b_.add(corg, rbase, "dt_col");
                for (int64_t h = 0; h < kDVec / kOutVec; ++h) {
                    const Value c = b_.add(rd, ci32(kOutVec * h), "wt_rdh");
                    const Value ptr = b_.gep(float_(), lds, {c}, "dt_p");
                    const Value v = b_.load(vec(kOutVec, float_()), ptr, 16, "wt_v");
                    const Value colh = b_.add(cn, ci32(kOutVec * h), "wt_colh");
                    const Value n = b_.add(n0_, colh, "e_n");
                    const Value nok = b_.icmp("ult", n, p("kpg"), "e_nok");
                    const Value ok = b_.binop("and", mok, nok, "e_ok");
                    const Value off = ws_offset(slice_, m, n, ok, "ws");
                    b_.call_void(store_key(4 * kOutVec), {v, rws_, off, ci32(0), ci32(0)});
                }
            }
        }
    }

    // Compute waves write the accumulators to the fp32 LDS tile (aliasing A/B,
    // after the main loop's last barrier); barrier; then all threads store row
    // vectors: 16-byte D stores when K and kpg allow, else kOutVec-wide; kOutVec
    // fp32 to the slab. Surplus slots clamp to the last vector.
    void epilogue_cshuffle() {
        const Value lc = lds_.at("lds");
        Block *join = nullptr;
        if (wavelet_) {
            Block &body = b_.new_block("cs_write");
            join = &b_.new_block("cs_join");
            b_.cond_br(is_loader_, *join, body);
            b_.position(body);
        }
        const Value rbase = b_.mul(half_, ci32(8), "e_rbase");
        for (int64_t i = 0; i < fm_; ++i) {
            for (int64_t j = 0; j < fn_; ++j) {
                const Value acc = accs_[static_cast<size_t>(i * fn_ + j)];
                const Value ec = b_.add(wn0_, ci32(j * kWmmaN), "e_c");
                const Value col = b_.add(ec, lrow_, "e_col");
                for (int64_t e = 0; e < 8; ++e) {
                    const Value er = b_.add(wm0_, ci32(i * kWmmaM + e), "e_r");
                    const Value row = b_.add(er, rbase, "e_row");
                    const Value rowi = b_.mul(row, ci32(ncp_), "cs_rowi");
                    const Value idx = b_.add(rowi, col, "cs_idx");
                    const Value ptr = b_.gep(float_(), lc, {idx}, "cs_p");
                    const Value x = b_.extractelement(acc, ci32(e), "e_x");
                    b_.store(x, ptr, 4);
                }
            }
        }
        if (wavelet_) {
            b_.br(*join);
            b_.position(*join);
        }
        barrier();
        if (split_) {
            cshuffle_out(kOutVec);
        } else {
            d_branch([this] { cshuffle_out(kDVec); }, [this] { cshuffle_out(kOutVec); }, "cs");
        }
    }

    // The store phase of cshuffle (python cshuffle_out).
    void cshuffle_out(int64_t width) {
        const Value lc = lds_.at("lds");
        const int64_t per_row = tn_ / width;
        const int64_t count = tm_ * per_row;
        const Type *v4 = vec(kOutVec, float_());
        for (int64_t j = 0; j < (count + threads_ - 1) / threads_; ++j) {
            Value v = b_.add(tid_, ci32(j * threads_), "cs_slot");
            if ((j + 1) * threads_ > count) v = umin_const(v, count - 1, "cs_slotc");
            Value row, cv;
            if (width == kDVec && per_row > kPairSlots && per_row % kPairSlots == 0) {
                const Value sl = b_.binop("urem", v, ci32(kPairSlots), "cs_sl");
                Value rest = b_.binop("udiv", v, ci32(kPairSlots), "cs_rest");
                const Value rpar = b_.binop("urem", rest, ci32(2), "cs_rpar");
                rest = b_.binop("udiv", rest, ci32(2), "cs_rest");
                const Value seg = b_.binop("urem", rest, ci32(per_row / kPairSlots), "cs_seg");
                const Value pair = b_.binop("udiv", rest, ci32(per_row / kPairSlots), "cs_pair");
                const Value prow = b_.mul(pair, ci32(2), "cs_prow");
                row = b_.add(prow, rpar, "cs_row");
                const Value segv = b_.mul(seg, ci32(kPairSlots), "cs_segv");
                cv = b_.add(segv, sl, "cs_cv");
            } else {
                row = b_.binop("udiv", v, ci32(per_row), "cs_row");
                cv = b_.binop("urem", v, ci32(per_row), "cs_cv");
            }
            const Value col = b_.mul(cv, ci32(width), "cs_col");
            const Value rowi = b_.mul(row, ci32(ncp_), "cs_rowi");
            const Value idx = b_.add(rowi, col, "cs_idx");
            const Value m = b_.add(m0_, row, "cs_m");
            const Value n = b_.add(n0_, col, "cs_n");
            const Value mok = b_.icmp("ult", m, p("M"), "cs_mok");
            const Value nok = b_.icmp("ult", n, p("kpg"), "cs_nok");
            const Value ok = b_.binop("and", mok, nok, "cs_ok");
            if (width == kOutVec) {
                const Value ptr = b_.gep(float_(), lc, {idx}, "cs_p");
                const Value x = b_.load(v4, ptr, 16, "cs_x");
                out_elem(x, m, n, ok, kOutVec);
                continue;
            }
            std::vector<Value> parts;
            for (int64_t h = 0; h < width / kOutVec; ++h) {
                const Value ih = h ? b_.add(idx, ci32(h * kOutVec), "cs_idxh") : idx;
                const Value ptr = b_.gep(float_(), lc, {ih}, "cs_p");
                const Value x = b_.load(v4, ptr, 16, "cs_x");
                const Value nh = h ? b_.add(n, ci32(h * kOutVec), "cs_nh") : n;
                const Value kn = b_.add(kbase_, nh, "epi_ch");
                parts.push_back(acc_epi(x, kn, kOutVec));
            }
            std::vector<int> mask;
            for (int i = 0; i < static_cast<int>(width); ++i) mask.push_back(i);
            const Value y = b_.shufflevector(parts[0], parts[1], mask, "cs_y");
            const Value dv = b_.cast("fptrunc", y, vec(width, et_), "d_val");
            store_d_raw(dv, m, n, ok, width);
        }
    }

    // After every slab of the cluster is stored: cluster barrier between
    // cluster-scope release/acquire fences, then this workgroup (rank = slice)
    // folds tile rows [rank*R, rank*R + R), R = ceil(tile_m / S), over slabs
    // 0..S-1 in order and stores D: kDVec channels per slot when K and kpg
    // allow, else kOutVec.
    void cluster_fold() {
        b_.fence("cluster", "release");
        b_.call_void("s_cluster_barrier", {});
        b_.fence("cluster", "acquire");
        d_branch([this] { fold_out(kDVec); }, [this] { fold_out(kOutVec); }, "fold");
    }

    // The fold's slots (python fold_out).
    void fold_out(int64_t width) {
        const int64_t S = cluster_;
        const int64_t R = (tm_ + S - 1) / S;
        const int64_t per_row = tn_ / width;
        const int64_t count = R * per_row;
        const Value r0 = b_.mul(slice_, ci32(R), "f_rorg");
        for (int64_t j = 0; j < (count + threads_ - 1) / threads_; ++j) {
            Value v = b_.add(tid_, ci32(j * threads_), "f_slot");
            if ((j + 1) * threads_ > count) v = umin_const(v, count - 1, "f_slotc");
            const Value rr = b_.binop("udiv", v, ci32(per_row), "f_rr");
            const Value cv = b_.binop("urem", v, ci32(per_row), "f_cv");
            const Value col = b_.mul(cv, ci32(width), "f_col");
            const Value row = b_.add(r0, rr, "f_row");
            const Value m = b_.add(m0_, row, "f_m");
            const Value n = b_.add(n0_, col, "f_n");
            const Value rok = b_.icmp("ult", row, ci32(tm_), "f_rok");
            const Value mok = b_.icmp("ult", m, p("M"), "f_mok");
            const Value nok = b_.icmp("ult", n, p("kpg"), "f_nok");
            Value ok = b_.binop("and", rok, mok, "f_ok");
            ok = b_.binop("and", ok, nok, "f_ok");
            Value total;
            for (int64_t sl = 0; sl < S; ++sl) {
                const Value off = ws_offset(ci32(sl), m, n, ok, "f");
                Value x = b_.call(load_key(4 * kOutVec), {rws_, off, ci32(0), ci32(0)}, "f_slab");
                if (width > kOutVec) {
                    const Value off2 = b_.add(off, ci32(4 * kOutVec), "f_offh");
                    const Value x2 = b_.call(load_key(4 * kOutVec), {rws_, off2, ci32(0), ci32(0)}, "f_slab");
                    std::vector<int> mask;
                    for (int i = 0; i < static_cast<int>(width); ++i) mask.push_back(i);
                    x = b_.shufflevector(x, x2, mask, "f_slabw");
                }
                total = sl == 0 ? x : b_.fadd(total, x, "f_sum");
            }
            store_d(total, m, n, ok, width);
        }
    }

    IRBuilder &b_;
    const ConvSpec &s_;
    const Type *et_;
    int64_t tm_, tn_, tk_, wm_, wn_, fm_, fn_, ncw_;
    bool wavelet_;
    int64_t threads_, load_threads_;
    bool split_;
    int64_t cluster_;
    std::pair<int64_t, int64_t> swz_;
    int64_t ncp_;
    int64_t pix_, slot_a_, slot_b_;

    Value tid_, lane_, wave_, group_, slice_, k_begin_, k_end_, ntiles_;
    Value m0_, n0_, cbase_, kbase_;
    Value rx_, rw_, oob_x_, oob_w_, rd_, oob_d_, rws_, oob_ws_, rbias_, oob_bias_;
    Value is_loader_, ltid_, wave_m_, wave_n_;
    std::map<std::string, Value> lds_;
    KStep step_;
    Value c2_, rowb_, kcpg_;
    std::vector<KState> a_states_;
    std::vector<BState> b_states_;
    Value lds_a_, lds_b_;
    std::vector<ASlot> a_slots_;
    std::vector<BSlot> b_slots_;
    Value half_, lrow_, lane_k_, wm0_, wn0_;
    std::vector<Value> a_rows_, b_rows_;
    std::vector<Value> accs_;
};

}  // namespace

std::pair<std::string, std::unique_ptr<ir::Module>> build(const ConvSpec &spec, const targets::Arch &arch,
                                                         const targets::Flavor &flavor) {
    std::string name = kernel_name(spec);
    const std::string variant = conv_abi::variant_of(spec.split_k, spec.split_k_cluster);
    const int64_t s = spec.split_k_cluster;
    std::optional<ClusterDims> dims;
    if (s) dims = ClusterDims{1, 1, s};
    auto attrs = kernel_attrs(threads(spec), dims);
    auto m = new_module(flavor, arch, name, conv_abi::params(variant), std::move(attrs));
    IRBuilder b(*m);
    Kernel k(b, spec);
    k.emit();
    return {std::move(name), std::move(m)};
}

}  // namespace cpe::kernels::conv_implicit_gemm
