// Twin of python_engine/targets/arch.py (sources cited in arch.h).
#include "spec/fields.h"
#include "targets/arch.h"

namespace cpe::targets {

const std::vector<Arch> &arches() {
    static const std::vector<Arch> table{
        {"gfx1250", 32, 327680, "wmma", {{16, 16, 32, "bf16"}, {16, 16, 32, "fp16"}}, true, 256, 0x2, "gfx1250", 0x20000000,
         {{"clock_mhz", 2400}, {"simds_per_cu", 2}, {"wmma_cycles", 8}, {"max_waves_per_simd", 4},
          {"hbm_bytes_per_us", 8000000}, {"l2_bytes_per_clk_per_cu", 64}, {"launch_ns", 2000},
          {"cluster_barrier_cycles", 500}, {"kstep_issue_cycles", 93}}},
        {"gfx942", 64, 65536, "mfma", {}, false, 304, 0x00020000, "gfx9", 0x00020000},
        {"gfx950", 64, 163840, "mfma", {}, false, 256, 0x00020000, "gfx9", 0x00020000},
        {"gfx1100", 32, 65536, "wmma", {{16, 16, 16, "bf16"}, {16, 16, 16, "fp16"}}, false, 96, 0x31004000, "gfx11", 0x31004000},
        {"gfx1201", 32, 65536, "wmma", {{16, 16, 16, "bf16"}, {16, 16, 16, "fp16"}}, false, 64, 0x31004000, "gfx11", 0x31004000},
    };
    return table;
}

const Arch *find_arch(const std::string &name) {
    for (const Arch &a : arches())
        if (a.name == name) return &a;
    return nullptr;
}

std::string unknown_arch_reason(const std::string &name) {
    if (auto why = spec::string_reason("arch", name)) return *why;
    return "arch '" + name + "' is not one of gfx1250, gfx942, gfx950, gfx1100, gfx1201";
}

std::vector<RsrcField> rsrc_fields(const std::string &layout) {
    if (layout == "gfx9" || layout == "gfx11")
        return {{"base", 0, 48}, {"stride", 48, 14}, {"num_records", 64, 32}, {"flags", 96, 32}};
    if (layout == "gfx1250")
        return {{"base", 0, 57}, {"num_records", 57, 45}, {"stride", 108, 14}, {"flags", 124, 4}};
    return {};
}

bool has_wmma_16x16x32(const Arch &arch) {
    for (const WmmaShape &s : arch.wmma)
        if (s.m == 16 && s.n == 16 && s.k == 32) return true;
    return false;
}

}  // namespace cpe::targets
