// Functions, parameters, basic blocks, instructions, and the module.
// Twin of python_engine/ir/function.py.
//
// Names: every register and block label inside a function is `hint` followed
// by the function's one counter (`%acc12`, `loop3`), given when the builder
// creates it, so the builder call order alone decides the bytes (DESIGN §2).
// Parameters keep their names as given.
#pragma once

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "ir/origin.h"
#include "ir/types.h"
#include "ir/values.h"
#include "targets/arch.h"
#include "targets/flavors.h"

namespace cpe::ir {

// A kernel parameter: name, type and attribute keys in print order. Keys print
// literally except "capture", which prints the flavor's pointer-capture
// attribute (`nocapture` or `captures(none)`).
struct Param {
    std::string name;
    const Type *type;
    std::vector<std::string> attrs;

    Value value() const { return Value{type, "%" + name}; }
};

class Block;

// One instruction; text() is its printed line without indentation.
class Instr {
public:
    explicit Instr(std::string line) : line_(std::move(line)) {}
    virtual ~Instr() = default;
    virtual std::string text() const { return line_; }
    // The builder call that made it, while origin recording was on (ir/origin.h); file null otherwise.
    void set_origin(Here here) { origin_ = here; }
    const Here &origin() const { return origin_; }

private:
    std::string line_;
    Here origin_{nullptr, 0};
};

// `phi`; incoming edges may be added after creation (loops).
class Phi : public Instr {
public:
    explicit Phi(Value result) : Instr(""), result_(std::move(result)) {}
    const Value &result() const { return result_; }
    void add_incoming(const Value &value, const Block &block);
    // std::logic_error when the phi has no incoming edge.
    std::string text() const override;

private:
    Value result_;
    std::vector<std::pair<Value, std::string>> incoming_;  // (value, block label)
};

// A basic block: a label and its instructions. Ends with one terminator.
class Block {
public:
    explicit Block(std::string name) : name_(std::move(name)) {}
    const std::string &name() const { return name_; }
    const std::vector<std::unique_ptr<Instr>> &instrs() const { return instrs_; }
    bool terminated() const { return terminated_; }

    Instr &append(std::unique_ptr<Instr> ins) {
        instrs_.push_back(std::move(ins));
        return *instrs_.back();
    }
    void set_terminated() { terminated_ = true; }
    // The builder call that made it, while origin recording was on (ir/origin.h); file null otherwise.
    void set_origin(Here here) { origin_ = here; }
    const Here &origin() const { return origin_; }

private:
    std::string name_;
    std::vector<std::unique_ptr<Instr>> instrs_;
    bool terminated_ = false;
    Here origin_{nullptr, 0};
};

// A function definition (`define`). `cc` is the calling convention
// (`amdgpu_kernel`), attr_group the ordered (key, value) attribute pairs
// printed as `attributes #0` (a pair without a value prints its key bare).
class Function {
public:
    using Attrs = std::vector<std::pair<std::string, std::optional<std::string>>>;

    Function(std::string name, std::vector<Param> params, const Type *ret, std::string cc, Attrs attr_group)
        : name_(std::move(name)), params_(std::move(params)), ret_(ret), cc_(std::move(cc)),
          attr_group_(std::move(attr_group)) {}

    const std::string &name() const { return name_; }
    const std::vector<Param> &params() const { return params_; }
    const Type *ret() const { return ret_; }
    const std::string &cc() const { return cc_; }
    const Attrs &attr_group() const { return attr_group_; }
    const std::vector<std::unique_ptr<Block>> &blocks() const { return blocks_; }

    // Next name from the function's counter: `hint` + number. A hint must be a
    // non-empty ASCII identifier not ending in a digit; std::invalid_argument otherwise.
    std::string fresh(const std::string &hint);

    // The value of parameter `name`; std::out_of_range if there is none.
    Value param(const std::string &name) const;

    // Create (and append) a new basic block labelled `hint` + counter.
    Block &block(const std::string &hint);

private:
    std::string name_;
    std::vector<Param> params_;
    const Type *ret_;
    std::string cc_;
    Attrs attr_group_;
    std::vector<std::unique_ptr<Block>> blocks_;
    long long counter_ = 0;
};

// An LDS (`addrspace(3)`) global:
// `@name = internal addrspace(3) global [count x elem] poison, align N`.
struct LdsGlobal {
    std::string name;
    const Type *type;
    long long align;

    Value value() const { return Value{lds_ptr(), "@" + name}; }
};

// One LLVM module for one kernel at one arch and flavor. `flavor` and `arch`
// point at rows of the target tables; intrinsics used are recorded by table
// key and declared in table order by the printer.
class Module {
public:
    Module(const targets::Flavor &flavor, const targets::Arch &arch) : flavor_(&flavor), arch_(&arch) {}

    const targets::Flavor &flavor() const { return *flavor_; }
    const targets::Arch &arch() const { return *arch_; }
    const std::vector<LdsGlobal> &lds() const { return lds_; }
    const std::set<std::string> &used_intrinsics() const { return used_; }
    Function *function() const { return function_.get(); }
    const std::vector<std::string> &metadata() const { return metadata_; }

    // Declare an LDS global (align in bytes); returns a pointer value to it.
    Value add_lds(const std::string &name, const Type *t, long long align);
    void use_intrinsic(const std::string &key) { used_.insert(key); }
    Function &set_function(std::unique_ptr<Function> fn) {
        function_ = std::move(fn);
        return *function_;
    }
    void add_metadata(std::string line) { metadata_.push_back(std::move(line)); }

private:
    const targets::Flavor *flavor_;
    const targets::Arch *arch_;
    std::vector<LdsGlobal> lds_;
    std::set<std::string> used_;  // membership only; never iterated for printing
    std::unique_ptr<Function> function_;
    std::vector<std::string> metadata_;
};

}  // namespace cpe::ir
