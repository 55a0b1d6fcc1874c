#pragma once
// A bounded FIFO channel between actors. put() parks while the channel is full, get() while it
// is empty; items are handed over in FIFO order. Capacity 0 is a rendezvous: put() waits for a
// getter. Waking is always through the scheduler.

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "sim/engine/check.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/wait_queue.hpp"

namespace cclmesh::sim {

template <typename T>
class Channel final : public WaitTarget {
  struct PutRecord : WaitRecord {
    std::optional<T> item;
  };
  struct GetRecord : WaitRecord {
    std::optional<T> item;
  };

 public:
  explicit Channel(std::size_t capacity, std::string name = "channel") : capacity_(capacity), name_(std::move(name)) {}

  std::size_t size() const { return items_.size(); }
  std::size_t capacity() const { return capacity_; }
  const std::string& name() const { return name_; }

  bool try_put(T& item) {
    if (!getters_.empty()) {
      hand_to_getter(std::move(item));
      return true;
    }
    if (putters_.empty() && items_.size() < capacity_) {
      items_.push_back(std::move(item));
      return true;
    }
    return false;
  }

  std::optional<T> try_get() {
    if (!items_.empty()) {
      T item = std::move(items_.front());
      items_.pop_front();
      admit_putter();
      return item;
    }
    if (!putters_.empty()) {  // rendezvous: take straight from a waiting putter
      auto& record = static_cast<PutRecord&>(putters_.front());
      T item = std::move(*record.item);
      putters_.grant_front();
      return item;
    }
    return std::nullopt;
  }

  class Put {
   public:
    Put(Channel& channel, T item) : channel_(channel) { record_.item.emplace(std::move(item)); }
    bool await_ready() { return channel_.try_put(*record_.item); }
    void await_suspend(std::coroutine_handle<>) { channel_.putters_.park(record_, 1, &channel_); }
    void await_resume() const {}

   private:
    Channel& channel_;
    PutRecord record_;
  };

  class Get {
   public:
    explicit Get(Channel& channel) : channel_(channel) {}
    bool await_ready() {
      ready_item_ = channel_.try_get();
      return ready_item_.has_value();
    }
    void await_suspend(std::coroutine_handle<>) { channel_.getters_.park(record_, -1, &channel_); }
    T await_resume() {
      if (ready_item_) return std::move(*ready_item_);
      CCLMESH_CHECK(record_.granted && record_.item.has_value(), "channel getter resumed without an item");
      return std::move(*record_.item);
    }

   private:
    Channel& channel_;
    GetRecord record_;
    std::optional<T> ready_item_;
  };

  Put put(T item) { return Put{*this, std::move(item)}; }
  Get get() { return Get{*this}; }
  void put_blocking(T item) { block_on(put(std::move(item))); }
  T get_blocking() { return block_on(get()); }

  std::string describe_wait(std::int64_t amount) const override {
    return fmt::format("channel '{}' to {} ({} of {} slots used)", name_, amount < 0 ? "receive an item" : "accept an item",
                       items_.size(), capacity_);
  }

 private:
  void hand_to_getter(T&& item) {
    auto& record = static_cast<GetRecord&>(getters_.front());
    record.item.emplace(std::move(item));
    getters_.grant_front();
  }

  // After a get freed a slot, the oldest parked putter's item moves into the channel.
  void admit_putter() {
    if (putters_.empty() || items_.size() >= capacity_) return;
    auto& record = static_cast<PutRecord&>(putters_.front());
    items_.push_back(std::move(*record.item));
    putters_.grant_front();
  }

  std::size_t capacity_;
  std::string name_;
  std::deque<T> items_;
  WaitQueue putters_;
  WaitQueue getters_;
};

}  // namespace cclmesh::sim
