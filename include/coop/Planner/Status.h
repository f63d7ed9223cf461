//===- Status.h - Error reporting for the planner core ----------*- C++ -*-===//
//
// The planner core is built without exceptions in mind: every fallible call
// returns a Status that carries a human-readable message.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PLANNER_STATUS_H
#define COOP_PLANNER_STATUS_H

#include <string>
#include <utility>

namespace coop::planner {

class [[nodiscard]] Status {
public:
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }

  bool isOk() const { return !failed_; }
  explicit operator bool() const { return isOk(); }
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

} // namespace coop::planner

#endif // COOP_PLANNER_STATUS_H
