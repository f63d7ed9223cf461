//===- MemoryPicture.h - An SVG of the arena over a plan ---------*- C++ -*-===//

#ifndef COOP_PLANNER_MEMORYPICTURE_H
#define COOP_PLANNER_MEMORYPICTURE_H

#include "coop/Planner/Plan.h"

#include <string>

namespace coop::planner {

/// Renders the arena over the plan as an SVG document: address upward,
/// instruction index to the right; every buffer is a box coloured by class
/// (persistent, expensive, cheap, workspace), recomputed buffers are outlined,
/// and evictions are marked in red where they happen.
std::string renderMemoryPicture(const Graph &graph, const Plan &plan,
                                const PlanOptions &options);

} // namespace coop::planner

#endif // COOP_PLANNER_MEMORYPICTURE_H
