//===- PlanVerifier.h - What the runtime proves before it runs a plan -*- C++ -*-===//
//
// Run on every load, before anything is allocated, independently of the
// compiler that wrote the plan: every buffer inside the arena and inside
// its storage with overflow-checked arithmetic; a replay of the step over
// the arena's bytes in which every read finds the value its buffer names
// and no launch overwrites what it still reads; every kernel argument
// against the kernel's declared schema (KernelDef::args). docs/runtime.md
// says what this proves and what it does not.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_RUNTIME_PLANVERIFIER_H
#define COOP_RUNTIME_PLANVERIFIER_H

#include "Kernel.h"

#include <string>
#include <vector>

namespace coop::rt {

/// One scalar argument of a kernel's schema.
struct ArgSpec {
  enum Type { Float, Int, Bool, String, Ints, Scalar, Any };
  std::string name;
  Type type = Any;
  bool optional = false; // may be absent or None
  bool ranged = false;   // numbers (each item of an int list) within:
  double low = 0, high = 0;
  bool lowOpen = false, highOpen = false;
};

/// A kernel's declared arguments (KernelDef::args).
struct ArgSchema {
  std::vector<ArgSpec> args;
  bool random = false; // its launches need an rng stream
};

/// Parses a KernelDef::args spec; `error` set when it is malformed.
ArgSchema parseArgSchema(const char *spec, std::string &error);

/// Checks a launch's arguments against `schema` and the kernel's tensor
/// parameters `params` (KernelDef::params): every declared one present
/// unless optional, of its type and range; every other one a tensor
/// parameter or a tensor option no kernel needs (device, dtype, layout,
/// ...). "" or what is wrong, naming the argument.
std::string checkArguments(const ArgSchema &schema, const std::vector<std::string> &params,
                           const ArgMap &args);

/// Verifies a whole plan: "" or the first violation, which names its place
/// ("launch #12 'aten.mul.Tensor' input #1 ...", "argument #0 'x' ...").
std::string verifyPlan(const coop_pb::Plan &plan);

} // namespace coop::rt

#endif // COOP_RUNTIME_PLANVERIFIER_H
