#pragma once
// Which all_to_all sender sends which chunks, and on which worker core (all_to_all.hpp has the
// algorithm). Two layouts:
//   per direction (the model's until session 36): per link one up and one down sender, each with
//     every destination that way, interleaved in rounds;
//   per destination (REFERENCE 7.6: all_to_all_async "splits its intermediate buffer among the
//     N-1 senders"): per link one sender per destination (on an even ring the farthest chunk's
//     two halves have one each), so a sender blocked on one destination holds up no other. The
//     senders of one link and direction share the router's one worker channel through a fabric
//     mux (REFERENCE 6.3, kernels/fabric_mux.cpp), as reduce_scatter's workers_per_link > 1 do.
// A mux takes at most kernels::fabric_mux::kMaxClients clients, and a chip has only its worker
// grid for the op's cores (from Params::first_worker on): where a group needs more senders per
// link and direction than either allows (a line of 8 chips: 7 from an end chip; several links on
// a long line), the senders per link and direction are capped, the largest count that fits, and
// each capped sender takes several destinations (destination i of a direction, farthest first,
// goes to sender i mod cap), interleaving them in rounds as a per-direction sender does.
//
// Cores, the same on every chip: per link `slots_per_link` sender slots (a chip's up senders
// first, then its down ones; per direction: up at slot 0, down at slot 1 as before), then one
// local-copy worker per link (link 0's is also the done worker), then with muxes one mux core per
// link and direction (up, down). The chip's own chunk is copied per link, link k's copy worker
// taking part k as link k's senders take part k of every other chunk: on one core it bound 2-chip
// groups on several links (torus:2x8/2 columns, 2 links, 8 MiB: 488.90 us against 479.87 on 1;
// per link 299.80; docs/performance.md "Relations between runs (session 42)", I5).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/ccl/common/collective.hpp"

namespace cclmesh::runtime::ccl::all_to_all {

enum class SenderLayout : std::uint8_t {
  Auto,            // per destination from kPerDestinationMinBytes a chip on, else per direction
  PerDirection,    // one up and one down sender per link, destinations interleaved in rounds
  PerDestination,  // one sender per destination per link (capped: see above)
};
// Auto runs per destination from this many bytes of tensor a chip on, per direction below: with
// small chunks the mux's extra hop through its slots and the extra cores to start cost more than
// senders that do not wait on each other gain (T3K 8-ring, 6144 B payload, --no-data: 32 KiB
// 7.60 -> 9.16 us, 128 KiB 16.60 -> 18.61, 512 KiB 53.20 -> 53.21, 2 MiB 200.78 -> 195.52;
// 8-line 128 KiB 31.18 -> 37.19, 512 KiB 123.73 -> 127.34; docs/performance.md).
inline constexpr std::uint64_t kPerDestinationMinBytes = 1024 * 1024;

// "auto", "per-direction", "per-destination" (the CLI's --a2a-senders values).
std::string to_string(SenderLayout layout);

// One chunk (or half of one) a sender sends: to position `dest`, `half` of {0, 1} when the chunk
// is split between the two directions, else nullopt.
struct Send {
  std::uint32_t dest = 0;
  std::optional<std::uint32_t> half;
};

// What an up or a down sender at `position` sends in all (every link's the same chunks, its own
// share of each), farthest first. Line: every position beyond it that way. Ring: distances
// 1 .. (N-1)/2 each way; N even adds the N/2 chunk, half each way.
std::vector<Send> sends_of(const FabricGroup& g, std::uint32_t position, bool up);

// How many senders a link and direction runs, and the cores that takes.
struct SenderPlan {
  SenderLayout layout = SenderLayout::PerDirection;  // resolved: never Auto
  std::uint32_t senders_per_direction = 1;            // the cap: at most this many per link and direction
  std::uint32_t needed_per_direction = 1;             // what one sender per destination would take
  std::uint32_t slots_per_link = 2;
  std::uint32_t num_links = 1;
  bool muxes = false;  // some link and direction has more than one sender
  bool capped() const { return senders_per_direction < needed_per_direction; }
  // Link `link`'s local-copy worker; link 0's waits for the op's increments (the done worker).
  std::uint32_t copy_worker(std::uint32_t link) const { return num_links * slots_per_link + link; }
  std::uint32_t done_worker() const { return copy_worker(0); }
  // The senders' and the copy workers' cores (what the done semaphore covers), then the muxes.
  std::uint32_t worker_cores() const { return done_worker() + num_links; }
  std::uint32_t core_count() const { return worker_cores() + (muxes ? 2 * num_links : 0); }
  std::uint32_t mux_core(std::uint32_t link, bool up) const { return worker_cores() + 2 * link + (up ? 0 : 1); }
};

// The plan for `layout` (Auto: per destination) in a group of `n` chips run as `shape` on
// `num_links` links, with `available_cores` worker cores from the op's first one on. Per
// destination caps the senders per direction at the largest count whose cores fit (at least 1,
// then the per-direction layout's cores; worker_cores() refuses what does not fit).
SenderPlan plan_senders(SenderLayout layout, CclTopology shape, std::uint32_t n, std::uint32_t num_links,
                        std::uint32_t available_cores);

// One sender of a chip: its direction, slot in its link's run of slots, and destinations
// (farthest first).
struct Sender {
  bool up = true;
  std::uint32_t slot = 0;
  std::vector<Send> sends;
};
// The senders of the chip at `position` on each link (the same on every link).
std::vector<Sender> senders_at(const FabricGroup& g, std::uint32_t position, const SenderPlan& plan);

// The layout a run uses and why, in one clause (what --json records beside rounds_choice), for a
// tensor of `bytes_per_chip` (Auto's choice).
struct SenderLayoutChoice {
  SenderPlan plan;
  std::string reason;
};
SenderLayoutChoice sender_layout_choice(SenderLayout asked, CclTopology shape, std::uint32_t n,
                                        std::uint32_t num_links, std::uint32_t available_cores,
                                        std::uint64_t bytes_per_chip);

}  // namespace cclmesh::runtime::ccl::all_to_all
