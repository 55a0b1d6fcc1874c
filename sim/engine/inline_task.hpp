#pragma once
// A move-only `void()` callable stored inside the object when it fits (kInlineBytes), for
// models that keep work queued in their own containers (a NoC port's packets waiting for its
// NIU): std::function's small buffer is 16 bytes, so every queued lambda cost a heap
// allocation and a free. Larger callables still go to the heap.

#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace cclmesh::sim {

class InlineTask {
 public:
  static constexpr std::size_t kInlineBytes = 96;

  InlineTask() = default;
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, InlineTask>>>
  explicit InlineTask(F&& f) {
    using Fn = std::decay_t<F>;
    if constexpr (sizeof(Fn) <= kInlineBytes && alignof(Fn) <= alignof(std::max_align_t) &&
                  std::is_nothrow_move_constructible_v<Fn>) {
      new (storage_) Fn(std::forward<F>(f));
      ops_ = &kInlineOps<Fn>;
    } else {
      *reinterpret_cast<Fn**>(storage_) = new Fn(std::forward<F>(f));
      ops_ = &kHeapOps<Fn>;
    }
  }
  InlineTask(InlineTask&& other) noexcept : ops_(std::exchange(other.ops_, nullptr)) {
    if (ops_ != nullptr) ops_->move(other.storage_, storage_);
  }
  InlineTask& operator=(InlineTask&& other) noexcept {
    if (this != &other) {
      reset();
      ops_ = std::exchange(other.ops_, nullptr);
      if (ops_ != nullptr) ops_->move(other.storage_, storage_);
    }
    return *this;
  }
  InlineTask(const InlineTask&) = delete;
  InlineTask& operator=(const InlineTask&) = delete;
  ~InlineTask() { reset(); }

  explicit operator bool() const { return ops_ != nullptr; }
  void operator()() { ops_->call(storage_); }

 private:
  struct Ops {
    void (*call)(void* storage);
    void (*move)(void* from, void* to);  // leaves `from` destroyed
    void (*destroy)(void* storage);
  };
  template <typename Fn>
  static constexpr Ops kInlineOps{
      [](void* s) { (*std::launder(static_cast<Fn*>(s)))(); },
      [](void* from, void* to) {
        Fn* f = std::launder(static_cast<Fn*>(from));
        new (to) Fn(std::move(*f));
        f->~Fn();
      },
      [](void* s) { std::launder(static_cast<Fn*>(s))->~Fn(); }};
  template <typename Fn>
  static constexpr Ops kHeapOps{[](void* s) { (**static_cast<Fn**>(s))(); },
                                [](void* from, void* to) { *static_cast<Fn**>(to) = *static_cast<Fn**>(from); },
                                [](void* s) { delete *static_cast<Fn**>(s); }};

  void reset() {
    if (ops_ != nullptr) std::exchange(ops_, nullptr)->destroy(storage_);
  }

  alignas(std::max_align_t) unsigned char storage_[kInlineBytes];
  const Ops* ops_ = nullptr;
};

}  // namespace cclmesh::sim
