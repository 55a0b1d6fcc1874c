#pragma once
// An Actor is anything the scheduler can park and resume: a coroutine process or a kernel fiber.
// Waiting primitives deal only with Actors, so semaphores, channels and events serve both alike.

#include <boost/intrusive/list.hpp>

#include <cstdint>
#include <string>

#include "sim/engine/event_queue.hpp"

namespace cclmesh::sim {

class Engine;

// Something an actor can wait on; it explains the wait in a hang report.
class WaitTarget {
 public:
  virtual std::string describe_wait(std::int64_t detail) const = 0;

 protected:
  ~WaitTarget() = default;
};

// What a parked actor waits for: a target object plus a detail (e.g. the count it needs),
// or a plain static text. Recording it costs two stores; it is rendered only on a hang.
struct WaitInfo {
  const WaitTarget* target = nullptr;
  std::int64_t detail = 0;
  const char* text = nullptr;

  std::string describe() const;
};

using AutoUnlinkHook = boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>>;

class Actor {
 public:
  enum class Kind : std::uint8_t { Process, Fiber };
  enum class State : std::uint8_t { Created, Scheduled, Running, Parked, Done, Failed };

  Actor(const Actor&) = delete;
  Actor& operator=(const Actor&) = delete;

  const std::string& name() const { return name_; }
  Kind kind() const { return kind_; }
  State state() const { return state_; }
  const WaitInfo& waiting_on() const { return wait_; }
  // Creation order within its engine; stable across runs, unlike addresses.
  std::uint64_t serial() const { return serial_; }
  Engine* engine() const { return engine_; }
  // Opaque per-actor data for the layer above (e.g. a kernel fiber's device context).
  void* user_context() const { return user_context_; }
  void set_user_context(void* context) { user_context_ = context; }

 protected:
  explicit Actor(Kind kind) : kind_(kind) {}
  // Cancels a pending wake-up and leaves the engine's registry, so a destroyed actor is never
  // resumed.
  virtual ~Actor();
  // Runs the actor until it parks or finishes. Only the scheduler calls it.
  virtual void resume_now() = 0;
  void set_state(State state) { state_ = state; }

 private:
  friend class Engine;
  Kind kind_;
  State state_ = State::Created;
  Engine* engine_ = nullptr;
  std::string name_;
  std::uint64_t serial_ = 0;
  EventId pending_wake_;
  WaitInfo wait_;
  void* user_context_ = nullptr;

 public:
  AutoUnlinkHook registry_hook_;
};

using ActorRegistry = boost::intrusive::list<
    Actor, boost::intrusive::member_hook<Actor, AutoUnlinkHook, &Actor::registry_hook_>,
    boost::intrusive::constant_time_size<false>>;

}  // namespace cclmesh::sim
