#pragma once
// The handles of one kind (buffers, global semaphores) a server gave its clients since the
// device's last reset and not freed since. A request names a handle by its whole value and
// the server passes on its own copy, so that a client cannot make the device read or write past
// a buffer, or a semaphore's word elsewhere, by describing it otherwise; a freed one is refused
// as such. The device hands ids out in increasing order and never gives a freed one again
// before its reset (DeviceAllocator), so an id not live and not above the highest given was
// freed: nothing is kept per freed handle, and a long session's memory does not grow with its
// frees.

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cclmesh::runtime::remote {

template <typename Handle>
class ServedHandles {
 public:
  // `noun` names a handle in messages ("buffer"); `free_call` is the call that frees one.
  ServedHandles(std::string noun, std::string free_call) : noun_(std::move(noun)), free_call_(std::move(free_call)) {}

  // `session`: the server's number of the session that asked for it (0 where nobody asks whose,
  // as in the client's record of its own).
  void given(const Handle& handle, std::uint64_t session = 0) {
    given_[handle.id] = Given{handle, session};
    highest_given_ = std::max(highest_given_, handle.id);
  }
  void freed(std::uint32_t id) { given_.erase(id); }
  // After the device's reset: the handles given before name nothing (their ids may come again).
  void clear() {
    given_.clear();
    highest_given_ = 0;
  }
  // The sum of `measure(handle)` over the live handles.
  template <typename Measure>
  std::uint64_t total(Measure measure) const {
    std::uint64_t sum = 0;
    for (const auto& [id, live] : given_) sum += measure(live.handle);
    return sum;
  }
  // The live handles `session` asked for, in id order: what a client gone without its goodbye
  // can no longer free.
  std::vector<Handle> given_in(std::uint64_t session) const {
    std::vector<Handle> out;
    for (const auto& [id, live] : given_) {
      if (live.session == session) out.push_back(live.handle);
    }
    return out;
  }
  // The handle given for `claimed` (same id and every field); std::invalid_argument, starting
  // "`call`: ", when none was.
  const Handle& served(const Handle& claimed, std::string_view call) const {
    const auto it = given_.find(claimed.id);
    if (it != given_.end() && it->second.handle == claimed) return it->second.handle;
    if (it == given_.end() && claimed.id != 0 && claimed.id <= highest_given_) {
      throw std::invalid_argument(fmt::format("{}: {} {} was freed already ({})", call, noun_, claimed.id, free_call_));
    }
    throw std::invalid_argument(fmt::format("{}: {} {} is not one this server created (or not as it was created)", call,
                                            noun_, claimed.id));
  }

 private:
  std::string noun_;
  std::string free_call_;
  struct Given {
    Handle handle;
    std::uint64_t session = 0;
  };
  std::map<std::uint32_t, Given> given_;  // by id, the live ones
  std::uint32_t highest_given_ = 0;         // 0: none given since the last reset
};

}  // namespace cclmesh::runtime::remote
