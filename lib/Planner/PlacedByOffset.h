//===- PlacedByOffset.h - Placed buffers in order of offset -----*- C++ -*-===//
//
// Internal to lib/Planner: the greedy placements of Packer.cpp and the
// windowed repair of PackRepair.cpp scan the buffers placed so far in
// order of offset for the lowest gap a buffer fits.
//
//===----------------------------------------------------------------------===//
#ifndef COOP_PLANNER_PLACEDBYOFFSET_H
#define COOP_PLANNER_PLACEDBYOFFSET_H

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace coop::planner {

/// The placed buffers of a dense part in order of offset, in blocks of
/// contiguous records: an insertion moves the records of one block, not
/// of every placed buffer (on the BiLSTM's plans, tens of thousands of
/// buffers, moving them all was half the greedy's time), and a scan reads
/// memory in order.
class PlacedByOffset {
public:
  struct Record {
    int64_t offset, top;
    int32_t begin, end; // sections
    int32_t buffer;     // ties at one offset go in order of buffer
    bool operator<(const Record &other) const {
      return std::tie(offset, buffer) < std::tie(other.offset, other.buffer);
    }
  };

  void insert(const Record &record) {
    if (blocks_.empty())
      blocks_.emplace_back();
    // The first block holding a later record, else the last one.
    auto block = std::upper_bound(
        blocks_.begin(), blocks_.end() - 1, record,
        [](const Record &r, const std::vector<Record> &b) {
          return r < b.back();
        });
    auto at = std::upper_bound(block->begin(), block->end(), record);
    block->insert(at, record);
    ++size_;
    if (block->size() >= 2 * kBlockRecords) {
      std::vector<Record> upper(block->begin() + kBlockRecords, block->end());
      block->resize(kBlockRecords);
      blocks_.insert(block + 1, std::move(upper));
    }
  }

  size_t size() const { return size_; }
  void clear() {
    blocks_.clear();
    size_ = 0;
  }

  /// Calls `visit` on the records in order of offset until it returns true.
  template <typename Visit> void visitInOrder(Visit visit) const {
    for (const std::vector<Record> &block : blocks_)
      for (const Record &record : block)
        if (visit(record))
          return;
  }

private:
  static constexpr size_t kBlockRecords = 512;
  std::vector<std::vector<Record>> blocks_;
  size_t size_ = 0;
};

} // namespace coop::planner

#endif // COOP_PLANNER_PLACEDBYOFFSET_H
