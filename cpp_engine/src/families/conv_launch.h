// Twin of python_engine/families/conv_launch.py.
// Family `conv_launch`, the family entry (docs/conv_launch.md): resolves
// split_k = -1 (auto) through the split-K policy (policy/split_k.h), then
// admits and plans the resolved spec with kernels/conv_launch.h. The spec, its
// fields and the plan are the kernel side's (kernels::conv_launch::LaunchSpec,
// fields(), Plan); a spec without -1 passes through unchanged, so every
// function here equals its kernels::conv_launch namesake for it.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "kernels/conv_launch.h"
#include "targets/arch.h"
#include "targets/flavors.h"

namespace cpe::families::conv_launch {

using Spec = kernels::conv_launch::LaunchSpec;
using kernels::conv_launch::fields;
using kernels::conv_launch::kFamily;

// split_k = -1 (auto) resolved for this problem (docs/policy.md): the problem
// rules first, then degree must be left at 1, then the resolver's degree d
// becomes split_k = d and degree = d. The reason when that fails; a spec
// without -1 is returned unchanged.
std::pair<Spec, std::optional<std::string>> resolve(const Spec &spec, const targets::Arch &arch,
                                                    const targets::Flavor &flavor);

// The admission reason, or nullopt: resolve's reason, else
// kernels::conv_launch::validate of the resolved spec.
std::optional<std::string> validate(const Spec &spec, const targets::Arch &arch, const targets::Flavor &flavor);

// The forward kernel's name of the resolved spec (of an admitted spec).
std::string kernel_name(const Spec &spec, const targets::Arch &arch, const targets::Flavor &flavor);

// The launch plan of the resolved spec (of an admitted spec; call validate first).
kernels::conv_launch::Plan plan(const Spec &spec, const targets::Arch &arch, const targets::Flavor &flavor);

// (kernel name, launch plan text) of the resolved spec (of an admitted spec).
std::pair<std::string, std::string> build(const Spec &spec, const targets::Arch &arch,
                                          const targets::Flavor &flavor);

}  // namespace cpe::families::conv_launch
