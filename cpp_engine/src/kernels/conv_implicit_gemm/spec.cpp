// Spec fields, constants and naming of family conv_implicit_gemm (twin:
// python_engine/kernels/conv_implicit_gemm/spec.py).
#include "kernels/conv_implicit_gemm/spec.h"

#include "ir/constants.h"
#include "ir/types.h"

namespace cpe::kernels::conv_implicit_gemm {

using namespace cpe::ir;

const char *const kFamily = "conv_implicit_gemm";

const Type *dtype_type(const std::string &d) { return d == "bf16" ? bfloat() : half(); }
const char *wmma_key(const std::string &d) {
    return d == "bf16" ? "wmma_f32_16x16x32_bf16" : "wmma_f32_16x16x32_f16";
}

const std::vector<spec::Field> &fields() {
    static const std::vector<spec::Field> f{
        {"dtype", spec::FieldKind::Str},          {"tile_m", spec::FieldKind::Int},         {"tile_n", spec::FieldKind::Int},
        {"tile_k", spec::FieldKind::Int},         {"waves_m", spec::FieldKind::Int},        {"waves_n", spec::FieldKind::Int},
        {"pipeline", spec::FieldKind::Str},       {"num_load_waves", spec::FieldKind::Int}, {"epilogue", spec::FieldKind::Str},
        {"vector_a", spec::FieldKind::Int},       {"vector_b", spec::FieldKind::Int},       {"acc_epilogue", spec::FieldKind::Str},
        {"split_k", spec::FieldKind::Int},        {"split_k_cluster", spec::FieldKind::Int}, {"name_prefix", spec::FieldKind::Str},
    };
    return f;
}

int64_t threads(const ConvSpec &spec) {
    int64_t w = spec.waves_m * spec.waves_n;
    if (*spec.pipeline == "wavelet") w += spec.num_load_waves;
    return w * kWave;
}

std::string stage1_acc(const ConvSpec &spec) {
    return spec.split_k > 1 && !spec.split_k_cluster ? std::string("identity") : *spec.acc_epilogue;
}

std::string kernel_name(const ConvSpec &spec) {
    const std::string pipe = *spec.pipeline == "mem" ? std::string("mem") : "wavelet" + dec(spec.num_load_waves);
    std::string name = "conv_implicit_gemm_" + *spec.dtype + "_" + dec(spec.tile_m) + "x" + dec(spec.tile_n) + "x" +
                       dec(spec.tile_k) + "_w" + dec(spec.waves_m) + "x" + dec(spec.waves_n) + "_" + pipe + "_" +
                       *spec.epilogue + "_va" + dec(spec.vector_a) + "_vb" + dec(spec.vector_b) + "_" +
                       stage1_acc(spec);
    if (spec.split_k > 1) name += "_spk";
    if (spec.split_k_cluster) name += "_skc" + dec(spec.split_k_cluster);
    if (!spec.name_prefix->empty()) name = *spec.name_prefix + "_" + name;
    return name;
}

}  // namespace cpe::kernels::conv_implicit_gemm
