#include "sim/model/ideal_hardware.hpp"

#include <map>
#include <mutex>

namespace cclmesh::sim {

namespace {

// Fast enough that a packet's on-chip steps take picoseconds against the ~0.5 us it spends on
// a 12.5 GB/s link, without the arithmetic of transfer times (bytes x 1e12 / rate) overflowing.
constexpr std::int64_t kOnChipSpeedup = 1000;

Bandwidth faster(Bandwidth rate) { return Bandwidth::bytes_per_second(rate.bytes_per_second() * kOnChipSpeedup); }

}  // namespace

ArchSpec ideal_arch_spec(const ArchSpec& modelled) {
  ArchSpec ideal = modelled;
  NocParams& noc = ideal.params.noc;
  noc.link_rate = faster(noc.link_rate);
  noc.multicast_rate = faster(noc.multicast_rate);
  for (NiuRates* niu : {&noc.tensix_niu, &noc.eth_niu, &noc.dram_niu}) {
    niu->inject = faster(niu->inject);
    niu->absorb = faster(niu->absorb);
  }
  noc.request_slots = 64;

  DramParams& dram = ideal.params.dram;
  dram.channel_rate = faster(dram.channel_rate);

  EthParams& eth = ideal.params.eth;
  eth.frame_overhead_bytes = 0;
  eth.packet_header_bytes = 0;
  // One cycle, not zero, and the NoC and DRAM latencies kept: zero no longer hangs (a completion
  // due at once is reported as it happens, NocPort::resolved), but with a NoC router hop of zero
  // the workers fill the routers fast enough that each puts 8 data packets in its TX queue ahead
  // of its acks, and the n300 all_gather settles into bursts of 8 with the link idle between
  // them, 13% slower (docs/performance.md, "Why the on-chip latencies are kept"). That measures
  // which schedule the start-up fell into, not the algorithm, which is what this mode is for.
  eth.tx_issue = ideal.params.cycles(1);
  eth.rx_handle = ideal.params.cycles(1);
  return ideal;
}

std::shared_ptr<const ArchSpec> builtin_ideal_arch_spec(ChipArch arch) {
  static std::mutex mutex;
  static std::map<ChipArch, std::shared_ptr<const ArchSpec>> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(arch);
  if (it != cache.end()) return it->second;
  auto spec = std::make_shared<const ArchSpec>(ideal_arch_spec(*builtin_arch_spec(arch)));
  cache.emplace(arch, spec);
  return spec;
}

}  // namespace cclmesh::sim
