#pragma once
// A polling ERISC loop's pass counters, kept by simulated time while it is parked.
//
// On hardware a router or EDM with nothing to do spins: every idle pass of its main loop
// advances the pass counter (which picks the sender channel a pass serves) and the idle count
// after which it calls run_routing() (SWITCH_INTERVAL idle passes, REFERENCE §1.4). In the
// simulator the loop parks in wait_for_activity() instead, and is woken only by events it acts
// on. The claim that makes this equivalent: an idle pass reads words and flags and changes no
// state but these two counters, so skipping the passes and adding them afterwards (the parked
// time divided by the cost of one pass) leaves the kernel where the spinning one would be.
// What moves is where run_routing() falls: the calls that land in a parked stretch are made at
// the next park instead, still on an idle core (the loop found nothing to do), once however
// many intervals the stretch held (the skipped calls would have run on an idle core too).
//
// The parked cycles are whole cycles of the chip's free-running counter (read_device_cycles()),
// while the simulator's times are picoseconds: the same stretch can count a cycle more or less,
// and a pass more or less, depending on where in a cycle it began. The simulated device
// launches every op the host enqueues on idle chips at one sub-cycle phase, so such an op counts
// as on a fresh device (one queued behind another starts where that one ends: docs/sim_device.md,
// "What persists between ops"); the run_routing() count carries over from op to op, as on hardware.
//
// Device-clean. On hardware wait_for_activity() returns 0 and the loop counts its real passes.

#include <cstdint>

namespace cclmesh::kernels {

// Cycles of one idle pass of an ERISC polling loop: a handful of L1 loads (termination word,
// ack mailbox, a channel's counters, a sync word), a TX queue status read and branches.
// (inferred: REFERENCE gives no figure; only the counters' pace depends on it.)
inline constexpr uint32_t kEriscIdlePassCycles = 64;

// The counters at a wake depend only on the time since the loop last made progress, not on
// how many wake-ups without progress came between (each ran two idle passes at no simulated
// time): during an idle stretch the pass count is its value at the stretch's first park plus
// the stretch's parked time / kEriscIdlePassCycles. So waking a kernel for an event it does not
// act on cannot move a result.
class IdlePassCounter {
 public:
  // The pass now running: its parity picks the sender channel.
  uint32_t pass() const { return pass_; }
  void next_pass() { ++pass_; }

  // The running pass made progress: the idle stretch, if any, is over.
  void progress() { in_stretch_ = false; }
  // The running pass made no progress.
  void idle_pass() { ++idle_since_switch_; }

  // The loop is about to park: true (once) when run_routing() is due, every `switch_interval`
  // idle passes (0: at every park).
  bool routing_due(uint32_t switch_interval) {
    if (switch_interval == 0) {
      return true;  // every park
    }
    if (idle_since_switch_ < switch_interval) {
      return false;
    }
    const uint64_t done = idle_since_switch_ - idle_since_switch_ % switch_interval;
    idle_since_switch_ -= done;
    stretch_idle_ -= static_cast<int64_t>(done);
    return true;
  }

  // The loop was parked for `cycles`: the idle passes it would have run meanwhile.
  void parked(uint32_t cycles) {
    if (!in_stretch_) {
      in_stretch_ = true;
      stretch_cycles_ = 0;
      stretch_pass_ = pass_;
      stretch_idle_ = static_cast<int64_t>(idle_since_switch_);
    }
    stretch_cycles_ += cycles;
    const uint64_t passes = stretch_cycles_ / kEriscIdlePassCycles;
    pass_ = stretch_pass_ + static_cast<uint32_t>(passes);  // wraps: only its parity is used
    idle_since_switch_ = static_cast<uint64_t>(stretch_idle_ + static_cast<int64_t>(passes));
  }

  uint64_t idle_since_switch() const { return idle_since_switch_; }

  // About to park: the parked cycles from which a wake-up followed by `passes` idle passes
  // would make run_routing() due at the next park (0: already at once). Before then such a
  // wake-up leaves every counter where not waking would (parked() counts by time), so a
  // wake-up known to find nothing may be skipped; from then on it would move run_routing().
  uint64_t cycles_until_routing_due(uint32_t switch_interval, uint32_t passes) const {
    if (switch_interval == 0) {
      return 0;
    }
    // What parked(cycles) will start from: the stretch so far, or a new one from now.
    const int64_t base_idle = in_stretch_ ? stretch_idle_ : static_cast<int64_t>(idle_since_switch_);
    const uint64_t base_cycles = in_stretch_ ? stretch_cycles_ : 0;
    // Due when base_idle + (base_cycles + cycles) / kEriscIdlePassCycles + passes >= switch_interval.
    const int64_t passes_needed = static_cast<int64_t>(switch_interval) - static_cast<int64_t>(passes) - base_idle;
    if (passes_needed <= 0) {
      return 0;
    }
    const uint64_t cycles_needed = static_cast<uint64_t>(passes_needed) * kEriscIdlePassCycles;
    return cycles_needed > base_cycles ? cycles_needed - base_cycles : 0;
  }

 private:
  uint32_t pass_ = 0;
  uint64_t idle_since_switch_ = 0;
  bool in_stretch_ = false;     // parked since the last progress
  uint64_t stretch_cycles_ = 0;  // parked cycles in this stretch
  uint32_t stretch_pass_ = 0;    // the counters at the stretch's first park
  int64_t stretch_idle_ = 0;     // (less run_routing intervals taken since)
};

}  // namespace cclmesh::kernels
