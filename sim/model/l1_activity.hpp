#pragma once
// What a polling kernel's wait_for_activity() parks on: the events of one core that can change
// what the kernel's next pass would do, by kind. Each kernel on the core listens with its own
// ActivityListener, which says which L1 words it acts on (every word unless it declares some)
// and, while parked, which kinds may wake it; the others are not news to it.
//
// Why a kind filter is honest: a polling kernel that found nothing to do changes no state
// but its counters when it runs another pass, and what it will find depends only on the words
// and completion flags it reads. An event it does not read (a write to a payload slot whose
// arrival a counter announces, a NoC write flushed while it waits for nothing) leaves its
// next pass idle, so not waking it is the same as waking it for one more idle pass.
//
// Lost wake-ups: events are recorded in the listener's `pending` set whether it is parked or
// not; a wait returns at once when an event it would wake for happened since its last return
// (the pass that ran meanwhile may have read the state before the event).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <boost/intrusive/list.hpp>

#include "sim/engine/check.hpp"
#include "sim/engine/engine.hpp"
#include "sim/engine/fiber.hpp"
#include "sim/engine/time.hpp"
#include "sim/engine/wait_queue.hpp"

namespace cclmesh::sim {

enum class ActivityKind : std::uint8_t {
  L1Write,           // a write, fill, landing or atomic in the core's L1 (filtered by watched words)
  NocReadsDone,      // every read of the core on a NoC is back (noc_reads_done() turns true)
  NocWritesAcked,    // every non-posted write is acked (noc_writes_done())
  NocWritesFlushed,  // every write has left the NIU (noc_nonposted_writes_flushed())
  NocAtomicsDone,    // every atomic is acked
  CbChange,          // a cb_push_back / cb_pop_front by a kernel of the core
  TxqReady,          // an ERISC's TX queue has room again (eth_txq_is_busy() turns false)
  L1WriteSecondary,  // a write to a word the listener watches as secondary
  NocTridWritesFlushed,  // the writes of some transaction id have all left the NIU
  Count
};

using ActivityMask = std::uint32_t;
constexpr ActivityMask activity_bit(ActivityKind kind) { return ActivityMask{1} << static_cast<unsigned>(kind); }
inline constexpr ActivityMask kAnyActivity = (ActivityMask{1} << static_cast<unsigned>(ActivityKind::Count)) - 1;
// The kinds ActivitySources report lazily (NoC completions, the TX queue draining: counted by
// time); the others are
// notified as they happen.
inline constexpr ActivityMask kLazyActivity = activity_bit(ActivityKind::NocWritesAcked) |
                                              activity_bit(ActivityKind::NocWritesFlushed) |
                                              activity_bit(ActivityKind::NocAtomicsDone) |
                                              activity_bit(ActivityKind::TxqReady) |
                                              activity_bit(ActivityKind::NocTridWritesFlushed);

// "a write to a watched L1 word, NoC writes flushed" (for hang reports).
std::string describe_activity_mask(ActivityMask mask);

class L1Activity;
class MemoryRegion;

// A model that reports some kinds lazily (a NoC port's completions, counted by time without an
// event each): the listener asks it whether the kind happened since its last return, and,
// when it parks for the kind, tells it to report the kind (L1Activity::notify) when it happens.
class ActivitySource {
 public:
  // `kind` happened in (since, now]; false for kinds this source does not report.
  virtual bool happened_since(ActivityKind kind, SimTime since) = 0;
  // A listener parked for `kind`: notify the core's activity when it next happens.
  virtual void want(ActivityKind kind) = 0;

 protected:
  ~ActivitySource() = default;
};

// One polling kernel's view of its core's activity. Lives as long as the kernel runs; detaches
// itself when destroyed.
class ActivityListener final : public WaitTarget {
 public:
  explicit ActivityListener(std::string name) : name_(std::move(name)) {}
  ActivityListener(const ActivityListener&) = delete;
  ActivityListener& operator=(const ActivityListener&) = delete;

  // From now on only writes that overlap a watched range are L1Write activity for this
  // listener (until the first call, every write is).
  void watch(std::uint64_t begin, std::uint64_t end);
  // Writes that overlap [begin, end) are L1WriteSecondary activity (and, like watch(), from
  // now on writes overlapping no watched range are not activity).
  void watch_secondary(std::uint64_t begin, std::uint64_t end);
  // Writes entirely inside an ignored range are never L1Write activity for this listener.
  void ignore(std::uint64_t begin, std::uint64_t end);
  bool watches_everything() const { return watched_.empty() && watched_secondary_.empty(); }

  // For the next wait only (cleared when it returns; declared right before it): while the
  // kernel is parked, a write that lies entirely inside the 32-bit word at `address` and leaves
  // it holding a value v with (v - base) mod 2^32 <= limit is not news, if it lands within the
  // quiet window: the first `for_cycles` cycles of a `clock_hz` clock (counted as
  // read_device_cycles() counts them) from set_quiet_window(). The kernel declares such a word
  // when its next passes would do the same with any value in it (a router's packets_written
  // while its channel cannot send: only the overrun check reads it then); the window ends when
  // a wake-up's idle passes would start to matter anyway (the run_routing() interval).
  static constexpr std::size_t kMaxQuietWords = 4;
  void quiet_word(std::uint64_t address, std::uint32_t base, std::uint32_t limit) {
    CCLMESH_CHECK(quiet_count_ < kMaxQuietWords, name_ + ": too many quiet words");
    quiet_[quiet_count_++] = QuietWord{address, base, limit};
  }
  void set_quiet_window(std::uint32_t for_cycles, std::uint64_t clock_hz);

  // The kernel is about to read every word and flag it acts on, in a round of passes that ends
  // in its next wait if the round finds nothing to do: for that wait (if it asks, `since_mark`)
  // only activity after this call is news; what came before, the round has seen. The mark
  // holds until a wait returns; a later mark replaces it.
  void mark_poll() {
    poll_marked_ = true;
    since_mark_ = 0;
    mark_time_ = activity_ != nullptr ? Engine::current().now() : SimTime::zero();
  }

  // Kinds that happened since the kernel last returned from a wait (and since its poll mark).
  struct Pending {
    ActivityMask since_return;
    ActivityMask since_mark;
  };
  ActivityMask pending() const { return pending_; }
  Pending pending_state() const { return Pending{pending_, since_mark_}; }
  void set_pending_state(Pending state) {
    pending_ = state.since_return;
    since_mark_ = state.since_mark;
  }

  // Parks the running fiber until an event of a kind in `wake_on` happens (at once if one is
  // pending: since the poll mark if `since_mark` and there is one, else since the last return);
  // clears `pending`, the mark and the quiet words. `wake_on` must not be empty.
  void wait_blocking(ActivityMask wake_on, bool since_mark = false);

  std::string describe_wait(std::int64_t) const override;

 private:
  friend class L1Activity;
  // The write kinds a write of [address, address + bytes) is for this listener (0: none).
  ActivityMask write_kinds(std::uint64_t address, std::uint64_t bytes) const;
  void record(ActivityMask kinds);
  // A write of [address, address + bytes) the parked kernel declared not news (quiet_word()).
  bool quiet_write(std::uint64_t address, std::uint64_t bytes, const MemoryRegion& memory, SimTime now) const;

  struct QuietWord {
    std::uint64_t address;
    std::uint32_t base;
    std::uint32_t limit;
  };

  std::string name_;
  L1Activity* activity_ = nullptr;  // set by attach()
  std::vector<std::pair<std::uint64_t, std::uint64_t>> watched_;  // [begin, end), few
  std::vector<std::pair<std::uint64_t, std::uint64_t>> watched_secondary_;  // [begin, end), few
  std::vector<std::pair<std::uint64_t, std::uint64_t>> ignored_;  // [begin, end), few
  SimTime last_return_;             // of wait_blocking (lazily reported kinds count from here)
  ActivityMask pending_ = 0;
  ActivityMask since_mark_ = 0;  // kinds recorded since mark_poll()
  bool poll_marked_ = false;     // mark_poll() since the last return
  SimTime mark_time_;
  ActivityMask wake_on_ = 0;  // while parked
  QuietWord quiet_[kMaxQuietWords] = {};
  std::uint8_t quiet_count_ = 0;
  SimTime quiet_since_;            // set_quiet_window(): the park's start
  std::uint32_t quiet_cycles_ = 0;  // 0: no window, nothing quiet
  std::uint64_t quiet_clock_hz_ = 0;
  WaitRecord record_;
  boost::intrusive::list_member_hook<boost::intrusive::link_mode<boost::intrusive::auto_unlink>> attached_;
};

// The activity of one memory region (a core's L1): the listeners of its kernels, in the order
// they attached (so wake order is deterministic), and how many events happened (for tests).
class L1Activity {
 public:
  L1Activity() = default;
  L1Activity(const L1Activity&) = delete;
  L1Activity& operator=(const L1Activity&) = delete;

  void attach(ActivityListener& listener);
  // A model that reports kinds lazily (the core's NoC ports). Lives as long as this activity.
  void add_source(ActivitySource& source) { sources_.push_back(&source); }
  void notify(ActivityKind kind);
  // `memory` (the region written, holding the new bytes) lets a parked listener's quiet words
  // be read; without it no write is quiet.
  void notify_write(std::uint64_t address, std::uint64_t bytes, const MemoryRegion* memory = nullptr);
  std::uint64_t events() const { return events_; }
  std::size_t listeners() const { return listeners_.size(); }

 private:
  void deliver(ActivityListener& listener, ActivityMask kinds);
  void deliver_write(ActivityListener& listener, ActivityMask kinds, std::uint64_t address, std::uint64_t bytes,
                     const MemoryRegion* memory);

  using List = boost::intrusive::list<
      ActivityListener,
      boost::intrusive::member_hook<ActivityListener,
                                    boost::intrusive::list_member_hook<
                                        boost::intrusive::link_mode<boost::intrusive::auto_unlink>>,
                                    &ActivityListener::attached_>,
      boost::intrusive::constant_time_size<false>>;
  friend class ActivityListener;
  List listeners_;
  std::vector<ActivitySource*> sources_;
  std::uint64_t events_ = 0;
};

}  // namespace cclmesh::sim
