#pragma once
// Waiting for several processes at once:
//   co_await all_of(children);          // every child finished; rethrows the first failure
//   std::size_t i = co_await any_of(children);  // the first to finish; the others are cancelled
// Children start through the scheduler in vector order, so equal-time ordering is stable.

#include <cstddef>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "sim/engine/process.hpp"

namespace cclmesh::sim {

namespace detail {

template <typename T>
class JoinAwaiter : public JoinObserver, public WaitTarget {
 public:
  JoinAwaiter(std::vector<Process<T>>& children, bool wait_for_all)
      : children_(children), wait_for_all_(wait_for_all) {}

  bool await_ready() const { return children_.empty(); }
  void await_suspend(std::coroutine_handle<>) {
    Engine& engine = Engine::current();
    parent_ = &engine.require_current_actor(wait_for_all_ ? "all_of" : "any_of");
    remaining_ = children_.size();
    for (std::size_t i = 0; i < children_.size(); ++i) {
      CCLMESH_CHECK(children_[i].valid(), "joining an empty process");
      std::string name = children_[i].take_name(*parent_);
      if (name == parent_->name() + "/sub") name += fmt::format("{}", i);
      children_[i].promise().start_joined(engine, std::move(name), this, i);
    }
    engine.park_current(WaitInfo{this, 0, nullptr});
  }

  void child_finished(std::size_t index) override {
    if (done_) return;
    --remaining_;
    if (!wait_for_all_) {
      winner_ = index;
      done_ = true;
      parent_->engine()->wake(*parent_);
    } else if (remaining_ == 0) {
      done_ = true;
      parent_->engine()->wake(*parent_);
    }
  }

  std::string describe_wait(std::int64_t) const override {
    return fmt::format("{} of {} processes ({} still running)", wait_for_all_ ? "all" : "any", children_.size(),
                       remaining_);
  }

 protected:
  ~JoinAwaiter() = default;
  std::vector<Process<T>>& children_;
  Actor* parent_ = nullptr;
  std::size_t remaining_ = 0;
  std::size_t winner_ = 0;
  bool wait_for_all_;
  bool done_ = false;
};

template <typename T>
class AllOf final : public JoinAwaiter<T> {
 public:
  explicit AllOf(std::vector<Process<T>>& children) : JoinAwaiter<T>(children, true) {}
  void await_resume() {
    for (auto& child : this->children_) {
      if (child.valid() && child.promise().error()) std::rethrow_exception(child.promise().error());
    }
  }
};

template <typename T>
class AnyOf final : public JoinAwaiter<T> {
 public:
  explicit AnyOf(std::vector<Process<T>>& children) : JoinAwaiter<T>(children, false) {}
  std::size_t await_resume() {
    if (this->children_.empty()) return 0;
    for (std::size_t i = 0; i < this->children_.size(); ++i) {
      if (i != this->winner_) this->children_[i].reset();  // cancel the losers
    }
    auto& winner = this->children_[this->winner_];
    if (winner.promise().error()) std::rethrow_exception(winner.promise().error());
    return this->winner_;
  }
};

}  // namespace detail

template <typename T>
detail::AllOf<T> all_of(std::vector<Process<T>>& children) {
  return detail::AllOf<T>{children};
}

template <typename T>
detail::AnyOf<T> any_of(std::vector<Process<T>>& children) {
  return detail::AnyOf<T>{children};
}

}  // namespace cclmesh::sim
