// Internal helpers of the C API (not installed): the conversions between the
// C++ conv specs and the flat C structs that spell them out. cpe_conv_spec,
// cpe_conv_launch_spec and cpe_split_k_policy_spec share the binary's members
// (the conv_implicit_gemm fields), and the last two the problem's, by name, so
// one template per part serves each struct.
// Twin: python_engine/api.py (the engine API that these C entry points give C callers).
#pragma once

#include "api/c_api.h"
#include "kernels/conv_implicit_gemm.h"
#include "kernels/conv_launch.h"

namespace cpe::api {

// The binary (conv_implicit_gemm's fields) from a C struct.
template <class C>
void conv_from_c(const C &c, kernels::conv_implicit_gemm::ConvSpec &s) {
    s.dtype = str_field(c.dtype, "dtype");
    s.tile_m = c.tile_m;
    s.tile_n = c.tile_n;
    s.tile_k = c.tile_k;
    s.waves_m = c.waves_m;
    s.waves_n = c.waves_n;
    s.pipeline = str_field(c.pipeline, "pipeline");
    s.num_load_waves = c.num_load_waves;
    s.epilogue = str_field(c.epilogue, "epilogue");
    s.vector_a = c.vector_a;
    s.vector_b = c.vector_b;
    s.acc_epilogue = str_field(c.acc_epilogue, "acc_epilogue");
    s.split_k = c.split_k;
    s.split_k_cluster = c.split_k_cluster;
    s.name_prefix = str_field(c.name_prefix, "name_prefix");
}

// The binary into a C struct (string members point into `s`, which must
// outlive the struct: the *_spec_default functions pass static specs).
template <class C>
void conv_to_c(const kernels::conv_implicit_gemm::ConvSpec &s, C &c) {
    c.dtype = s.dtype->c_str();
    c.tile_m = s.tile_m;
    c.tile_n = s.tile_n;
    c.tile_k = s.tile_k;
    c.waves_m = s.waves_m;
    c.waves_n = s.waves_n;
    c.pipeline = s.pipeline->c_str();
    c.num_load_waves = s.num_load_waves;
    c.epilogue = s.epilogue->c_str();
    c.vector_a = s.vector_a;
    c.vector_b = s.vector_b;
    c.acc_epilogue = s.acc_epilogue->c_str();
    c.split_k = s.split_k;
    c.split_k_cluster = s.split_k_cluster;
    c.name_prefix = s.name_prefix->c_str();
}

// The binary and the problem (not degree) from a C struct.
template <class C>
void launch_from_c(const C &c, kernels::conv_launch::LaunchSpec &s) {
    conv_from_c(c, s.conv);
    s.N = c.N;
    s.C = c.C;
    s.H = c.H;
    s.W = c.W;
    s.K = c.K;
    s.Y = c.Y;
    s.X = c.X;
    s.stride_h = c.stride_h;
    s.stride_w = c.stride_w;
    s.pad_h = c.pad_h;
    s.pad_w = c.pad_w;
    s.dil_h = c.dil_h;
    s.dil_w = c.dil_w;
    s.groups = c.groups;
}

// The binary and the problem (not degree) into a C struct.
template <class C>
void launch_to_c(const kernels::conv_launch::LaunchSpec &s, C &c) {
    conv_to_c(s.conv, c);
    c.N = s.N;
    c.C = s.C;
    c.H = s.H;
    c.W = s.W;
    c.K = s.K;
    c.Y = s.Y;
    c.X = s.X;
    c.stride_h = s.stride_h;
    c.stride_w = s.stride_w;
    c.pad_h = s.pad_h;
    c.pad_w = s.pad_w;
    c.dil_h = s.dil_h;
    c.dil_w = s.dil_w;
    c.groups = s.groups;
}

}  // namespace cpe::api
