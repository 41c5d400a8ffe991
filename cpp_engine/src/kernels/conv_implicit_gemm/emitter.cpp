// The emitter of family conv_implicit_gemm: Kernel's constructor, small
// helpers and prologue values, and build (twin:
// python_engine/kernels/conv_implicit_gemm/emitter.py).
#include "kernels/conv_implicit_gemm.h"
#include "kernels/conv_implicit_gemm/emitter.h"

#include <optional>

#include "ir/constants.h"
#include "ir/values.h"
#include "kernels/acc_epilogue.h"
#include "kernels/common.h"
#include "kernels/conv_abi.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

Kernel::Kernel(IRBuilder &b, const ConvSpec &spec) : b_(b), s_(spec) {
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

void Kernel::emit() {
    Block &entry = b_.new_block("entry");
    b_.position(entry);
    prologue_values();
    slot_setup();
    main_loop();
    epilogue();
}

Value Kernel::p(const std::string &name) const { return b_.fn().param(name); }

// min(v, c) for a slot index (icmp ult + select).
Value Kernel::umin_const(const Value &v, int64_t c, const std::string &hint) {
    const Value lt = b_.icmp("ult", v, ci32(c), hint + "_lt");
    return b_.select(lt, v, ci32(c), hint);
}

// Workgroup barrier between a release and an acquire fence of workgroup scope;
// lds_only: the fences order LDS only (lds_fence_mmra), so the release does not
// wait for global loads in flight.
void Kernel::barrier(bool lds_only) {
    const std::string mmra = lds_only ? lds_fence_mmra() : "";
    b_.fence("workgroup", "release", mmra);
    b_.call_void("s_barrier", {});
    b_.fence("workgroup", "acquire", mmra);
}

// The metadata node !{!"amdgpu-synchronize-as", !"local"} (added to the module on
// first use): a memory model relaxation annotation that makes a fence synchronize
// the LDS address space only (LLVM AMDGPUUsage, "Memory Model Relaxation
// Annotations"; without it a workgroup release fence waits for every global load
// in flight, s_wait_loadcnt 0).
std::string Kernel::lds_fence_mmra() {
    if (mmra_local_.empty()) {
        ir::Module &m = b_.module();
        mmra_local_ = "!" + std::to_string(m.metadata().size() - 1);
        m.add_metadata(mmra_local_ + " = !{!\"amdgpu-synchronize-as\", !\"local\"}");
    }
    return mmra_local_;
}

// Buffer resource over `nbytes` (i64 value) bytes at parameter `ptr_name`;
// word 3 is the arch table's rsrc_flags (raw offset range check).
Value Kernel::rsrc(const std::string &ptr_name, const Value &nbytes, const std::string &hint) {
    Value n = nbytes;
    if (b_.module().flavor().rsrc_num_records_bits == 32) n = b_.cast("trunc", nbytes, i32(), hint + "_nrec");
    const Value ptr = p(ptr_name);
    return b_.call("make_buffer_rsrc", {ptr, const_int(i16(), 0), n, ci32(b_.module().arch().rsrc_flags)}, hint);
}

// The reduction length the K loop runs over: Kgemm, or Y*X*slot on the
// padded-pixel path.
Value Kernel::kgemm() {
    if (!pix_) return p("Kgemm");
    const Value yx = b_.mul(p("Y"), p("X"), "k_taps");
    return b_.mul(yx, ci32(slot_a_), "k_padded");
}

void Kernel::prologue_values() {
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
    if (acc_epilogue::has(s_.acc_epilogue, "bias") && (!split_ || cluster_)) {
        // Stage 1 of two-stage stores raw fp32 partials: Stage 2 applies the epilogue
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

std::pair<std::string, std::unique_ptr<ir::Module>> build(const ConvSpec &spec, const targets::Arch &arch,
                                                         const targets::Flavor &flavor) {
    std::string name = kernel_name(spec);
    const std::string variant = conv_abi::variant_of(spec.split_k, spec.split_k_cluster);
    const int64_t s = spec.split_k_cluster;
    std::optional<ClusterDims> dims;
    if (s) dims = ClusterDims{1, 1, s};
    auto attrs = kernel_attrs(threads(spec), dims, tap_beside_waves(spec));
    auto m = new_module(flavor, arch, name, conv_abi::params(variant), std::move(attrs));
    IRBuilder b(*m);
    Kernel k(b, spec);
    k.emit();
    return {std::move(name), std::move(m)};
}

}  // namespace cpe::kernels::conv_implicit_gemm
