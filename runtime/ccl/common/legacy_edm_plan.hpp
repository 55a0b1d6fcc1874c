#pragma once
// What every legacy-EDM-mode op builder shares (REFERENCE 5): the options of the per-op ERISC
// data movers, where a hop's EDMs sit (each link's ethernet channel on each end), how large an
// EDM buffer may be in the ERISC kernel region, and the EDM kernel a program launches with
// the op. Pure functions of values and a topology: no device, no engine.
//
// Legacy mode runs on a device without a persistent fabric: the op's EDMs take the ethernet
// cores the routers would occupy, for the duration of the op.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/host/kernel_args_builder.hpp"
#include "kernels/kernel_args.hpp"
#include "runtime/ccl/common/collective.hpp"
#include "runtime/device/l1_map.hpp"
#include "runtime/device/types.hpp"
#include "runtime/device/workload.hpp"
#include "topologies/topology.hpp"

namespace cclmesh::runtime::ccl {

// How an op's EDMs end (REFERENCE 5 "Termination").
enum class LegacyTermination : std::uint8_t {
  MessageCount,  // MESSAGE_COUNT_REACHED: each channel moves a count known when the op is built
  WorkerSignal,  // WORKER_INITIATED: each channel's worker signals after its last message
};
std::string to_string(LegacyTermination termination);

struct LegacyEdmOptions {
  LegacyTermination termination = LegacyTermination::MessageCount;
  // REFERENCE 5: "the all-gather default is 2".
  std::uint32_t buffers_per_channel = 2;
  // Pages per EDM message (one buffer); 0: as many as fit, by REFERENCE 5's all-gather sizing
  // (the ERISC kernel region split evenly over every buffer of every channel).
  std::uint32_t pages_per_message = 0;
  bool operator==(const LegacyEdmOptions&) const = default;
};

std::size_t hash_value(const LegacyEdmOptions& options);

// The two ends of the hop from chip `from` to chip `to` on link `link` of their edge (the edge's
// links in topo::NeighbourEdge order, as the fabric's routing planes take them: link l is
// plane l's port).
struct LegacyHop {
  ChipId from = 0;
  ChipId to = 0;
  std::uint32_t from_channel = 0;
  std::uint32_t to_channel = 0;
};
// Throws CclParamsError when the chips are not neighbours or their edge has no link `link`.
LegacyHop legacy_hop(const topo::Topology& topology, ChipId from, ChipId to, const std::string& op,
                     std::uint32_t link = 0);

// The groups of a legacy op: as resolve_groups, but with neither chips nor cluster_axis every
// chip of the system's ring (CclTopology::Ring) or line, as topo::find_system_ring / _line find
// them (there is no fabric to take the order from).
std::vector<std::vector<ChipId>> resolve_legacy_groups(const GroupSelection& selection, const topo::Topology& topology,
                                                      CclTopology shape);

// A page's stride inside an EDM message: the page size rounded up to 32 B.
std::uint32_t legacy_page_stride_bytes(std::uint32_t page_size_bytes);
// Pages per message for EDMs of `num_channels` channels: `options.pages_per_message`, or the
// most that fit. Throws CclParamsError when the EDM's layout does not fit the ERISC kernel
// region of `erisc` (the device's FabricOptions::erisc_l1_map(); the message and the region are
// named).
std::uint32_t legacy_pages_per_message(const LegacyEdmOptions& options, std::uint32_t page_stride_bytes,
                                       std::uint32_t num_channels, const std::string& op,
                                       const EriscL1Map& erisc = kDefaultEriscL1Map);

// Whether messages of `options.pages_per_message` pages (1 when it is 0, "as many as fit") of
// `page_stride_bytes` fit EDMs of `num_channels` channels in the kernel region of `erisc`: the
// condition under which legacy_pages_per_message does not throw (all_gather sizes its ROW_MAJOR
// row pieces with it).
bool legacy_message_fits(const LegacyEdmOptions& options, std::uint32_t page_stride_bytes, std::uint32_t num_channels,
                         const EriscL1Map& erisc = kDefaultEriscL1Map);

// Per-program semaphore ids on an EDM's ethernet core: channel c uses id c; the termination
// semaphore takes the last id (so an EDM has at most 31 channels here).
inline constexpr std::uint32_t kLegacyEdmTerminationSemaphoreId = 31;

// One EDM channel as a builder describes it: the worker at `worker` (logical Tensix) with its
// per-program semaphore `worker_semaphore_id`, moving `num_messages` messages.
struct LegacyEdmChannel {
  CoreCoord worker;
  std::uint32_t worker_semaphore_id = 0;
  std::uint32_t num_messages = 0;
};

struct LegacyEdmSite {
  ChipId chip = 0;
  std::uint32_t channel = 0;  // logical ethernet channel
  ChipId peer = 0;
  kernels::LegacyEdmConfig config{};
};

// The EDM config of one end of a hop: `senders` and `receivers` channels, each of
// `pages_per_message` pages of `page_stride_bytes`, in the kernel region of `erisc`. The side on
// the lower chip id leads the handshake.
LegacyEdmSite legacy_edm_site(ChipId chip, std::uint32_t channel, ChipId peer, std::uint32_t senders,
                              std::uint32_t receivers, std::uint32_t pages_per_message,
                              std::uint32_t page_stride_bytes, const LegacyEdmOptions& options,
                              const EriscL1Map& erisc);

// Adds the EDM kernel of `site` (channels: its senders, then its receivers) and its per-program
// semaphores to `program`.
void add_legacy_edm(Program& program, const topo::Topology& topology, const LegacyEdmSite& site,
                    const std::vector<LegacyEdmChannel>& channels);

// The neighbour-only ops (all_gather, reduce_scatter) put one two-channel EDM on each end of a
// hop: channel 0 carries my worker's messages to the peer, channel 1 brings the peer's
// messages to my worker (of the opposite direction).
inline constexpr std::uint32_t kLegacyHopSenderChannel = 0;
inline constexpr std::uint32_t kLegacyHopReceiverChannel = 1;
inline constexpr std::uint32_t kLegacyHopChannels = 2;
// Adds that EDM on `from`'s end of the hop to `to`, on link `link`'s ethernet channel (one EDM
// per link per hop end, REFERENCE 5), and returns its site.
LegacyEdmSite add_legacy_hop_edm(Program& program, const topo::Topology& topology, ChipId from, ChipId to,
                                 std::uint32_t link, const LegacyEdmChannel& sender, const LegacyEdmChannel& receiver,
                                 std::uint32_t pages_per_message, std::uint32_t page_stride_bytes,
                                 const LegacyEdmOptions& options, const EriscL1Map& erisc, const std::string& op);

// The worker's block for channel `channel` of the EDM at `site`.
api::LegacyEdmChannelConfig legacy_edm_worker_channel(const topo::Topology& topology, const LegacyEdmSite& site,
                                                      std::uint32_t channel, std::uint32_t worker_semaphore_id);

}  // namespace cclmesh::runtime::ccl
