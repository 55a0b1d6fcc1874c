#include "runtime/ccl/common/legacy_edm_plan.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "kernels/legacy_all_gather/legacy_all_gather_args.hpp"
#include "runtime/ccl/common/ccl_common.hpp"
#include "runtime/ccl/common/params_hash.hpp"
#include "runtime/device/core_map.hpp"
#include "runtime/device/l1_map.hpp"
#include "topologies/embedding.hpp"

namespace cclmesh::runtime::ccl {

std::string to_string(LegacyTermination termination) {
  return termination == LegacyTermination::MessageCount ? "MESSAGE_COUNT_REACHED" : "WORKER_INITIATED";
}

std::size_t hash_value(const LegacyEdmOptions& options) {
  return hash_fields(0, options.termination, options.buffers_per_channel, options.pages_per_message);
}

LegacyHop legacy_hop(const topo::Topology& topology, ChipId from, ChipId to, const std::string& op,
                     std::uint32_t link) {
  const std::optional<std::size_t> edge =
      topology.edge_between(static_cast<topo::ChipId>(from), static_cast<topo::ChipId>(to));
  if (!edge) {
    throw CclParamsError(fmt::format("{}: chips {} and {} are not neighbours; a legacy EDM only reaches its link's "
                                     "peer (REFERENCE 5)",
                                     op, from, to));
  }
  const std::vector<std::size_t>& links = topology.edges()[*edge].links;
  if (link >= links.size()) {
    throw CclParamsError(fmt::format("{}: link {} between chips {} and {}, which have {} link(s)", op, link, from, to,
                                     links.size()));
  }
  const topo::EthLink& l = topology.links()[links[link]];
  const bool a_is_from = static_cast<ChipId>(l.a.chip) == from;
  return LegacyHop{from, to, static_cast<std::uint32_t>(a_is_from ? l.a.channel : l.b.channel),
                   static_cast<std::uint32_t>(a_is_from ? l.b.channel : l.a.channel)};
}

std::vector<std::vector<ChipId>> resolve_legacy_groups(const GroupSelection& selection, const topo::Topology& topology,
                                                      CclTopology shape) {
  if (selection.cluster_axis || !selection.chips.empty()) {
    return resolve_groups(selection, topology, FabricPlan());
  }
  const topo::Embedding e =
      shape == CclTopology::Ring ? topo::find_system_ring(topology) : topo::find_system_line(topology);
  GroupSelection explicit_chips;
  explicit_chips.chips.emplace_back(e.chips.begin(), e.chips.end());
  return resolve_groups(explicit_chips, topology, FabricPlan());
}

std::uint32_t legacy_page_stride_bytes(std::uint32_t page_size_bytes) {
  return api::align_up(page_size_bytes, kernels::legacy_all_gather::kPageAlignmentBytes);
}

namespace {
std::uint64_t edm_region_bytes(const EriscL1Map& erisc, std::uint32_t num_channels, std::uint32_t buffers,
                               std::uint32_t buffer_bytes) {
  const auto l = kernels::make_legacy_edm_layout(erisc.kernel_base(), num_channels, buffers, buffer_bytes);
  return std::uint64_t{l.end} - erisc.kernel_base();
}
}  // namespace

std::uint32_t legacy_pages_per_message(const LegacyEdmOptions& options, std::uint32_t page_stride_bytes,
                                       std::uint32_t num_channels, const std::string& op, const EriscL1Map& erisc) {
  const std::uint32_t buffers = options.buffers_per_channel;
  if (buffers == 0 || buffers > kernels::legacy_edm::kMaxBuffersPerChannel) {
    throw CclParamsError(fmt::format("{}: legacy buffers_per_channel {}; expected 1..{}", op, buffers,
                                     kernels::legacy_edm::kMaxBuffersPerChannel));
  }
  if (options.pages_per_message != 0) {
    const std::uint64_t bytes = std::uint64_t{options.pages_per_message} * page_stride_bytes;
    if (bytes > 0xFFFFFFFFull || edm_region_bytes(erisc, num_channels, buffers, static_cast<std::uint32_t>(bytes)) >
                                     erisc.kernel_bytes()) {
      throw CclParamsError(fmt::format("{}: legacy messages of {} pages ({} B) x {} buffers x {} channels do not fit "
                                       "the {} B ERISC kernel region",
                                       op, options.pages_per_message, bytes, buffers, num_channels,
                                       erisc.kernel_bytes()));
    }
    return options.pages_per_message;
  }
  std::uint32_t pages = 0;
  while (edm_region_bytes(erisc, num_channels, buffers, (pages + 1) * page_stride_bytes) <= erisc.kernel_bytes()) {
    ++pages;
  }
  if (pages == 0) {
    throw CclParamsError(fmt::format("{}: a {} B page x {} buffers x {} channels does not fit the {} B ERISC kernel "
                                     "region",
                                     op, page_stride_bytes, buffers, num_channels, erisc.kernel_bytes()));
  }
  return pages;
}

bool legacy_message_fits(const LegacyEdmOptions& options, std::uint32_t page_stride_bytes, std::uint32_t num_channels,
                         const EriscL1Map& erisc) {
  const std::uint32_t buffers = options.buffers_per_channel;
  if (buffers == 0 || buffers > kernels::legacy_edm::kMaxBuffersPerChannel) return false;
  const std::uint64_t bytes = std::uint64_t{std::max(options.pages_per_message, 1u)} * page_stride_bytes;
  return bytes <= 0xFFFFFFFFull &&
         edm_region_bytes(erisc, num_channels, buffers, static_cast<std::uint32_t>(bytes)) <= erisc.kernel_bytes();
}

LegacyEdmSite legacy_edm_site(ChipId chip, std::uint32_t channel, ChipId peer, std::uint32_t senders,
                              std::uint32_t receivers, std::uint32_t pages_per_message,
                              std::uint32_t page_stride_bytes, const LegacyEdmOptions& options,
                              const EriscL1Map& erisc) {
  LegacyEdmSite site;
  site.chip = chip;
  site.channel = channel;
  site.peer = peer;
  site.config = kernels::LegacyEdmConfig{chip < peer,
                                         erisc.kernel_base(),
                                         senders,
                                         receivers,
                                         options.buffers_per_channel,
                                         pages_per_message * page_stride_bytes,
                                         options.termination == LegacyTermination::MessageCount
                                             ? kernels::legacy_edm::kTerminationMessageCountReached
                                             : kernels::legacy_edm::kTerminationWorkerInitiated,
                                         kernels::fabric_router::kDefaultSwitchInterval};
  return site;
}

void add_legacy_edm(Program& program, const topo::Topology& topology, const LegacyEdmSite& site,
                    const std::vector<LegacyEdmChannel>& channels) {
  const ChipCoreMap map = chip_core_map(topology, site.chip);
  const CoreCoord edm_core{site.channel, 0};
  std::vector<kargs::LegacyEdmChannelSpec> specs;
  for (std::uint32_t c = 0; c < channels.size(); ++c) {
    const Noc0Coord w = map.tensix_noc0(channels[c].worker);
    specs.push_back({{w.x, w.y}, channels[c].worker_semaphore_id, c, channels[c].num_messages});
    program.semaphores.push_back(SemaphoreSpec{c, CoreKind::Ethernet, {{edm_core, edm_core}}, 0});
  }
  program.semaphores.push_back(
      SemaphoreSpec{kLegacyEdmTerminationSemaphoreId, CoreKind::Ethernet, {{edm_core, edm_core}}, 0});
  const kargs::KernelArgs args = kargs::build_legacy_edm_args(site.config, kLegacyEdmTerminationSemaphoreId, specs);
  KernelSpec kernel;
  kernel.kernel = kernels::kLegacyEdmKernelName;
  kernel.core_kind = CoreKind::Ethernet;
  kernel.cores = {{edm_core, edm_core}};
  kernel.compile_time_args = args.compile_time;
  kernel.common_runtime_args = args.runtime;
  program.kernels.push_back(std::move(kernel));
}

LegacyEdmSite add_legacy_hop_edm(Program& program, const topo::Topology& topology, ChipId from, ChipId to,
                                 std::uint32_t link, const LegacyEdmChannel& sender, const LegacyEdmChannel& receiver,
                                 std::uint32_t pages_per_message, std::uint32_t page_stride_bytes,
                                 const LegacyEdmOptions& options, const EriscL1Map& erisc, const std::string& op) {
  const LegacyHop hop = legacy_hop(topology, from, to, op, link);
  const LegacyEdmSite site = legacy_edm_site(hop.from, hop.from_channel, hop.to, 1, 1, pages_per_message,
                                             page_stride_bytes, options, erisc);
  add_legacy_edm(program, topology, site, {sender, receiver});
  return site;
}

api::LegacyEdmChannelConfig legacy_edm_worker_channel(const topo::Topology& topology, const LegacyEdmSite& site,
                                                      std::uint32_t channel, std::uint32_t worker_semaphore_id) {
  const Noc0Coord edm = chip_core_map(topology, site.chip).eth_noc0(site.channel);
  return kargs::legacy_edm_worker_channel(site.config, channel, edm.x, edm.y, channel, worker_semaphore_id);
}

}  // namespace cclmesh::runtime::ccl
