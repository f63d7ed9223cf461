//===- PackRepair.h - Windowed repair of a packing --------------*- C++ -*-===//
//
// Internal to lib/Planner: Packer.cpp calls it on the parts of the timeline
// that are too large for its exact search. See docs/planner.md, "Offline
// packing".
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PLANNER_PACKREPAIR_H
#define COOP_PLANNER_PACKREPAIR_H

#include <cstdint>
#include <vector>

namespace coop::planner {

/// Work the repair of a part may do per buffer of the part.
constexpr int64_t kRepairWorkPerBuffer = 1000;

/// Lowers the peak of a packing of one part (per buffer: first and last
/// section, both included, size and `offset` in alignment units; `*peak`
/// is the highest top) towards `goal` by a large-neighbourhood search:
/// around a buffer at the peak, the highest buffers that lie entirely
/// inside a window of sections are lifted out and placed again, in one of
/// several orders, each at the lowest offset, no lower than the lowest of
/// them, clear of every buffer alive with it; the move is kept when their
/// highest top falls (or stays and they sit lower). Never raises the
/// peak, deterministic, and stops after about `workLimit` steps (a step:
/// a buffer collected into a window, or checked against one to place).
/// Returns whether the peak fell; adds the steps it took to `steps`.
bool repairPacking(const std::vector<int32_t> &begin,
                   const std::vector<int32_t> &end,
                   const std::vector<int64_t> &size, int32_t sections,
                   int64_t goal, int64_t workLimit,
                   std::vector<int64_t> *offset, int64_t *peak, int64_t &steps);

} // namespace coop::planner

#endif // COOP_PLANNER_PACKREPAIR_H
