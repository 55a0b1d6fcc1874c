#pragma once
// A FIFO of parked actors, the building block of every waiting primitive. Each record lives in
// the waiter's own frame or fiber stack and unlinks itself when destroyed, so cancelling a
// process or tearing down a fiber never leaves a dangling waiter behind.

#include <boost/intrusive/list.hpp>

#include <cstdint>

#include "sim/engine/actor.hpp"
#include "sim/engine/engine.hpp"

namespace cclmesh::sim {

struct WaitRecord {
  Actor* actor = nullptr;
  std::int64_t amount = 0;  // what the waiter asks for (units, items ...)
  bool granted = false;
  AutoUnlinkHook hook;
};

class WaitQueue {
 public:
  using List = boost::intrusive::list<WaitRecord,
                                      boost::intrusive::member_hook<WaitRecord, AutoUnlinkHook, &WaitRecord::hook>,
                                      boost::intrusive::constant_time_size<false>>;

  bool empty() const { return list_.empty(); }
  WaitRecord& front() { return list_.front(); }
  std::size_t size() const { return list_.size(); }

  // Parks the running actor on this queue. `record` must outlive the wait.
  void park(WaitRecord& record, std::int64_t amount, const WaitTarget* target) {
    Engine& engine = Engine::current();
    record.actor = &engine.require_current_actor("wait");
    record.amount = amount;
    record.granted = false;
    list_.push_back(record);
    engine.park_current(WaitInfo{target, amount, nullptr});
  }

  // Removes the front waiter and schedules it; it runs when the scheduler gets to it.
  void grant_front() {
    WaitRecord& record = list_.front();
    list_.pop_front();
    record.granted = true;
    record.actor->engine()->wake(*record.actor);
  }

  void grant_all() {
    while (!list_.empty()) grant_front();
  }

 private:
  List list_;
};

}  // namespace cclmesh::sim
