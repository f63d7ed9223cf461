//===- ProtoConversions.cpp - coop attributes <-> protobuf values ---------===//

#include "coop/Target/ProtoConversions.h"

using namespace mlir;
using namespace mlir::coop;

Type mlir::coop::elementTypeFromProto(coop_pb::DType dtype,
                                      Builder &builder) {
  switch (dtype) {
  case coop_pb::FLOAT32:
    return builder.getF32Type();
  case coop_pb::FLOAT16:
    return builder.getF16Type();
  case coop_pb::BFLOAT16:
    return builder.getBF16Type();
  case coop_pb::FLOAT64:
    return builder.getF64Type();
  case coop_pb::INT64:
    return builder.getI64Type();
  case coop_pb::INT32:
    return builder.getI32Type();
  case coop_pb::INT16:
    return builder.getI16Type();
  case coop_pb::INT8:
    return builder.getI8Type();
  case coop_pb::UINT8:
    return builder.getIntegerType(8, /*isSigned=*/false);
  case coop_pb::BOOL:
    return builder.getI1Type();
  case coop_pb::COMPLEX64:
    return ComplexType::get(builder.getF32Type());
  default:
    return nullptr;
  }
}

coop_pb::DType mlir::coop::protoFromElementType(Type type) {
  if (type.isF32())
    return coop_pb::FLOAT32;
  if (type.isF16())
    return coop_pb::FLOAT16;
  if (type.isBF16())
    return coop_pb::BFLOAT16;
  if (type.isF64())
    return coop_pb::FLOAT64;
  if (type.isInteger(1))
    return coop_pb::BOOL;
  if (type.isUnsignedInteger(8))
    return coop_pb::UINT8;
  if (type.isInteger(8))
    return coop_pb::INT8;
  if (type.isInteger(16))
    return coop_pb::INT16;
  if (type.isInteger(32))
    return coop_pb::INT32;
  if (type.isInteger(64))
    return coop_pb::INT64;
  if (auto complex = dyn_cast<ComplexType>(type);
      complex && complex.getElementType().isF32())
    return coop_pb::COMPLEX64;
  return coop_pb::DTYPE_UNSPECIFIED;
}

std::optional<Role> mlir::coop::roleFromProto(coop_pb::Role role) {
  switch (role) {
  case coop_pb::PARAMETER:
    return Role::Parameter;
  case coop_pb::GRADIENT:
    return Role::Gradient;
  case coop_pb::OPTIMIZER_STATE:
    return Role::OptimizerState;
  case coop_pb::BUFFER:
    return Role::Buffer;
  case coop_pb::INPUT:
    return Role::Input;
  default:
    return std::nullopt;
  }
}

coop_pb::Role mlir::coop::protoFromRole(Role role) {
  switch (role) {
  case Role::Parameter:
    return coop_pb::PARAMETER;
  case Role::Gradient:
    return coop_pb::GRADIENT;
  case Role::OptimizerState:
    return coop_pb::OPTIMIZER_STATE;
  case Role::Buffer:
    return coop_pb::BUFFER;
  case Role::Input:
    return coop_pb::INPUT;
  }
  return coop_pb::ACTIVATION;
}

Attribute mlir::coop::attributeFromProto(const coop_pb::Value &value,
                                         Builder &builder) {
  switch (value.kind_case()) {
  case coop_pb::Value::kNone:
    return builder.getUnitAttr();
  case coop_pb::Value::kIntValue:
    return builder.getI64IntegerAttr(value.int_value());
  case coop_pb::Value::kFloatValue:
    return builder.getF64FloatAttr(value.float_value());
  case coop_pb::Value::kBoolValue:
    return builder.getBoolAttr(value.bool_value());
  case coop_pb::Value::kStringValue:
    return builder.getStringAttr(value.string_value());
  case coop_pb::Value::kOperand:
    return builder.getI64IntegerAttr(value.operand());
  case coop_pb::Value::kList: {
    SmallVector<Attribute> items;
    for (const coop_pb::Value &item : value.list().items()) {
      Attribute converted = attributeFromProto(item, builder);
      if (!converted)
        return nullptr;
      items.push_back(converted);
    }
    return builder.getArrayAttr(items);
  }
  case coop_pb::Value::KIND_NOT_SET:
    break;
  }
  return nullptr;
}

LogicalResult mlir::coop::protoFromAttribute(Attribute attr,
                                             coop_pb::Value *value) {
  if (isa<UnitAttr>(attr)) {
    value->set_none(true);
  } else if (auto boolean = dyn_cast<BoolAttr>(attr)) {
    value->set_bool_value(boolean.getValue());
  } else if (auto integer = dyn_cast<IntegerAttr>(attr)) {
    value->set_int_value(integer.getInt());
  } else if (auto real = dyn_cast<FloatAttr>(attr)) {
    value->set_float_value(real.getValueAsDouble());
  } else if (auto string = dyn_cast<StringAttr>(attr)) {
    value->set_string_value(string.str());
  } else if (auto list = dyn_cast<ArrayAttr>(attr)) {
    coop_pb::ValueList *items = value->mutable_list();
    for (Attribute item : list)
      if (failed(protoFromAttribute(item, items->add_items())))
        return failure();
  } else if (auto dense = dyn_cast<DenseI64ArrayAttr>(attr)) {
    coop_pb::ValueList *items = value->mutable_list();
    for (int64_t item : dense.asArrayRef())
      items->add_items()->set_int_value(item);
  } else {
    return failure();
  }
  return success();
}
