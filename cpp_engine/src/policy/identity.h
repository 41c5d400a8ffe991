// KernelIdentity: the fields that name a binary, its stable hash and its
// label (docs/policy.md). Twin of python_engine/policy/identity.py.
//
// Every field is declared once, in fields(), with its rule: Always (no
// default; always hashed) or OmitAtDefault (left out of the hashed text while
// it holds its default). A field added later takes a default and
// OmitAtDefault, so existing hashes stay the same.
//
// two_stage means "takes the split-K workspace ABI" (split_k > 1, one binary
// for every degree); needs_stage2() = two_stage && !split_k_cluster is the
// only predicate for launching Stage 2. Labels are the kernel name (_spk,
// _skc<S>) followed by ".<arch>.<flavor>".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kernels/conv_fwd_split_k_reduce.h"
#include "kernels/conv_implicit_gemm.h"

namespace cpe::policy {

constexpr int kHashHex = 16;  // hex digits of sha256 kept in the hash

struct KernelIdentity {
    std::string family;  // conv_implicit_gemm | conv_fwd_split_k_reduce
    std::string arch;
    std::string flavor;  // canonical
    std::string dtype;
    // conv_implicit_gemm
    int64_t tile_m = 64, tile_n = 64, tile_k = 32, waves_m = 2, waves_n = 2;
    std::string pipeline = "mem";
    int64_t num_load_waves = 1;  // normalized to 1 for mem (same bytes)
    std::string epilogue = "default";
    int64_t vector_a = 8, vector_b = 8;
    std::string acc_epilogue = "identity";
    bool two_stage = false;
    int64_t split_k_cluster = 0;
    std::string name_prefix = "";
    // conv_fwd_split_k_reduce
    int64_t vector = 8, threads = 256, degree = 0;

    static KernelIdentity of_conv(const kernels::conv_implicit_gemm::ConvSpec &s, const std::string &arch,
                                  const std::string &flavor);
    static KernelIdentity of_reduce(const kernels::conv_fwd_split_k_reduce::ReduceSpec &s, const std::string &arch,
                                    const std::string &flavor);

    bool needs_stage2() const { return two_stage && !split_k_cluster; }  // the one Stage-2 predicate
    kernels::conv_implicit_gemm::ConvSpec conv_spec() const;   // two-stage as split_k = 2
    kernels::conv_fwd_split_k_reduce::ReduceSpec reduce_spec() const;
    std::string kernel_name() const;
    std::string hashed_text() const;  // name=value lines, field order, defaults omitted per field rule
    std::string hash() const;         // first kHashHex hex digits of sha256(hashed_text)
    std::string label() const;        // <kernel name>.<arch>.<flavor>
};

enum class IdentRule { Always, OmitAtDefault };

// One field: its name, rule, and its value as text (for the identity and for
// a default-constructed identity).
struct IdentField {
    const char *name;
    IdentRule rule;
    std::function<std::string(const KernelIdentity &)> text;
};

// Every field, in order (the one declaration of each field's rule).
const std::vector<IdentField> &identity_fields();

}  // namespace cpe::policy
