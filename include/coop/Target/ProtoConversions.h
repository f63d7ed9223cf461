//===- ProtoConversions.h - coop attributes <-> protobuf values --*- C++ -*-===//
//
// The conversions both file formats (TrainingGraph, Plan) share: element
// types, roles and aten argument values.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_TARGET_PROTOCONVERSIONS_H
#define COOP_TARGET_PROTOCONVERSIONS_H

#include "coop/Dialect/Coop/IR/CoopOps.h"

#include "training_graph.pb.h"

#include "mlir/IR/Builders.h"

namespace mlir::coop {

/// The MLIR element type of a protobuf dtype, or null for an unknown one.
Type elementTypeFromProto(coop_pb::DType dtype, Builder &builder);
/// The protobuf dtype of an element type, or DTYPE_UNSPECIFIED.
coop_pb::DType protoFromElementType(Type type);

std::optional<Role> roleFromProto(coop_pb::Role role);
coop_pb::Role protoFromRole(Role role);

/// An aten argument value as an attribute: none -> unit, ints, floats,
/// bools, strings, lists as arrays; a tensor operand reference becomes its
/// operand index. Null for a value with no kind set.
Attribute attributeFromProto(const coop_pb::Value &value, Builder &builder);
/// The inverse; fails for attributes with no protobuf form.
LogicalResult protoFromAttribute(Attribute attr, coop_pb::Value *value);

} // namespace mlir::coop

#endif // COOP_TARGET_PROTOCONVERSIONS_H
