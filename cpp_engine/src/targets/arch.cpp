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

const std::vector<std::string> &llvm_processors() {
    static const std::vector<std::string> names{
        "bonaire", "carrizo", "fiji", "generic", "generic-hsa", "gfx10-1-generic", "gfx10-3-generic", "gfx1010",
        "gfx1011", "gfx1012", "gfx1013", "gfx1030", "gfx1031", "gfx1032", "gfx1033", "gfx1034", "gfx1035",
        "gfx1036", "gfx11-generic", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151", "gfx1152",
        "gfx1153", "gfx12-generic", "gfx1200", "gfx1201", "gfx1250", "gfx1251", "gfx600", "gfx601", "gfx602",
        "gfx700", "gfx701", "gfx702", "gfx703", "gfx704", "gfx705", "gfx801", "gfx802", "gfx803", "gfx805",
        "gfx810", "gfx9-4-generic", "gfx9-generic", "gfx900", "gfx902", "gfx904", "gfx906", "gfx908", "gfx909",
        "gfx90a", "gfx90c", "gfx942", "gfx950", "hainan", "hawaii", "iceland", "kabini", "kaveri", "mullins",
        "oland", "pitcairn", "polaris10", "polaris11", "stoney", "tahiti", "tonga", "tongapro", "verde"};
    return names;
}

const Arch *processor_arch(const std::string &name) {
    if (const Arch *a = find_arch(name)) return a;
    static const std::vector<Arch> rows = [] {
        std::vector<Arch> out;
        for (const std::string &n : llvm_processors())
            if (!find_arch(n)) out.push_back(Arch{n, 0, 0, "none", {}, false, 0, 0, "none", 0});
        return out;
    }();
    for (const Arch &a : rows)
        if (a.name == name) return &a;
    return nullptr;
}

bool in_table(const Arch &arch) { return find_arch(arch.name) == &arch; }

std::string outside_table_reason(const Arch &arch, const std::string &what) {
    return "arch " + arch.name + " is an LLVM AMDGPU processor outside the arch table (" + what +
           " requires gfx1250)";
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
