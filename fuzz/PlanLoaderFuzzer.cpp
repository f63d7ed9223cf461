//===- PlanLoaderFuzzer.cpp - libFuzzer target: the runtime's Plan loader -===//
//
// Feeds arbitrary bytes to the public C API as a Plan file, then runs what
// `coop-run --check` runs on a plan that loads: the backend check, and every
// query a caller may make of the plan. Anything but a status is a bug.
//
//===----------------------------------------------------------------------===//

#include "coop/runtime.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  coop_plan_t *plan = nullptr;
  if (coop_status_t status = coop_plan_load_bytes(data, size, &plan)) {
    // A refused plan must say why and leave no plan behind.
    if (plan || coop_status_code(status) == COOP_STATUS_OK ||
        !*coop_status_message(status))
      std::abort();
    coop_status_free(status);
    return 0;
  }
  coop_status_free(coop_plan_check_backend(plan, "cpu"));
  if (coop_plan_arena_bytes(plan) <= 0 ||
      coop_plan_high_water_mark(plan) > coop_plan_arena_bytes(plan))
    std::abort();
  for (size_t i = 0; i < coop_plan_launch_count(plan); ++i)
    if (!coop_plan_launch_kernel(plan, i) || !coop_plan_launch_signature(plan, i))
      std::abort();
  coop_tensor_info_t info;
  for (size_t i = 0; i < coop_plan_argument_count(plan); ++i) {
    if (coop_plan_argument_info(plan, i, &info))
      std::abort();
    size_t found = 0;
    coop_status_free(coop_plan_find_argument(plan, info.name, &found));
  }
  for (size_t i = 0; i < coop_plan_output_count(plan); ++i)
    if (coop_plan_output_info(plan, i, &info))
      std::abort();
  coop_plan_release(plan);
  return 0;
}
