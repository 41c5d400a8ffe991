// Twin of python_engine/families/perf_model.py.
#include "families/perf_model.h"

#include "ir/constants.h"
#include "policy/aot.h"
#include "policy/perf_model.h"
#include "policy/select.h"

namespace cpe::families::perf_model {

const char *const kFamily = "perf_model";

namespace {

using ir::dec;
using kernels::dec128;
using policy::Selection;
using policy::select_binary;
namespace aot = policy::aot;
namespace model = policy::perf_model;

model::ModelSelection decide(const Spec &spec, const targets::Arch &arch, const targets::Flavor &flavor) {
    return model::select_by_model(kernels::conv_launch::problem_of(spec.launch), arch, flavor, spec.launch.conv,
                                  spec.cus, spec.rules == 1);
}

std::string name_of(const model::ModelSelection &ms) {
    if (ms.best < 0) return "perf_model_none";
    const model::Candidate &b = ms.candidates[ms.best];
    return "perf_model_" + b.binary + "_" + dec(b.spec.tile_m) + "x" + dec(b.spec.tile_n) + "_d" + dec(b.degree);
}

}  // namespace

const std::vector<spec::Field> &fields() {
    static const std::vector<spec::Field> f = [] {
        std::vector<spec::Field> v = split_k_policy::fields();
        v.push_back({"rules", spec::FieldKind::Int});
        return v;
    }();
    return f;
}

std::optional<std::string> validate(const Spec &spec, const targets::Arch &arch, const targets::Flavor &flavor) {
    if (auto r = split_k_policy::validate(spec, arch, flavor)) return r;
    if (spec.rules != 0 && spec.rules != 1)
        return "rules must be 0 (every admitted candidate) or 1 (the reference's rules), got " + dec(spec.rules);
    return std::nullopt;
}

std::string kernel_name(const Spec &spec, const targets::Arch &arch, const targets::Flavor &flavor) {
    return name_of(decide(spec, arch, flavor));
}

std::pair<std::string, std::string> build(const Spec &spec, const targets::Arch &arch,
                                          const targets::Flavor &flavor) {
    const model::ModelSelection ms = decide(spec, arch, flavor);
    const kernels::conv_problem::ConvProblem &p = ms.problem;
    std::string t;
    t.reserve(1024 + 320 * ms.candidates.size());  // the candidate lines are most of it (about 250 bytes each)
    t += "perf_model " + arch.name + " " + flavor.canonical + "\n";
    t += "problem " + split_k_policy::problem_text(kernels::conv_launch::problem_of(spec.launch)) + "\n";
    t += "fold " + dec(ms.fold) + "\n";
    if (ms.fold > 1) t += "folded " + split_k_policy::problem_text(p) + "\n";
    t += "gemm M=" + dec(p.M()) + " kpg=" + dec(p.kpg()) + " groups=" + dec(p.groups) + " Kgemm=" + dec(p.Kgemm()) +
         "\n";
    t += "cus " + dec(ms.cus) + "\n";
    std::string roof;
    for (const auto &kv : arch.roofline) roof += (roof.empty() ? "" : " ") + kv.first + "=" + dec(kv.second);
    t += "roofline " + (roof.empty() ? std::string("none") : roof) + "\n";
    t += "candidates " + dec(static_cast<int64_t>(ms.candidates.size())) + " of " + dec(ms.tried) + " admitted\n";
    for (size_t i = 0; i < ms.candidates.size(); ++i) {
        const int64_t k = static_cast<int64_t>(i);
        ms.candidates[i].append_line(t);
        t += k == ms.best ? " selected\n" : k == ms.runner_up ? " runner_up\n" : "\n";
    }
    const model::Candidate *b = ms.best >= 0 ? &ms.candidates[ms.best] : nullptr;
    const model::Candidate *r = ms.runner_up >= 0 ? &ms.candidates[ms.runner_up] : nullptr;
    t += b ? "selected c" + dec(b->index) + " " + b->label() + " total_ps=" + dec128(b->total_ps()) + "\n"
           : std::string("selected none\n");
    t += r ? "runner_up c" + dec(r->index) + " " + r->label() + " total_ps=" + dec128(r->total_ps()) + "\n"
           : std::string("runner_up none\n");
    if (ms.seed)
        t += "seed " + ms.seed->label() + " total_ps=" + dec128(ms.seed->total_ps()) + "\n";
    else
        t += "seed none: " + ms.seed_note + "\n";
    if (!b) {
        t += "degree 1\nrule model: no candidate is admitted\nbinary none\ncluster -\nlaunch_degree 1\n";
        t += "admission " + (ms.tried == 0 ? ms.seed_note : std::string("no candidate is admitted")) + "\n";
        t += "kernel none\nreduce none\naot no: no candidate is admitted\n";
        return {name_of(ms), t};
    }
    const Selection sel =
        select_binary(b->spec, kernels::conv_launch::problem_of(spec.launch), arch, flavor, ms.cus);
    const std::string runner = r ? "runner-up c" + dec(r->index) + " " + dec128(r->total_ps()) + " ps"
                                 : std::string("no runner-up");
    t += "degree " + dec(b->degree) + "\n";
    t += "rule model: c" + dec(b->index) + " of " + dec(static_cast<int64_t>(ms.candidates.size())) +
         " admitted candidates, predicted " + dec128(b->total_ps()) + " ps (" + runner + ")\n";
    if (ms.rules) t += "admitted_by " + b->rule + "\n";
    t += "binary " + sel.binary + "\n";
    t += "cluster " + (b->binary == "cluster" ? "model: S " + dec(b->degree) : std::string("-")) + "\n";
    t += "launch_degree " + dec(sel.degree) + "\n";
    t += "admission " + (sel.admission ? *sel.admission : std::string("ok")) + "\n";
    t += "kernel " + sel.identity->kernel_name() + "\n";
    t += "identity " + sel.identity->hash() + " " + sel.identity->label() + "\n";
    t += "spec " + aot::conv_spec_text(sel.spec) + "\n";
    t += split_k_policy::reduce_and_aot_text(sel);
    return {name_of(ms), t};
}

}  // namespace cpe::families::perf_model
