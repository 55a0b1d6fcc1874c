#include "sim/engine/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <coroutine>

#include "sim/engine/check.hpp"
#include "sim/engine/exception_message.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/process.hpp"

namespace cclmesh::sim {

namespace detail {
constinit thread_local Engine* current_engine = nullptr;
}  // namespace detail
using detail::current_engine;

namespace {

// FNV-1a over whole 64-bit words (not bytes): the hash runs once per event, and equal runs
// only need equal hashes, not any particular function. The xor-shift folds the high bits down,
// which a word-wide multiply alone would never let reach the low ones.
std::uint64_t fnv1a_mix(std::uint64_t hash, std::uint64_t value) {
  hash = (hash ^ value) * 0x100000001b3ull;
  return hash ^ (hash >> 29);
}
}  // namespace

std::string WaitInfo::describe() const {
  if (target != nullptr) return target->describe_wait(detail);
  if (text != nullptr) return text;
  return "(nothing recorded)";
}

Actor::~Actor() {
  if (engine_ != nullptr && pending_wake_.valid()) engine_->cancel(pending_wake_);
}

ProcessFailure::ProcessFailure(std::string actor_name, SimTime when, const std::string& what)
    : std::runtime_error(fmt::format("'{}' failed at {}: {}", actor_name, to_string(when), what)),
      actor_name_(std::move(actor_name)),
      when_(when) {}

std::string HangReport::to_string() const {
  std::string text = fmt::format("hang at {}: {} actor(s) parked with no event left to wake them\n",
                                 sim::to_string(when), parked.size());
  for (const ParkedActor& actor : parked) {
    text += fmt::format("  {} '{}' waits for {}\n", actor.kind == Actor::Kind::Fiber ? "fiber" : "process",
                        actor.name, actor.waiting_for);
  }
  return text;
}

std::string to_string(StopReason reason) {
  switch (reason) {
    case StopReason::Idle: return "idle";
    case StopReason::TimeLimit: return "time limit";
    case StopReason::Predicate: return "predicate";
    case StopReason::Stopped: return "stopped";
    case StopReason::Hang: return "hang";
  }
  return "unknown";
}

Engine::Engine() : previous_current_(current_engine) { current_engine = this; }

Engine::~Engine() {
  destroy_all_actors();
  if (current_engine == this) current_engine = previous_current_;
}

void Engine::destroy_all_actors() {
  // Top-level frames first: destroying one cancels its children and withdraws their waits.
  Engine* outer = std::exchange(current_engine, this);
  while (!detached_frames_.empty()) {
    void* frame = detached_frames_.back();
    detached_frames_.pop_back();
    std::coroutine_handle<>::from_address(frame).destroy();
  }
  while (!fibers_.empty()) fibers_.pop_back();
  current_engine = outer;
}

void Engine::fail_no_current() {
  ::cclmesh::fail_invariant("Engine::current() != nullptr", "no simulation engine on this thread", __FILE__, __LINE__);
}

void Engine::fail_schedule_into_past(SimTime when) const {
  fail_invariant("when >= now_", fmt::format("scheduling into the past: {} < now {}", to_string(when), to_string(now_)),
                 __FILE__, __LINE__);
}

std::uint64_t Engine::skip_event(SimTime when) {
  check_schedulable(when);
  const std::uint64_t sequence = queue_.reserve_sequence();
  skipped_latest_ps_ = std::max(skipped_latest_ps_, when.ps());
  if (when > keep_going_cap_ && when.ps() < skipped_after_cap_ps_) {  // sequence numbers grow: at a time, the first
    skipped_after_cap_ps_ = when.ps();
    skipped_after_cap_sequence_ = sequence;
  }
  return sequence;
}

bool Engine::pass_skipped_after_cap(std::int64_t time_ps, std::uint64_t sequence, bool (*keep_going)(void*),
                                    void* keep_going_context) {
  if (skipped_after_cap_ps_ == SimTime::max().ps() ||  // none
      std::pair{skipped_after_cap_ps_, skipped_after_cap_sequence_} >= std::pair{time_ps, sequence}) {
    return true;
  }
  now_ = SimTime::from_ps(skipped_after_cap_ps_);
  current_sequence_ = skipped_after_cap_sequence_;
  skipped_after_cap_ps_ = SimTime::max().ps();
  return keep_going == nullptr || keep_going(keep_going_context);
}

void Engine::adopt(Actor& actor, std::string name) {
  CCLMESH_CHECK(actor.engine_ == nullptr, "actor '" + name + "' joined an engine twice");
  actor.engine_ = this;
  actor.name_ = std::move(name);
  actor.serial_ = next_serial_++;
  registry_.push_back(actor);
}

void Engine::spawn(Process<void> process, std::string name) {
  CCLMESH_CHECK(process.valid(), "spawning an empty process '" + name + "'");
  auto handle = process.release();
  detached_frames_.push_back(handle.address());
  handle.promise().start_detached(*this, std::move(name));
}

Fiber& Engine::spawn_fiber(std::string name, std::function<void()> body, FiberOptions options, SimTime start_delay) {
  fibers_.push_back(std::make_unique<Fiber>(std::move(body), options.stack_bytes));
  Fiber& fiber = *fibers_.back();
  adopt(fiber, std::move(name));
  wake_at(fiber, now_ + start_delay);
  return fiber;
}

void Engine::release_detached(void* frame) {
  auto it = std::find(detached_frames_.begin(), detached_frames_.end(), frame);
  CCLMESH_CHECK(it != detached_frames_.end(), "releasing an unknown process frame");
  *it = detached_frames_.back();
  detached_frames_.pop_back();
  std::coroutine_handle<>::from_address(frame).destroy();
}

Actor& Engine::require_current_actor(const char* operation) const {
  CCLMESH_CHECK(current_actor_ != nullptr,
                fmt::format("{} needs a running process or fiber, but the scheduler itself is running", operation));
  return *current_actor_;
}

void Engine::park_current(const WaitInfo& info) {
  Actor& actor = require_current_actor("waiting");
  actor.state_ = Actor::State::Parked;
  actor.wait_ = info;
}

void Engine::wake_at(Actor& actor, SimTime when) {
  CCLMESH_CHECK(actor.engine_ == this, "waking actor '" + actor.name() + "' of another engine");
  // pending_wake_ is cleared when its event runs (dispatch_resume) and is cancelled only with
  // the actor, so a valid one is a wake still queued: no look at the queue's (cold) slot.
  CCLMESH_CHECK(!actor.pending_wake_.valid(), "actor '" + actor.name() + "' woken twice");
  CCLMESH_CHECK(when >= now_, "waking '" + actor.name() + "' in the past");
  actor.state_ = Actor::State::Scheduled;
  actor.pending_wake_ = queue_.push(when, &Engine::resume_trampoline, &actor);
}

void Engine::resume_trampoline(void* context) {
  Actor& actor = *static_cast<Actor*>(context);
  actor.engine_->dispatch_resume(actor);
}

void Engine::dispatch_resume(Actor& actor) {
  actor.pending_wake_ = EventId{};
  actor.state_ = Actor::State::Running;
  actor.wait_ = WaitInfo{};
  Actor* outer = std::exchange(current_actor_, &actor);
  actor.resume_now();  // may destroy `actor` (a finished detached process): do not touch it after
  current_actor_ = outer;
}

void Engine::report_failure(Actor& actor, std::exception_ptr error) {
  if (failure_) return;  // the first failure is the one reported
  failure_.emplace(actor.name(), now_, exception_message(error, host_memory_use_));
  stop_requested_ = true;
}

RunResult Engine::run() { return run_loop(SimTime::max(), nullptr, nullptr); }
RunResult Engine::run_until(SimTime limit) { return run_loop(limit, nullptr, nullptr); }

RunResult Engine::run_loop(SimTime limit, bool (*keep_going)(void*), void* keep_going_context) {
  CCLMESH_CHECK(!running_, "Engine::run called from inside a run");
  running_ = true;
  // A failure reported outside a run (none is known) still ends the run after its first event.
  stop_requested_ = failure_.has_value();
  Engine* outer = std::exchange(current_engine, this);
  // Wall time is a statistic about the host, never an input to the simulation.
  const auto wall_start = std::chrono::steady_clock::now();
  RunResult result;
  struct Restore {
    Engine& engine;
    Engine* outer;
    std::chrono::steady_clock::time_point start;
    ~Restore() {
      engine.wall_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      engine.running_ = false;
      current_engine = outer;
    }
  } restore{*this, outer, wall_start};

  DueEvent event;
  while (true) {
    if (keep_going != nullptr && !keep_going(keep_going_context)) {
      result.reason = StopReason::Predicate;
      break;
    }
    if (!queue_.pop_until(limit, event)) {
      if (!pass_skipped_after_cap(limit.ps(), ~std::uint64_t{0}, keep_going, keep_going_context)) {
        result.reason = StopReason::Predicate;
        break;
      }
      // Skipped events up to the limit would have run (the last one setting the time); one
      // beyond it would still be pending.
      const bool pending = queue_.live_events() > 0 || skipped_latest_ps_ > limit.ps();
      result.reason = pending ? StopReason::TimeLimit : StopReason::Idle;
      now_ = pending ? limit : std::max(now_, SimTime::from_ps(std::max<std::int64_t>(skipped_latest_ps_, 0)));
      current_sequence_ = ~std::uint64_t{0};  // every place up to now has passed
      break;
    }
    if (event.time.ps() >= skipped_after_cap_ps_) [[unlikely]] {
      if (!pass_skipped_after_cap(event.time.ps(), event.sequence, keep_going, keep_going_context)) {
        queue_.unpop(event);
        result.reason = StopReason::Predicate;
        break;
      }
    }
    CCLMESH_CHECK(event.time >= now_, fmt::format("time went backwards: event at {} after {}",
                                                  to_string(event.time), to_string(now_)));
    now_ = event.time;
    current_sequence_ = event.sequence;
    ++events_executed_;
    trace_hash_ = fnv1a_mix(fnv1a_mix(trace_hash_, static_cast<std::uint64_t>(now_.ps())), event.sequence);
    event.fn(event.context);
    // One test per event: report_failure() requests the stop too.
    if (stop_requested_) [[unlikely]] {
      if (failure_) {
        ProcessFailure failure = *failure_;
        failure_.reset();
        throw failure;
      }
      result.reason = StopReason::Stopped;
      break;
    }
    if (events_executed_ >= next_progress_at_) [[unlikely]] report_progress();
  }
  result.now = now_;
  if (result.reason == StopReason::Idle) {
    HangReport report = hang_report();
    if (!report.parked.empty()) {
      result.reason = StopReason::Hang;
      result.hang = std::move(report);
    }
  }
  return result;
}

void Engine::set_progress_report(std::uint64_t every_events, std::function<void(const EngineProgress&)> report) {
  if (every_events == 0 || !report) {
    progress_every_ = 0;
    progress_report_ = nullptr;
    next_progress_at_ = ~std::uint64_t{0};
    return;
  }
  progress_every_ = every_events;
  progress_report_ = std::move(report);
  next_progress_at_ = (events_executed_ / every_events + 1) * every_events;
}

void Engine::report_progress() {
  next_progress_at_ += progress_every_;
  progress_report_(EngineProgress{now_, events_executed_});
}

void Engine::release_finished_fibers() {
  std::erase_if(fibers_, [](const std::unique_ptr<Fiber>& fiber) { return fiber->state_ == Actor::State::Done; });
}

HangReport Engine::hang_report() const {
  HangReport report;
  report.when = now_;
  for (const Actor& actor : registry_) {
    if (actor.state_ != Actor::State::Parked) continue;
    report.parked.push_back(ParkedActor{actor.name(), actor.kind(), actor.serial(), actor.wait_.describe()});
  }
  std::sort(report.parked.begin(), report.parked.end(),
            [](const ParkedActor& a, const ParkedActor& b) { return a.serial < b.serial; });
  return report;
}

EngineStats Engine::stats() const {
  EngineStats stats;
  stats.events_executed = events_executed_;
  stats.simulated_time = now_;
  stats.wall_seconds = wall_seconds_;
  for ([[maybe_unused]] const Actor& actor : registry_) ++stats.live_actors;
  return stats;
}

}  // namespace cclmesh::sim
