#pragma once
// The discrete-event engine: one event queue, the run loop, the actors it owns, and the hang
// report when the queue runs dry while actors are still parked.

#include <chrono>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "sim/engine/actor.hpp"
#include "sim/engine/check.hpp"
#include "sim/engine/callback_pool.hpp"
#include "sim/engine/engine_progress.hpp"
#include "sim/engine/event_queue.hpp"
#include "sim/engine/exception_message.hpp"
#include "sim/engine/time.hpp"

namespace cclmesh::sim {

template <typename T>
class Process;
class Fiber;
class Engine;

namespace detail {
// The engine of the running actor (engine.cpp). constinit: no dynamic initialisation, so
// Engine::current() inlines to a plain thread-local load (models ask on most calls).
extern constinit thread_local Engine* current_engine;
}  // namespace detail

// A process or fiber ended with an exception nobody awaited. The run stops.
class ProcessFailure : public std::runtime_error {
 public:
  ProcessFailure(std::string actor_name, SimTime when, const std::string& what);
  const std::string& actor_name() const { return actor_name_; }
  SimTime when() const { return when_; }

 private:
  std::string actor_name_;
  SimTime when_;
};

struct ParkedActor {
  std::string name;
  Actor::Kind kind;
  std::uint64_t serial;
  std::string waiting_for;
};

// Every actor that was parked when the queue ran dry, in creation order.
struct HangReport {
  SimTime when;
  std::vector<ParkedActor> parked;
  std::string to_string() const;
};

struct EngineStats {
  std::uint64_t events_executed = 0;
  SimTime simulated_time;
  double wall_seconds = 0.0;  // measured around run calls; never fed into the simulation
  std::size_t live_actors = 0;
};

enum class StopReason : std::uint8_t { Idle, TimeLimit, Predicate, Stopped, Hang };
std::string to_string(StopReason reason);

struct RunResult {
  StopReason reason = StopReason::Idle;
  SimTime now;
  std::optional<HangReport> hang;  // set when reason == Hang
};

struct FiberOptions {
  std::size_t stack_bytes = 64 * 1024;
};

class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // The engine of the running actor, or the most recently constructed live one on this thread.
  static Engine& current() {
    if (detail::current_engine == nullptr) [[unlikely]] fail_no_current();
    return *detail::current_engine;
  }
  static Engine* current_or_null() { return detail::current_engine; }

  SimTime now() const { return now_; }

  // Plain callbacks, for models that are trivial servers. Any callable; small ones (most
  // lambdas) live in the engine's callback pool, not on the heap.
  template <typename F>
  EventId schedule_at(SimTime when, F&& callback);
  template <typename F>
  EventId schedule_in(SimTime delay, F&& callback) {
    return schedule_at(now_ + delay, std::forward<F>(callback));
  }
  bool cancel(EventId id) { return queue_.cancel(id); }

  // --- Events that need not run (docs/sim_model.md, "Skipped events") ------------------------
  // A model whose event would only make a change nobody can see until a later event reads it
  // may skip the event: skip_event() takes the sequence number the event would have had (so
  // every other event keeps its number and place), and the model then compares places with
  // has_run() and applies the change when it is read. If the model finds later that the event
  // must run after all, it schedules it in its reserved place (schedule_reserved). A skipped
  // event still counts where a run ends: an idle run ends at the latest one's time, a run up to
  // a limit reports the limit while one lies beyond it, and the keep-going check is asked at
  // the first one past the time cap (set_keep_going_time_cap) as it would have been after it
  // ran. Keep-going predicates must therefore depend on the time only through that cap.
  std::uint64_t skip_event(SimTime when);
  template <typename F>
  EventId schedule_reserved(SimTime when, std::uint64_t sequence, F&& callback);
  // Whether an event at (`when`, `sequence`) would have run by now: its place is the running
  // (or last run) event's or before it.
  bool has_run(SimTime when, std::uint64_t sequence) const {
    return when < now_ || (when == now_ && sequence <= current_sequence_);
  }
  // What the simulation holds as host bytes (a device with data or timing only), for the way out
  // a std::bad_alloc's failure names (exception_message); with data unless set.
  void set_host_memory_use(HostMemoryUse use) { host_memory_use_ = use; }
  HostMemoryUse host_memory_use() const { return host_memory_use_; }

  // The time after which the run's keep-going predicate says stop (a device's simulated-time
  // limit); SimTime::max() for none.
  void set_keep_going_time_cap(SimTime cap) { keep_going_cap_ = cap; }

  // Starts a top-level process at the current time. The engine owns its frame.
  void spawn(Process<void> process, std::string name);
  // Starts a kernel fiber at the current time (or `start_delay` later). The engine owns it.
  Fiber& spawn_fiber(std::string name, std::function<void()> body, FiberOptions options = {},
                     SimTime start_delay = SimTime::zero());

  RunResult run();
  RunResult run_until(SimTime limit);
  // Runs while keep_going() holds, asked before every event: called through a plain function
  // pointer (a std::function, wrapped once more by the device, cost two indirect calls per
  // event).
  template <typename KeepGoing>
  RunResult run_while(KeepGoing&& keep_going) {
    using Fn = std::remove_reference_t<KeepGoing>;
    return run_loop(SimTime::max(), [](void* f) -> bool { return (*static_cast<Fn*>(f))(); },
                    const_cast<void*>(static_cast<const void*>(std::addressof(keep_going))));
  }
  // Calls `report` after every `every_events` executed events (counted over the engine's life),
  // between events, with the time and the count: a progress display for a long run (`cclmesh run
  // --progress`). The report must only look: it is not given the engine, and nothing simulated
  // depends on it being set (the cost is one counter compare per event). every_events 0 or an
  // empty report: none.
  void set_progress_report(std::uint64_t every_events, std::function<void(const EngineProgress&)> report);
  // Ends the current run after the event being executed.
  void stop() { stop_requested_ = true; }

  EngineStats stats() const;
  // Running FNV-1a hash of every executed event's (time, sequence): equal for identical runs.
  std::uint64_t trace_hash() const { return trace_hash_; }
  // Parked actors right now (also what a Hang result carries).
  HangReport hang_report() const;
  // Destroys the fibers that ran to their end (spawn_fiber keeps every one until the engine
  // goes): a simulation that spawns fibers op after op stays in bounded memory.
  void release_finished_fibers();

  // --- For waiting primitives (semaphores, channels, delays) and actors -----------------
  Actor* current_actor() const { return current_actor_; }
  Actor& require_current_actor(const char* operation) const;
  // Marks the running actor parked, waiting on `info`. The caller then suspends it.
  void park_current(const WaitInfo& info);
  // Schedules `actor` to resume now (after everything already scheduled for now).
  void wake(Actor& actor) { wake_at(actor, now_); }
  void wake_at(Actor& actor, SimTime when);
  // Joins an actor to this engine: name, serial, registry.
  void adopt(Actor& actor, std::string name);
  // A top-level actor finished with an exception: the run stops and rethrows.
  void report_failure(Actor& actor, std::exception_ptr error);
  // Destroys a finished detached process frame later, outside its own stack.
  void release_detached(void* frame_address);

 private:
  RunResult run_loop(SimTime limit, bool (*keep_going)(void*), void* keep_going_context);
  // The keep-going check at the first skipped event past the time cap, when the run reaches
  // it before (`time`, `sequence`): false if the run stops there.
  bool pass_skipped_after_cap(std::int64_t time_ps, std::uint64_t sequence, bool (*keep_going)(void*),
                              void* keep_going_context);
  [[noreturn]] static void fail_no_current();
  void report_progress();
  static void resume_trampoline(void* actor);
  // Inline: runs for every event scheduled; the failure (a bug) out of line.
  void check_schedulable(SimTime when) const {
    if (when < now_) [[unlikely]] fail_schedule_into_past(when);
  }
  [[noreturn]] void fail_schedule_into_past(SimTime when) const;
  // Runs (or, for an event never run, drops) a callback and frees its storage.
  template <typename Fn>
  static void run_pooled(void* storage);
  template <typename Fn>
  static void drop_pooled(void* storage);
  template <typename Fn>
  static void run_owned(void* callback);
  template <typename Fn>
  static void drop_owned(void* callback);
  void dispatch_resume(Actor& actor);
  void destroy_all_actors();

  CallbackPool callbacks_;  // declared before queue_: pending events release into it on destruction
  EventQueue queue_;
  SimTime now_;
  std::uint64_t current_sequence_ = 0;  // of the event running (or last run)
  std::int64_t skipped_latest_ps_ = -1;  // the latest skipped event's time
  SimTime keep_going_cap_ = SimTime::max();
  // The earliest skipped event's place after keep_going_cap_ not passed (time max: none).
  std::int64_t skipped_after_cap_ps_ = SimTime::max().ps();
  std::uint64_t skipped_after_cap_sequence_ = 0;
  Actor* current_actor_ = nullptr;
  ActorRegistry registry_;
  std::vector<void*> detached_frames_;  // top-level coroutine frames still alive
  std::vector<std::unique_ptr<Fiber>> fibers_;
  std::uint64_t next_serial_ = 0;
  std::uint64_t events_executed_ = 0;
  std::uint64_t trace_hash_ = 0xcbf29ce484222325ull;
  // The event count at which report_progress runs next (max: no report).
  std::uint64_t next_progress_at_ = ~std::uint64_t{0};
  std::uint64_t progress_every_ = 0;
  std::function<void(const EngineProgress&)> progress_report_;
  double wall_seconds_ = 0.0;
  bool stop_requested_ = false;
  bool running_ = false;
  std::optional<ProcessFailure> failure_;
  HostMemoryUse host_memory_use_ = HostMemoryUse::WithData;
  Engine* previous_current_ = nullptr;
};

template <typename F>
EventId Engine::schedule_at(SimTime when, F&& callback) {
  using Fn = std::decay_t<F>;
  check_schedulable(when);
  if constexpr (sizeof(Fn) <= CallbackPool::kStorageBytes && alignof(Fn) <= alignof(std::max_align_t)) {
    void* storage = callbacks_.allocate();
    new (storage) Fn(std::forward<F>(callback));
    return queue_.push(when, &Engine::run_pooled<Fn>, storage, &Engine::drop_pooled<Fn>);
  } else {
    auto* owned = new Fn(std::forward<F>(callback));
    return queue_.push(when, &Engine::run_owned<Fn>, owned, &Engine::drop_owned<Fn>);
  }
}

template <typename F>
EventId Engine::schedule_reserved(SimTime when, std::uint64_t sequence, F&& callback) {
  using Fn = std::decay_t<F>;
  check_schedulable(when);
  CCLMESH_CHECK(!has_run(when, sequence), "scheduling a skipped event whose place has passed");
  if constexpr (sizeof(Fn) <= CallbackPool::kStorageBytes && alignof(Fn) <= alignof(std::max_align_t)) {
    void* storage = callbacks_.allocate();
    new (storage) Fn(std::forward<F>(callback));
    return queue_.push_reserved(when, sequence, &Engine::run_pooled<Fn>, storage, &Engine::drop_pooled<Fn>);
  } else {
    auto* owned = new Fn(std::forward<F>(callback));
    return queue_.push_reserved(when, sequence, &Engine::run_owned<Fn>, owned, &Engine::drop_owned<Fn>);
  }
}

template <typename Fn>
void Engine::run_pooled(void* storage) {
  // Freed however the callback ends: a model fault propagates as an exception.
  struct Release {
    Fn* fn;
    ~Release() {
      fn->~Fn();
      CallbackPool::release(fn);
    }
  } release{static_cast<Fn*>(storage)};
  (*release.fn)();
}

template <typename Fn>
void Engine::drop_pooled(void* storage) {
  static_cast<Fn*>(storage)->~Fn();
  CallbackPool::release(storage);
}

template <typename Fn>
void Engine::run_owned(void* callback) {
  std::unique_ptr<Fn> owned{static_cast<Fn*>(callback)};
  (*owned)();
}

template <typename Fn>
void Engine::drop_owned(void* callback) {
  delete static_cast<Fn*>(callback);
}

}  // namespace cclmesh::sim
