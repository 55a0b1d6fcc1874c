#pragma once
// Internal to sim/device (not installed, included by the wait_chain*.cpp files alone): the
// builder of the hang report's wait-for chains (wait_chain.hpp), its step types and the
// helpers its parts share. The class is one; its members are defined by what they explain:
// - wait_chain.cpp: the walk from each parked kernel, cycles, the report;
// - wait_chain_kernels.cpp: a kernel's own wait (a CB, its command streams);
// - wait_chain_semaphores.cpp: a semaphore wait and who writes the word (command streams,
//   fabric connections, kernels that write it from their own code);
// - wait_chain_fabric.cpp: fabric routers, muxes and the links they cross;
// - wait_chain_legacy_edm.cpp: legacy per-op EDM channels and their links.

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "kernels/api/fabric_connection.hpp"
#include "kernels/host/command_decoder.hpp"
#include "kernels/kernel_args.hpp"
#include "kernels/kernel_registry.hpp"
#include "sim/device/kernel_semaphore_writes.hpp"
#include "sim/device/legacy_edm_state.hpp"
#include "sim/device/wait_chain.hpp"
#include "sim/model/eth_core.hpp"
#include "sim/model/eth_link.hpp"

namespace cclmesh::sim::device::wait_chain_detail {

namespace ia = kernels::interpreter;
namespace ca = api::fabric_connection_arg;

// One step of a chain: a kernel's wait, a router's sender channel, or a router's receiver.
struct KernelStep {
  const KernelContext* kernel;
  auto operator<=>(const KernelStep&) const = default;
};
struct SenderStep {
  const KernelContext* router;
  std::uint32_t channel;
  auto operator<=>(const SenderStep&) const = default;
};
// `vc`: which of a dateline-VC router's two receivers (REFERENCE 6.1's mid-2025 row); 0 on
// every other router, which has one.
struct ReceiverStep {
  const KernelContext* router;
  std::uint32_t vc = 0;
  auto operator<=>(const ReceiverStep&) const = default;
};
// A fabric mux (kernels/fabric_mux.cpp): the core between its client workers and a router's
// worker channel (REFERENCE 6.3).
struct MuxStep {
  const KernelContext* mux;
  auto operator<=>(const MuxStep&) const = default;
};
// One channel of a legacy per-op EDM (kernels/legacy_edm.cpp): between one worker and the link.
struct EdmChannelStep {
  const KernelContext* edm;
  std::uint32_t channel;
  auto operator<=>(const EdmChannelStep&) const = default;
};
using Step = std::variant<KernelStep, SenderStep, ReceiverStep, MuxStep, EdmChannelStep>;

// The link a chain ends at (null: none) and how it broke.
struct Break {
  const EthLink* link = nullptr;
  LinkBreak how = LinkBreak::Down;
};

struct Explained {
  std::string line;
  std::optional<Step> next;
  Break broken{};  // the chain ends at this link (down or lost frames)
};

// A link that is down for the hang or lost frames, in words, and how it broke ("": neither).
struct LinkProblem {
  std::string text;
  LinkBreak how = LinkBreak::Down;
};

// The first broken link on a writer's fabric route, in words, and the link.
struct RouteProblem {
  std::string text;
  Break broken{};
};

// A command of some interpreter that writes a semaphore word.
struct Writer {
  const KernelContext* kernel;
  std::uint32_t stream;
  std::size_t index;
  std::string text;       // disassembly
  std::uint32_t amount;   // increment, or value written
  bool sets;              // writes `amount` instead of adding it
  bool over_fabric;       // leaves its chip through a router
  bool forward;           // direction when over_fabric
  std::uint32_t hops;     // to this target
  runtime::FabricPort port{};  // the fabric line and plane its connection uses
};

// A wait on a semaphore word: for a value of at least `target`, or exactly `target` (`equal`).
struct SemaphoreWait {
  std::uint64_t address;
  std::uint64_t target;
  bool equal;
};

// What one command stream of a parked interpreter waits for (ChainBuilder::stream_wait).
struct StreamWait {
  std::uint32_t stream;
  std::size_t index;
  std::string text;
  std::optional<SemaphoreWait> semaphore;  // or a CB, which `partner` pops or pushes
  const KernelContext* partner;
  std::string own_writer;  // non-empty: the semaphore is written by another of its own streams
};

inline std::uint32_t chip_of(const KernelContext& k) { return static_cast<std::uint32_t>(k.chip->id()); }

inline bool is_router(const KernelContext& k) { return k.persistent && k.kernel == kernels::kFabricRouterKernelName; }

inline bool is_mux(const KernelContext& k) { return k.kernel == kernels::kFabricMuxKernelName; }

// A kernel that moves the op's data between its workers and a link, as the routers do, rather
// than one of the op's workers (ParkedKernel).
inline bool is_data_mover(const KernelContext& k) { return is_mux(k) || is_legacy_edm(k); }

inline ParkedKernel parked_kind(const KernelContext& k) {
  if (is_mux(k)) return ParkedKernel::FabricMux;
  if (is_legacy_edm(k)) return ParkedKernel::LegacyEdm;
  return ParkedKernel::Worker;
}

inline std::string short_name(const KernelContext& k) {
  if (is_router(k)) return fmt::format("router chip {} ch {}", chip_of(k), k.logical.x);
  if (is_mux(k)) return fmt::format("fabric mux chip {} core ({},{})", chip_of(k), k.noc0.x, k.noc0.y);
  if (is_legacy_edm(k)) return fmt::format("legacy EDM chip {} ch {}", chip_of(k), k.logical.x);
  return k.name();
}

inline std::string progress(const KernelContext& k) {
  if (!k.started) return "its program has not launched yet";
  if (k.done) return "it has finished";
  if (k.failed) return "it failed";
  const std::string blocked = k.blocked_description();
  std::string text = blocked.empty() ? "it is running" : "it is blocked in " + blocked;
  const std::string command = k.current_command();
  if (!command.empty()) text += " at " + command;
  return text;
}

class ChainBuilder {
 public:
  explicit ChainBuilder(const WaitChainInput& in);
  WaitChains report();
  // Where an interpreter's fabric connection blocks start in its runtime args (forward, then
  // backward), the ones it has (wait_chain_semaphores.cpp; also wait_chain_shared_channel.cpp).
  static std::vector<std::size_t> connection_arg_blocks(const KernelContext& k);
  // A router's configuration, from its compile-time args.
  static kernels::FabricRouterConfig config(const KernelContext& router);

 private:
  // --- the walk, cycles and the report (wait_chain.cpp) ---------------------------------------
  std::string chain(const KernelContext& start);
  static Step first_step(const KernelContext& k);
  std::string describe(const Step& step) const;
  static std::string and_joined(const std::vector<std::string>& items);
  std::string cycle_cause(const std::vector<Step>& cycle) const;
  Explained explain(const Step& step);

  // --- a kernel's own wait: CBs and command streams (wait_chain_kernels.cpp) ------------------
  Explained explain_kernel(const KernelContext& k);
  Explained explain_streams(const KernelContext& k, const std::string& head);
  bool comes_back(const Step& from, const KernelContext& k);
  std::optional<StreamWait> stream_wait(const KernelContext& k, std::uint32_t stream, const cmd::DecodedCommand& d);
  const cmd::DecodedCommand* command_at(const KernelContext& k, std::uint32_t stream, std::size_t index);
  const KernelContext* core_partner(const KernelContext& k) const;
  static std::string describe_command(const KernelContext& k, std::uint32_t stream, std::size_t index);
  const std::vector<std::pair<std::uint32_t, std::vector<cmd::DecodedCommand>>>& commands_of(const KernelContext& k);

  // --- semaphore waits and their writers (wait_chain_semaphores.cpp) --------------------------
  Explained explain_semaphore(const KernelContext& k, const std::string& head, const SemaphoreWait& wait);
  static std::vector<Writer> could_satisfy(const KernelContext& k, const std::vector<Writer>& writers,
                                           const SemaphoreWait& wait);
  static std::vector<Writer> meeting_the_wait(const std::vector<Writer>& writers, const SemaphoreWait& wait);
  static const SemaphoreOverwrittenAtLaunch* overwritten_at_launch(const KernelContext& k, std::uint64_t address);
  static std::string lost_at_launch(const KernelContext& k, const SemaphoreOverwrittenAtLaunch& lost, const Writer& w);
  const Writer& pick(const std::vector<Writer>& writers, const SemaphoreOverwrittenAtLaunch* lost) const;
  static bool executed(const Writer& w);
  static std::optional<Explained> explain_overcount(const KernelContext& k, const std::string& head,
                                                    const SemaphoreWait& wait, const std::vector<Writer>& writers);
  // One of an interpreter's fabric connections, found by a semaphore of it the interpreter waits
  // on: the core it names (a router's or a mux's), its connection_live word there, and which word
  // is waited on: flow control (a free slot) or teardown (the close acknowledgement).
  struct ConnectionWait {
    bool for_slot;
    CoreCoord core;
    std::uint32_t connection_live;
  };
  static std::optional<ConnectionWait> connection_of(const KernelContext& k, std::uint64_t address);
  const std::vector<Writer>& writers_of(std::uint32_t chip, CoreCoord core, std::uint64_t address);
  void add_writer(std::vector<Writer>& found, const KernelContext& k, std::uint32_t stream, const cmd::DecodedCommand& d,
                  std::uint32_t chip, CoreCoord core, std::uint64_t address) const;
  std::optional<runtime::FabricPort> port_of(const KernelContext& k, bool forward) const;
  std::vector<std::pair<std::uint32_t, runtime::FabricRoute>> target_chips(const KernelContext& k,
                                                                           const cmd::ChipDestination& destination) const;
  std::optional<Explained> explain_kernel_write(const KernelContext& k, const std::string& head, std::uint64_t address);
  const std::vector<KernelSemaphoreWrite>& kernel_writes(const KernelContext& k);

  // --- fabric routers, muxes and links (wait_chain_fabric.cpp) --------------------------------
  RouteProblem path_problem(const Writer& w) const;
  static std::string link_name(const EthCore& eth);
  LinkProblem link_problem(const EthCore& eth) const;
  std::string down_after_the_hang(const EthCore& eth) const;
  const KernelContext* router_at(std::uint32_t chip, bool, std::int32_t x, std::int32_t y) const;
  const KernelContext* mux_at(std::uint32_t chip, CoreCoord core) const;
  static std::uint32_t mux_client_count(const KernelContext& mux);
  static std::optional<std::uint32_t> mux_channel(std::uint32_t connection_live, std::uint32_t channels);
  static std::optional<CoreCoord> router_of_mux(const KernelContext& mux);
  const runtime::FabricRouterSite* site_of_connection(std::uint32_t chip, std::uint32_t x, std::uint32_t y) const;
  const KernelContext* peer_router(const KernelContext& router) const;
  static std::string config_problem(const KernelContext& router, const KernelContext& peer);
  Explained explain_sender(const KernelContext& router, std::uint32_t channel);
  std::string nothing_held(const KernelContext& router) const;
  Explained explain_mux(const KernelContext& mux);
  Explained explain_idle_mux(const KernelContext& mux, std::uint32_t channels, const std::string& head);
  std::vector<std::pair<std::uint32_t, const KernelContext*>> clients_of(const KernelContext& mux,
                                                                         std::uint32_t channels) const;
  static std::string receiver_name(const KernelContext& router, std::uint32_t vc);
  Explained explain_receiver(const KernelContext& router, std::uint32_t vc);

  // --- legacy EDM channels (wait_chain_legacy_edm.cpp) ----------------------------------------
  static std::string channel_name(const KernelContext& edm, std::uint32_t channel);
  static std::string edm_channel_name(const KernelContext& edm, std::uint32_t channel);
  static bool channel_finished(const LegacyEdmState& state, const LegacyEdmChannelState& c);
  bool waits_for_end_signals(const KernelContext& edm, const LegacyEdmChannelState& c) const;
  static bool running(const KernelContext& k);
  static bool blocked_on(const KernelContext& k, std::uint64_t semaphore);
  Explained explain_legacy_edm(const KernelContext& edm, const std::string& head);
  Explained explain_end_signals(const KernelContext& edm, const LegacyEdmState& state, const KernelContext* worker,
                                const std::string& head);
  Explained explain_edm_channel(const KernelContext& edm, std::uint32_t channel);
  Explained across_link(const KernelContext& edm, const std::string& head, std::uint32_t peer_channel);
  const KernelContext* peer_edm(const KernelContext& edm) const;
  const KernelContext* worker_of(const KernelContext& edm, const LegacyEdmChannelState& c) const;

  const WaitChainInput& in_;
  std::map<std::tuple<std::uint32_t, std::int32_t, std::int32_t>, const KernelContext*> routers_;
  std::map<std::tuple<std::uint32_t, std::int32_t, std::int32_t>, const KernelContext*> muxes_;
  std::map<std::tuple<std::uint32_t, std::int32_t, std::int32_t>, const KernelContext*> edms_;
  std::map<const KernelContext*, std::vector<KernelSemaphoreWrite>> kernel_writes_;
  std::map<Step, Break> end_of_;
  std::map<const KernelContext*, std::vector<std::pair<std::uint32_t, std::vector<cmd::DecodedCommand>>>> decoded_;
  std::set<Step> explained_;
  std::map<std::tuple<std::uint32_t, std::int32_t, std::int32_t, std::uint64_t>, std::vector<Writer>> writers_;
  std::map<std::pair<Step, const KernelContext*>, bool> comes_back_;
  bool walking_ = false;  // inside comes_back()
};

}  // namespace cclmesh::sim::device::wait_chain_detail
