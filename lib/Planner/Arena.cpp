//===- Arena.cpp - Best fit with coalescing over address-ordered pieces ---===//

#include "coop/Planner/Arena.h"

#include <cassert>
#include <limits>

namespace coop::planner {

Arena::Arena(int64_t begin, int64_t size) : begin_(begin), size_(size) {
  if (size > 0) {
    pieces_[begin] = Piece{size, kFree};
    addFree(begin, size);
  }
}

void Arena::addFree(int64_t offset, int64_t size) {
  freeBySize_.insert({size, offset});
  freeBytes_ += size;
}

void Arena::removeFree(int64_t offset, int64_t size) {
  freeBySize_.erase({size, offset});
  freeBytes_ -= size;
}

bool Arena::fits(int64_t size) const {
  return freeBySize_.lower_bound({size, std::numeric_limits<int64_t>::min()}) !=
         freeBySize_.end();
}

int64_t Arena::allocate(int64_t size, int32_t owner, bool atHighEdge) {
  auto best =
      freeBySize_.lower_bound({size, std::numeric_limits<int64_t>::min()});
  if (best == freeBySize_.end())
    return -1;
  return take(best->second, best->first, size, owner, atHighEdge);
}

int64_t Arena::allocateLowest(int64_t size, int32_t owner) {
  for (const auto &[offset, piece] : pieces_)
    if (piece.owner == kFree && piece.size >= size)
      return take(offset, piece.size, size, owner, /*atHighEdge=*/false);
  return -1;
}

int64_t Arena::take(int64_t pieceOffset, int64_t pieceSize, int64_t size,
                    int32_t owner, bool atHighEdge) {
  removeFree(pieceOffset, pieceSize);
  pieces_.erase(pieceOffset);

  const int64_t rest = pieceSize - size;
  const int64_t offset = atHighEdge ? pieceOffset + rest : pieceOffset;
  pieces_[offset] = Piece{size, owner};
  if (rest > 0) {
    const int64_t restOffset = atHighEdge ? pieceOffset : offset + size;
    pieces_[restOffset] = Piece{rest, kFree};
    addFree(restOffset, rest);
  }
  return offset;
}

void Arena::release(int64_t offset) {
  auto it = pieces_.find(offset);
  assert(it != pieces_.end() && it->second.owner != kFree);
  int64_t start = offset;
  int64_t size = it->second.size;
  if (it != pieces_.begin()) {
    auto left = std::prev(it);
    if (left->second.owner == kFree) {
      removeFree(left->first, left->second.size);
      start = left->first;
      size += left->second.size;
      pieces_.erase(left);
    }
  }
  auto right = std::next(it);
  if (right != pieces_.end() && right->second.owner == kFree) {
    removeFree(right->first, right->second.size);
    size += right->second.size;
    pieces_.erase(right);
  }
  pieces_.erase(it);
  pieces_[start] = Piece{size, kFree};
  addFree(start, size);
}

void Arena::reassign(int64_t offset, int32_t owner) {
  auto it = pieces_.find(offset);
  assert(it != pieces_.end() && it->second.owner != kFree);
  it->second.owner = owner;
}

int64_t Arena::largestFreePiece() const {
  return freeBySize_.empty() ? 0 : freeBySize_.rbegin()->first;
}

int64_t Arena::freeBytesAround(int64_t offset) const {
  auto it = pieces_.find(offset);
  assert(it != pieces_.end());
  int64_t bytes = 0;
  if (it != pieces_.begin() && std::prev(it)->second.owner == kFree)
    bytes += std::prev(it)->second.size;
  auto right = std::next(it);
  if (right != pieces_.end() && right->second.owner == kFree)
    bytes += right->second.size;
  return bytes;
}

} // namespace coop::planner
